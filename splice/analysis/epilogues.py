"""Epilogues: the statements between one phase's last mma and the next phase's first, named by
what they compute.

Each epilogue is classified by op signatures (one feature per row of ``FEATURES``, in the order a
name lists them).  A feature records every statement that shows it, so the report can give its
sub-section range, its count and an evidence line; the op histogram counts full opcode names.

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
  stores into a written-only buffer), global store (any other), local spill (``st.local``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from .provenance import TABLE_ATOM, coef
from .roles import is_shared
from .vocab import store_kinds

FEATURES = [
    "next-B loads", "C-seed loads", "W loads", "table loads", "packs", "unpacks",
    "cubic-exponent softmax", "textbook softmax", "RMS norm", "clamped-cubic activation",
    "movmatrix transpose", "warp shuffles", "shared staging", "plane-arena scatter",
    "global store", "local spill", "texture gather", "surface write",
]
# features that make the epilogue's name (loads of the next phase's operands always do)
NAMING = [
    "next-B loads", "C-seed loads", "packs", "cubic-exponent softmax", "textbook softmax",
    "RMS norm", "clamped-cubic activation", "movmatrix transpose", "shared staging",
    "plane-arena scatter", "global store", "local spill", "texture gather", "surface write",
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
    features: dict                  # name -> Feature
    name: str
    next_phase: Optional[int] = None
    uncharacterised: list = field(default_factory=list)

    def as_dict(self):
        return {"index": self.index, "first": self.first, "last": self.last,
                "statements": self.count, "name": self.name, "next_phase": self.next_phase,
                "histogram": dict(self.histogram.most_common()),
                "sections": [{"what": f.name, "first": f.first, "last": f.last,
                              "count": len(f.stmts)} for f in self.features.values()],
                "uncharacterised": self.uncharacterised}


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
                             nxt.index if nxt else None))
    return out


def classify_range(k, first: int, last: int, index: int = 0) -> Epilogue:
    """Classify any statement range (no next phase: operand loads are plain W loads)."""
    return _classify(k, k.provenance, index, (first, last), set(), set(), None)


def _classify(k, prov, index, rng, b_defs, c_defs, next_index) -> Epilogue:
    """The features of the statements in ``rng`` (``_features``), kept where their signature
    holds (``_signatures``), and the epilogue's name from them."""
    first, last = rng
    a, b = k.first_pos_of(first), k.pos_of(last)
    hist: Counter = Counter()
    feats = {name: Feature(name) for name in FEATURES}
    stores = store_kinds(k)
    has: Counter = Counter()
    for pos in range(a, b + 1):
        st = k.stmts[pos]
        node = st.node
        if type(node) is not m.Instruction or st.n is None:
            continue
        hist[node.name] += 1
        role = "B" if pos in b_defs else "C" if pos in c_defs else None
        for f in _features(node, prov.access_at(pos), role, stores.get(pos), has):
            feats[f].stmts.append(st.n)
    feats = _signatures(feats, has)
    names = [f for f in NAMING if f in feats]
    name = " + ".join(names) if names else ("register plumbing" if hist else "empty")
    unc = []
    if "W loads" in feats:
        unc.append(f"{len(feats['W loads'].stmts)} weight-image loads feed no operand of the "
                   f"next phase directly (first s{feats['W loads'].first})")
    if "table loads" in feats:
        unc.append(f"{len(feats['table loads'].stmts)} per-column table loads "
                   f"(W + ((laneid<<2)&12) + off): their role is not named by the analysis")
    count = sum(1 for p in range(a, b + 1) if k.stmts[p].n is not None)
    return Epilogue(index, first, last, count, hist, feats, name, next_index, unc)


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
