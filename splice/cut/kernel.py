"""The cut engine's view of a kernel.

There is one implementation of def-use, liveness, phases and the cut ABI in splice:
``splice.analysis``.  The cut engine loads kernels through it, and reads native-phase code
(which belongs to no kernel yet) with the same opcode table (``analysis.roles``), so a native
phase and the statements it replaces are judged by the same rules.
"""
from __future__ import annotations

from typing import Optional

from ..analysis import Kernel
from ..analysis.roles import raw_defs_uses
from ..ptx import model as m


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
