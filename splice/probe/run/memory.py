"""Everything a kernel can write, snapshotted and compared on the device.

The bound harness (``epilogue_harness``) runs a cut against the spec's own buffers and
surfaces, so "the memory written by the cut" is whatever changed in them: outputs (poisoned
first, like a frame run), inout buffers, and input buffers too (a cut that stores into an input
is a difference worth naming).  An enc5 arena is 1.3 GB, so nothing here goes through the
host: states are device copies, comparisons are device reductions, and only counts and the
first differing element come back.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Written:
    """One buffer or surface after both sides: what the original's cut wrote, and whether the
    spliced cut wrote the same bytes."""
    name: str
    bytes: int
    bytes_written: int           # bytes the original changed from the state before it ran
    bytes_differ: int            # bytes where original and spliced differ
    first_byte: int | None       # the first differing byte
    first_index: list | None     # the element there: [x, y, channel] for a surface texel ([x, y, z|layer,
    #                              channel] for 3-D and layered ones, images.index), [i] otherwise
    original: str | None         # that element's bits (hex), each side
    spliced: str | None

    @property
    def identical(self) -> bool:
        return self.bytes_differ == 0

    def as_dict(self) -> dict:
        return {"identical": self.identical, "bytes": self.bytes, "bytes_written": self.bytes_written,
                "bytes_differ": self.bytes_differ, "first_byte": self.first_byte,
                "first_index": self.first_index, "original": self.original, "spliced": self.spliced}


def writable(spec) -> list:
    """The spec's fields a kernel can write: every buffer (any role) and every surface."""
    return [f for f in spec.fields if f.writable]


def snapshot(dev, stream) -> dict:
    """{name: a device copy} of every writable field, ordered on ``stream``."""
    return {f.name: f.snapshot(dev, stream) for f in writable(dev.spec)}


def restore(dev, state: dict, stream) -> None:
    """Put back the inputs from ``state`` (``Device.prepare`` poisons outputs and restores
    inouts; inputs a cut may have written come back from the snapshot)."""
    for f in writable(dev.spec):
        f.restore(dev, state[f.name], stream)


def compare(xp, spec, before: dict, original: dict, spliced: dict) -> list:
    """[Written] per writable field, reduced on the device (``xp`` is cupy there, numpy in
    tests)."""
    out = []
    for f in writable(spec):
        a, b, p = (s[f.name].reshape(-1).view(xp.uint8) for s in (original, spliced, before))
        neq = a != b
        nd = int(xp.count_nonzero(neq))
        written = int(xp.count_nonzero(a != p))
        first = int(xp.argmax(neq)) if nd else None
        idx = ov = sv = None
        if first is not None:
            size = f.element.size
            e = first // size
            ov, sv = (_bits(xp, s[f.name].reshape(-1).view(xp.uint8)[e * size:(e + 1) * size])
                      for s in (original, spliced))
            idx = f.place_flat(e)
        out.append(Written(f.name, int(a.size), written, nd, first, idx, ov, sv))
    return out


def _bits(xp, raw) -> str:
    host = raw.get() if hasattr(raw, "get") and xp.__name__ != "numpy" else raw
    return "0x" + bytes(bytearray(int(x) for x in host))[::-1].hex()
