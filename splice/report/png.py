"""Minimal PNG writer (zlib + struct, numpy in): 8-bit grey or RGB, no extra dependency."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def encode(img: np.ndarray, level: int = 6) -> bytes:
    """PNG bytes of a uint8 array (H, W) grey or (H, W, 3) RGB."""
    img = np.ascontiguousarray(img, dtype=np.uint8)
    if img.ndim == 2:
        colour, ch = 0, 1
    elif img.ndim == 3 and img.shape[2] == 3:
        colour, ch = 2, 3
    else:
        raise ValueError(f"PNG: need (H, W) or (H, W, 3) uint8, got {img.shape}")
    h, w = img.shape[:2]
    rows = img.reshape(h, w * ch)
    raw = np.empty((h, w * ch + 1), dtype=np.uint8)
    raw[:, 0] = 0                       # filter: none
    raw[:, 1:] = rows
    ihdr = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
            + _chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + _chunk(b"IEND", b""))


def write(path, img: np.ndarray) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(img))
    return path


def decode(data: bytes) -> np.ndarray:
    """Read back what :func:`encode` writes (filter 0 only; for tests)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = colour = None
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        tag = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            w, h, _, colour = struct.unpack(">IIBB", body[:10])
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    ch = 3 if colour == 2 else 1
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, w * ch + 1)
    img = raw[:, 1:]
    return img.reshape(h, w, 3) if ch == 3 else img.reshape(h, w)


def heat(values: np.ndarray) -> np.ndarray:
    """(H, W) non-negative -> RGB heatmap: 0 black, then log-scaled dark red -> yellow -> white."""
    v = np.asarray(values, dtype=np.float64)
    out = np.zeros(v.shape + (3,), dtype=np.uint8)
    nz = v > 0
    if not nz.any():
        return out
    lv = np.log2(v[nz] + 1.0)
    t = lv / max(float(lv.max()), 1e-12)          # (0, 1]
    r = np.clip(80 + 3 * 175 * t, 0, 255)
    g = np.clip((t - 0.33) * 3 * 255, 0, 255)
    b = np.clip((t - 0.66) * 3 * 255, 0, 255)
    out[nz] = np.stack([r, g, b], axis=-1).astype(np.uint8)
    return out
