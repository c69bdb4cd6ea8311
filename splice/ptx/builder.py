"""Generated PTX as model nodes, not string templates: a builder and a register name scope.

Harness kernels, instrumentation and other generated code append instructions here
(``b.ins("mad.lo.s64", acc, v, 3, acc)``) instead of formatting lines by hand, so operand
lists, guards, address brackets and fresh register names are written one way; the name scope
hands out registers under one prefix and writes their ``.reg`` declarations, so generated code
never collides with the kernel's own names (llvmlite's ``ir.IRBuilder`` and ``NameScope``).

Each call appends a node of the model (``model.Instruction``, ``Label``, ``Decl``, ``Raw``) to
``nodes`` and its text, as ``printer.canonical_node`` writes it, to ``lines``; ``function``
makes an ``.entry``/``.func`` of a builder's nodes and ``module_text`` a module of it, so the
generated code is printed by the one printer that prints every edited model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import model as m
from .printer import canonical_node

_TAG = {".b64": "d", ".u64": "d", ".s64": "d", ".b32": "r", ".u32": "r", ".s32": "r", ".b16": "h",
        ".u16": "h", ".s16": "h", ".pred": "p", ".f32": "f", ".f64": "fd"}


@dataclass
class NameScope:
    """Fresh registers ``%<prefix>_<tag><i>`` per type; ``decls()`` declares them all."""
    prefix: str
    counts: dict = field(default_factory=dict)

    def reg(self, type_: str) -> str:
        tag = _TAG.get(type_, "x")
        i = self.counts.get(type_, 0)
        self.counts[type_] = i + 1
        return f"{self.prefix}_{tag}{i}"

    def decls(self) -> list:
        return [canonical_node(d) for d in self.decl_nodes()]

    def decl_nodes(self) -> list:
        """The ``.reg`` declarations of every register handed out, as model nodes."""
        return [reg_decl(t, f"{self.prefix}_{_TAG.get(t, 'x')}", n) for t, n in self.counts.items()]


def reg_decl(type_: str, name: str, count: Optional[int] = None) -> m.Decl:
    """``.reg <type> name<count>;`` (``count`` None: one register, ``.reg .b32 %q;``)."""
    return m.Decl((), ".reg", (type_,), (m.Declarator(name, count),))


def param(type_: str, name: str, align: Optional[int] = None, dims: tuple = ()) -> m.Param:
    """An ``.entry`` parameter: ``.param [.align A] <type> name[dims]``."""
    attrs = ((".align", str(align)) if align else ()) + (type_,)
    return m.Param(".param", attrs, m.Declarator(name, None, tuple(dims)))


def operand(x) -> m.Operand:
    """A builder operand (an int, a register or symbol name, ``addr``'s ``[base+off]``,
    ``vec``'s ``{a, b}``, ``!%p``) as the model's operand."""
    if isinstance(x, int):
        return m.Imm(str(x))
    s = str(x).strip()
    if s.startswith("[") and s.endswith("]"):
        return m.Addr(tuple(operand(i) for i in _split(s[1:-1])))
    if s.startswith("{") and s.endswith("}"):
        return m.Vec(tuple(operand(i) for i in _split(s[1:-1])))
    if s.startswith("!"):
        return m.Not(operand(s[1:]))
    base, plus, off = s.rpartition("+")
    if plus and base and _is_number(off):
        return m.Offset(operand(base), off)
    if s.startswith("%"):
        return m.Reg(s)
    if _is_number(s):
        return m.Imm(s)
    return m.Sym(s)


def _is_number(s: str) -> bool:
    t = s[1:] if s.startswith("-") else s
    return bool(t) and (t[0].isdigit())


def _split(inner: str) -> list:
    return [p.strip() for p in inner.split(",")] if inner.strip() else []


def instruction(opcode: str, *operands, guard: str = "") -> m.Instruction:
    """``[guard] opcode operands;`` as a model node (``opcode``: dotted, ``mad.lo.s64``)."""
    word, *mods = opcode.split(".")
    g = None
    if guard:
        neg = guard.startswith("@!")
        g = m.Guard(guard[2:] if neg else guard[1:], neg)
    return m.Instruction(g, word, tuple("." + x for x in mods), tuple(operand(o) for o in operands))


def addr(base, offset: int = 0) -> str:
    """``[base]`` / ``[base+offset]`` / ``[base+-4]`` as PTX writes it."""
    if not offset:
        return f"[{base}]"
    return f"[{base}+{offset}]"


def vec(*items) -> str:
    return "{" + ", ".join(str(i) for i in items) + "}"


@dataclass
class Builder:
    """Nodes appended in order (``nodes``), each also as its line of text (``lines``);
    ``text()`` is the PTX, one statement per line.  ``scope`` hands out fresh registers
    (``None``: code whose registers are all named by its caller)."""
    scope: "NameScope | None" = None
    lines: list = field(default_factory=list)
    nodes: list = field(default_factory=list)

    def add(self, node, indent: str = "\t") -> None:
        """A node of the model, written at ``indent``."""
        self.nodes.append(node)
        self.lines.append(node.text if isinstance(node, m.Raw) else indent + canonical_node(node, indent))

    def ins(self, opcode: str, *operands, guard: str = "") -> None:
        self.add(instruction(opcode, *operands, guard=guard))

    def label(self, name: str) -> None:
        self.add(m.Label(name), indent="")

    def decl(self, node: m.Decl) -> None:
        self.add(node)

    def comment(self, text: str) -> None:
        self.add(m.Raw(f"\t// {text}"))

    def raw(self, text: str) -> None:
        """Text that is not built here (the cut's own statements)."""
        self.add(m.Raw(text.rstrip("\n")))

    def block(self, items: list, indent: str = "\t") -> None:
        """A ``{ }`` scope of ``items`` (nodes)."""
        self.add(m.Block(tuple(items)), indent)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""


def function(name: str, params: list, body: list, kind: str = ".entry", linkage: tuple = (".visible",),
             directives: tuple = ()) -> m.Function:
    """An ``.entry``/``.func`` of ``params`` (``model.Param``) and ``body`` (a builder's nodes)."""
    return m.Function(kind, linkage, name, None, tuple(params), tuple(directives), m.Block(tuple(body)))


def module_text(header: str, items: list) -> str:
    """A module: ``header`` (the ``.version``/``.target``/``.address_size`` lines, kept as
    written) and ``items`` (nodes, or text built elsewhere), one blank line apart."""
    parts = [header.rstrip("\n")]
    parts += [it if isinstance(it, str) else canonical_node(it) for it in items]
    return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"


#: the special registers of a linear index, and of the extents that number it
_LINEAR = {"tid": "ntid", "ctaid": "nctaid"}


def linear_id(b: Builder, which: str) -> str:
    """A fresh register holding the thread's linear index in its block (``which="tid"``) or
    the block's in its grid (``"ctaid"``), numbered as CUDA numbers them:
    x + nx·(y + ny·z).  Three registers from ``b``'s scope; the first is returned."""
    n_ = _LINEAR[which]
    sc = b.scope
    assert sc is not None, "linear_id needs a builder with a name scope"
    t, y, n = sc.reg(".b32"), sc.reg(".b32"), sc.reg(".b32")
    b.ins("mov.u32", t, f"%{which}.z")
    b.ins("mov.u32", n, f"%{n_}.y")
    b.ins("mov.u32", y, f"%{which}.y")
    b.ins("mad.lo.u32", t, t, n, y)
    b.ins("mov.u32", n, f"%{n_}.x")
    b.ins("mov.u32", y, f"%{which}.x")
    b.ins("mad.lo.u32", t, t, n, y)
    return t
