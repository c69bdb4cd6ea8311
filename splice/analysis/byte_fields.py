"""Struct fields read byte by byte and put back together.

LLVM-NVPTX reads a field of a packed or under-aligned by-value struct (``.param .align 1 .b8
p[19]``) one byte at a time: ``ld.param.u8`` of each byte, ``shl.b32`` by 8·k, ``or.b32`` into
one value (the same for 16- and 64-bit fields; hand-written PTX does it too).  ``probe init``
listed one ``u8`` field per byte, which says nothing of the value and asks for four numbers
where the kernel reads one.

The bytes are merged only when the kernel's own code proves they are one value: a register
that ``shl``/``or`` (and plain copies and widening ``cvt``) build from exactly the bytes
``o … o+n-1`` of one parameter, byte k of the struct at bit 8·k of the value (little-endian), for
n = 2, 4 or 8.  The merged field takes the type its consumers read it as (``mov.b32`` into a
float, ``cvt.rn.f32.s32`` …), else ``uN``.  A probe spec field must sit at a multiple of its
size: an assembled value at another offset (a packed struct's ``int`` at byte 1) keeps its byte
fields, each with a comment naming the value they make.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m
from ..ptx import types as dt
from .param_trace import consumer_index, value_uses

_WIDTHS = (2, 4, 8)
_COPIES = {"mov", "cvt"}


@dataclass(frozen=True)
class Assembled:
    param: int        # parameter index
    offset: int       # first byte
    size: int         # bytes
    dtype: str        # the type its consumers read it as, else uN
    stmt: str         # the statement that finishes it (sN)


def assembled(kernel, byte_loads: dict) -> list:
    """[Assembled]: the values built from byte loads.  ``byte_loads``: {statement position of an
    ``ld.param`` of one byte: (parameter index, byte offset)}."""
    if not byte_loads:
        return []
    defs_all = kernel.du()[0]
    value: dict = {}           # register key -> {bit position: (param, byte offset)}
    found: dict = {}           # (param, offset, size) -> position
    for pos, st in enumerate(kernel.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        defs = list(defs_all[pos])
        new = _bytes_of(node, pos, byte_loads, value, kernel)
        for d in defs:
            value.pop(d, None)
        if new is not None and len(defs) == 1:
            value[defs[0]] = new
            run = _run(new)
            if run is not None:
                found[run] = pos
    return _maximal(kernel, found)


def _bytes_of(node, pos: int, byte_loads: dict, value: dict, kernel) -> Optional[dict]:
    """The byte map the instruction at ``pos`` writes, None when it is no byte assembly."""
    if pos in byte_loads:
        return {0: byte_loads[pos]}
    ops = node.operands
    uses = kernel.du()[1][pos]
    if node.guard is not None or len(ops) < 2:
        return None
    if node.opcode in _COPIES and len(ops) == 2 and len(uses) == 1 and _widening(node):
        return value.get(uses[0])
    if node.opcode == "shl" and len(ops) == 3 and type(ops[2]) is m.Imm and len(uses) == 1:
        try:
            sh = int(ops[2].text, 0)
        except ValueError:
            return None
        src = value.get(uses[0])
        if src is None or sh % 8:
            return None
        return {b + sh: v for b, v in src.items()}
    if node.opcode == "or" and len(ops) == 3 and len(uses) == 2:
        a, b = value.get(uses[0]), value.get(uses[1])
        if a is None or b is None or set(a) & set(b):
            return None
        return {**a, **b}
    return None


def _widening(node) -> bool:
    """A plain copy, or a ``cvt`` to an integer type at least as wide as its source."""
    if node.opcode == "mov":
        return True
    types = [dt.lookup(mm[1:]) for mm in node.modifiers if dt.lookup(mm[1:]) is not None]
    return len(types) == 2 and all(t.kind != "float" for t in types) and types[0].size >= types[1].size


def _run(bytes_at: dict) -> Optional[tuple]:
    """(param, offset, size) when the value is bytes o … o+n-1 of one parameter in order."""
    n = len(bytes_at)
    if n not in _WIDTHS or sorted(bytes_at) != [8 * k for k in range(n)]:
        return None
    (param, off) = bytes_at[0]
    if any(bytes_at[8 * k] != (param, off + k) for k in range(n)):
        return None
    return param, off, n


def _maximal(kernel, found: dict) -> list:
    """Assembled values not inside a larger one, typed by their consumers."""
    consumers = consumer_index(kernel)
    out = []
    for (param, off, size), pos in sorted(found.items()):
        if any(p == param and o <= off and off + size <= o + s and (o, s) != (off, size)
               for (p, o, s) in found):
            continue
        told = {ty for _k, ty, _w in value_uses(kernel, pos, consumers)
                if dt.lookup(ty) is not None and dt.lookup(ty).size == size and ty in dt.SCALAR_TYPES}
        tname = told.pop() if len(told) == 1 else f"u{8 * size}"
        out.append(Assembled(param, off, size, tname, f"s{kernel.stmts[pos].n}"))
    return out
