"""Which addresses of a statement range depend on chosen inputs: forward taint over a range.

The harness runs a cut outside its kernel with some live-ins *random* (an mma's D, a packed
operand) and the rest *reproduced* (addresses, lane masks, constants).  Memory is only safe to
touch when every address the cut forms comes from reproduced values: a random value that
reaches an address operand would send the harness to a random address (an illegal-address
error kills the whole CUDA context).  This pass answers "does any address depend on a seed?",
naming the statement and the seed, so the harness can refuse the cut with a reason instead.

Taint flows from a statement's reads to its writes (a guard predicate counts as a read, so a
value selected under a random predicate is random).  A value loaded from memory is tainted
too, except a ``.param`` read (the probe binds the kernel's parameters, so a parameter field
holds the spec's value, as in the frame); shared and global words are the harness's own fill,
not the frame's.  Branches inside the range are handled by the fixpoint engine (``fixpoint.solve``), so a
loop-carried value is tainted if any iteration could be.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m
from ..ptx.operands import registers
from . import roles
from .fixpoint import reader_index, solve

@dataclass(frozen=True)
class AddressTaint:
    """A memory statement whose address depends on a seed register."""
    n: int              # statement number (sNNNN)
    opcode: str         # the full dotted name
    register: str       # the address register that carries the taint
    seed: str           # the seed it came from

    def text(self) -> str:
        via = "" if self.register == self.seed else f" (via {self.register})"
        return f"the address of s{self.n} ({self.opcode}) depends on {self.seed}{via}"


def _addr_regs(node) -> list:
    """Registers of every address the access forms (roles.address_operands)."""
    out: list = []
    for op in roles.address_operands(node):
        registers(op, out)
    return out


def _loads_from_memory(node) -> bool:
    """Does ``node`` write registers from memory the harness filled (not a ``.param`` read)?"""
    acc = roles.memory_access(node)
    return acc is not None and bool(acc.out) and acc.effect != roles.WRITE and acc.space != "param"


def _taint_step(node, tainted: dict) -> list:
    """Propagate through one instruction; the registers it tainted."""
    defs, uses = roles.raw_defs_uses(node)
    src = next((tainted[u] for u in uses if u in tainted), None)
    if src is None and _loads_from_memory(node):
        src = f"memory read by {node.name}"
    if src is None:
        return []
    grew = [d for d in defs if d not in tainted]
    for d in grew:
        tainted[d] = src
    return grew


def address_taints(kernel, first: int, last: int, seeds) -> list:
    """[AddressTaint] for statements s``first``..s``last`` of ``kernel`` whose address operands
    depend on a register in ``seeds`` (names as written in the body)."""
    lo, hi = kernel.first_pos_of(first), kernel.pos_of(last)
    instrs = [(kernel.stmts[p].n, kernel.stmts[p].node) for p in range(lo, hi + 1)
              if type(kernel.stmts[p].node) is m.Instruction]
    tainted = {s: s for s in seeds}
    reads = [roles.raw_defs_uses(node)[1] for _n, node in instrs]
    # loops carry taint backwards: the engine runs a statement again when a register it reads
    # was tainted after it ran
    solve(len(instrs), lambda i: _taint_step(instrs[i][1], tainted), reader_index(reads))
    out = []
    for n, node in instrs:
        hit: Optional[str] = next((r for r in _addr_regs(node) if r in tainted), None)
        if hit is not None:
            out.append(AddressTaint(n, node.name, hit, tainted[hit]))
    return out
