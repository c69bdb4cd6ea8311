"""One traversal of operands, driven by one table.

Every walk over an instruction's operands — the registers it reads and writes (roles), the
registers a native phase names and their renaming (the cut binding), the leaf values the
statement-template cache interns — goes through :data:`SHAPE`: per operand class, the fields
holding child operands (a tuple field such as ``Vec.items`` or single fields such as
``Offset.base``) or, for a leaf, the field holding its text.  A new operand class is one row
here, not six edited walkers.

Destination operands follow the PTX manual's convention (``roles``): everything inside ``[...]``
is read (an address), every other register in a destination is written (a brace list, a
``p|q`` pair); ``Imm``/``Not``/``Offset`` outside brackets in a destination write nothing.
"""
from __future__ import annotations

from types import MappingProxyType

from .model import Addr, Imm, Not, Offset, Pair, ParenList, Reg, Sym, Vec

# class -> ("leaf", text field) | ("items", tuple field) | ("fields", (child fields...))
SHAPE = MappingProxyType({
    Reg: ("leaf", "name"),
    Sym: ("leaf", "name"),
    Imm: ("leaf", "text"),
    Vec: ("items", "items"),
    Addr: ("items", "items"),
    ParenList: ("items", "items"),
    Offset: ("fields", ("base",)),
    Not: ("fields", ("operand",)),
    Pair: ("fields", ("first", "second")),
})

LEAVES = tuple(c for c, (kind, _f) in SHAPE.items() if kind == "leaf")
# destination positions: which composite classes are walked for writes (an address is a read)
_DEST_WALK = frozenset({Vec, ParenList, Pair})


def leaf_field(cls) -> str:
    """The field of a leaf class holding its text (``Reg.name``, ``Imm.text``)."""
    kind, f = SHAPE[cls]
    assert kind == "leaf" and isinstance(f, str), cls
    return f


def children(op) -> tuple:
    """The child operands of ``op`` (empty for a leaf or an unknown object)."""
    spec = SHAPE.get(type(op))
    if spec is None or spec[0] == "leaf":
        return ()
    if spec[0] == "items":
        return getattr(op, str(spec[1]))
    return tuple(getattr(op, f) for f in spec[1])


def map_operand(op, leaf):
    """``op`` rebuilt with ``leaf(x)`` in place of every leaf ``x`` (the same object back when
    nothing changed)."""
    spec = SHAPE.get(type(op))
    if spec is None:
        return op
    kind, f = spec
    if kind == "leaf":
        return leaf(op)
    if kind == "items":
        old = getattr(op, f)
        new = tuple(map_operand(x, leaf) for x in old)
        return op if all(a is b for a, b in zip(old, new)) else type(op)(new)
    old = [getattr(op, name) for name in f]
    new = [map_operand(x, leaf) for x in old]
    if all(a is b for a, b in zip(old, new)):
        return op
    kw = {name: v for name, v in zip(f, new)}
    if type(op) is Offset:
        kw["imm"] = op.imm
    return type(op)(**kw)


def registers(op, out=None, syms: bool = True) -> list:
    """Every register-like name inside ``op``: ``Reg`` that is not special and, with ``syms``,
    ``Sym`` (hand-written PTX declares registers without ``%``; callers filter declared ones)."""
    if out is None:
        out = []
    t = type(op)
    if t is Reg:
        if not op.special:
            out.append(op.name)
    elif t is Sym:
        if syms:
            out.append(op.name)
    else:
        for c in children(op):
            registers(c, out, syms)
    return out


def read_in_dest(op, out) -> list:
    """Registers a destination operand *reads*: the addresses inside it."""
    t = type(op)
    if t is Addr:
        registers(op, out)
    elif t in _DEST_WALK:
        for c in children(op):
            read_in_dest(c, out)
    return out


def written_in_dest(op, out) -> list:
    """Registers a destination operand writes (brace lists and pairs walked; addresses, ``!p``,
    immediates and ``base+imm`` write nothing)."""
    t = type(op)
    if t is Reg:
        if not op.special:
            out.append(op.name)
    elif t is Sym:
        out.append(op.name)
    elif t in _DEST_WALK:
        for c in children(op):
            written_in_dest(c, out)
    return out


_DIGITS = "0123456789"


def split_number(name: str):
    """(prefix, number) of a name ending in digits (``%rd12`` -> ``('%rd', 12)``), else None:
    the digits are any Unicode decimal digits, as ``\\d`` reads them (``^(.*?)(\\d+)$`` took time
    quadratic in a long run of digits that does not end the name)."""
    if not name.isascii():
        k = len(name)
        while k and name[k - 1].isdecimal():
            k -= 1
        return None if k == len(name) or len(name) - k > 40 else (name[:k], int(name[k:]))
    head = name.rstrip(_DIGITS)
    if len(head) == len(name) or len(name) - len(head) > 40:   # a longer run is no register number
        return None
    return head, int(name[len(head):])
