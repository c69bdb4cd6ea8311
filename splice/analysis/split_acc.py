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
    chain: list          # the pieces' mma fragments, in order: one K chain
    c_regs: list         # the running sum the phase receives (C of the whole chain)
    d_regs: list         # the running sum it leaves (D of the whole chain)
    adds: list           # statement positions of the folding adds, in order
    pieces: int


def fold_pieces(k, chains: list, fresh: dict, lo: int, hi: int) -> Optional[Fold]:
    """The chains of a phase (statement positions ``lo``..``hi``) read as one K chain when they
    are fresh pieces folded by ``add`` (module doc); None otherwise.  ``fresh``: mma position ->
    whether that mma starts a fresh accumulator."""
    if len(chains) < 2 or not all(fresh.get(ch[0][0]) for ch in chains):
        return None
    width = len(chains[0][-1][1])
    if width == 0 or any(len(ch[-1][1]) != width for ch in chains):
        return None
    adds = _adds_by_source(k, lo, hi)
    order = sorted(chains, key=lambda ch: ch[-1][0])
    running: Optional[list] = None
    start: list = []
    used: list = []
    for ch in order:
        last = ch[-1][0]
        new = []
        for r, dreg in enumerate(ch[-1][1]):
            hits = [(p, dest, other) for p, dest, other in adds.get(dreg, ())
                    if p > last and (running is None or other == running[r])]
            if len(hits) != 1:
                return None
            p, dest, other = hits[0]
            if running is None:
                start.append(other)
            new.append(dest)
            used.append(p)
        running = new
    pieces_d = {r for ch in chains for fr in ch for r in fr[1]}
    if running is None or pieces_d & set(start) or len(set(used)) != len(used):
        return None
    return Fold([fr for ch in order for fr in ch], start, running, sorted(used), len(order))


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


def starts_fresh(k, pos: int, info, lo: int) -> bool:
    """Whether the mma at ``pos`` ignores what its C registers held: a wgmma whose ``scale-d``
    is the immediate 0, or an mma whose every C register was last set, inside the phase (from
    ``lo``), by a ``mov`` of zero."""
    if info.immediates.get("scale_d") == "0":
        return True
    c = info.operands.get("c") or ()
    if not c or info.form.startswith("wgmma"):
        return False
    zeroed: set = set()
    for p in range(lo, pos):
        node = k.stmts[p].node
        if type(node) is not m.Instruction:
            continue
        defs = k.defs_uses(node)[0]
        for r in defs:
            zeroed.discard(r)
        if (node.opcode == "mov" and node.guard is None and len(node.operands) == 2
                and type(node.operands[1]) is m.Imm and node.operands[1].text in _ZERO):
            zeroed.update(defs)
    return all(r in zeroed for r in c)
