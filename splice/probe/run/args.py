"""The ``kernelParams`` of a launch: each ``.param``'s bytes (every field's ``blob`` at its
offset, zero padding elsewhere) in one host block, and the array of their addresses."""
from __future__ import annotations

import numpy as np

from ..language.records import Param, ProbeSpec


def param_blob(p: Param, handles: dict, overrides: dict | None = None) -> bytes:
    """The bytes of one ``.param``: every field at its offset, zero padding elsewhere."""
    buf = bytearray(p.size)
    for f in p.fields:
        raw = f.blob(handles, overrides)
        buf[f.offset:f.offset + len(raw)] = raw
    return bytes(buf)


class ArgPack:
    """``kernelParams`` for cuLaunchKernel: one host buffer per ``.param`` (each at its own
    alignment inside one numpy block that this object keeps alive) and the array of their
    addresses, one pointer per ``.param``."""

    def __init__(self, spec: ProbeSpec, handles: dict, overrides: dict | None = None):
        blobs = [param_blob(p, handles, overrides) for p in spec.params]
        offsets, pos = [], 0
        for p, b in zip(spec.params, blobs):
            a = max(8, p.align)
            pos = -(-pos // a) * a
            offsets.append(pos)
            pos += len(b)
        self.block = np.zeros(pos + 256, dtype=np.uint8)
        shift = (-self.block.ctypes.data) % 256           # the block itself 256-aligned
        for off, b in zip(offsets, blobs):
            self.block[shift + off:shift + off + len(b)] = np.frombuffer(b, dtype=np.uint8)
        base = self.block.ctypes.data + shift
        self.offsets = tuple(offsets)
        self.blobs = tuple(blobs)
        self.pointers = np.array([base + o for o in offsets], dtype=np.uint64)

    @property
    def kernel_params(self) -> int:
        """The ``void **kernelParams`` argument."""
        return int(self.pointers.ctypes.data)


def param_dtype(spec: ProbeSpec) -> np.dtype:
    """Structured dtype of the first specs' single by-value parameter block: every field at
    its offset, itemsize ``params.size``, 8-byte aligned."""
    p = spec.params[0]
    return np.dtype({"names": [f.name for f in p.fields], "formats": [f.numpy_format() for f in p.fields],
                     "offsets": [f.offset for f in p.fields], "itemsize": p.size}, align=True)


def pack_params(spec: ProbeSpec, handles: dict[str, int]) -> np.void:
    """The first parameter as an aligned numpy structured scalar."""
    raw = param_blob(spec.params[0], handles)
    return np.frombuffer(raw, dtype=param_dtype(spec))[0]


def param_bytes(spec: ProbeSpec, handles: dict[str, int]) -> bytes:
    raw = param_blob(spec.params[0], handles)
    assert len(raw) == spec.params[0].size
    return raw
