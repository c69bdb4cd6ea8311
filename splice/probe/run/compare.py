"""Frame and output comparison (numpy; no cupy).

A frame is the RGBA16F surface read back as ``(H, W, 4)`` uint16.  f16 ULP distance uses the
usual ordered-integer map (sign-magnitude -> two's complement), so +0/-0 are 0 apart and the
distance between neighbouring representable values is 1; NaNs compare by bits only.
"""
from __future__ import annotations

import numpy as np

from ..language import dtypes as dt
from ..language.fill_data import poison_value


def f16_ordered(u16: np.ndarray) -> np.ndarray:
    u = u16.astype(np.int32)
    mag = u & 0x7FFF
    return np.where(u & 0x8000, -mag, mag)


def ulp_distance(a16: np.ndarray, b16: np.ndarray) -> np.ndarray:
    return np.abs(f16_ordered(a16) - f16_ordered(b16))


def coverage(px: np.ndarray, poison: int) -> dict:
    """Pixels (all four channels) still holding the poison pattern; non-finite RGB values."""
    uncovered = (px == np.uint16(poison)).all(axis=-1)
    f = px[..., :3].view(np.float16)
    nonfinite = int((~np.isfinite(f)).sum())
    out: dict = {"uncovered": int(uncovered.sum()), "nonfinite": nonfinite}
    if out["uncovered"]:
        ys, xs = np.nonzero(uncovered)
        out["first_uncovered"] = [int(xs[0]), int(ys[0])]
    return out


def compare_frames(a: np.ndarray, b: np.ndarray) -> dict:
    """a, b: (H, W, 4) uint16.  Bytes and pixels that differ, max |Δ| in f16 ULPs, the first
    differing (x, y) in row-major order, and the per-pixel max ULP map (None when equal)."""
    assert a.shape == b.shape, (a.shape, b.shape)
    h, w, _ = a.shape
    ab = a.view(np.uint8)
    bb = b.view(np.uint8)
    bytes_differ = int((ab != bb).sum())
    res = {"identical": bytes_differ == 0, "bytes": int(ab.size), "bytes_differ": bytes_differ,
           "pixels": h * w, "pixels_differ": 0, "max_ulp": 0, "first_xy": None, "ulp_map": None}
    if bytes_differ == 0:
        return res
    ch_diff = a != b
    pix = ch_diff.any(axis=-1)
    ulp = ulp_distance(a, b)
    nan_a = np.isnan(a.view(np.float16))
    nan_b = np.isnan(b.view(np.float16))
    ulp = np.where(nan_a | nan_b, np.where(ch_diff, 65535, 0), ulp)
    per_px = ulp.max(axis=-1)
    ys, xs = np.nonzero(pix)
    order = np.lexsort((xs, ys))
    fy, fx = int(ys[order[0]]), int(xs[order[0]])
    res.update({
        "pixels_differ": int(pix.sum()), "max_ulp": int(per_px.max()),
        "channels_differ": [int(ch_diff[..., c].sum()) for c in range(4)],
        "first_xy": [fx, fy],
        "first_values": {"original": [float(v) for v in a[fy, fx].view(np.float16)],
                         "spliced": [float(v) for v in b[fy, fx].view(np.float16)]},
        "ulp_histogram": _hist(per_px[pix]),
        "bbox": [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())],
        "ulp_map": per_px,
    })
    return res


def _hist(v: np.ndarray) -> dict:
    edges = [1, 2, 4, 16, 256, 65536, 1 << 24]
    out, lo = {}, 1
    for e in edges[1:] + [1 << 62]:
        n = int(((v >= lo) & (v < e)).sum())
        if n:
            out[f"{lo}..{e - 1}" if e - 1 > lo else f"{lo}"] = n
        lo = e
    return out


# --------------------------------------------------------------------------------------------
# any output: buffers of any element type, surfaces of any format
# --------------------------------------------------------------------------------------------

def elements(field, raw: np.ndarray) -> np.ndarray:
    """A read-back output as its element array (its kind's layout: a buffer's shape, a
    surface's ``(..., W, C)``)."""
    return field.elements(raw)


def _holds(field, e: np.ndarray, alt: bool) -> np.ndarray:
    t = field.element
    bits = e.view(f"<u{t.size}") if t.size > 1 else e.view(np.uint8)
    p = poison_value(field, alt)
    pat = int.from_bytes(bytes([p]) * t.size, "little") if field.poison_is_byte else p
    return bits == np.array(pat, dtype=bits.dtype)


def output_coverage(field, e: np.ndarray, e_alt: np.ndarray | None = None) -> dict:
    """Elements (pixels, for a surface: all channels) never written: they hold the poison
    after the normal render and, when ``e_alt`` (a render poisoned with the complement) is
    given, the complement there too -- so a written value equal to the poison is not counted.
    Non-finite values: a surface's alpha channel excluded, as for the RGBA16F frames."""
    t = field.element
    out = {"elements": int(e.size), "uncovered": 0, "nonfinite": 0}
    if field.role == "output":
        hit = _holds(field, e, False)
        if e_alt is not None:
            hit &= _holds(field, e_alt, True)
        hit = field.pixels(hit)
        out["uncovered"] = int(hit.sum())
        if out["uncovered"]:
            idx = np.unravel_index(int(np.argmax(hit.reshape(-1))), hit.shape)
            out["first_uncovered"] = field.place(idx)
    if t.is_float:
        vals = field.finite_part(e)
        out["nonfinite"] = int((~np.isfinite(dt.as_float64(vals, t))).sum())
    return out


def compare_output(field, a: np.ndarray, b: np.ndarray) -> tuple:
    """(statistics dict, 2-D difference map or None).  a, b: element arrays (``elements``).
    Bit-for-bit first; on a difference: counts, the first differing index ((x, y) for a
    surface), ULP distance for floats (ordered integers; NaN against a number counts as
    infinitely far), absolute and relative error, a ULP histogram, and a per-row/column map for
    2-D outputs (a surface's pixels take the max over channels).  Statistics are computed on
    the differing elements only, so a 1 GiB arena with a few changed words stays cheap."""
    t = field.element
    assert a.shape == b.shape, (a.shape, b.shape)
    ab, bb = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
    res = {"dtype": t.name, "shape": list(a.shape), "identical": bool(np.array_equal(ab, bb)),
           "bytes": int(ab.size), "bytes_differ": 0}
    if res["identical"]:
        return res, None
    res["bytes_differ"] = int(np.count_nonzero(ab != bb))
    ua = a.reshape(-1).view(f"<u{t.size}") if t.size > 1 else ab
    ub = b.reshape(-1).view(f"<u{t.size}") if t.size > 1 else bb
    idx = np.flatnonzero(ua != ub)
    ea, eb = a.reshape(-1)[idx], b.reshape(-1)[idx]
    fa, fb = dt.as_float64(ea, t), dt.as_float64(eb, t)
    first = np.unravel_index(int(idx[0]), a.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        absd = np.abs(fa - fb)
        fin = np.isfinite(fa) & np.isfinite(fb)
        rel = absd[fin] / np.maximum(np.abs(fa[fin]), np.finfo(np.float64).tiny)
    dist = None
    if t.is_float:              # ULPs only mean something for floats (skipped for big int arenas)
        dist = np.abs(dt.ordered(ea, t).astype(np.float64) - dt.ordered(eb, t).astype(np.float64))
        dist[np.isnan(fa) | np.isnan(fb)] = np.inf
    res.update({
        "elements": int(a.size), "elements_differ": int(idx.size), "first_index": field.place(first),
        "first_values": {"original": _val(fa[0]), "spliced": _val(fb[0])},
        "max_ulp": _val(dist.max()) if dist is not None else None,
        "ulp_histogram": _hist(dist[np.isfinite(dist)]) if dist is not None else None,
        "nan_mismatch": int((np.isnan(fa) | np.isnan(fb)).sum()) if t.is_float else 0,
        "max_abs_err": _val(absd[fin].max()) if fin.any() else None,
        "mean_abs_err": _val(absd[fin].mean()) if fin.any() else None,
        "max_rel_err": _val(rel.max()) if rel.size else None,
    })
    if a.ndim < 2:
        return res, None
    per = np.where(np.isfinite(dist), dist, 0.0) if dist is not None else np.nan_to_num(absd)
    if dist is not None and np.isinf(dist).any():
        per = np.where(np.isinf(dist), per.max() + 1, per)
    heat = np.zeros(a.size, dtype=np.float64)
    heat[idx] = np.maximum(per, 1e-300)
    more, heat = field.difference_map(heat.reshape(a.shape), first, a.shape)
    res.update(more)
    return res, heat


def _val(x) -> float | str | None:
    x = float(x)
    return x if np.isfinite(x) else (None if np.isnan(x) else ("inf" if x > 0 else "-inf"))
