"""Canonical expression DAGs: hash-consed value numbering with the rewrites of ``table.py``.

One ``Graph`` holds both sides of a cut (the original statements and the bound native code), so
two computations with the same canonical form get the same value number and comparing a live-out
is comparing two integers.  Every constructor applies the table's rules as it builds (commuting
operands into value-number order, folding integer offsets, resolving packs and element selects,
normalising selects); nothing else is ever rewritten.

A node is a tuple ``(kind, key, args)``; ``args`` holds value numbers, or tuples of them for a
brace-list operand (an mma fragment, a vector store).  Kinds:

``in``      live-in register (key: its name)      ``imm``   immediate (key: normalised value)
``sreg``    special register (%tid.x, %laneid)    ``sym``   a symbol (parameter, global, label)
``undef``   a register read before any write       ``mem0``  the memory on entry to the cut
``op``      an instruction (key: full opcode with every modifier, args: its source operands)
``elt``     element k of a multi-result op (mma D, ld.v4, setp p|q)
``part``    W-bit element k of a register (mov.b32 {lo, hi}, r)     ``pack``  a brace-list mov
``sel``     select(p, a, b): selp, guarded writes, merged branches  ``not``   predicate negation
``ioff``    x + c in W-bit integer arithmetic       ``addr``  [base + offset]
``st``/``mem`` memory states: a store, or any other ordered memory effect (barrier, fence, …)
"""
from __future__ import annotations

from .table import COMM_FLOAT, COMM_INT, COMM_SETP, FLOAT_TYPES, INT_TYPES

_INT_ADD_TYPES = {t: int(t[2:]) for t in INT_TYPES}


class Graph:
    """Hash-consed nodes.  ``node(kind, key, args)`` returns the value number of the canonical
    node; ``nodes[v]`` gives it back."""

    def __init__(self):
        self.ids: dict = {}
        self.nodes: list = []
        self.shown: dict = {}     # (value, depth) -> text: the report's memo (compare.show)

    def _intern(self, kind, key, args=()) -> int:
        n = (kind, key, args)
        v = self.ids.get(n)
        if v is None:
            v = len(self.nodes)
            self.ids[n] = v
            self.nodes.append(n)
        return v

    def below(self, v, descend) -> list:
        """The nodes reachable from ``v`` (a value or nested tuples of values), each once, going
        into a node's operands only where ``descend(kind, key, args)`` says so.  Hash-consing
        makes the graph a DAG with shared operands: walked as a tree it is exponential."""
        out, stack, seen = [], [v], set()
        while stack:
            x = stack.pop()
            if isinstance(x, tuple):
                stack.extend(x)
                continue
            if x in seen:
                continue
            seen.add(x)
            out.append(x)
            if descend(*self.nodes[x]):
                stack.extend(self.nodes[x][2])
        return out

    # ---- leaves ----------------------------------------------------------------------------
    def leaf(self, kind: str, key) -> int:
        return self._intern(kind, key)

    def imm_int(self, value: int, width=None) -> int:
        if width:
            value %= 1 << width
        return self._intern("imm", ("i", value))

    # ---- integer offsets (rule int-add) ----------------------------------------------------
    def ioff(self, width: int, x: int, c: int) -> int:
        c %= 1 << width
        if c == 0:
            return x
        kind, key, args = self.nodes[x]
        if kind == "imm" and key[0] == "i":
            return self.imm_int(key[1] + c, width)
        if kind == "ioff" and key[0] == width:
            return self.ioff(width, args[0], key[1] + c)
        return self._intern("ioff", (width, c), (x,))

    def addr(self, base: int, off: int, width: int = 64) -> int:
        """``[base + off]``, ``off`` modulo 2^width; an ``ioff`` base of the address width is
        folded (rule addr-offset)."""
        off %= 1 << width
        kind, key, args = self.nodes[base]
        if kind == "ioff" and key[0] == width:
            return self.addr(args[0], off + key[1], width)
        return self._intern("addr", off, (base,))

    # ---- predicates and selects (rules select, not-not) -----------------------------------
    def pred(self, value: bool) -> int:
        return self._intern("imm", ("pred", bool(value)))

    def neg(self, p: int) -> int:
        kind, key, args = self.nodes[p]
        if kind == "not":
            return args[0]
        if kind == "imm" and key[0] == "pred":
            return self.pred(not key[1])
        return self._intern("not", None, (p,))

    def sel(self, p: int, a: int, b: int) -> int:
        if a == b:
            return a
        kind, key, args = self.nodes[p]
        if kind == "imm" and key[0] == "pred":
            return a if key[1] else b
        if kind == "not":
            return self._intern("sel", None, (args[0], b, a))
        return self._intern("sel", None, (p, a, b))

    # ---- packs and elements (rule pack) ----------------------------------------------------
    def part(self, total: int, width: int, k: int, x: int) -> int:
        """Element k (``width`` bits) of a ``total``-bit register."""
        kind, key, args = self.nodes[x]
        if kind == "pack" and key == (total, width) and k < len(args):
            return args[k]
        return self._intern("part", (total, width, k), (x,))

    def pack(self, total: int, width: int, items: tuple) -> int:
        """A ``total``-bit register from ``width``-bit elements, element 0 least significant;
        the elements of one register, in order, are that register."""
        first = self.nodes[items[0]]
        if first[0] == "part" and first[1] == (total, width, 0) and total == width * len(items):
            src = first[2][0]
            if all(self.nodes[v] == ("part", (total, width, k), (src,)) for k, v in enumerate(items)):
                return src
        return self._intern("pack", (total, width), tuple(items))

    def elt(self, k: int, x: int) -> int:
        return self._intern("elt", k, (x,))

    # ---- instructions ----------------------------------------------------------------------
    def op(self, name: str, args: tuple) -> int:
        """An instruction's result: ``name`` is the canonical full opcode, ``args`` its source
        operands (value numbers or tuples)."""
        return self._intern("op", name, commute(name, args))

    def mem(self, kind: str, name: str, args: tuple) -> int:
        return self._intern(kind, name, args)


def commute(name: str, args: tuple) -> tuple:
    """Operands in value-number order where the table says they commute (comm-int, comm-float,
    comm-fma, comm-setp-eq)."""
    pos = commutative_positions(name)
    if not pos or len(args) <= max(pos):
        return args
    i, j = pos
    a, b = args[i], args[j]
    if isinstance(a, tuple) or isinstance(b, tuple) or a <= b:
        return args
    out = list(args)
    out[i], out[j] = b, a
    return tuple(out)


def commutative_positions(name: str):
    parts = name.split(".")
    opcode, mods = parts[0], ["." + p for p in parts[1:]]
    if opcode == "iadd":
        return (0, 1)                         # integer add of one width (rule int-add)
    if ".cc" in mods or ".sat" in mods and opcode not in COMM_FLOAT:
        return None
    types = [m for m in mods if m in INT_TYPES or m in FLOAT_TYPES]
    if not types:
        return None
    t = types[-1]
    if opcode == "setp":
        return (0, 1) if any(m in COMM_SETP for m in mods) else None
    if t in FLOAT_TYPES:
        if opcode in COMM_FLOAT:
            return COMM_FLOAT[opcode]
        return None
    if opcode in COMM_INT:
        return COMM_INT[opcode]
    return None


def int_add_width(opcode: str, mods: tuple):
    """W for an integer add/sub the int-add rule covers (one .sW/.uW/.bW type, no .sat/.cc)."""
    if opcode not in ("add", "sub") or any(m in (".sat", ".cc") for m in mods):
        return None
    types = [m for m in mods if m in _INT_ADD_TYPES or m in FLOAT_TYPES]
    if len(types) != 1 or types[0] not in _INT_ADD_TYPES or len(mods) != 1:
        return None
    return _INT_ADD_TYPES[types[0]]
