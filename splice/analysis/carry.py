"""The carry flag: condition-code state that no register names.

``add.cc``/``sub.cc``/``mad.lo.cc``/``madc.hi.cc`` … write the carry (CC.CF); ``addc``/``subc``/
``madc`` read it (PTX ISA 9.7.2, "Extended-Precision Integer Arithmetic").  Def-use sees only
registers, so a range that starts in the middle of a carry chain (its first carry reader is fed
by a writer before it) or ends in one (a reader after it takes the carry its last writer set) has
a live-in or live-out that the cut ABI cannot list and a native cannot bind: such a cut is
refused (``splice.cut.kernel.refuse_split_carry``) and ``spec --abi`` says so.

Statements are scanned in order (carry chains are straight-line code: inline asm of
multi-precision arithmetic); a label or branch between a writer and its reader ends the scan
(the chain is not followed through control flow).
"""
from __future__ import annotations

from typing import Optional

from ..ptx import model as m

_READERS = frozenset({"addc", "subc", "madc"})


def touches(node) -> Optional[str]:
    """'r' (reads the carry, maybe writes it too), 'w' (writes it only) or None."""
    if type(node) is not m.Instruction:
        return None
    if node.opcode in _READERS:
        return "r"
    return "w" if ".cc" in node.modifiers else None


def _neighbour(k, start: int, step: int, stop: int) -> Optional[int]:
    """The nearest statement from ``start`` (towards ``stop``) that touches the carry; None at a
    label or branch first, or when there is none."""
    p = start
    while p != stop:
        node = k.stmts[p].node
        if touches(node):
            return p
        if type(node) is m.Label or (type(node) is m.Instruction and node.opcode in ("bra", "brx", "ret", "exit")):
            return None
        p += step
    return None


def split_chain(k, a: int, b: int) -> list:
    """[(reader position, writer position, 'in'|'out'|'through')]: the carry flows into the
    range (positions ``a``..``b``) from a writer before it, out of it to a reader after it, or
    through it (a writer before, a reader after, nothing inside touching it: a native that
    used the carry would break the chain)."""
    out = []
    first = _neighbour(k, a, 1, b + 1)
    if first is not None and touches(k.stmts[first].node) == "r":
        before = _last_writer(k, 0, a - 1) if a > 0 else None
        if before is not None:
            out.append((first, before, "in"))
    last = _last_writer(k, a, b)      # a plain addc after it leaves the carry as it was
    if last is not None:
        after = _neighbour(k, b + 1, 1, len(k.stmts))
        if after is not None and touches(k.stmts[after].node) == "r":
            out.append((after, last, "out"))
    if first is None and not _flow_break(k, a, b):      # nothing inside touches it: does it flow through?
        # from the last writer before it: a plain addc between reads the carry and leaves it set
        before = _last_writer(k, 0, a - 1) if a > 0 else None
        after = _neighbour(k, b + 1, 1, len(k.stmts))
        if before is not None and after is not None and touches(k.stmts[after].node) == "r":
            out.append((after, before, "through"))
    return out


def _last_writer(k, a: int, b: int) -> Optional[int]:
    """The last statement in ``a``..``b`` that sets the carry (None at a label or branch first);
    a plain ``addc`` (no ``.cc``) only reads it, so the scan goes past it to the writer."""
    for p in range(b, a - 1, -1):
        node = k.stmts[p].node
        if type(node) is m.Label or (type(node) is m.Instruction and node.opcode in ("bra", "brx", "ret", "exit")):
            return None
        if type(node) is m.Instruction and ".cc" in node.modifiers:
            return p
    return None


def _flow_break(k, a: int, b: int) -> bool:
    """Whether a label or branch lies in ``a``..``b`` (the carry is not followed through it)."""
    for p in range(a, b + 1):
        node = k.stmts[p].node
        if type(node) is m.Label or (type(node) is m.Instruction and node.opcode in ("bra", "brx", "ret", "exit")):
            return True
    return False


def describe(k, a: int, b: int) -> list:
    """Sentences for :func:`split_chain` (empty when the range keeps its carry chains whole)."""
    st = k.stmts
    lines = []
    for reader, writer, way in split_chain(k, a, b):
        edge = {"in": "across the range's start", "out": "across the range's end",
                "through": "through the whole range"}[way]
        lines.append(f"the carry flag is live {way}: s{st[reader].n} ({st[reader].node.name}) reads the carry "
                     f"s{st[writer].n} ({st[writer].node.name}) sets, {edge}; a cut cannot bind it")
    return lines


def chain_extent(k, p: int) -> tuple:
    """(first, last) positions of the carry chain through the statement at ``p``: back while a
    statement reads the carry of the one before, forward while one sets it for the next."""
    lo = p
    while touches(k.stmts[lo].node) == "r":
        prev = _neighbour(k, lo - 1, -1, -1) if lo > 0 else None
        if prev is None:
            break
        lo = prev
    hi = p
    while ".cc" in getattr(k.stmts[hi].node, "modifiers", ()):
        nxt = _neighbour(k, hi + 1, 1, len(k.stmts))
        if nxt is None or touches(k.stmts[nxt].node) != "r":
            break
        hi = nxt
    return lo, hi
