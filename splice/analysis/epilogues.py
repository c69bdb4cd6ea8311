"""Epilogues: the statements between one phase's last mma and the next phase's first, named by
what they compute.

An epilogue's name is composed of what its code does (``KINDS``, each with the statements that
show it): loads (those feeding the next phase's B or C found by def-use), stores by state space,
packs, unpacks and other conversions, warp shuffles, atomics and reductions, special functions,
barriers, texture and surface accesses.  Nothing is matched against a known kernel.

A profile may ask for the DLDN notes' names (``vocab.WORD_SETS``: ``dldn-epilogue-names``):
then the epilogue is also classified by op signatures (one feature per row of ``FEATURES``, in
the order a name lists them), each kept only where its signature holds.  A feature (and a
kind) records every statement that shows it, so the report can give its sub-section range, its
count and an evidence line; the op histogram counts full opcode names.

Feature signatures:

* next-B loads / C-seed loads — a load whose result the *next* phase's mma reads as B / as C
  (through register copies), found by def-use, not by offset;
* W loads / table loads — other loads off the weight image, with ``16·laneid`` or the
  ``((laneid<<2)&12)`` per-column pattern;
* packs — ``cvt.rn.satfinite.e4m3x2.f16x2``;
* cubic-exponent softmax — ``and`` with ``0x7FE07FE0`` (mantissa into exponent) plus ``rcp``;
* textbook softmax — ``ex2`` with a ``max`` and a ``div``/``rcp``;
* RMS norm — ``rsqrt``;
* clamped-cubic activation — ``neg``+``abs``+``min``/``max`` on ``f16x2``;
* movmatrix transpose, shared staging (``st/ld.shared``, ``bar``), texture gather (``tex``),
  surface write (``sust``), warp shuffles;
* stores, named by evidence (``splice.analysis.vocab``): plane-arena scatter (strided global
  stores into a written-only buffer), global store (any other), local-array store
  (``st.local``: a local array, which ptxas may or may not have made of a spill).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from .provenance import TABLE_ATOM, coef
from .roles import is_shared
from .vocab import GLOBAL_STORE, LOCAL_STORE, SCATTER, find_profile, store_facts

FEATURES = [
    "next-B loads", "C-seed loads", "W loads", "table loads", "packs", "unpacks",
    "cubic-exponent softmax", "textbook softmax", "RMS norm", "clamped-cubic activation",
    "movmatrix transpose", "warp shuffles", "shared staging", "plane-arena scatter",
    "global store", LOCAL_STORE, "texture gather", "surface write",
]
# features that make the epilogue's name (loads of the next phase's operands always do)
NAMING = [
    "next-B loads", "C-seed loads", "packs", "cubic-exponent softmax", "textbook softmax",
    "RMS norm", "clamped-cubic activation", "movmatrix transpose", "shared staging",
    "plane-arena scatter", "global store", LOCAL_STORE, "texture gather", "surface write",
]
#: what an epilogue's code does, in the order a neutral name lists them (``_kinds``)
NEXT_B, NEXT_C = "loads feeding the next phase's B", "loads feeding the next phase's C"
KINDS = [
    NEXT_B, NEXT_C, "global loads", "generic loads", "shared loads", "local-array loads",
    "constant loads", "async copies", "texture reads", "surface reads", "packs", "unpacks",
    "conversions", "warp shuffles", "warp reductions", "atomics and reductions",
    "special functions", "matrix transposes (movmatrix)", "barriers", "shared stores",
    "global stores", "generic stores", "local-array stores", "parameter stores (call arguments)",
    "surface writes",
]
EXP_MASK = 0x7FE07FE0


@dataclass
class Feature:
    name: str
    stmts: list = field(default_factory=list)     # statement numbers

    @property
    def first(self):
        return self.stmts[0]

    @property
    def last(self):
        return self.stmts[-1]


@dataclass
class Epilogue:
    index: int                      # the phase it follows (E<index>)
    first: int
    last: int
    count: int                      # statements
    histogram: Counter
    features: dict                  # the kernel's vocabulary: DLDN features or neutral kinds
    name: str                       # the kernel's vocabulary (its profile's, else neutral)
    next_phase: Optional[int] = None
    uncharacterised: list = field(default_factory=list)
    kinds: dict = field(default_factory=dict)   # KINDS name -> Feature (what the code does)
    neutral_name: str = ""          # from ``kinds``
    dldn_features: dict = field(default_factory=dict)   # DLDN feature -> Feature (signatures held)
    dldn_name: str = ""             # the DLDN notes' name, from ``dldn_features``
    special: tuple = ()             # the special-function opcodes it runs (ex2, rcp …)

    def named(self, dldn: bool = False) -> str:
        """The name a report shows: the DLDN notes' where the profile asks for them."""
        return self.dldn_name if dldn else self.neutral_name

    def sections(self, dldn: bool = False) -> dict:
        return self.dldn_features if dldn else self.kinds

    def unexplained(self, weight_words: bool = False, w: Optional[str] = None) -> list:
        """What the analysis cannot name: loads off the weight field that feed no operand of the
        next phase, and the lane-masked table loads; the DLDN notes' words where the profile's
        weight-image rule holds, else the field by its name (``w``)."""
        out = []
        wl, tl = self.dldn_features.get("W loads"), self.dldn_features.get("table loads")
        fld = "W" if weight_words or not w else w
        if wl:
            out.append(f"{len(wl.stmts)} {'weight-image loads' if weight_words else 'loads off ' + fld} "
                       f"feed no operand of the next phase directly (first s{wl.first})")
        if tl:
            out.append(f"{len(tl.stmts)} {'per-column table' if weight_words else 'lane-masked'} loads "
                       f"({fld} + ((laneid<<2)&12) + off): their role is not named by the analysis")
        return out

    def as_dict(self, dldn: bool = False, weight_words: bool = False, w: Optional[str] = None):
        return {"index": self.index, "first": self.first, "last": self.last,
                "statements": self.count, "name": self.named(dldn), "next_phase": self.next_phase,
                "histogram": dict(self.histogram.most_common()),
                "sections": [{"what": f.name, "first": f.first, "last": f.last,
                              "count": len(f.stmts)} for f in self.sections(dldn).values()],
                "uncharacterised": self.unexplained(weight_words, w)}


def _operand_defs(k, prov, phase, regs):
    """Statement indices of the definitions (through copies) that ``regs`` have at the phase."""
    pos0 = k.first_pos_of(phase.first)
    out = set()
    for r in regs:
        key = k._resolve(r, k._scope_of[pos0])
        if key is None:
            continue
        d, _ = prov.origin(key[0], pos0)
        if d is not None:
            out.add(d)
    return out


def find_epilogues(k) -> list:
    """The entry's epilogues, named in the words of the entry's profile where it asks for the
    DLDN names (``vocab.find_profile``), else by what their code does."""
    prof = find_profile(k.name)
    dldn = bool(prof and "dldn-epilogue-names" in prof.vocabulary)
    prov = k.provenance
    phases = k.phases
    out = []
    for j, p in enumerate(phases):
        if p.epilogue is None:
            continue
        nxt = phases[j + 1] if j + 1 < len(phases) else None
        b_defs = _operand_defs(k, prov, nxt, nxt.b_regs) if nxt else set()
        c_defs = _operand_defs(k, prov, nxt, nxt.c_regs) if nxt else set()
        out.append(_classify(k, prov, p.index, p.epilogue, b_defs, c_defs,
                             nxt.index if nxt else None, dldn))
    return out


def classify_range(k, first: int, last: int, index: int = 0) -> Epilogue:
    """Classify any statement range (no next phase: operand loads are plain W loads)."""
    prof = find_profile(k.name)
    return _classify(k, k.provenance, index, (first, last), set(), set(), None,
                     bool(prof and "dldn-epilogue-names" in prof.vocabulary))


def _classify(k, prov, index, rng, b_defs, c_defs, next_index, dldn_words: bool = False) -> Epilogue:
    """What the statements in ``rng`` do (``_kinds``: the neutral name) and the DLDN features
    (``_features``) kept where their signature holds (``_signatures``)."""
    first, last = rng
    a, b = k.first_pos_of(first), k.pos_of(last)
    hist: Counter = Counter()
    feats = {name: Feature(name) for name in FEATURES}
    kinds: dict = {}
    stores = store_facts(k)           # once per kernel, not per epilogue
    has: Counter = Counter()
    special: dict = {}
    for pos in range(a, b + 1):
        st = k.stmts[pos]
        node = st.node
        if type(node) is not m.Instruction or st.n is None:
            continue
        hist[node.name] += 1
        role = "B" if pos in b_defs else "C" if pos in c_defs else None
        acc = prov.access_at(pos)
        sf = stores.get(pos)
        word = None if sf is None or sf.space not in ("global", "generic", "local") else (
            SCATTER if sf.scatter else LOCAL_STORE if sf.space == "local" else GLOBAL_STORE)
        for f in _features(node, acc, role, word, has):
            feats[f].stmts.append(st.n)
        for kd in _kinds(node, acc, role):
            kinds.setdefault(kd, Feature(kd)).stmts.append(st.n)
        if node.opcode in SPECIAL_OPS:
            special.setdefault(node.opcode, None)
    feats = _signatures(feats, has)
    order = {kk: i for i, kk in enumerate(KINDS)}      # a kind outside KINDS goes last
    kinds = dict(sorted(kinds.items(), key=lambda kv: order.get(kv[0], len(KINDS))))
    plumbing = "register plumbing" if hist else "empty"
    dldn = " + ".join(f for f in NAMING if f in feats) or plumbing
    name = " + ".join(_kind_label(kk, tuple(special)) for kk in kinds) or plumbing
    count = sum(1 for p in range(a, b + 1) if k.stmts[p].n is not None)
    e = Epilogue(index, first, last, count, hist, feats if dldn_words else kinds,
                 dldn if dldn_words else name, next_index, [], kinds, name, feats, dldn, tuple(special))
    e.uncharacterised = e.unexplained()
    return e


def _kind_label(kind: str, special: tuple) -> str:
    return f"special functions ({', '.join(special)})" if kind == "special functions" else kind


#: special-function opcodes (the SFU's): named in an epilogue's kind
SPECIAL_OPS = ("ex2", "lg2", "sin", "cos", "tanh", "rcp", "rsqrt", "sqrt")
_TYPE = re.compile(r"^\.(?:[suf]|bf|b|e4m3|e5m2|e2m3|e3m2|e2m1|ue8m0|tf)(\d+)?(x\d)?$")


def cvt_direction(node) -> str:
    """'pack', 'unpack' or 'convert' for a ``cvt``: packing when the destination holds more
    (narrower) elements than each source (``cvt.rn.f16x2.f32 d, a, b``,
    ``cvt.rn.satfinite.e4m3x2.f16x2``), unpacking the other way (``cvt.rn.f16x2.e4m3x2``)."""
    types = [t for t in node.modifiers if _TYPE.match(t)]
    if len(types) < 2:
        return "convert"
    d, s_ = _TYPE.match(types[-2]), _TYPE.match(types[-1])
    dn, sn = int((d.group(2) or "x1")[1:]), int((s_.group(2) or "x1")[1:])
    db, sb = int(d.group(1) or 8), int(s_.group(1) or 8)
    if dn > sn or (dn == sn > 1 and db < sb):
        return "pack"
    if dn < sn or (dn == sn > 1 and db > sb):
        return "unpack"
    return "convert"


def _kinds(node, acc, role) -> list:
    """The ``KINDS`` one instruction shows, from its opcode and its memory access alone."""
    op = node.opcode
    if acc is not None:
        return _access_kinds(acc, role)
    if op == "cvt":
        return [{"pack": "packs", "unpack": "unpacks"}.get(cvt_direction(node), "conversions")]
    return [k2 for k2 in (_OP_KIND.get(op),) if k2]


_OP_KIND = {"shfl": "warp shuffles", "redux": "warp reductions", "bar": "barriers",
            "barrier": "barriers", "movmatrix": "matrix transposes (movmatrix)",
            **{o: "special functions" for o in SPECIAL_OPS}}


def _access_kinds(acc, role) -> list:
    sp = acc.space
    if acc.kind in ("ld", "ldmatrix"):
        if role in ("B", "C") and acc.kind == "ld":
            return [NEXT_B if role == "B" else NEXT_C]
        if sp == "param":
            return []
        if is_shared(sp):
            return ["shared loads"]
        return [{"global": "global loads", "generic": "generic loads", "local": "local-array loads",
                 "const": "constant loads"}.get(sp, "global loads")]
    if acc.kind in ("st", "stmatrix"):
        if is_shared(sp):
            return ["shared stores"]
        return [{"local": "local-array stores", "generic": "generic stores", "global": "global stores",
                 "param": "parameter stores (call arguments)"}.get(sp, f"{sp} stores")]
    if acc.kind in ("red", "atom"):
        return ["atomics and reductions"]
    if acc.kind == "cp":
        return ["async copies"]
    return [{"tex": "texture reads", "tld4": "texture reads", "suld": "surface reads",
             "sust": "surface writes", "sured": "surface writes"}.get(acc.kind, "global loads")]


def _features(node, acc, role, store, has) -> list:
    """The features one instruction shows, in ``FEATURES``' terms; ``role``: "B" / "C" when it
    defines an operand of the next phase; ``store``: its store kind, if it stores; ``has``
    counts the ops whose combination a signature needs (``_signatures``)."""
    nm, op = node.name, node.opcode
    out = []
    if acc is not None and acc.kind == "ld" and acc.addr is not None and coef(acc.addr, "W") == 1:
        out.append("next-B loads" if role == "B" else "C-seed loads" if role == "C"
                   else "table loads" if coef(acc.addr, TABLE_ATOM) else "W loads")
    if op == "cvt" and "satfinite" in nm and "e4m3x2" in nm:
        out.append("packs")
    elif op == "cvt" and ".e4m3x2" in nm and "f16x2" in nm:
        out.append("unpacks")
    if op == "and" and any(type(o) is m.Imm and _int(o) == EXP_MASK for o in node.operands):
        has["expmask"] += 1
        out.append("cubic-exponent softmax")
    if op in ("rcp", "ex2", "div", "max"):
        has[op] += 1
        out += _SOFTMAX_OPS[op]
    if (op in ("max", "min") and ".f16x2" in nm) or (op in ("neg", "abs") and ".f16x2" in nm):
        if op in ("neg", "abs"):
            has[op] += 1
        out.append("clamped-cubic activation")
    if op in _SINGLE_OP:
        out.append(_SINGLE_OP[op])
    if acc is not None and is_shared(acc.space) or op in ("bar", "barrier"):
        out.append("shared staging")
    if store is not None:
        out.append(store)
    return out


#: the softmax signatures an op takes part in (``max`` only counts, for ``_signatures``)
_SOFTMAX_OPS = {"rcp": ("cubic-exponent softmax", "textbook softmax"), "ex2": ("textbook softmax",),
                "div": ("textbook softmax",), "max": ()}
#: features one opcode shows by itself
_SINGLE_OP = {"rsqrt": "RMS norm", "movmatrix": "movmatrix transpose", "shfl": "warp shuffles",
              "tex": "texture gather", "tld4": "texture gather", "sust": "surface write",
              "sured": "surface write"}


def _signatures(feats: dict, has: Counter) -> dict:
    """The features that need more than one op kept only where all are there; the empty ones
    dropped; each feature's statements in order."""
    if not has["expmask"]:
        feats["cubic-exponent softmax"].stmts = []
    if not (has["ex2"] and has["max"] and (has["div"] or has["rcp"])) or has["expmask"]:
        feats["textbook softmax"].stmts = []
    if not (has["neg"] and has["abs"]):
        feats["clamped-cubic activation"].stmts = []
    feats = {k2: f for k2, f in feats.items() if f.stmts}
    for f in feats.values():
        f.stmts.sort()
    return feats


def _int(imm) -> Optional[int]:
    try:
        v = imm.value
    except Exception:
        return None
    return v if isinstance(v, int) else None
