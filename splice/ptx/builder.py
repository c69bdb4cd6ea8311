"""Generated PTX as instructions, not string templates: a builder and a register name scope.

Harness kernels, instrumentation and other generated code append instructions here
(``b.ins("mad.lo.s64", acc, v, 3, acc)``) instead of formatting lines by hand, so operand
lists, guards, address brackets and fresh register names are written one way; the name scope
hands out registers under one prefix and writes their ``.reg`` declarations, so generated code
never collides with the kernel's own names (llvmlite's ``ir.IRBuilder`` and ``NameScope``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
        return [f".reg {t} {self.prefix}_{_TAG.get(t, 'x')}<{n}>;" for t, n in self.counts.items()]


def addr(base, offset: int = 0) -> str:
    """``[base]`` / ``[base+offset]`` / ``[base+-4]`` as PTX writes it."""
    if not offset:
        return f"[{base}]"
    return f"[{base}+{offset}]"


def vec(*items) -> str:
    return "{" + ", ".join(str(i) for i in items) + "}"


@dataclass
class Builder:
    """Instructions appended in order; ``text()`` is the PTX, one statement per line.  ``scope``
    hands out fresh registers (``None``: code whose registers are all named by its caller)."""
    scope: "NameScope | None" = None
    lines: list = field(default_factory=list)

    def ins(self, opcode: str, *operands, guard: str = "") -> None:
        ops = ", ".join(str(o) for o in operands)
        g = f"{guard} " if guard else ""
        self.lines.append(f"\t{g}{opcode} {ops};" if ops else f"\t{g}{opcode};")

    def comment(self, text: str) -> None:
        self.lines.append(f"\t// {text}")

    def raw(self, text: str) -> None:
        """Text that is not built here (the cut's own statements)."""
        self.lines.append(text.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""


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
