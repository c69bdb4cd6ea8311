"""Tensor-core instruction forms: one declaration table, fragment layouts derived from it.

In the style of ZLUDA's ``ptx_parser`` (STYLE.md): every fact about an ``mma`` / ``mma.sp`` /
``wgmma.mma_async`` form comes from one row of :data:`FORMS`, written next to its PTX ISA
section — the shapes, the A/B element types, the C/D element types, how many threads share one
matrix (a warp; a quad pair for ``m8n8k4`` f16; a warpgroup for ``wgmma``) and whether A is
2:4 sparse.  The per-thread register counts of each fragment follow from those facts alone:

    registers(X) = rows(X) · cols(X) · bits(element) / (threads · register bits)

(``A`` is ``m×k`` — halved when sparse —, ``B`` is ``k×n``, ``C``/``D`` ``m×n``; registers are
64-bit for ``f64``, else 32-bit).  :data:`LAYOUTS` is that table materialised per
``(form, shape, A type, C/D type)``; :func:`describe` reads one instruction against it and names
every operand by its ISA role (``d``, ``a``, ``b``, ``c``, ``meta``, ``sel``, ``scale_d``,
``imm_scale_a`` …), so the phase analysis, the cut ABI and the checks share one reading.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping, Optional

from ..ptx import model as m
from ..ptx.operands import registers

# element bits of every type name an mma form can carry
TYPE_BITS = MappingProxyType({
    "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32,
    "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1, "e4m3": 8, "e5m2": 8,
    "e3m2": 6, "e2m3": 6, "e2m1": 4,
})


@dataclass(frozen=True)
class FormDecl:
    """One row of the table: a family of forms sharing element types and thread count."""
    form: str            # 'mma' | 'mma.sp' | 'wgmma' | 'wgmma.sp' | 'wmma'
    shapes: tuple        # 'mMnNkK' strings
    ab: tuple            # A/B element types
    cd: tuple            # C/D element types
    threads: int         # threads sharing one matrix
    section: str         # PTX ISA section
    sparse: bool = False
    ab_regs: int = 0     # fixed A/B registers (wmma f16: eight .f16x2 for every shape), 0: derived
    ab_bits: int = 0     # bits each A/B element occupies in its register, 0: the type's own
                         # (.kind::f8f6f4 keeps 4- and 6-bit elements in 8-bit containers)


def _wg(k: int) -> tuple:
    return tuple(f"m64n{n}k{k}" for n in range(8, 257, 8))


FORMS = (
    # 9.7.14.5.1 mma.m8n8k4 (quad pairs: 4 groups of 8 threads each compute an 8x8 tile)
    FormDecl("mma", ("m8n8k4",), ("f16",), ("f16", "f32"), 8, "9.7.14.5.1"),
    # 9.7.14.5.2-4 mma.m16n8k8 / m16n8k16 half precision and bf16
    FormDecl("mma", ("m16n8k8", "m16n8k16"), ("f16", "bf16"), ("f16", "f32"), 32, "9.7.14.5.2"),
    # 9.7.14.5.5 tf32
    FormDecl("mma", ("m16n8k4", "m16n8k8"), ("tf32",), ("f32",), 32, "9.7.14.5.5"),
    # 9.7.14.5.6 f64
    FormDecl("mma", ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"), ("f64",), ("f64",), 32,
             "9.7.14.5.6"),
    # 9.7.14.5.7-8 integer (.satfinite allowed)
    FormDecl("mma", ("m8n8k16", "m16n8k16", "m16n8k32"), ("s8", "u8"), ("s32",), 32, "9.7.14.5.7"),
    FormDecl("mma", ("m8n8k32", "m16n8k32", "m16n8k64"), ("s4", "u4"), ("s32",), 32, "9.7.14.5.8"),
    # 9.7.14.5.9 single bit (.and.popc / .xor.popc)
    FormDecl("mma", ("m8n8k128", "m16n8k128", "m16n8k256"), ("b1",), ("s32",), 32, "9.7.14.5.9"),
    # 9.7.14.5.10 fp8 (sm_89+)
    FormDecl("mma", ("m16n8k16", "m16n8k32"), ("e4m3", "e5m2"), ("f16", "f32"), 32, "9.7.14.5.10"),
    # 9.7.14.5 (PTX 8.7+) sm_120 .kind::f8f6f4 / .kind::mxf8f6f4 (with .block_scale): every element
    # in an 8-bit container; .kind::mxf4 / .kind::mxf4nvf4 (.block_scale): e2m1 packed, k64
    FormDecl("mma", ("m16n8k32",), ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1"), ("f16", "f32"), 32,
             "9.7.14.5 .kind", ab_bits=8),
    FormDecl("mma", ("m16n8k64",), ("e2m1",), ("f32",), 32, "9.7.14.5 .kind"),
    # 9.7.14.6 mma.sp / mma.sp::ordered_metadata: A is 2:4 sparse (half its registers), plus
    # the metadata register and the sparsity selector
    FormDecl("mma.sp", ("m16n8k16", "m16n8k32"), ("f16", "bf16"), ("f16", "f32"), 32, "9.7.14.6", True),
    FormDecl("mma.sp", ("m16n8k8", "m16n8k16"), ("tf32",), ("f32",), 32, "9.7.14.6", True),
    FormDecl("mma.sp", ("m16n8k32", "m16n8k64"), ("s8", "u8"), ("s32",), 32, "9.7.14.6", True),
    FormDecl("mma.sp", ("m16n8k64", "m16n8k128"), ("s4", "u4"), ("s32",), 32, "9.7.14.6", True),
    FormDecl("mma.sp", ("m16n8k64",), ("e4m3", "e5m2"), ("f16", "f32"), 32, "9.7.14.6", True),
    # sm_120 sparse .kind::f8f6f4 / mxf8f6f4 (8-bit containers) and .kind::mxf4(nvf4) (packed)
    FormDecl("mma.sp", ("m16n8k64",), ("e3m2", "e2m3", "e2m1"), ("f16", "f32"), 32, "9.7.14.6 .kind",
             True, ab_bits=8),
    FormDecl("mma.sp", ("m16n8k128",), ("e2m1",), ("f32",), 32, "9.7.14.6 .kind", True),
    # 9.7.15.5 wgmma.mma_async (a warpgroup: 128 threads; A from registers or a descriptor)
    FormDecl("wgmma", _wg(16), ("f16", "bf16"), ("f16", "f32"), 128, "9.7.15.5"),
    FormDecl("wgmma", _wg(8), ("tf32",), ("f32",), 128, "9.7.15.5"),
    FormDecl("wgmma", _wg(32), ("e4m3", "e5m2"), ("f16", "f32"), 128, "9.7.15.5"),
    FormDecl("wgmma", _wg(32), ("s8", "u8"), ("s32",), 128, "9.7.15.5"),
    FormDecl("wgmma", _wg(256), ("b1",), ("s32",), 128, "9.7.15.5"),
    # 9.7.13.3-4 wmma.mma (the CUDA C++ WMMA API, mma.h): a warp, fragments opaque but sized by
    # the ISA; f16 A and B are eight .f16x2 registers for every shape (elements replicated)
    FormDecl("wmma", ("m16n16k16", "m32n8k16", "m8n32k16"), ("f16",), ("f16", "f32"), 32, "9.7.13.3",
             ab_regs=8),
    FormDecl("wmma", ("m16n16k16", "m32n8k16", "m8n32k16"), ("bf16",), ("f32",), 32, "9.7.13.3"),
    FormDecl("wmma", ("m16n16k8",), ("tf32",), ("f32",), 32, "9.7.13.3"),
    FormDecl("wmma", ("m16n16k16", "m32n8k16", "m8n32k16"), ("s8", "u8"), ("s32",), 32, "9.7.13.3"),
    FormDecl("wmma", ("m8n8k4",), ("f64",), ("f64",), 32, "9.7.13.3"),
    # 9.7.13.3 sub-byte WMMA (nvcuda::wmma::experimental): s4/u4 m8n8k32, b1 m8n8k128
    FormDecl("wmma", ("m8n8k32",), ("s4", "u4"), ("s32",), 32, "9.7.13.3"),
    FormDecl("wmma", ("m8n8k128",), ("b1",), ("s32",), 32, "9.7.13.3"),
    # 9.7.15.6 wgmma.mma_async.sp
    FormDecl("wgmma.sp", _wg(32), ("f16", "bf16"), ("f16", "f32"), 128, "9.7.15.6", True),
    FormDecl("wgmma.sp", _wg(16), ("tf32",), ("f32",), 128, "9.7.15.6", True),
    FormDecl("wgmma.sp", _wg(64), ("e4m3", "e5m2", "s8", "u8"), ("f16", "f32", "s32"), 128,
             "9.7.15.6", True),
)


@dataclass(frozen=True)
class Layout:
    """Registers per thread of each fragment (A counts registers when A sits in registers)."""
    a: int
    b: int
    c: int
    d: int
    threads: int
    section: str
    sparse: bool = False

    def as_dict(self):
        return {"a": self.a, "b": self.b, "c": self.c, "d": self.d, "threads": self.threads,
                "sparse": self.sparse, "section": self.section}


#: ``m16n8k32``; absurd digit runs (no shape has 10 digits) are no shape, not an int() traceback
_SHAPE = re.compile(r"^m(\d{1,9})n(\d{1,9})k(\d{1,9})$")


def parse_shape(s: str) -> Optional[tuple]:
    mm = _SHAPE.match(s)
    return (int(mm.group(1)), int(mm.group(2)), int(mm.group(3))) if mm else None


def _regs(rows: int, cols: int, ty: str, threads: int, halve: bool = False, elem_bits: int = 0) -> int:
    bits = rows * cols * (elem_bits or TYPE_BITS[ty]) // (2 if halve else 1)
    reg_bits = 64 if ty == "f64" else 32
    return max(1, bits // (threads * reg_bits))


def _build() -> Mapping:
    out = {}
    for decl in FORMS:
        for shape in decl.shapes:
            dims = parse_shape(shape)
            assert dims is not None, shape       # the table's own shapes
            mm, nn, kk = dims
            for ab in decl.ab:
                for cd in decl.cd:
                    lay = Layout(decl.ab_regs or _regs(mm, kk, ab, decl.threads, decl.sparse, decl.ab_bits),
                                 decl.ab_regs or _regs(kk, nn, ab, decl.threads, elem_bits=decl.ab_bits),
                                 _regs(mm, nn, cd, decl.threads), _regs(mm, nn, cd, decl.threads),
                                 decl.threads, decl.section, decl.sparse)
                    out.setdefault((decl.form, shape, ab, cd), lay)
    return MappingProxyType(out)


LAYOUTS = _build()


def layout(form: str, shape: str, ab: str, cd: str) -> Optional[Layout]:
    return LAYOUTS.get((form, shape, ab, cd))


def is_tensor_core(name: str) -> bool:
    """An instruction that multiplies matrices: ``mma`` (every variant), ``wgmma.mma_async`` or
    ``wmma.mma``."""
    return (name == "mma" or name.startswith("mma.") or name.startswith("wgmma.mma_async")
            or name.startswith("wmma.mma"))


def is_wgmma_sync(name: str) -> bool:
    """``wgmma.fence`` / ``commit_group`` / ``wait_group``: the group's bracketing statements."""
    return name.startswith(("wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"))


@dataclass(frozen=True)
class MmaInstr:
    """One tensor-core instruction read against the table."""
    form: str                 # 'mma' | 'mma.sp' | 'wgmma' | 'wgmma.sp'
    shape: Optional[tuple]    # (m, n, k)
    types: dict               # 'd', 'a', 'b', 'c' -> element type
    layout: Optional[Layout]  # None: the table does not know this combination
    operands: dict            # ISA operand name -> tuple of register names
    immediates: dict          # ISA operand name -> immediate text
    a_in_registers: bool      # False: A is a shared-memory descriptor (wgmma)
    satfinite: bool = False

    @property
    def frags(self) -> tuple:
        """(D, A, B, C) register tuples; wgmma's C is its D (accumulated in place)."""
        o = self.operands
        return (o.get("d", ()), o.get("a", ()), o.get("b", ()), o.get("c", o.get("d", ())))

    def as_dict(self):
        return {"form": self.form, "shape": "m{}n{}k{}".format(*self.shape) if self.shape else None,
                "types": self.types, "layout": self.layout.as_dict() if self.layout else None,
                "a_in_registers": self.a_in_registers, "satfinite": self.satfinite,
                "immediates": self.immediates,
                "operands": {k: list(v) for k, v in self.operands.items() if k not in ("a", "b", "c", "d")}}


def _form_of(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "wmma":
        return "wmma"
    if parts[0] == "wgmma":
        return "wgmma.sp" if "sp" in parts[2:3] or ".sp." in name else "wgmma"
    return "mma.sp" if len(parts) > 1 and parts[1].startswith("sp") else "mma"


def _slots(form: str, nops: int, a_regs: bool, types: dict, scaled: bool = False) -> list:
    """ISA operand names by position (PTX ISA 9.7.14 / 9.7.15 syntax blocks); ``scaled``: an
    ``mma…block_scale`` (sm_120), whose scale-factor registers and their ``{byte-id, thread-id}``
    selectors follow C."""
    if form == "mma" and scaled:
        return ["d", "a", "b", "c", "scale_a", "sel_a", "scale_b", "sel_b"]
    if form in ("mma", "wmma"):
        return ["d", "a", "b", "c"]
    if form == "mma.sp":
        return ["d", "a", "b", "c", "meta", "sel"] + (["scale_a", "sel_a", "scale_b", "sel_b"] if scaled else [])
    head = ["d", "a", "b"] + (["meta", "sel"] if form == "wgmma.sp" else []) + ["scale_d"]
    if types.get("a") in ("f16", "bf16"):
        tail = ["imm_scale_a", "imm_scale_b"] + ([] if a_regs else ["imm_trans_a"]) + ["imm_trans_b"]
    elif types.get("a") in ("tf32", "e4m3", "e5m2"):
        tail = ["imm_scale_a", "imm_scale_b"]
    else:
        tail = []
    return (head + tail + [f"op{i}" for i in range(nops)])[:nops]


def _names(op) -> tuple:
    return tuple(registers(op))


def describe(instr) -> Optional[MmaInstr]:
    """The tensor-core reading of ``instr`` (None when it is not an mma/wgmma.mma_async)."""
    name = instr.name
    if not is_tensor_core(name):
        return None
    form = _form_of(name)
    mods = name.split(".")
    shape_s = next((p for p in mods if _SHAPE.match(p)), None)
    tys = [p for p in mods if p in TYPE_BITS]
    if form.startswith("wgmma"):
        keys = ["d", "a", "b"]
    else:
        keys = ["d", "a", "b", "c"]
    if form == "wmma" and len(tys) == 2:       # .dtype.ctype: A and B are f16 (9.7.13.3)
        tys = [tys[0], "f16", "f16", tys[1]]
    types = dict(zip(keys, tys))
    if form.startswith("wgmma") and "d" in types:
        types["c"] = types["d"]
    ops = instr.operands
    a_regs = len(ops) > 1 and type(ops[1]) is m.Vec
    operands, imms = {}, {}
    for slot, op in zip(_slots(form, len(ops), a_regs, types, "block_scale" in mods), ops):
        if type(op) is m.Imm:
            imms[slot] = op.text
        else:
            operands[slot] = _names(op)
    lay = None
    if shape_s and "a" in types and "d" in types:
        lay = layout(form, shape_s, types["a"], types["d"])
        c_lay = layout(form, shape_s, types["a"], types.get("c", types["d"]))
        if lay is not None and c_lay is not None and c_lay.c != lay.c:
            lay = replace(lay, c=c_lay.c)   # Volta's m8n8k4 .f32.f16.f16.f16: 8 D, 4 C registers
    return MmaInstr(form, parse_shape(shape_s) if shape_s else None, types, lay, operands, imms,
                    a_regs or not form.startswith("wgmma"), "satfinite" in mods)


def layout_mismatch(mi: MmaInstr) -> Optional[str]:
    """Why the instruction's operand lists disagree with its table layout (None: they agree)."""
    if mi.layout is None:
        return "form not in the table"
    lay = mi.layout
    want = {"d": lay.d, "b": lay.b} if mi.form.startswith("wgmma") else {"d": lay.d, "a": lay.a,
                                                                          "b": lay.b, "c": lay.c}
    if mi.form.startswith("wgmma"):
        want["b"] = 1
        want["a"] = lay.a if mi.a_in_registers else 1
    for k, n in want.items():
        got = len(mi.operands.get(k, ()))
        if got and got != n:
            return f"{k} has {got} registers, the {mi.form} layout {n}"
    return None
