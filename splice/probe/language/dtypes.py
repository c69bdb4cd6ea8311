"""Host values of the PTX types (``splice.ptx.types``): numpy has no bf16 or fp8, so those are
stored as their bit patterns (uint16/uint8) and converted here when fills or statistics need
real values; the type vocabulary itself is re-exported so the probe names one module."""
from __future__ import annotations

import numpy as np

from ...ptx.types import ALIASES, BUFFER_TYPES, SCALAR_TYPES, TYPES, DType, lookup, ptx_compatible

__all__ = ["ALIASES", "BUFFER_TYPES", "SCALAR_TYPES", "TYPES", "DType", "lookup", "ptx_compatible",
           "f32_to_bf16_bits", "bf16_bits_to_f32", "tf32_round", "E4M3", "E5M2", "FP8_MAX_CODE",
           "as_float64", "ordered"]


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
