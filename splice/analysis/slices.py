"""Backward slices that recompute a register from the thread's coordinates and the kernel's
parameters: the statements to replay so a value is what the frame's thread had.

Provenance gives affine forms; real kernels also form addresses and masks with ``div``/``rem``
(Triton's grouped program ids), ``and``/``or``/``shr`` of thread indices (CUTLASS' swizzles),
``selp``/``min``/``max`` and comparisons with the problem size.  Replaying the kernel's own
statements covers all of them without modelling any: a value is *replayable* when every
statement it depends on is pure arithmetic over special registers of the thread's position,
parameter reads and constants, each register having one reaching definition, with no cycle (a
loop counter is not a function of the position) and no memory other than ``.param``.
"""
from __future__ import annotations

from typing import Optional

from ..ptx import model as m
from . import roles
from ..ptx.operands import children

_SPECIALS = ("%tid", "%ntid", "%ctaid", "%laneid", "%nctaid")
LIMIT = 256


def _specials(node) -> list:
    out = []

    def walk(op):
        if type(op) is m.Reg and op.special:
            out.append(op.name)
        for c in _children(op):
            walk(c)
    for op in node.operands:
        walk(op)
    return out


def _children(op):

    return children(op)


def _pure(node) -> Optional[str]:
    """None when ``node`` may be replayed, else why not."""
    if type(node) is not m.Instruction:
        return "not an instruction"
    acc = roles.memory_access(node)
    if acc is not None and acc.effect == roles.READ:
        if acc.space != "param":        # parameters are the frame's values; memory is not
            return f"{node.name} reads memory"
    elif acc is not None or roles.is_impure(node) or roles.is_opaque(node):
        return f"{node.name} is not a pure function of its operands"
    for s in _specials(node):
        if not s.startswith(_SPECIALS):
            return f"{node.name} reads {s}"
        if s.startswith("%nctaid"):
            return f"{node.name} reads {s} (the harness grid is not the frame's)"
    return None


def replay_slice(kernel, key: str, pos: int) -> tuple:
    """(statement indices to replay, ascending; None) or (None, why) for the value register
    ``key`` (an internal key) holds at statement index ``pos``."""
    prov = kernel.provenance
    defs, uses, _g = kernel.du()
    chosen: set = set()
    on_path: set = set()
    needs: list = []                          # (key, use position, def) for the order check

    def visit(k: str, p: int) -> Optional[str]:
        d = prov.reaching_def(k, p)
        if d is None:
            return f"{k} has no single reaching definition before s{_n(kernel, p)}"
        needs.append((k, p, d))
        if d in chosen:
            return None
        if d in on_path:
            return f"{k} is defined in a cycle (s{_n(kernel, d)}): not a function of the position"
        node = kernel.stmts[d].node
        why = _pure(node)
        if why is None and node.guard is not None:
            why = f"s{_n(kernel, d)} is guarded (the value depends on the path)"
        if why:
            return why
        if len(chosen) >= LIMIT:
            return f"more than {LIMIT} statements to replay"
        on_path.add(d)
        for u in uses[d]:
            w = visit(u, d)
            if w:
                return w
        on_path.discard(d)
        chosen.add(d)
        return None

    why = visit(key, pos)
    if why:
        return None, why
    why = _interleaved(kernel, defs, chosen, needs)
    return (None, why) if why else (sorted(chosen), None)


def _interleaved(kernel, defs, chosen: set, needs: list) -> Optional[str]:
    """Replayed in program order, a use must still see its own definition: no other replayed
    definition of the same register may sit between them."""
    by_key: dict = {}
    for d in chosen:
        for k in defs[d]:
            by_key.setdefault(k, []).append(d)
    for k, p, d in needs:
        for other in by_key.get(k, ()):
            if other != d and d < other < p:
                return f"{k}: two replayed definitions (s{_n(kernel, d)}, s{_n(kernel, other)}) overlap"
    return None


def _n(kernel, pos: int):
    n = kernel.stmts[pos].n
    return n if n is not None else f"@{pos}"
