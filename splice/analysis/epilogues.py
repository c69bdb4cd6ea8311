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
    first, last = rng
    a, b = k.first_pos_of(first), k.pos_of(last)
    hist = Counter()
    feats = {name: Feature(name) for name in FEATURES}
    stores = store_kinds(k)
    has = Counter()
    for pos in range(a, b + 1):
        st = k.stmts[pos]
        node = st.node
        if type(node) is not m.Instruction or st.n is None:
            continue
        nm = node.name
        op = node.opcode
        hist[nm] += 1
        n = st.n
        acc = prov.access_at(pos)
        if acc is not None and acc.kind == "ld" and acc.addr is not None \
                and coef(acc.addr, "W") == 1:
            if pos in b_defs:
                feats["next-B loads"].stmts.append(n)
            elif pos in c_defs:
                feats["C-seed loads"].stmts.append(n)
            elif coef(acc.addr, TABLE_ATOM):
                feats["table loads"].stmts.append(n)
            else:
                feats["W loads"].stmts.append(n)
        if op == "cvt" and "satfinite" in nm and "e4m3x2" in nm:
            feats["packs"].stmts.append(n)
        elif op == "cvt" and ".e4m3x2" in nm and "f16x2" in nm:
            feats["unpacks"].stmts.append(n)
        if op == "and" and any(type(o) is m.Imm and _int(o) == EXP_MASK for o in node.operands):
            has["expmask"] += 1
            feats["cubic-exponent softmax"].stmts.append(n)
        if op == "rcp":
            has["rcp"] += 1
            feats["cubic-exponent softmax"].stmts.append(n)
            feats["textbook softmax"].stmts.append(n)
        if op == "ex2":
            has["ex2"] += 1
            feats["textbook softmax"].stmts.append(n)
        if op == "div":
            has["div"] += 1
            feats["textbook softmax"].stmts.append(n)
        if op == "max":
            has["max"] += 1
            if ".f16x2" in nm:
                feats["clamped-cubic activation"].stmts.append(n)
        if op == "min" and ".f16x2" in nm:
            feats["clamped-cubic activation"].stmts.append(n)
        if op in ("neg", "abs") and ".f16x2" in nm:
            has[op] += 1
            feats["clamped-cubic activation"].stmts.append(n)
        if op == "rsqrt":
            feats["RMS norm"].stmts.append(n)
        if op == "movmatrix":
            feats["movmatrix transpose"].stmts.append(n)
        if op == "shfl":
            feats["warp shuffles"].stmts.append(n)
        if acc is not None and is_shared(acc.space) or op in ("bar", "barrier"):
            feats["shared staging"].stmts.append(n)
        if pos in stores:
            feats[stores[pos]].stmts.append(n)
        if op in ("tex", "tld4"):
            feats["texture gather"].stmts.append(n)
        if op in ("sust", "sured"):
            feats["surface write"].stmts.append(n)
    # signatures that need more than one op
    if not has["expmask"]:
        feats["cubic-exponent softmax"].stmts = []
    if not (has["ex2"] and has["max"] and (has["div"] or has["rcp"])) or has["expmask"]:
        feats["textbook softmax"].stmts = []
    if not (has["neg"] and has["abs"]):
        feats["clamped-cubic activation"].stmts = []
    feats = {k2: f for k2, f in feats.items() if f.stmts}
    for f in feats.values():
        f.stmts.sort()
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


def _int(imm) -> Optional[int]:
    try:
        v = imm.value
    except Exception:
        return None
    return v if isinstance(v, int) else None
