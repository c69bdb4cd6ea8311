"""The PTX model: module -> items (directives, declarations, functions) -> statements.

Why it looks like this:
- Nodes are frozen, slotted dataclasses with tuple children, so a model can be shared,
  hashed and compared; an edit makes new nodes (``dataclasses.replace``) instead of mutating.
- Every item and statement keeps ``span`` — the ``(start, end)`` character offsets of its exact
  text in ``Module.source`` — and ``line`` (1-based) of its first character.  ``span`` is
  excluded from equality, so two parses of differently formatted text compare equal when
  they mean the same thing.  An item built by hand (an edit) has ``span=None``; the emitter
  renders it canonically and keeps the original text everywhere else.
- Operands are values, not places: ``Reg('%r12')`` means the same thing wherever it occurs,
  so the parser interns them and they carry no span; ``splice.ptx.operand_spans`` gives the
  span of each operand of a parsed instruction on demand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union
import struct

Span = Optional[tuple]  # (start, end) character offsets into Module.source, or None when edited


# --------------------------------------------------------------------------------------------
# operands
# --------------------------------------------------------------------------------------------

def _special_registers() -> frozenset:
    """Every special register name of PTX ISA 10 (read-only, predefined), exactly: a declared
    register may begin like one (``%tidx``, ``%pmask``, ``%clock0``, ``%envregs`` in
    hand-written PTX) and is a register like any other."""
    vec = ("%tid", "%ntid", "%ctaid", "%nctaid", "%clusterid", "%nclusterid", "%cluster_ctaid",
           "%cluster_nctaid")
    names = [v + c for v in vec for c in ("", ".x", ".y", ".z")]
    names += ["%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%clock", "%clock64",
              "%clock_hi", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%total_smem_size",
              "%dynamic_smem_size", "%aggr_smem_size", "%is_explicit_cluster", "%cluster_ctarank",
              "%cluster_nctarank", "%current_graph_exec"]
    names += [f"%lanemask_{c}" for c in ("eq", "le", "lt", "ge", "gt")]
    names += [f"%reserved_smem_offset_{c}" for c in ("begin", "end", "cap", "0", "1")]
    names += [f"%pm{i}{w}" for i in range(8) for w in ("", "_64")]
    names += [f"%envreg{i}" for i in range(32)]
    return frozenset(names)


SPECIAL_REGISTERS = _special_registers()


@dataclass(frozen=True, slots=True)
class Reg:
    """A register operand written with a leading ``%`` (``%r12``, ``%tid.z``, ``%laneid``)."""
    name: str

    @property
    def special(self) -> bool:
        return self.name in SPECIAL_REGISTERS

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Sym:
    """An identifier operand: a label, a parameter, a global, a function, ``_`` (the sink), or a
    register declared without ``%`` (hand-written PTX does that; the analysis resolves it)."""
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate, kept as written (``0f3F800000``, ``-1``, ``0x10``, ``12U``)."""
    text: str

    @property
    def value(self) -> Union[int, float]:
        return parse_number(self.text)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Offset:
    """``base+imm`` outside brackets (``%r1+4``, ``sym+8``); ``imm`` may be negative."""
    base: "Operand"
    imm: str

    def __str__(self) -> str:
        return f"{self.base}+{self.imm}"


@dataclass(frozen=True, slots=True)
class Not:
    """``!%p`` — a negated predicate operand."""
    operand: "Operand"

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True, slots=True)
class Pair:
    """``%p|%q`` — the two predicate outputs of ``setp`` (and friends)."""
    first: "Operand"
    second: "Operand"

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class Vec:
    """A brace list ``{%r1, %r2, _}`` — a vector operand or an mma fragment."""
    items: tuple

    def __str__(self) -> str:
        return "{" + ", ".join(str(i) for i in self.items) + "}"


@dataclass(frozen=True, slots=True)
class Addr:
    """A bracketed address.  ``items`` holds the comma-separated parts: ``[%rd1+16]`` is
    ``items=(Offset(Reg('%rd1'), '16'),)``; ``[%rd5, {%r1, %r2}]`` (tex/sust) is
    ``items=(Reg('%rd5'), Vec(...))``."""
    items: tuple

    @property
    def base(self) -> "Operand":
        first = self.items[0]
        return first.base if isinstance(first, Offset) else first

    @property
    def offset(self) -> int:
        first = self.items[0]
        return int(parse_number(first.imm)) if isinstance(first, Offset) else 0

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"


@dataclass(frozen=True, slots=True)
class ParenList:
    """``(a, b)`` — the return and argument lists of ``call``."""
    items: tuple

    def __str__(self) -> str:
        return "(" + ", ".join(str(i) for i in self.items) + ")"


Operand = Union[Reg, Sym, Imm, Offset, Not, Pair, Vec, Addr, ParenList]


# --------------------------------------------------------------------------------------------
# statements (function-body items)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Guard:
    """``@%p`` / ``@!%p`` predicate guard."""
    pred: str
    negated: bool = False

    def __str__(self) -> str:
        return ("@!" if self.negated else "@") + self.pred


@dataclass(frozen=True, slots=True)
class Instruction:
    """``[guard] opcode.mod.mod operands;`` — opcode-agnostic: ``opcode`` is the first word,
    ``modifiers`` the dotted parts as written (``('.sync', '.aligned', '.m16n8k32', ...)``),
    including ``::`` forms (``.shared::cluster``)."""
    guard: Optional[Guard]
    opcode: str
    modifiers: tuple
    operands: tuple
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        """The full dotted name, e.g. ``mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16``."""
        return self.opcode + "".join(self.modifiers)


@dataclass(frozen=True, slots=True)
class Label:
    """``name:`` — a branch target."""
    name: str
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Declarator:
    """One declared name: ``%r<10>`` (``count=10``), ``smem[16384]`` (``dims=(16384,)``),
    ``arr[]`` (``dims=(None,)``), with an optional initializer kept as canonical text."""
    name: str
    count: Optional[int] = None
    dims: tuple = ()
    init: Optional[object] = None  # Init tree: str | tuple (brace list)


#: a name as an initializer spells one (``generic(buf)``, ``buf+8``, ``%g``)
_INIT_NAME = re.compile(r"[A-Za-z_$%][\w$]*")


def initializer_names(init) -> set:
    """The names an initializer (``Declarator.init``: text, or a brace list of them) spells:
    a variable whose initializer holds another's address names it (``{generic(buf)}``)."""
    text = init if isinstance(init, str) else " ".join(map(str, init or ()))
    return set(_INIT_NAME.findall(text))


@dataclass(frozen=True, slots=True)
class Decl:
    """A state-space declaration: ``[linkage] .space [attrs] declarator, …;`` — ``.reg``,
    ``.shared``, ``.global``, ``.const``, ``.local``, ``.param``, ``.tex``.  ``attrs`` holds the
    type and qualifiers as written (``('.align', '4', '.b8')``, ``('.v4', '.f32')``, ``('.ptr',
    '.global', '.align', '8', '.u64')``)."""
    linkage: tuple
    space: str
    attrs: tuple
    declarators: tuple
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)

    @property
    def type(self) -> Optional[str]:
        """The scalar type (``.b32``, ``.pred``, ``.texref``…), the last non-numeric attribute."""
        for a in reversed(self.attrs):
            if a.startswith(".") and a not in (".align", ".ptr", ".global", ".shared", ".const",
                                                ".local", ".v2", ".v4", ".v8"):
                return a
        return None

    @property
    def align(self) -> Optional[int]:
        if ".align" in self.attrs:
            return int(self.attrs[self.attrs.index(".align") + 1])
        return None

    @property
    def vector(self) -> Optional[str]:
        for a in self.attrs:
            if a in (".v2", ".v4", ".v8"):
                return a
        return None


@dataclass(frozen=True, slots=True)
class Directive:
    """Any other directive: ``.version``, ``.target``, ``.address_size``, ``.file``, ``.loc``,
    ``.pragma``, ``.alias``, performance directives (``.maxntid`` …), ``.callprototype``,
    ``.branchtargets``.  ``args`` are the argument tokens as written, commas included as ``','``
    so the canonical printer can restore ``.loc 1 6 5, inlined_at 1 16 9``; ``terminated``
    says whether the directive was written with a ``;``."""
    name: str
    args: tuple
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)
    terminated: bool = field(default=False, compare=False)  # written with a trailing ';'


@dataclass(frozen=True, slots=True)
class Block:
    """A ``{ … }`` scope (a function body, or a nested scope such as NVVM's inline-asm wrap)."""
    items: tuple
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Raw:
    """Verbatim PTX inserted by an edit (a spliced native phase).  Emitted as is."""
    text: str
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)


Statement = Union[Instruction, Label, Decl, Directive, Block, Raw]


# --------------------------------------------------------------------------------------------
# module-level items
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Param:
    """An ``.entry``/``.func`` parameter or return value (a ``Decl`` without linkage)."""
    space: str
    attrs: tuple
    declarator: Declarator

    @property
    def name(self) -> str:
        return self.declarator.name


@dataclass(frozen=True, slots=True)
class Function:
    """``[linkage] .entry|.func [(returns)] name [(params)] [perf directives] { body } | ;``"""
    kind: str                 # ".entry" or ".func"
    linkage: tuple
    name: str
    returns: Optional[tuple]  # tuple of Param, or None when no return list is written
    params: Optional[tuple]   # tuple of Param, or None when no parameter list is written
    directives: tuple         # performance directives (Directive)
    body: Optional[Block]     # None for a prototype (declaration ending in ';')
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)

    @property
    def is_entry(self) -> bool:
        return self.kind == ".entry"


@dataclass(frozen=True, slots=True)
class SectionData:
    """One data line of a ``.section`` block: ``.b8 1, 2``, ``.b32 .debug_abbrev`` or
    ``.b32 .debug_loc+131`` (an ``Offset``)."""
    type: str
    values: tuple


@dataclass(frozen=True, slots=True)
class Section:
    """``.section .debug_* { … }`` — DWARF emitted by ``nvcc -G``; items are ``Label`` and
    ``SectionData``."""
    name: str
    items: tuple
    span: Span = field(default=None, compare=False)
    line: int = field(default=0, compare=False)


Item = Union[Directive, Decl, Function, Section, Raw]


@dataclass(frozen=True, slots=True)
class Module:
    """A parsed PTX file.  ``source`` is the exact text it was parsed from; ``path`` is for
    messages only."""
    items: tuple
    source: str = field(default="", compare=False, repr=False)
    path: str = field(default="<string>", compare=False)
    # what the per-entry analyses ask of the whole module, found once: each scanned every item
    # for every entry, so a module of n entries cost n^2 (8000 empty kernels: spec 21 s)
    _memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def memo(self, key: str, compute):
        """``compute(self)``, computed once per module: a fact about the whole module that an
        analysis asks of it once per entry (the items are a tuple: it cannot go stale)."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = compute(self)
        return value

    def functions(self) -> tuple:
        return self.memo("functions", lambda mod: tuple(i for i in mod.items if isinstance(i, Function)))

    def entries(self) -> tuple:
        return self.memo("entries", lambda mod: tuple(f for f in mod.functions() if f.is_entry))

    def decls(self) -> tuple:
        """The module-level declarations (``.global``, ``.shared``, ``.const`` … variables)."""
        return self.memo("decls", lambda mod: tuple(i for i in mod.items if isinstance(i, Decl)))

    def function(self, name: str) -> Function:
        """The function ``name``: its definition (with a body) before a prototype."""
        return self.memo("by_name", _functions_by_name)[name]

    def redefined(self) -> dict:
        """{name: the lines of its definitions} for each function defined (with a body) more
        than once: ptxas refuses such a module ("Duplicate definition of function"), and a
        lookup by name cannot tell which is meant."""
        return self.memo("redefined", _redefined)

    def directive(self, name: str) -> Optional[Directive]:
        for i in self.items:
            if isinstance(i, Directive) and i.name == name:
                return i
        return None


def _redefined(mod: "Module") -> dict:
    lines: dict = {}
    for f in mod.functions():
        if f.body is not None:
            lines.setdefault(f.name, []).append(f.line)
    return {name: tuple(at) for name, at in lines.items() if len(at) > 1}


def _functions_by_name(mod: "Module") -> dict:
    """{name: the first definition with a body, else the first prototype}."""
    by_name: dict = {}
    for f in mod.functions():
        if f.name not in by_name or (by_name[f.name].body is None and f.body is not None):
            by_name[f.name] = f
    return by_name


# --------------------------------------------------------------------------------------------
# small shared functions
# --------------------------------------------------------------------------------------------

def parse_number(text: str) -> Union[int, float]:
    """The value of a PTX numeric literal (``0f3F800000`` -> 1.0, ``0x10U`` -> 16, ``-07`` -> -7)."""
    t = text
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    if len(t) == 10 and t[:2] in ("0f", "0F"):
        v = struct.unpack(">f", bytes.fromhex(t[2:]))[0]
    elif len(t) == 18 and t[:2] in ("0d", "0D"):
        v = struct.unpack(">d", bytes.fromhex(t[2:]))[0]
    else:
        if t.endswith(("U", "u")):
            t = t[:-1]
        if t[:2] in ("0x", "0X"):
            v = int(t[2:], 16)
        elif t[:2] in ("0b", "0B"):
            v = int(t[2:], 2)
        elif "." in t or "e" in t or "E" in t:
            v = float(t)
        elif len(t) > 1 and t.startswith("0"):
            v = int(t, 8)
        else:
            v = int(t)
    return -v if neg else v


def walk(items):
    """Yield every statement of a body in program order, descending into nested blocks."""
    for it in items:
        if isinstance(it, Block):
            yield from walk(it.items)
        else:
            yield it
