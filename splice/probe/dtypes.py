"""Element and scalar types a probe spec can name, and what they are on the host.

Two vocabularies meet here: the PTX ISA's scalar types (``.u8``…``.u64``, ``.s8``…``.s64``,
``.f16``, ``.bf16``, ``.f32``, ``.f64``, ``.b8``…``.b64``), which a ``.param`` declares and a
scalar parameter is checked against, and the element types of a buffer (``f16``, ``bf16``,
``f32``, ``tf32`` stored in f32, ``f64``, signed/unsigned 8…64-bit integers, the fp8 formats
``e4m3`` and ``e5m2``).  numpy has no bf16/fp8, so those are stored as their bit patterns
(uint16/uint8) and converted here when statistics need real values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str
    size: int               # bytes per element
    storage: str            # numpy dtype of the stored bits / values
    kind: str               # 'float' | 'int' | 'uint' | 'bits' | 'fp8'

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.storage)

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


# --------------------------------------------------------------------------------------------
# bit-level conversions (no dependency beyond numpy)
# --------------------------------------------------------------------------------------------

def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even f32 -> bf16 bit patterns (uint16); NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    out[nan] = 0x7FC0
    return out


def bf16_bits_to_f32(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def tf32_round(x: np.ndarray) -> np.ndarray:
    """f32 values with the low 13 mantissa bits cleared (what tf32 mma reads)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return (u & np.uint32(0xFFFFE000)).view(np.float32)


def _fp8_table(exp_bits: int, man_bits: int, bias: int, nan_codes) -> np.ndarray:
    codes = np.arange(256)
    s = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    val = np.where(e == 0, m / (1 << man_bits) * 2.0 ** (1 - bias),
                   (1 + m / (1 << man_bits)) * 2.0 ** (e - bias))
    val = s * val
    for c in nan_codes:
        val[c] = np.nan
    return val


E4M3 = _fp8_table(4, 3, 7, (0x7F, 0xFF))
E5M2 = _fp8_table(5, 2, 15, ())
E5M2[[0x7C, 0xFC]] = [np.inf, -np.inf]
E5M2[[0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF]] = np.nan
FP8_MAX_CODE = {"e4m3": 0x7E, "e5m2": 0x7B}       # largest finite magnitude code


def as_float64(values: np.ndarray, t: DType) -> np.ndarray:
    """Real values of stored elements (for absolute / relative error)."""
    if t.name == "bf16":
        return bf16_bits_to_f32(values).astype(np.float64)
    if t.name == "e4m3":
        return E4M3[values.astype(np.intp)]
    if t.name == "e5m2":
        return E5M2[values.astype(np.intp)]
    return values.astype(np.float64)


def ordered(values: np.ndarray, t: DType) -> np.ndarray:
    """Sign-magnitude float bits -> ordered integers, so |a - b| is the ULP distance (+0 and -0
    are 0 apart).  Integers are their own order."""
    if not t.is_float:
        return values.astype(np.int64) if t.kind != "uint" or t.size < 8 else values.view(np.int64)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[t.size]
    u = np.ascontiguousarray(values).view(bits).astype(np.int64 if t.size < 8 else np.uint64)
    sign = np.uint64(1) << np.uint64(8 * t.size - 1) if t.size == 8 else 1 << (8 * t.size - 1)
    if t.size == 8:
        mag = (u & ~sign).astype(np.int64)
        return np.where(u & sign, -mag, mag)
    mag = u & (sign - 1)
    return np.where(u & sign, -mag, mag)
