"""``kind: opaque``: bytes of a ``.param`` (or of a struct) the entry never reads as values nor
dereferences -- an empty struct (CuTe's tag types, ``.param .align 1 .b8 p[1]``), an 8-byte
object of no state (CUTLASS's TiledMMA), padding a kernel takes whole.  Passed as the spec's
``bytes`` (zeros by default), checked only for their size against the declaration.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from ..language.context import Ctx, position
from ..language.skeleton import Slot, yaml_scalar
from .base import Kind, stuck

#: most bytes an opaque parameter may have (a CUDA kernel's parameters are 32 KiB at most)
MAX_OPAQUE = 32 * 1024


@dataclass(frozen=True, kw_only=True)
class Opaque(Kind):
    nbytes: int
    content: tuple = ()           # the bytes passed (zeros past the end)
    byte_align: int = 1

    kind: ClassVar[str] = "opaque"
    order: ClassVar[int] = 85
    keys: ClassVar[frozenset] = frozenset({"size", "bytes", "align"})
    claim_order: ClassVar[int] = 250
    offset_align: ClassVar[int] = 1
    noun: ClassVar[Optional[str]] = "opaque parameter"

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Opaque":
        size = c.int(c.need(d, "size", where) and d, "size", f"{where}.size", 0)
        if size > MAX_OPAQUE:
            raise c.err(f"{where}.size", f"{size} bytes: more than the {MAX_OPAQUE} a kernel's parameters may hold",
                        d, "size")
        raw = d.get("bytes", [])
        if not isinstance(raw, list) or len(raw) > size or \
                any(isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= 255 for b in raw):
            raise c.err(f"{where}.bytes", f"expected at most {size} byte values (0..255)", d, "bytes")
        align = c.int(d, "align", f"{where}.align", 1, 1)
        if align & (align - 1):
            raise c.err(f"{where}.align", f"{align} is not a power of two", d, "align")
        line, col = position(d)
        return cls(name=name, offset=offset, nbytes=size, content=tuple(raw), byte_align=align, line=line,
                   column=col)

    @property
    def size(self) -> int:
        return self.nbytes

    @property
    def align(self) -> int:
        return self.byte_align

    def declaration_mismatch(self, pp) -> Optional[str]:
        if pp.size != self.nbytes:
            return f"{self.nbytes} opaque bytes, but the PTX parameter is {pp.size} bytes"
        if pp.align > self.byte_align:
            return f"align {self.byte_align}, but the PTX declares .align {pp.align}"
        return None

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        return bytes(self.content) + bytes(self.nbytes - len(self.content))

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims(cls, slot: Slot) -> bool:
        """A byte array of which the entry reads nothing: no load of it at any offset, no
        pointer taken from it, no tensor map in it."""
        pp = slot.pp
        return pp.is_array and not (slot.fields or slot.value_reads or slot.maps_at()) and \
            (slot.use is None or slot.use.role is None)

    @classmethod
    def skeleton(cls, y, slot: Slot) -> dict:
        pp = slot.pp
        what = ("an empty struct (a CuTe tag type): it has no bytes to read" if pp.size == 1 else
                f"{pp.size} bytes no instruction of this entry reads (an object of no state, a TiledMMA, "
                "padding): passed as zeros")
        if slot.read:
            what += "; check: its address is taken, and where it goes was not followed"
        if pp.size == 0:
            what = f"an unsized .param array ({pp.text.strip()}): no launch passes one"
        y.line(f"- {{name: {yaml_scalar(slot.short)}, kind: opaque, size: {pp.size}, align: {pp.align}}}   # {what}")
        return stuck(slot.row("opaque", size=pp.size), what if pp.size == 0 else None)
