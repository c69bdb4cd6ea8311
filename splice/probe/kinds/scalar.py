"""``kind: scalar``: a value passed in the ``.param`` itself (an ``int n``, an ``alpha``, a
struct's problem size), one value per launch of a ``launch.sequence`` when it gives one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from ..language import dtypes as dt
from ..language.context import Ctx, position
from ..language.fills import scalar_value
from ..language.skeleton import Slot, yaml_scalar
from .base import Kind


@dataclass(frozen=True, kw_only=True)
class Scalar(Kind):
    dtype: str
    value: tuple                  # one element per value (a vector parameter has several)

    kind: ClassVar[str] = "scalar"
    order: ClassVar[int] = 40
    keys: ClassVar[frozenset] = frozenset({"dtype", "value"})
    claim_order: ClassVar[int] = 900       # what no other kind claims
    sequenced: ClassVar[bool] = True
    offset_align: ClassVar[int] = 1        # parse checks it against the element size

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Scalar":
        raw_t = c.need(d, "dtype", where)
        t = dt.lookup(raw_t)
        if t is None or t.name not in dt.SCALAR_TYPES:
            hint = " (.pred is not a legal .param type of an .entry)" if str(raw_t).lstrip(".") == "pred" else ""
            raise c.err(f"{where}.dtype", f"{raw_t!r} is not a PTX scalar type "
                        f"({', '.join(dt.SCALAR_TYPES)}){hint}", d, "dtype")
        value = c.need(d, "value", where)
        vals = value if isinstance(value, list) else [value]
        if not vals:
            raise c.err(f"{where}.value", "empty list", d, "value")
        out = [scalar_value(c, t, v, f"{where}.value[{i}]", d, "value") for i, v in enumerate(vals)]
        if offset % t.size:
            raise c.err(f"{where}.offset", f"{offset} is not {t.size}-byte aligned", d, "offset")
        line, col = position(d)
        return cls(name=name, offset=offset, dtype=t.name, value=tuple(out), line=line, column=col)

    @property
    def size(self) -> int:
        return dt.TYPES[self.dtype].size * len(self.value)

    @property
    def align(self) -> int:
        return self.size

    @property
    def element(self) -> dt.DType:
        return dt.TYPES[self.dtype]

    def check_value(self, c: Ctx, v, where: str, holder, key) -> None:
        """One element of a ``launch.sequence`` override, checked as the value itself: .nan or
        1.5 in an s32, 10^30, were a traceback, a truncation and a wrap on the GPU run."""
        scalar_value(c, dt.TYPES[self.dtype], v, where, holder, key)

    def declaration_mismatch(self, pp) -> Optional[str]:
        t = dt.TYPES[self.dtype]
        if pp.size != self.size:
            return f"a scalar of {self.size} bytes ({len(self.value)} x .{t.name}), but the PTX parameter is " \
                   f"{pp.size} bytes"
        if not pp.is_array and not dt.ptx_compatible(t, pp.type):
            return f"a .{t.name} scalar, but the PTX declares {pp.type}"
        return None

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        vals = (overrides or {}).get(self.name, self.value)
        t = dt.TYPES[self.dtype]
        if t.name == "bf16":
            return dt.f32_to_bf16_bits(np.array(vals, dtype=np.float32)).tobytes()
        if t.is_float:
            return np.array(vals, dtype=t.storage).tobytes()
        return np.array([int(v) % (1 << (8 * t.size)) for v in vals], dtype=f"<u{t.size}").tobytes()

    def numpy_format(self):
        """Its place in a structured dtype (the first specs' one by-value block)."""
        base = dt.TYPES[self.dtype].storage
        return base if len(self.value) == 1 else (base, (len(self.value),))

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims(cls, slot: Slot) -> bool:
        return True

    @classmethod
    def skeleton(cls, y, slot: Slot) -> dict:
        """A parameter never dereferenced: its declared type, its value to fill in (0 when the
        entry never reads it), and why def-use stopped where it did."""
        pp, short = slot.pp, slot.short
        t = dt.lookup(pp.type)
        tname = t.name if t is not None else "b8"
        own = slot.own_uses
        if not slot.read:
            y.line(f"- {{name: {yaml_scalar(short)}, kind: scalar, dtype: {tname}, value: 0}}   "
                   "# never read by this entry: passed as 0")
        elif any(sp == "call" for sp, _w in own):
            callees = ", ".join(dict.fromkeys(w for sp, w in own if sp == "call"))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: passed to "
                   f"{callees}, whose body is not in this module (not followed): it may be a pointer or "
                   "handle (e.g. 0)")
        elif own:
            spaces = "/".join(dict.fromkeys("." + sp for sp, _w in own))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: an address in the "
                   f"kernel's own {spaces} space ({own[0][1]}), not a buffer: the probe cannot fill that "
                   "memory from the host; give the address the kernel expects (e.g. 0)")
        elif pp.size == 8 and not pp.is_array and not (t is not None and t.is_float):
            y.line(f"- {{name: {yaml_scalar(short)}, kind: scalar, dtype: {tname}, value: null}}   "
                   "# TODO: read as a value, never dereferenced here (e.g. 1)")
        else:
            y.line(f"- {{name: {yaml_scalar(short)}, kind: scalar, dtype: {tname}, value: null}}   # TODO (e.g. 1)")
        return slot.row("scalar", dtype=tname)

    @classmethod
    def struct_members(cls, y, slot, stem: str, taken: list) -> tuple:
        """A by-value struct's bytes read as values (not inside a pointer or a map): scalar
        fields to fill in: (how many, None)."""
        shown = 0
        for off, tname, n, note in slot.value_reads:
            size = dt.TYPES[tname].size
            if any(lo < off + size and off < hi for lo, hi in taken) or off % size:
                continue
            taken.append((off, off + size))
            y.line(f"    - {{name: {yaml_scalar(stem + str(off))}, offset: {off}, kind: scalar, dtype: {tname}, "
                   f"value: null}}   # TODO: {note or f'read as a value (ld.param s{n})'} (e.g. 1)")
            shown += 1
        return shown, None
