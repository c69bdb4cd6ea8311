"""Split accumulation: fresh accumulators folded into a running sum by ``add``.

Hopper's fp8 wgmma accumulates with reduced precision, so Triton (``max_num_imprecise_acc``) and
CUTLASS (fp8 "slow accumulation") cut a K chain every few k-steps: each piece starts a fresh
accumulator (``scale-d`` 0, or C zeroed by ``mov``) and an ``add.f32`` per register folds it
into the running sum.  The products are one M×N×K accumulation all the same; without this
reading a phase of four such wgmma was "irregular, 4 accumulators" with no shape.

A fold is read only when it is exact: every piece starts fresh, every register of every piece's
last D is added, after that mma and inside the phase's statements, to the running register of
the piece before (the first piece to the registers the phase receives), each by exactly one
unguarded ``add`` of a floating-point type.  Anything else leaves the chains as they are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m

_FLOAT_ADDS = frozenset({".f32", ".f64", ".f16", ".f16x2", ".bf16", ".bf16x2"})
_ZERO = frozenset({"0", "0f00000000", "0F00000000", "0d0000000000000000", "0x00000000"})


@dataclass(frozen=True)
class Fold:
    chains: list         # one K chain per running sum: the pieces' mma fragments, in order
    c_regs: list         # the running sums the phase receives (C of the chains)
    d_regs: list         # the running sums it leaves (D of the chains)
    adds: list           # statement positions of the folding adds, in order
    pieces: int


def fold_pieces(k, chains: list, fresh: dict, lo: int, hi: int) -> Optional[Fold]:
    """The chains of a phase (statement positions ``lo``..``hi``) read as K chains, one per
    running sum, when every chain is a fresh piece folded by ``add`` (module doc) into a sum
    that at least two pieces feed; None otherwise.  ``fresh``: mma position -> whether that mma
    starts a fresh accumulator."""
    if len(chains) < 2 or not all(fresh.get(ch[0][0]) for ch in chains):
        return None
    width = len(chains[0][-1][1])
    if width == 0 or any(len(ch[-1][1]) != width for ch in chains):
        return None
    adds = _adds_by_source(k, lo, hi)
    sums: list = []            # [start registers, running registers, pieces]
    used: list = []
    for ch in sorted(chains, key=lambda c: c[-1][0]):
        found = [_fold_of(adds, dreg, ch[-1][0]) for dreg in ch[-1][1]]
        hits = [h for h in found if h is not None]
        if len(hits) != len(found):
            return None
        others = [h[2] for h in hits]
        group = next((g for g in sums if g[1] == others), None)
        if group is None:
            if any(set(others) & set(g[1]) for g in sums):
                return None       # partly another sum's: no clean fold
            group = [others, others, []]
            sums.append(group)
        group[1] = [h[1] for h in hits]
        group[2].append(ch)
        used += [h[0] for h in hits]
    pieces_d = {r for ch in chains for fr in ch for r in fr[1]}
    starts = [r for g in sums for r in g[0]]
    if any(len(g[2]) < 2 for g in sums) or pieces_d & set(starts) or len(set(used)) != len(used):
        return None
    return Fold([[fr for ch in g[2] for fr in ch] for g in sums], starts,
                [r for g in sums for r in g[1]], sorted(used), len(chains))


def _fold_of(adds: dict, dreg: str, after: int) -> Optional[tuple]:
    """(position, destination, the other source) of the one add after ``after`` that reads
    ``dreg``; None when there is none or more than one."""
    hits = [h for h in adds.get(dreg, ()) if h[0] > after]
    return hits[0] if len(hits) == 1 else None


def _adds_by_source(k, lo: int, hi: int) -> dict:
    """source register -> [(position, destination, the other source)] for the unguarded
    floating-point ``add d, x, y`` of three registers in ``lo``..``hi``."""
    out: dict = {}
    for pos in range(lo, hi + 1):
        node = k.stmts[pos].node
        if (type(node) is not m.Instruction or node.opcode != "add" or node.guard is not None
                or not _FLOAT_ADDS & set(node.modifiers) or len(node.operands) != 3
                or not all(type(o) is m.Reg for o in node.operands)):
            continue
        d, x, y = (o.name for o in node.operands)
        out.setdefault(x, []).append((pos, d, y))
        if y != x:
            out.setdefault(y, []).append((pos, d, x))
    return out


def fresh_starts(k, starts: dict, lo: int) -> dict:
    """{position: whether the mma there ignores what its C registers held} for ``starts``
    ({position: its ``mma_forms`` reading}): a wgmma whose ``scale-d`` is the immediate 0, or an
    mma whose every C register was last set, inside the phase (from ``lo``), by a ``mov`` of
    zero.  One pass over the statements, however many chains start."""
    out = {}
    zeroed: set = set()
    for p in range(lo, max(starts, default=lo - 1) + 1):
        info = starts.get(p)
        if info is not None:
            c = info.operands.get("c") or ()
            out[p] = info.immediates.get("scale_d") == "0" or (
                bool(c) and not info.form.startswith("wgmma") and all(r in zeroed for r in c))
        node = k.stmts[p].node
        if type(node) is not m.Instruction:
            continue
        defs = k.defs_uses(node)[0]
        zeroed.difference_update(defs)
        if (node.opcode == "mov" and node.guard is None and len(node.operands) == 2
                and type(node.operands[1]) is m.Imm and node.operands[1].text in _ZERO):
            zeroed.update(defs)
    return out
