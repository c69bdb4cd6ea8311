"""The data a fill describes, on the host: deterministic buffers, weight images, poison patterns.

Every random fill is generated in fixed 1 MiB chunks, each from its own
``numpy.random.SeedSequence((spec.seed, fill.seed, chunk))``, so a prefix of a
buffer never depends on the buffer's length and any chunk can be regenerated
alone (the tests use this to check 265 MB planes without building them).

e4m3 bytes are ``sign<<7 | code`` with ``code`` uniform in ``[0, max_code]``,
which never produces the NaN encodings 0x7F/0xFF; f16 values are uniform in
``[low, high]``.  A weight image is e4m3 everywhere except its ``f16_regions``
(score biases, per-column tables, gains, GEMM biases).
"""
from __future__ import annotations

import numpy as np

from . import dtypes as dt
from .fills import Fill

CHUNK = 1 << 20  # bytes per independently seeded chunk


def _rng(spec_seed: int, fill_seed: int, chunk: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence((spec_seed, fill_seed, chunk))))


def e4m3_bytes(nbytes: int, fill: Fill, spec_seed: int, start_chunk: int = 0) -> np.ndarray:
    """``nbytes`` valid e4m3 bytes (no 0x7F/0xFF), chunk-seeded from ``start_chunk``."""
    out = np.empty(nbytes, dtype=np.uint8)
    for c0 in range(0, nbytes, CHUNK):
        n = min(CHUNK, nbytes - c0)
        rng = _rng(spec_seed, fill.seed, start_chunk + c0 // CHUNK)
        # always draw a whole chunk, so a prefix never depends on the length asked for
        code = rng.integers(0, fill.max_code + 1, CHUNK, dtype=np.uint8)
        sign = rng.integers(0, 2, CHUNK, dtype=np.uint8) << np.uint8(7)
        out[c0:c0 + n] = (code | sign)[:n]
    return out


def f16_values(count: int, low: float, high: float, seed: int, spec_seed: int,
               start_chunk: int = 0) -> np.ndarray:
    """``count`` f16 values uniform in [low, high], chunk-seeded (CHUNK/2 values per chunk)."""
    per = CHUNK // 2
    out = np.empty(count, dtype=np.float16)
    for c0 in range(0, count, per):
        n = min(per, count - c0)
        rng = _rng(spec_seed, seed, start_chunk + c0 // per)
        out[c0:c0 + n] = rng.uniform(low, high, per).astype(np.float16)[:n]
    return out


def weight_image(field, spec_seed: int) -> np.ndarray:
    """The prepared weight image (``field.bytes`` long, padding included)."""
    fill = field.fill
    assert fill is not None and fill.rule == "weight_image"
    img = e4m3_bytes(field.bytes, fill, spec_seed)
    for k, r in enumerate(fill.regions):
        vals = f16_values((r.hi - r.lo) // 2, r.low, r.high, fill.seed * 1000 + k + 1, spec_seed)
        img[r.lo:r.hi] = vals.view(np.uint8)
    return img


def element_values(t: dt.DType, count: int, fill: Fill, spec_seed: int) -> np.ndarray:
    """``count`` elements of type ``t`` (numpy storage dtype) following ``fill``; random rules
    are drawn chunk by chunk (CHUNK bytes of elements per chunk), so prefixes are stable."""
    rule = fill.rule
    if rule in ("zeros", "constant", "constant_u16", "arange"):
        return _closed_form(t, count, fill)
    if rule in ("e4m3", "e5m2"):
        if t.size != 1:
            raise ValueError(f"fill {rule} needs a 1-byte element type, not {t.name}")
        sub = Fill(**{**fill.__dict__, "max_code": min(fill.max_code, dt.FP8_MAX_CODE[rule])})
        return e4m3_bytes(count, sub, spec_seed).view(t.storage)
    if rule == "from":
        return _from_npy(t, count, fill)
    per = max(1, CHUNK // t.size)
    out = np.empty(count, dtype=t.storage)
    for c0 in range(0, count, per):
        n = min(per, count - c0)
        out[c0:c0 + n] = _draw(t, per, fill, _rng(spec_seed, fill.seed, c0 // per))[:n]
    return out


def _draw(t: dt.DType, n: int, fill: Fill, rng: np.random.Generator) -> np.ndarray:
    v: np.ndarray
    if fill.rule == "normal":
        v = rng.normal(fill.mean, fill.std, n)
    elif fill.rule == "integers" or (fill.rule == "uniform" and not t.is_float):
        lo, hi = int(np.ceil(fill.low)), int(np.floor(fill.high))
        v = rng.integers(lo, hi + 1, n, dtype=np.int64)
    else:                                   # uniform, f16_uniform
        v = rng.uniform(fill.low, fill.high, n)
    return _store(t, v)


def _store(t: dt.DType, v: np.ndarray) -> np.ndarray:
    """Real values -> the stored representation of ``t`` (fp8 by nearest code)."""
    if t.name == "bf16":
        return dt.f32_to_bf16_bits(v.astype(np.float32))
    if t.name == "tf32":
        return dt.tf32_round(v.astype(np.float32))
    if t.kind == "fp8":
        table = dt.E4M3 if t.name == "e4m3" else dt.E5M2
        finite = np.where(np.isfinite(table), table, np.inf)
        order = np.argsort(finite)
        idx = np.clip(np.searchsorted(finite[order], v), 0, 255)
        return order[idx].astype(np.uint8)
    if t.kind in ("int", "uint", "bits"):
        info = np.iinfo(t.storage)
        return np.clip(np.rint(v), info.min, info.max).astype(t.storage)
    return v.astype(t.storage)


def _closed_form(t: dt.DType, count: int, fill: Fill) -> np.ndarray:
    if fill.rule == "zeros":
        return np.zeros(count, dtype=t.storage)
    if fill.rule == "constant_u16":
        return np.full(count * t.size // 2, fill.value, dtype=np.uint16).view(t.storage)[:count]
    if fill.rule == "constant":
        return _store(t, np.full(count, float(fill.value)))
    v = fill.start + fill.step * np.arange(count, dtype=np.float64)
    if not t.is_float:                      # integer aranges wrap like the type does
        bits = 8 * t.size
        return (np.int64(fill.start) + np.int64(fill.step) * np.arange(count, dtype=np.int64)
                ).astype(np.uint64 if bits == 64 else np.int64).astype(f"<u{t.size}").view(t.storage)
    return _store(t, v)


def _from_npy(t: dt.DType, count: int, fill: Fill) -> np.ndarray:
    arr = np.load(fill.path, allow_pickle=False)
    raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
    need = count * t.size
    if raw.size < need:
        raise ValueError(f"{fill.path}: {raw.size} bytes, the buffer needs {need}")
    return raw[:need].copy().view(t.storage)


def buffer_bytes(field, spec_seed: int, limit: int | None = None) -> np.ndarray | None:
    """Host bytes of a buffer field; ``None`` for an all-zero buffer (allocated zeroed on the
    device instead).  ``limit`` generates only a prefix."""
    fill = field.fill
    assert fill is not None
    n = field.bytes if limit is None else min(limit, field.bytes)
    if fill.rule == "zeros":
        return None if limit is None else np.zeros(n, dtype=np.uint8)
    if fill.rule == "weight_image":
        return weight_image(field, spec_seed)[:n]
    if fill.rule == "e4m3":                          # the first specs: bytes, whatever the dtype
        return e4m3_bytes(n, fill, spec_seed)
    if fill.rule == "f16_uniform":
        return f16_values(n // 2, fill.low, fill.high, fill.seed, spec_seed).view(np.uint8)
    t = field.element
    count = -(-n // t.size)
    vals = element_values(t, count, fill, spec_seed)
    return np.ascontiguousarray(vals).view(np.uint8)[:n]


def poison_value(field, alt: bool = False) -> int:
    """The poison pattern (a byte, or one element's bits); ``alt`` gives its complement, used
    by the coverage render: an element is unwritten only if it holds the poison after one
    launch and the complement after the other (a written value cannot be both)."""
    bits = 8 if field.poison_is_byte else 8 * field.element.size
    p = int(field.poison)
    return (~p & ((1 << bits) - 1)) if alt else p


def output_poison(field, alt: bool = False) -> np.ndarray:
    """The bytes an output buffer holds before each launch (a byte, or an element pattern)."""
    if field.poison_is_byte:
        return np.full(field.bytes, poison_value(field, alt), dtype=np.uint8)
    t = field.element
    n = -(-field.bytes // t.size)
    return np.full(n, poison_value(field, alt), dtype=f"<u{t.size}").view(np.uint8)[:field.bytes]
