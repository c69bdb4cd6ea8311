"""Deterministic host-side inputs of a probe: buffers, weight images, texture
contents and the packed by-value parameter block.

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

from .spec import Field, Fill, ProbeSpec

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


def weight_image(field: Field, spec_seed: int) -> np.ndarray:
    """The prepared weight image (``field.bytes`` long, padding included)."""
    fill = field.fill
    assert fill is not None and fill.rule == "weight_image"
    img = e4m3_bytes(field.bytes, fill, spec_seed)
    for k, r in enumerate(fill.regions):
        vals = f16_values((r.hi - r.lo) // 2, r.low, r.high, fill.seed * 1000 + k + 1, spec_seed)
        img[r.lo:r.hi] = vals.view(np.uint8)
    return img


def buffer_bytes(field: Field, spec_seed: int, limit: int | None = None) -> np.ndarray | None:
    """Host bytes of a buffer field; ``None`` for an all-zero buffer (allocated
    zeroed on the device instead).  ``limit`` generates only a prefix."""
    fill = field.fill
    assert fill is not None
    n = field.bytes if limit is None else min(limit, field.bytes)
    if fill.rule == "zeros":
        return None if limit is None else np.zeros(n, dtype=np.uint8)
    if fill.rule == "e4m3":
        return e4m3_bytes(n, fill, spec_seed)
    if fill.rule == "f16_uniform":
        return f16_values(n // 2, fill.low, fill.high, fill.seed, spec_seed).view(np.uint8)
    if fill.rule == "weight_image":
        img = weight_image(field, spec_seed)
        return img[:n]
    if fill.rule == "constant_u16":
        return np.full(n // 2, fill.value, dtype=np.uint16).view(np.uint8)
    raise ValueError(f"{field.name}: fill rule {fill.rule!r} does not apply to a buffer")


def texture_texels(field: Field, spec_seed: int) -> np.ndarray:
    """RGBA16F texels as a (height, 4*width) float16 array (cupy CUDAarray layout)."""
    fill = field.fill
    assert fill is not None and field.kind == "texture"
    count = field.width * field.height * 4
    if fill.rule == "f16_uniform":
        vals = f16_values(count, fill.low, fill.high, fill.seed, spec_seed)
    elif fill.rule == "constant_u16":
        vals = np.full(count, fill.value, dtype=np.uint16).view(np.float16)
    elif fill.rule == "zeros":
        vals = np.zeros(count, dtype=np.float16)
    else:
        raise ValueError(f"{field.name}: fill rule {fill.rule!r} does not apply to a texture")
    return vals.reshape(field.height, 4 * field.width)


def surface_poison(field: Field) -> np.ndarray:
    assert field.kind == "surface" and field.poison is not None
    return np.full((field.height, 4 * field.width), field.poison, dtype=np.uint16).view(np.float16)


# ---------------------------------------------------------------- the parameter block

_NP = {"uint8": "<u1", "uint16": "<u2", "uint32": "<u4", "int32": "<i4", "float32": "<f4",
       "uint64": "<u8"}


def param_dtype(spec: ProbeSpec) -> np.dtype:
    """Structured dtype of the by-value parameter block: every field at its
    offset, itemsize ``params.size``, 8-byte aligned."""
    names, formats, offsets = [], [], []
    for f in spec.fields:
        names.append(f.name)
        offsets.append(f.offset)
        if f.kind == "scalar":
            base = _NP[f.dtype]
            formats.append(base if len(f.value) == 1 else (base, (len(f.value),)))
        else:
            formats.append("<u8")
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": spec.param_size}, align=True)


def pack_params(spec: ProbeSpec, handles: dict[str, int]) -> np.void:
    """The parameter block as an aligned numpy structured scalar.  ``handles``
    maps every buffer/texture/surface field to its device address or object
    handle; scalars come from the spec."""
    dt = param_dtype(spec)
    arr = np.zeros((), dtype=dt)
    for f in spec.fields:
        if f.kind == "scalar":
            arr[f.name] = f.value[0] if len(f.value) == 1 else np.array(f.value, dtype=_NP[f.dtype])
        else:
            if f.name not in handles:
                raise KeyError(f"no device handle for parameter field {f.name!r}")
            arr[f.name] = np.uint64(handles[f.name])
    return arr[()]


def param_bytes(spec: ProbeSpec, handles: dict[str, int]) -> bytes:
    raw = pack_params(spec, handles).tobytes()
    assert len(raw) == spec.param_size
    return raw
