"""The cut engine's view of a kernel.

There is one implementation of def-use, liveness, phases and the cut ABI in splice:
``splice.analysis``.  The cut engine loads kernels through it, and reads native-phase code
(which belongs to no kernel yet) with the same opcode table (``analysis.roles``), so a native
phase and the statements it replaces are judged by the same rules.
"""
from __future__ import annotations

from typing import Optional

from ..analysis import Kernel
from ..errors import SpliceError
from ..analysis.roles import raw_defs_uses
from ..ptx import model as m
from ..analysis import carry
from ..analysis.kernel import element_base


def defs_uses(node) -> tuple:
    """(defs, uses): the ``%`` registers one statement writes and reads (guards, addresses and
    brace lists included; special registers and symbols left out)."""
    if not isinstance(node, m.Instruction):
        return (), ()
    defs, uses = raw_defs_uses(node)
    return (tuple(r for r in defs if r.startswith("%")),
            tuple(r for r in uses if r.startswith("%")))


def load_kernel(path, entry=None, module: Optional[m.Module] = None) -> Kernel:
    """``splice.analysis.Kernel`` for ``entry`` (default: the first entry) of ``path``, or of an
    already parsed ``module``."""
    if module is not None:
        return Kernel(module, entry or module.entries()[0].name)
    return Kernel.load(path, entry=entry)


def refuse_vector_registers(kernel: Kernel, i: int, j: int, path) -> None:
    """A cut cannot hold a vector register (``.reg .v4 .f32 %v``) or its elements (``%v.x``):
    a native names scalar registers, and an element write keeps the other elements, so binding
    ``%v`` as one ``.f32`` would drop writes.  Nor a video selector (``%r1.b0``, a byte of
    ``%r1``), for the same reason.  Refused at the first statement that names one."""
    for st in kernel.stmts[i:j + 1]:
        d, u = defs_uses(st.node)
        for name in d + u:
            base = element_base(name, kernel.vectors) if "." in name else name
            if base != name and base not in kernel.vectors:
                raise SpliceError(f"s{st.n} names {name}, a byte or half of {base} (a video instruction's "
                                  "selector): a cut binds whole registers; cut before or after it",
                                  str(path), line=st.line)
            if base in kernel.vectors:
                decl, line = kernel.vectors[base]
                raise SpliceError(f"s{st.n} names the vector register {base} (.reg {decl}, declared at "
                                  f"line {line}): a cut cannot bind a vector register or its .x/.y/.z/.w "
                                  "elements; cut before or after the statements that use it",
                                  str(path), line=st.line)


def refuse_split_carry(kernel: Kernel, i: int, j: int, path) -> None:
    """A cut cannot start or end inside a carry chain (``add.cc`` … ``addc``): the carry flag is
    a live-in or live-out that no register names, so neither the ABI nor a native can carry it
    (``splice.analysis.carry``).  Refused at the reader, with the range that keeps the chain."""
    for reader, writer, way in carry.split_chain(kernel, i, j):
        st, w = kernel.stmts[reader], kernel.stmts[writer]
        lo, hi = carry.chain_extent(kernel, reader)
        where = {"in": "(in the range) reads the carry flag that s{w} ({wn}) sets before it",
                 "out": "(after the range) reads the carry flag that s{w} ({wn}) sets in it",
                 "through": "(after the range) reads the carry flag that s{w} ({wn}) sets before it"}[way]
        raise SpliceError(f"s{st.n} ({st.node.name}) " + where.format(w=w.n, wn=w.node.name)
                          + f": a cut of s{kernel.stmts[i].n}-s{kernel.stmts[j].n} cannot bind the carry flag; "
                          f"start and end it outside the carry chain s{kernel.stmts[lo].n}-s{kernel.stmts[hi].n}",
                          str(path), line=st.line)


def phase_by_index(kernel, idx):
    """Phase ``idx`` of ``kernel`` (phases are numbered from 1 in program order), or None."""
    for p in kernel.phases:
        if p.index == idx:
            return p
    return None


def exact_phase_abi(kernel, phase):
    """Exactly this phase's ABI (fragments in A, B, C, D order): a cut must never be bound
    against a neighbouring phase's registers, so a mismatch is an error, not a retry."""
    abi = kernel.phase_abi(phase.index)
    if (abi.first, abi.last) != (phase.first, phase.last):
        raise SpliceError(f"phase {phase.index} is s{phase.first}-s{phase.last} but its ABI covers "
                          f"s{abi.first}-s{abi.last}", kernel.path)
    return abi
