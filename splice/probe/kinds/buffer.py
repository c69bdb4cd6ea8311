"""``kind: buffer``: device memory a pointer parameter points at -- typed elements, an extent,
a seeded fill, a role.  Outputs are poisoned before each launch and compared bit for bit; inouts
are restored to their fill before each launch and compared too."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from ..language import dtypes as dt
from ..language.context import MAX_ALIGN, MAX_BUFFER_BYTES, MAX_DIMS, ROLES, Ctx, SpecError, position
from ..language.fill_data import buffer_bytes, output_poison, poison_value
from ..language.fills import Fill, check_fill, parse_fill, parse_poison
from ..language.skeleton import yaml_scalar
from .base import Kind, device_restore, field_kind

BUFFER_KEYS = frozenset({"dtype", "bytes", "image_bytes", "shape", "align", "role", "fill", "poison"})


@dataclass(frozen=True, kw_only=True)
class Buffer(Kind):
    dtype: str = "u8"             # the element type
    bytes: int = 0                # the allocation
    image_bytes: int = 0          # a weight image's documented extent (<= bytes)
    shape: tuple = ()             # in elements (2-D outputs get a heatmap)
    align: int = 256              # the device address' alignment
    fill: Optional[Fill] = None
    poison: Optional[int] = None  # outputs: a byte (0..255) or an element's bit pattern
    poison_is_byte: bool = True

    kind: ClassVar[str] = "buffer"
    noun: ClassVar[Optional[str]] = "buffer"
    always_counted: ClassVar[bool] = True
    order: ClassVar[int] = 10
    keys: ClassVar[frozenset] = BUFFER_KEYS
    claim_order: ClassVar[int] = 800       # a pointer the kernel dereferences, when nothing else

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Buffer":
        return cls(**buffer_attrs(c, d, where, legacy), name=name, offset=offset)

    @property
    def element(self) -> dt.DType:
        return dt.lookup(self.dtype) or dt.TYPES["u8"]

    @property
    def writable(self) -> bool:
        return True

    @property
    def is_weight_image(self) -> bool:
        return self.fill is not None and self.fill.rule == "weight_image"

    def frame_extent(self) -> tuple:
        h, w = (self.shape[0], self.shape[1]) if len(self.shape) >= 2 else (0, 0)
        return w, h, self.dtype

    # ------------------------------------------------------------------ the kernel

    def kernel_checks(self, spec, facts, key: str) -> list:
        if self.role != "input" or spec.legacy:   # the first specs' arena struct: roles as it always read them
            return []
        return [(3, lambda: self._not_written(spec, facts, key))]

    def _not_written(self, spec, facts, key: str) -> None:
        """A buffer of ``role: input`` the entry stores to (def-use from the parameter, through
        called functions): an input is set and never compared, so what the kernel wrote there
        went unseen -- a splice that wrote it wrongly passed."""
        u = facts.use_of(self)
        if u is not None and u.writes:
            raise written_input(spec, self, key, f"{spec.entry} stores to it", u.writes)

    # ------------------------------------------------------------------ the device

    def allocate(self, dev) -> Optional[int]:
        host = None if self.role == "output" else buffer_bytes(self, dev.spec.seed)
        keep = self.role == "inout" or (self.fill is not None and self.fill.rule == "weight_image")
        return dev.place(self, host, keep)

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        if not self.is_output:
            return
        view = dev.views[self.name]
        if self.role == "output" and self.poison_is_byte:
            with stream:                              # a byte pattern: fill on the device
                view.fill(poison_value(self, alt))
        elif self.role != "output" and self.name not in dev.host:
            with stream:                              # an inout that starts all zeros (a
                view.fill(0)                          # zeros fill keeps no host copy)
        else:
            view.set(output_poison(self, alt) if self.role == "output" else dev.host[self.name], stream=stream)

    def read(self, dev, stream, module_name: str) -> Optional[np.ndarray]:
        return dev.views[self.name].get(stream=stream) if self.is_output else None

    def snapshot(self, dev, stream):
        with stream:
            return dev.views[self.name].copy()

    def restore(self, dev, state, stream) -> None:
        if self.role == "input":
            with stream:
                dev.cp.copyto(dev.views[self.name], state)

    def moved_bytes(self) -> int:
        return (self.image_bytes or self.bytes) * (2 if self.role == "inout" else 1)

    def timed_restores(self, dev) -> list:
        """An inout buffer: its initial bytes (zeros when its fill keeps no host copy)."""
        if self.role != "inout":
            return []
        return [(self.name, None, device_restore(dev, dev.views[self.name], dev.host.get(self.name)))]

    def elements(self, raw: np.ndarray) -> np.ndarray:
        e = super().elements(raw)
        if self.shape:
            count = int(np.prod(self.shape))
            if count <= e.size:
                return e[:count].reshape(self.shape)
        return e

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims_use(cls, u) -> bool:
        return True

    @classmethod
    def struct_members(cls, y, slot, stem: str, taken: list) -> tuple:
        """The pointers a by-value struct holds, by offset, each of the kind its accesses say
        (a table, an image handle, a buffer): (how many, why the entry cannot be probed or None)."""
        whys = []
        n = 0
        for off, u in slot.fields:
            if any(lo < off + 8 and off < hi for lo, hi in taken):
                continue
            taken.append((off, off + 8))
            why = field_kind(u).object_lines(y, f"{stem}{off}", u, 2, off)
            whys += [why] if why else []
            n += 1
        return n, "; ".join(whys) or None

    @classmethod
    def object_lines(cls, y, name: str, u, indent: int, offset) -> Optional[str]:
        """The lines of a pointer ``u`` dereferences as a buffer: element type from its accesses
        (and the uses of what it loads), role from loads and stores, a seeded fill."""
        pad = "  " * indent
        y.line(f"{pad}- name: {yaml_scalar(name)}")
        if offset is not None:
            y.line(f"{pad}  offset: {offset}")
        seen = accessed(u)
        dtype, guessed = u.element()
        used = sorted({w for _k, _t, w in u.values})
        if used and not any(float(dt.lookup(t).is_float) for t, _v in u.types if dt.lookup(t) is not None):
            seen += "; values used by " + ", ".join(used[:3]) + (f" (+{len(used) - 3})" if len(used) > 3 else "")
        y.line(f"{pad}  kind: buffer")
        y.line(f"{pad}  dtype: {dtype}" + (f"                # guessed (accessed as {seen})" if guessed
                                              else f"                # accessed as {seen}"))
        y.line(f"{pad}  shape: null                # TODO: elements, [rows, cols] or [n] (e.g. [1024])")
        y.line(f"{pad}  role: {u.role}                # {u.reads} load(s), {u.writes} store(s)")
        if not u.alone and u.partners and offset is not None and not u.parked:
            with_ = ", ".join(f"field_{o}" if i == u.param else f"param_{i}+{o}" for i, o in sorted(u.partners)[:3])
            y.line(f"{pad}  # check: every address it reaches also derives from {with_}: it may be a byte offset or")
            y.line(f"{pad}  # increment added to that pointer (CUTLASS's Params), not a buffer")
        if u.parked:
            y.line(f"{pad}  # check: the kernel copies the struct to local memory and picks a pointer from it at")
            y.line(f"{pad}  # run time: role and dtype are what any of the pointers parked there reaches")
        if u.multicast:
            y.line(f"{pad}  # TODO: multimem.* reaches it: a multicast address (cuMulticastCreate), which the")
            y.line(f"{pad}  # probe does not make; multimem on an ordinary buffer is undefined behaviour")
        if u.role != "output":
            rule = "uniform, range: [-1.0, 1.0]" if dt.TYPES[dtype].is_float else "integers, range: [0, 7]"
            y.line(f"{pad}  fill: {{rule: {rule}, seed: {u.seed}}}")
        return None


def accessed(u) -> str:
    """How a pointer's accesses type what it points at (``.f32 x4, .u32``), for a comment."""
    return ", ".join(sorted({f"{t}{f' x{v}' if v > 1 else ''}" for t, v in u.types})) or "-"


def written_input(spec, f, key: str, what: str, n: int) -> SpecError:
    return SpecError(f"{f.name}: role input, but {what} ({n} store(s) or atomic(s)): what it writes would "
                     "not be compared", spec.source, f.line or None, f.column or None, key=key,
                     detail="give role inout (set, then compared) or output (poisoned, then compared)")


def buffer_attrs(c: Ctx, d, where: str, legacy: bool) -> dict:
    """The attributes of a buffer mapping (a buffer parameter, a table's entry, a global): its
    element type, extent, alignment, fill, role and poison, each checked at its key."""
    t = dt.lookup(d.get("dtype", "u8"))
    if t is None or t.name not in dt.BUFFER_TYPES:
        what = "null (a TODO left?)" if d.get("dtype", "u8") is None else repr(d.get("dtype"))
        raise c.err(f"{where}.dtype", f"{what} is not a buffer element type "
                    f"({', '.join(dt.BUFFER_TYPES)})", d, "dtype")
    shape = _shape(c, d, where)
    elems = int(np.prod(shape, dtype=object)) if shape else 1
    if "bytes" not in d and not shape:
        raise c.err(f"{where}.bytes", "missing (give bytes: or shape:)", d)
    nbytes = c.int(d, "bytes", f"{where}.bytes", 1, elems * t.size)
    if max(nbytes, elems * t.size) > MAX_BUFFER_BYTES:    # a typo's 10^22 elements: no device has them
        raise c.err(f"{where}.shape" if shape else f"{where}.bytes",
                    f"{max(nbytes, elems * t.size)} bytes: more than the {MAX_BUFFER_BYTES} a buffer may hold",
                    d, "shape" if shape else "bytes")
    if shape and nbytes < elems * t.size:
        raise c.err(f"{where}.bytes", f"{nbytes} is less than shape {list(shape)} x {t.size} bytes", d, "bytes")
    image = c.int(d, "image_bytes", f"{where}.image_bytes", 1, nbytes)
    if image > nbytes:
        raise c.err(f"{where}.image_bytes", f"{image} exceeds bytes {nbytes}", d, "image_bytes")
    align = _align(c, d, where)
    fill, role = _fill_and_role(c, d, where, t, legacy)
    for i, r in enumerate(fill.regions):
        if r.hi > nbytes:
            raise c.err(f"{where}.fill.f16_regions[{i}].hi", f"{r.hi} beyond the buffer ({nbytes})", d, "fill")
    poison, is_byte = parse_poison(c, d, where, t, 0xFF)
    line, col = position(d)
    return dict(dtype=t.name, bytes=nbytes, image_bytes=image, fill=fill, shape=shape, role=role, align=align,
                poison=poison, poison_is_byte=is_byte, line=line, column=col)


def _shape(c: Ctx, d, where: str) -> tuple:
    if "shape" not in d:
        return ()
    s = d["shape"]
    s = [s] if isinstance(s, int) and not isinstance(s, bool) else s
    if not isinstance(s, list) or not s:
        raise c.err(f"{where}.shape", "expected a list of positive integers", d, "shape")
    if len(s) > MAX_DIMS:     # the read-back reshape: numpy's ValueError traceback after the GPU run
        raise c.err(f"{where}.shape", f"{len(s)} dimensions: more than the {MAX_DIMS} an array may have "
                    "(numpy's limit)", d, "shape")
    for i, x in enumerate(s):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise c.err(f"{where}.shape[{i}]", f"expected a positive integer, got {x!r}", d, "shape")
    return tuple(s)


def _align(c: Ctx, d, where: str) -> int:
    align = c.int(d, "align", f"{where}.align", 1, 256)
    if align & (align - 1):
        raise c.err(f"{where}.align", f"{align} is not a power of two", d, "align")
    if align > MAX_ALIGN:    # the device pads each buffer by align - 1: 2^64 was an overflow on the GPU
        raise c.err(f"{where}.align", f"{align}: more than the {MAX_ALIGN} bytes a buffer may be aligned to "
                    "(a 2 MiB page: cudaMalloc's largest granularity)", d, "align")
    return align


def _fill_and_role(c: Ctx, d, where: str, t, legacy: bool) -> tuple:
    fill = parse_fill(c, d["fill"], f"{where}.fill", c.base, d) if "fill" in d else None
    if fill is not None:
        check_fill(c, fill, t, d, where)
    role = d.get("role")
    if role is None:
        role = "output" if (legacy and fill is not None and fill.rule == "zeros") else "input"
    if role not in ROLES:
        raise c.err(f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}", d, "role")
    if fill is None:
        if legacy:
            raise c.err(f"{where}.fill", "missing", d)
        fill = Fill("zeros")
    return fill, role
