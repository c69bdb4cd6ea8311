"""Frame and output comparison (numpy; no cupy).

A frame is the RGBA16F surface read back as ``(H, W, 4)`` uint16.  f16 ULP distance uses the
usual ordered-integer map (sign-magnitude -> two's complement), so +0/-0 are 0 apart and the
distance between neighbouring representable values is 1; NaNs compare by bits only.
"""
from __future__ import annotations

import numpy as np


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
    out = {"uncovered": int(uncovered.sum()), "nonfinite": nonfinite}
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
    edges = [1, 2, 4, 16, 256, 65536]
    out, lo = {}, 1
    for e in edges[1:] + [1 << 30]:
        n = int(((v >= lo) & (v < e)).sum())
        if n:
            out[f"{lo}..{e - 1}" if e - 1 > lo else f"{lo}"] = n
        lo = e
    return out


def heatmap(ulp_map: np.ndarray, path) -> str:
    from ..report.png import heat, write

    return str(write(path, heat(ulp_map)))
