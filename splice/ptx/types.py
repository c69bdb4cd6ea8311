"""The element and scalar types of PTX values: names, sizes, kinds, and how a host stores them.

Two vocabularies meet here: the PTX ISA's scalar types (``.u8``…``.u64``, ``.s8``…``.s64``,
``.f16``, ``.bf16``, ``.f32``, ``.f64``, ``.b8``…``.b64``), which a ``.param`` declares, a load or
store names and a probe's scalar parameter is checked against, and the element types of memory
(``f16``, ``bf16``, ``f32``, ``tf32`` stored in f32, ``f64``, signed/unsigned 8…64-bit
integers, the fp8 formats ``e4m3`` and ``e5m2``).  The analyses read the types of accesses
here; the probe's host values (``splice.probe.language.dtypes``: numpy conversions) build on it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str
    size: int               # bytes per element
    storage: str            # numpy dtype of the stored bits / values
    kind: str               # 'float' | 'int' | 'uint' | 'bits' | 'fp8'

    @property
    def is_float(self) -> bool:
        return self.kind in ("float", "fp8")


def _t(name, size, storage, kind):
    return DType(name, size, storage, kind)


TYPES = {t.name: t for t in (
    _t("f16", 2, "<f2", "float"), _t("bf16", 2, "<u2", "float"), _t("f32", 4, "<f4", "float"),
    _t("tf32", 4, "<f4", "float"), _t("f64", 8, "<f8", "float"),
    _t("s8", 1, "<i1", "int"), _t("s16", 2, "<i2", "int"), _t("s32", 4, "<i4", "int"),
    _t("s64", 8, "<i8", "int"),
    _t("u8", 1, "<u1", "uint"), _t("u16", 2, "<u2", "uint"), _t("u32", 4, "<u4", "uint"),
    _t("u64", 8, "<u8", "uint"),
    _t("b8", 1, "<u1", "bits"), _t("b16", 2, "<u2", "bits"), _t("b32", 4, "<u4", "bits"),
    _t("b64", 8, "<u8", "bits"),
    _t("e4m3", 1, "<u1", "fp8"), _t("e5m2", 1, "<u1", "fp8"),
)}

# spellings accepted for the same type (the first probe specs used numpy-style names)
ALIASES = {"uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int8": "s8",
           "int16": "s16", "int32": "s32", "int64": "s64", "i8": "s8", "i16": "s16", "i32": "s32",
           "i64": "s64", "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32",
           "float": "f32", "float64": "f64", "double": "f64", "fp8e4m3": "e4m3", "fp8e5m2": "e5m2"}

SCALAR_TYPES = tuple(n for n in TYPES if n not in ("tf32", "e4m3", "e5m2"))
BUFFER_TYPES = tuple(n for n, t in TYPES.items() if t.kind != "bits")


def lookup(name) -> DType | None:
    if not isinstance(name, str):
        return None
    n = name.lstrip(".").lower()
    return TYPES.get(ALIASES.get(n, n))


def ptx_compatible(spec_type: DType, ptx_type: str) -> bool:
    """Does a spec scalar of ``spec_type`` fit a ``.param`` declared ``ptx_type``?  Sizes must
    agree; a ``.b`` declaration takes any type of its size, and integer signedness is free
    (nvcc declares ``int`` as ``.u32``); floats must match floats."""
    p = lookup(ptx_type)
    if p is None or p.size != spec_type.size:
        return False
    if p.kind == "bits" or spec_type.kind == "bits":
        return True
    if p.kind in ("int", "uint"):
        return spec_type.kind in ("int", "uint")
    return p.name == spec_type.name
