"""Kernel: one entry's statements, declared register types, def-use, and the analyses on top.

``Kernel.load(path, entry=None)`` parses a file and takes its first entry (or ``entry``);
``Kernel(module, entry)`` wraps an already parsed module.  The heavy analyses (liveness,
phases, provenance, epilogues) are computed on first use and cached on the instance.

Registers are named as written (``%r12``, or ``hl`` when hand-written PTX declares a register
without ``%``).  A register declared in a nested ``{ }`` scope is a different register from a
same-named one elsewhere: internally it gets the *key* ``name@scope`` so liveness never mixes the
two; every public result shows the written name.
"""
from __future__ import annotations

import bisect
import re
from typing import Optional

from ..errors import SpliceError
from ..ptx import model as m
from ..ptx.index import SourceLines, Stmt, statement_ends, statement_index, statement_spans
from . import roles

_UNSEEN = object()
_DIGITS = "0123456789"


def _split_number(name: str):
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


_ELEMENTS = frozenset("xyzwrgba")
#: a video instruction's byte and half-word selectors (``%r1.b0``, ``%r2.h1``; the SIMD forms'
#: ``.b3210``, ``.h10``): the part of a register a source reads or a destination writes
_SELECTOR = re.compile(r"b[0-7]{1,4}|h[0-7]{1,2}")


def element_base(name: str, vectors: dict) -> str:
    """``%v`` for ``%v.x`` when ``%v`` is a vector register (PTX names a vector register's
    elements ``.x .y .z .w`` or ``.r .g .b .a``), ``%r1`` for ``%r1.b0`` (a video selector: a
    byte or half of the register); any other name unchanged (``%tid.x`` is a special register).
    An element is part of its register: reading it reads the register, writing it keeps the
    other elements."""
    base, dot, el = name.rpartition(".")
    if not dot:
        return name
    if el in _ELEMENTS:
        return base if base in vectors else name
    return base if _SELECTOR.fullmatch(el) else name


def element_writes(defs, vectors: dict) -> bool:
    """Whether an instruction writes an element of a vector register (a partial write: like a
    guarded one, it does not kill the register's old value)."""
    return any("." in d and element_base(d, vectors) != d for d in defs)


def _in_range(name: str, prefix: str, count: int) -> bool:
    """Whether ``name`` is one of ``prefix<count>``'s registers (``%r2`` of ``%r<4>``)."""
    digits = name[len(prefix):]    # ptxas reads the number: %r02 is %r<4>'s %r2 too
    return name.startswith(prefix) and digits.isdigit() and digits.isascii() and int(digits) < count


def _labels_once(stmts: list, scope_of: list, entry: str, path) -> None:
    """Refuse a label defined twice in one scope (ptxas: duplicate definition of label): a
    branch to it went to whichever the control flow took, and spec, notes, extract and
    pressure answered for a kernel that cannot exist.  The same name in two ``{ }`` scopes is
    legal (inline asm blocks repeat theirs)."""
    seen: dict = {}
    for i, st in enumerate(stmts):
        node = st.node
        # a label naming a .callprototype / .calltargets / .branchtargets is a declaration's name,
        # not a place in the code (gpuocelot's synthetic tests repeat a prototype's)
        names_a_directive = i + 1 < len(stmts) and type(stmts[i + 1].node) is m.Directive
        if type(node) is m.Label and not names_a_directive:
            first = seen.setdefault((scope_of[i], node.name), node)
            if first is not node:
                raise SpliceError(f"{entry}: label {node.name!r} is defined twice in one scope (lines {first.line} and "
                                  f"{node.line}): ptxas refuses the module (duplicate definition of label)",
                                  path=path, line=node.line)


class Kernel:
    def __init__(self, module: m.Module, entry: Optional[str] = None, lines: Optional[SourceLines] = None):
        """``lines``: the module's :class:`SourceLines` when several kernels of one module are
        built (then the text is scanned once, not once per entry)."""
        self.module = module
        self._lines = lines if lines is not None else SourceLines(module.source)
        if isinstance(entry, m.Function):      # a .func's body, analysed like an entry's
            if entry.body is None:
                raise SpliceError(f"{entry.name!r} has no body", path=module.path)
            fn = entry
        else:
            from .entries import lookup

            fn = lookup(module, entry)   # exact, demangled, or a unique substring; None: the first
            if fn is None:
                raise SpliceError("no .entry with a body", path=module.path)
            if fn.body is None:
                raise SpliceError(f"{entry!r} has no body", path=module.path)
        from .entries import defined_once

        self.fn = defined_once(module, fn, whole=True)    # a name defined twice: which one is meant?
        self.name = fn.name
        self.path = module.path
        self._build()

    @classmethod
    def load(cls, path, entry: Optional[str] = None) -> "Kernel":
        from ..ptx import parse_file

        return cls(parse_file(str(path)), entry)

    # ------------------------------------------------------------------------------------
    # statements and declarations
    # ------------------------------------------------------------------------------------

    def _build(self):
        src = self.module.source
        try:
            by_last = statement_ends(src, self.name, self._lines)
            self.numbering = "notes"
        except KeyError:
            # the index's line rules cannot find this entry's header (no "(" after the name,
            # a %-named entry …): number instructions and labels in program order instead
            by_last = {}
            self.numbering = "sequential"
        stmts: list = []
        scope_of: list = []
        parent = [None]            # scope id -> parent scope id; 0 is the body
        scope_names = [dict()]     # scope id -> {explicit name: type}
        scope_ranges = [dict()]    # scope id -> {prefix: [(count, type)]}
        seq_text = {}
        # an entry the rules find but give no statement (all on one line) is numbered in order
        walk = _Walk(src, by_last or None, seq_text,
                     stmts, scope_of, parent, scope_names, scope_ranges)
        walk.covering = _Covering(src, self.name, self._lines)
        walk.vectors = {}
        walk.visit(self.fn.body.items, 0, 0)
        # vector registers (``.reg .v4 .f32 %v``) by name -> ("<.vN> <type>", declaration line):
        # ``%v.x`` names an element of ``%v`` (``element_base``)
        self.vectors = walk.vectors
        _labels_once(stmts, scope_of, self.name, self.path)
        if walk.twice is not None:
            a, first, b, line = walk.twice
            what = (f"register {a} is declared twice" if a == b else f"{b} declares {a} again" if "<" in b
                    else f"{b} is already declared by {a}")
            raise SpliceError(f"{self.name}: {what} in one scope (lines {first} and {line}): ptxas refuses "
                              "the module (duplicate definition of variable)", path=self.path, line=line)
        self.stmts = stmts
        self._by_opcode = walk.by_opcode
        self._scope_of = scope_of
        self._parent = parent
        self._scope_names = scope_names
        self._scope_ranges = scope_ranges
        self._global_names = {}    # module-level .reg (rare) — treated as body scope
        self._resolved = [dict() for _ in parent]    # per scope: name -> _resolve's answer
        self._pos = {s.n: i for i, s in enumerate(stmts) if s.n is not None}
        self._first_pos = {}       # statements of several instructions: the first one's index
        self._text = None if by_last else seq_text   # the index's: built on first use
        self._numbers = [s.n for s in stmts]
        if len(self._pos) < len(stmts) - self._numbers.count(None):    # some statement has several
            for i, st in enumerate(stmts):
                if st.n is not None and self._pos[st.n] != i and type(st.node) is not m.Label:
                    self._first_pos.setdefault(st.n, i)
        self._nested_declared = set()
        for sid in range(1, len(parent)):
            self._nested_declared.update(scope_names[sid])
        self._nested_ranges = any(scope_ranges[sid] for sid in range(1, len(parent)))
        self._cache = {}
        self._du = None
        self._defs = None

    def indices_of(self, opcode: str) -> list:
        """Statement indices of the instructions with this opcode (first word), in order: a
        question about ``mma`` or the loads need not look at every statement."""
        return self._by_opcode.get(opcode, [])

    def pos_of(self, n: int) -> int:
        """Index into ``stmts`` of statement number ``n`` (``sNNNN``)."""
        try:
            return self._pos[n]
        except KeyError:
            raise SpliceError(f"{self.name}: no statement s{n}", path=self.path) from None

    def first_pos_of(self, n: int) -> int:
        """Index of the first instruction of statement ``n``: where a range sN-… starts.  A
        statement can hold several (old nvcc's ``mov …; // comment`` joins the next line into
        it, inline asm writes several on a line); ``pos_of`` gives its last node, where a range
        …-sN ends.  Labels the statement opens with stay outside the range (``LOOP: add …``: a
        cut from there leaves the loop header's label, and the back edge to it, outside)."""
        last = self.pos_of(n)
        return self._first_pos.get(n, last)

    def stmt(self, n: int) -> Stmt:
        return self.stmts[self.pos_of(n)]

    def number_at(self, pos: int) -> Optional[int]:
        """The statement number at or after index ``pos`` (None past the end)."""
        for i in range(pos, len(self.stmts)):
            if self._numbers[i] is not None:
                return self._numbers[i]
        return None

    def text(self, n: int) -> str:
        """The statement's text as the notes' index gives it (whitespace collapsed)."""
        if self._text is None:      # the index's text is built only when a text is asked for
            self._text = {st.n: st.text for st in statement_index(self.module.source, self.name, self._lines)}
        return " ".join(self._text.get(n, "").split())

    def cite(self, n: int) -> str:
        """``sNNNN LNNNNN: text`` — an evidence line in the notes' form."""
        return f"s{n} L{self.stmts[self.first_pos_of(n)].line}: {self.text(n)}"

    @property
    def last_number(self) -> int:
        for s in reversed(self.stmts):
            if s.n is not None:
                return s.n
        return 0

    def _declared_in(self, sid: int, name: str):
        ty = self._scope_names[sid].get(name)
        if ty is not None:
            return ty
        rs = self._scope_ranges[sid]
        if rs:
            sp = _split_number(name)
            if sp:
                for cnt, t in rs.get(sp[0], ()):
                    if sp[1] < cnt:
                        return t
        return None

    def _resolve(self, name: str, sid: int):
        """(key, type) of a register name used in scope ``sid``, or None if not a register.
        Kept per scope: provenance asks for the same few names thousands of times."""
        memo = self._resolved[sid]
        r = memo.get(name, _UNSEEN)
        if r is _UNSEEN:
            r = memo[name] = self._lookup(name, sid)
        return r

    def _lookup(self, name: str, sid: int):
        if self.vectors or "." in name:
            name = element_base(name, self.vectors)
        s = sid
        while s is not None:
            ty = self._declared_in(s, name)
            if ty is not None:
                return (name if s == 0 else f"{name}@{s}"), ty
            s = self._parent[s]
        return None

    def reg_type(self, name: str) -> Optional[str]:
        """Declared type of a register (``.b32``, ``.pred``, ``.b64`` …); the body's declaration
        first, then any nested scope's."""
        base, _, scope = name.partition("@")
        if scope.isdigit() and int(scope) < len(self._parent):   # a key names its own scope:
            ty = self._declared_in(int(scope), base)            # every scope was searched per
            if ty is not None:                                  # call (quadratic in inline asm)
                return ty
        ty = self._declared_in(0, base)
        if ty is not None:
            return ty
        for sid in range(1, len(self._parent)):
            ty = self._declared_in(sid, base)
            if ty is not None:
                return ty
        return None

    @staticmethod
    def display(key: str) -> str:
        return key.split("@", 1)[0]

    # ------------------------------------------------------------------------------------
    # def-use
    # ------------------------------------------------------------------------------------

    def defs_uses(self, node, pos: Optional[int] = None):
        """(defs, uses): register names of one Instruction via the roles table.  Names that
        are not declared registers (parameters, labels, globals, ``_``) are dropped; special
        registers (``%tid.x``, ``%laneid``) are not registers here.  With ``pos`` the names are
        resolved in that statement's scope and returned as internal keys."""
        if not isinstance(node, m.Instruction):
            return [], []
        sid = self._scope_of[pos] if pos is not None else 0
        d, u = roles.raw_defs_uses(node)
        return self._filter(d, sid, pos is not None), self._filter(u, sid, pos is not None)

    def _filter(self, names, sid, as_key):
        out = []
        for nm in names:
            r = self._resolve(nm, sid)
            if r is None and sid == 0:
                continue
            if r is None:
                continue
            out.append(r[0] if as_key else nm)
        return out

    def defs(self):
        """Per statement index: the register keys it defines, as ``du()[0]``; computed alone
        when nothing asked for the uses (provenance and the loops need only the definitions)."""
        if self._du is not None:
            return self._du[0]
        if self._defs is None:
            self._defs = _compute_defs(self)
        return self._defs

    def du(self):
        """Per statement index: (defs, uses, guarded) as internal keys; computed once."""
        if self._du is None:
            self._du = _compute_du(self)
        return self._du

    # ------------------------------------------------------------------------------------
    # analyses (lazy)
    # ------------------------------------------------------------------------------------

    def fact(self, name: str, build):
        """A per-kernel fact, ``build(self)`` computed on first request and kept: the spec, the
        notes and every epilogue ask for the same store kinds, field types and weight evidence,
        and each scans every memory access of the entry (once per epilogue it made ``spec``
        grow as epilogues × accesses)."""
        c = self._cache
        if name not in c:
            c[name] = build(self)
        return c[name]

    @property
    def blocks(self):
        """The control-flow graph (``liveness.Blocks``), without the liveness dataflow."""
        if "blocks" not in self._cache:
            from .liveness import Blocks

            self._cache["blocks"] = Blocks(self)
        return self._cache["blocks"]

    @property
    def liveness(self):
        if "live" not in self._cache:
            from .liveness import Liveness

            self._cache["live"] = Liveness(self)
        return self._cache["live"]

    @property
    def provenance(self):
        if "prov" not in self._cache:
            from .provenance import Provenance

            self._cache["prov"] = Provenance(self)
        return self._cache["prov"]

    @property
    def phases(self):
        if "phases" not in self._cache:
            from .phases import find_phases

            self._cache["phases"] = find_phases(self)
        return self._cache["phases"]

    @property
    def loops(self):
        """Loops with their static trip counts (``splice.analysis.loops``)."""
        if "loops" not in self._cache:
            from .loops import find_loops

            self._cache["loops"] = find_loops(self)
        return self._cache["loops"]

    @property
    def epilogues(self):
        if "epi" not in self._cache:
            from .epilogues import find_epilogues

            self._cache["epi"] = find_epilogues(self)
        return self._cache["epi"]

    def abi(self, first: int, last: int):
        from .abi import cut_abi

        return cut_abi(self, first, last)

    def phase_abi(self, i: int):
        from .abi import phase_abi

        return phase_abi(self, i)

    def phase(self, i: int):
        for p in self.phases:
            if p.index == i:
                return p
        raise SpliceError(f"{self.name}: no phase {i} (it has {len(self.phases)})", path=self.path)


class _Walk:
    """The body's statements in program order with their scopes and numbers (``Kernel._build``).

    A node's number is the index statement ending on the node's last line; that line is the
    node's first line plus the newlines inside its span (no search in the module's lines)."""

    def __init__(self, src, by_last, seq_text, stmts, scope_of, parent, scope_names, scope_ranges):
        self.src, self.by_last, self.seq_text = src, by_last, seq_text
        self.covering = None          # _Covering: the statement holding a line (set by Kernel)
        self.by_opcode: dict = {}     # opcode -> statement indices of its instructions
        self.stmts, self.scope_of, self.parent = stmts, scope_of, parent
        self.scope_names, self.scope_ranges = scope_names, scope_ranges
        self.lines: dict = {}          # (scope id, name or "prefix<>") -> its declaration's line
        self.twice = None              # (first name, its line, second name, its line) of a scope

    def declared_once(self, sid: int, d, line: int) -> None:
        """Note a register a scope declares a second time (``.reg .b32 %r1;`` twice, ``%r2``
        after ``%r<4>``, ``%r<8>`` after ``%r<4>``): ptxas refuses the module ("Duplicate
        definition of variable"), and the analysis kept one of the two types in silence.  The
        same name in a nested scope shadows it and is legal."""
        names, ranges = self.scope_names[sid], self.scope_ranges[sid]
        shown = d.name + ("<%d>" % d.count if d.count is not None else "")
        if d.count is not None:
            before = [(d.name + "<%d>" % c, self.lines[(sid, d.name + "<>")]) for c, _t in ranges.get(d.name, ())]
            before += [(x, self.lines[(sid, x)]) for x in names if _in_range(x, d.name, d.count)]
        else:
            before = [(d.name, self.lines[(sid, d.name)])] if d.name in names else []
            before += [(p + "<%d>" % c, self.lines[(sid, p + "<>")]) for p, rs in ranges.items()
                       for c, _t in rs if _in_range(d.name, p, c)]
        if before and self.twice is None:
            self.twice = (before[0][0], before[0][1], shown, line)
        self.lines[(sid, d.name + ("<>" if d.count is not None else ""))] = line

    def visit(self, items, depth, sid):
        Block, Instruction, Label, Decl = m.Block, m.Instruction, m.Label, m.Decl
        stmts = self.stmts
        stmts_append, scope_append = stmts.append, self.scope_of.append
        by_last, count, src, by_opcode = self.by_last, self.src.count, self.src, self.by_opcode
        make = tuple.__new__      # Stmt(n, line, node, depth) without the Python-level __new__
        for it in items:
            t = type(it)   # the model's node classes are final: type checks, not isinstance
            if t is Block:
                self.parent.append(sid)
                self.scope_names.append({})
                self.scope_ranges.append({})
                self.visit(it.items, depth + 1, len(self.parent) - 1)
                continue
            n = None
            if t is Instruction:
                ps = by_opcode.get(it.opcode)
                if ps is None:
                    ps = by_opcode[it.opcode] = []
                ps.append(len(stmts))
            if (t is Instruction or t is Label) and it.span is not None:
                a, b = it.span
                if by_last is not None:
                    end = it.line + count("\n", a, b - 1)
                    n = by_last.get(end)
                    if n is None:         # ends inside a statement (rare): its lines decide
                        n = self.covering(end)
                else:
                    n = len(self.seq_text) + 1
                    self.seq_text[n] = src[a:b]
            elif t is Decl and it.space == ".reg":
                ty = it.type
                if it.vector is not None:
                    self.vectors.update((d.name, (it.vector + " " + ty, it.line)) for d in it.declarators)
                for d in it.declarators:
                    self.declared_once(sid, d, it.line)
                    if d.count is not None:
                        self.scope_ranges[sid].setdefault(d.name, []).append((d.count, ty))
                    else:
                        self.scope_names[sid][d.name] = ty
            stmts_append(make(Stmt, (n, it.line, it, depth)))
            scope_append(sid)


class _Covering:
    """The statement whose lines hold a given line, for a node that does not end on a
    statement's last line: what :func:`splice.ptx.index.attach` pairs it with.  The spans are
    scanned on the first such node only (most entries have none)."""

    def __init__(self, src, name, lines):
        self._args = (src, name, lines)
        self._firsts = self._lasts = None

    def __call__(self, line: int):
        if self._lasts is None:
            spans = statement_spans(*self._args)
            self._firsts = [a for a, _b in spans]
            self._lasts = [b for _a, b in spans]
        i = bisect.bisect_left(self._lasts, line)
        return i + 1 if i < len(self._lasts) and self._firsts[i] <= line else None


class _BodyKeys(dict):
    """Register name -> its key in the body scope, ``""`` for a name that is not a declared
    register; filled on first look-up (a dict subclass, so a hit costs one C-level lookup)."""

    def __init__(self, names: dict, ranges: dict, special: bool = False, vectors: Optional[dict] = None):
        """``special``: the names are ``Reg`` operands', and a special register
        (``%tid.x``) is no register here (``operands.registers`` drops them).  ``vectors``:
        the kernel's vector registers (``%v.x`` is a key of ``%v``)."""
        super().__init__()
        self._names = names
        self._ranges = ranges
        self._special = special
        self._vectors = vectors or {}

    def __missing__(self, nm):
        key = ""
        if self._special and nm in m.SPECIAL_REGISTERS:
            pass
        elif "." in nm and element_base(nm, self._vectors) != nm:
            key = self[element_base(nm, self._vectors)]
        elif nm in self._names:
            key = nm
        else:
            sp = _split_number(nm)
            if sp:
                for cnt, _t in self._ranges.get(sp[0], ()):
                    if sp[1] < cnt:
                        key = nm
                        break
        self[nm] = key
        return key


def _compute_du(k: Kernel):
    """defs/uses keys per statement; Sym names are kept only when declared as registers."""
    defs_l: list = []
    uses_l: list = []
    guarded_l: list = []
    scope_of = k._scope_of
    nested = k._nested_declared or k._nested_ranges
    resolve = k._resolve
    body = _BodyKeys(k._scope_names[0], k._scope_ranges[0], vectors=k.vectors).__getitem__
    vectors = k.vectors

    def scoped(names, sid):
        out = []
        for nm in names:
            r = resolve(nm, sid)
            if r is not None:
                out.append(r[0])
        return tuple(out)

    raw = roles.raw_defs_uses
    Instruction = m.Instruction
    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not Instruction:
            defs_l.append(())
            uses_l.append(())
            guarded_l.append(False)
            continue
        d, u = raw(node)
        if not nested or scope_of[pos] == 0:
            defs_l.append(tuple([x for x in map(body, d) if x]))
            uses_l.append(tuple([x for x in map(body, u) if x]))
        else:
            defs_l.append(scoped(d, scope_of[pos]))
            uses_l.append(scoped(u, scope_of[pos]))
        guarded_l.append(node.guard is not None or element_writes(d, vectors))
    return defs_l, uses_l, guarded_l


def _compute_defs(k: Kernel) -> list:
    """The defs part of ``_compute_du`` (same keys, same order), without the uses."""
    out: list = []
    scope_of = k._scope_of
    nested = k._nested_declared or k._nested_ranges
    resolve = k._resolve
    body = _BodyKeys(k._scope_names[0], k._scope_ranges[0], vectors=k.vectors).__getitem__
    reg_key = _BodyKeys(k._scope_names[0], k._scope_ranges[0], special=True, vectors=k.vectors).__getitem__
    raw, role_of = roles.raw_defs, roles.role_of_instr
    Instruction, Reg = m.Instruction, m.Reg
    writes_reg = (roles.WRITE0, roles.RW0, roles.MMA)
    empty = ()
    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not Instruction:
            out.append(empty)
            continue
        ops = node.operands
        if ops and type(ops[0]) is Reg and (not nested or scope_of[pos] == 0):
            # the common case, as raw_defs reads it: one register written (or none)
            key = reg_key(ops[0].name) if role_of(node) in writes_reg else ""
            out.append((key,) if key else empty)
            continue
        d = raw(node)
        if not d:
            out.append(empty)
        elif not nested or scope_of[pos] == 0:
            out.append(tuple([x for x in map(body, d) if x]))
        else:
            out.append(tuple([r[0] for r in (resolve(x, scope_of[pos]) for x in d) if r is not None]))
    return out
