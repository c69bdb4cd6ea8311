"""``kind: tensor_map``: a Hopper TMA tensor map (``CUtensorMap``, 128 bytes) over a buffer of the
spec -- what ``cp.async.bulk.tensor`` copies read through (CUTLASS 3.x, Triton's TMA kernels).

The host encodes it (``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` in libcuda, the
driver's rules checked on the CPU first: ``tma_encoding``) from the tensor's device address, its
extents and strides, the box a copy moves, the element strides, the interleave, the swizzle of
the shared tile, the L2 promotion and the out-of-bounds fill.  The tensor itself is a buffer the
map owns (``tensor:``: dtype, shape, role, fill -- allocated, filled, poisoned and compared like
any buffer; a TMA store makes it an output).  The map is passed as the ``.param`` declares it: by
value (``.param .align 64 .b8 map[128]``, a ``__grid_constant__`` or plain by-value
``CUtensorMap``: ``pass: value``) or as the address of a copy in device memory (a ``.u64``
parameter: ``pass: global``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Optional

import numpy as np

from ..language import dtypes as dt
from ..language.context import Ctx, position
from ..language.skeleton import Slot, yaml_scalar
from .base import Kind, device_restore
from .buffer import Buffer
from .tma_encoding import MapRequest, encode, refusal

MAP_BYTES = 128
MODES = ("tiled", "im2col")
INTERLEAVES = {"none": "NONE", "16B": "16B", "32B": "32B"}
SWIZZLES = {"none": "NONE", "32B": "32B", "64B": "64B", "128B": "128B", "128B_atom_32B": "128B_ATOM_32B",
            "128B_atom_32B_flip_8B": "128B_ATOM_32B_FLIP_8B", "128B_atom_64B": "128B_ATOM_64B"}
#: the bytes of a swizzle's span (a box's inner extent fits in it)
SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128, "128B_atom_32B": 128, "128B_atom_32B_flip_8B": 128,
                "128B_atom_64B": 128}
L2 = {"none": "NONE", "64B": "L2_64B", "128B": "L2_128B", "256B": "L2_256B"}
OOB = {"none": "NONE", "nan": "NAN_REQUEST_ZERO_FMA"}
#: the map's element type for a buffer's (fp8 travels as bytes)
DATA_TYPES = {"u8": "UINT8", "s8": "UINT8", "e4m3": "UINT8", "e5m2": "UINT8", "u16": "UINT16", "s16": "UINT16",
              "u32": "UINT32", "s32": "INT32", "u64": "UINT64", "s64": "INT64", "f16": "FLOAT16",
              "f32": "FLOAT32", "f64": "FLOAT64", "bf16": "BFLOAT16", "tf32": "TFLOAT32"}
#: the spec key a driver rule's refusal is said at
RULE_KEYS = {"tensorRank": "dims", "globalDim": "dims", "globalStrides": "strides", "globalAddress": "tensor",
             "boxDim": "box", "swizzle": "swizzle", "elementStrides": "element_strides", "oobFill": "oob_fill",
             "interleave": "interleave", "tensorDataType": "dtype", "channelsPerPixel": "channels_per_pixel",
             "pixelsPerColumn": "pixels_per_column", "pixelBoxLowerCorner": "lower_corner"}
MAP_KEYS = frozenset({"tensor", "dtype", "mode", "dims", "strides", "box", "element_strides", "interleave", "swizzle",
                      "l2_promotion", "oob_fill", "pass", "align", "lower_corner", "upper_corner",
                      "channels_per_pixel", "pixels_per_column"})


@dataclass(frozen=True, kw_only=True)
class TensorMap(Kind):
    tensor: Buffer
    dtype: str = ""               # the map's element type: the tensor's, or another of its size
    mode: str = "tiled"
    dims: tuple = ()              # globalDim, innermost first
    strides: tuple = ()           # globalStrides in bytes of dims 1.. (rank - 1 of them)
    box: tuple = ()               # boxDim (tiled) / channels, pixels (im2col: from the keys below)
    element_strides: tuple = ()
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "none"
    passing: str = "value"        # value: the 128 bytes in the .param; global: their address
    map_align: int = 64
    lower_corner: tuple = ()      # im2col: the pixel box' corners, channels and pixels
    upper_corner: tuple = ()
    channels_per_pixel: int = 0
    pixels_per_column: int = 0

    kind: ClassVar[str] = "tensor_map"
    noun: ClassVar[Optional[str]] = "tensor map"
    order: ClassVar[int] = 80
    keys: ClassVar[frozenset] = MAP_KEYS
    claim_order: ClassVar[int] = 50
    offset_align: ClassVar[int] = 64

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "TensorMap":
        tensor = _tensor(c, d, where, name)
        t = dt.TYPES[tensor.dtype]
        mode = _choice(c, d, where, "mode", MODES, "tiled")
        shape = tuple(reversed(tensor.shape)) if tensor.shape else (tensor.bytes // t.size,)
        dims = _ints(c, d, where, "dims", shape, 1, 1 << 32, lo_len=3 if mode == "im2col" else 1)
        rank = len(dims)
        dense = tuple(int(np.prod(dims[:i + 1], dtype=object)) * t.size for i in range(rank - 1))
        strides = _ints(c, d, where, "strides", dense, 0, 1 << 40, n=rank - 1)
        for i, s in enumerate(strides):
            if s % 16:
                raise c.err(f"{where}.strides[{i}]", f"{s} bytes: a TMA stride is a multiple of 16", d, "strides")
        elem = _ints(c, d, where, "element_strides", (1,) * rank, 1, 8, n=rank)
        attrs: dict[str, Any] = dict(interleave=_choice(c, d, where, "interleave", tuple(INTERLEAVES), "none"),
                     swizzle=_choice(c, d, where, "swizzle", tuple(SWIZZLES), "none"),
                     l2_promotion=_choice(c, d, where, "l2_promotion", tuple(L2), "none"),
                     oob_fill=_choice(c, d, where, "oob_fill", tuple(OOB), "none"),
                     passing=_choice(c, d, where, "pass", ("value", "global"), "value"))
        align = c.int(d, "align", f"{where}.align", 64, 64)
        if align & (align - 1):
            raise c.err(f"{where}.align", f"{align} is not a power of two", d, "align")
        geo = _box(c, d, where, mode, rank, t, attrs["swizzle"])
        _covers(c, d, where, tensor, dims, strides, t)
        line, col = position(d)
        m = cls(name=name, offset=offset, tensor=tensor, dtype=_map_dtype(c, d, where, tensor), mode=mode,
                dims=dims, strides=strides, element_strides=elem, map_align=align, line=line, column=col,
                **attrs, **geo)
        why = refusal(m.request(tensor.align))      # the tensor's alignment stands for its address
        if why is not None:                          # a rule the keys' own checks leave to the encoder
            key = RULE_KEYS.get(why[0], "dims")
            raise c.err(f"{where}.{key}", f"{why[1]} (the driver's rule: {why[0]})", d, key)
        return m

    @property
    def size(self) -> int:
        return MAP_BYTES if self.passing == "value" else 8

    @property
    def align(self) -> int:
        return self.map_align if self.passing == "value" else 8

    def children(self) -> tuple:
        return (self.tensor,)

    def declaration_mismatch(self, pp) -> Optional[str]:
        if self.passing == "global":
            if pp.size != 8:
                return f"a tensor map passed by its address (pass: global, 8 bytes), but the PTX parameter is " \
                       f"{pp.size} bytes (give pass: value for a by-value .b8 [128])"
            return None
        if pp.size != MAP_BYTES or not pp.is_array:
            return f"a tensor map ({MAP_BYTES} bytes by value), but the PTX parameter is {pp.size} bytes " \
                   f"({pp.type}{'' if pp.is_array else ', a scalar'}; a .u64 holding its address: pass: global)"
        if pp.align > self.map_align:
            return f"align {self.map_align}, but the PTX declares .align {pp.align}"
        return None

    # ------------------------------------------------------------------ the device

    def allocate(self, dev):
        """The map encoded over its tensor's device address: its 128 bytes (``pass: value``), or
        a device copy's address (``pass: global``)."""
        raw = self.encode(int(dev.handles[self.tensor.name]), dev.spec.source)
        if self.passing == "value":
            return raw
        holder = Buffer(name=self.name, dtype="u8", bytes=MAP_BYTES, align=64)
        return dev.place(holder, np.frombuffer(raw, dtype=np.uint8), keep=True)

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        if self.passing == "global":         # a kernel may rewrite it (tensormap.replace)
            dev.views[self.name].set(dev.host[self.name], stream=stream)

    def timed_restores(self, dev) -> list:
        """A map in global memory: its 128 bytes (a kernel may rewrite it: tensormap.replace)."""
        if self.passing != "global":
            return []
        return [(self.name, None, device_restore(dev, dev.views[self.name], dev.host[self.name]))]

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        h = handles[self.name]
        return bytes(h) if isinstance(h, (bytes, bytearray)) else int(h).to_bytes(8, "little")

    def request(self, address: int) -> MapRequest:
        """The map in the driver's terms, over the tensor at ``address``."""
        return MapRequest(data_type=DATA_TYPES[self.dtype or self.tensor.dtype], address=address, dims=self.dims,
                          strides=self.strides, element_strides=self.element_strides, box=self.box, mode=self.mode,
                          lower_corner=self.lower_corner, upper_corner=self.upper_corner,
                          channels_per_pixel=self.channels_per_pixel, pixels_per_column=self.pixels_per_column,
                          interleave=INTERLEAVES[self.interleave], swizzle=SWIZZLES[self.swizzle],
                          l2_promotion=L2[self.l2_promotion], oob_fill=OOB[self.oob_fill])

    def encode(self, address: int, source: str, lib=None) -> bytes:
        """The map's 128 bytes over ``address`` (``tma_encoding.encode``: the driver's rules
        checked first, each refusal naming its rule; ``lib``: libcuda, for tests)."""
        return encode(self.request(address), f"tensor_map {self.name} over {self.tensor.name}", source,
                      self.line or None, lib)

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims(cls, slot: Slot) -> bool:
        return slot.pp.is_array and slot.pp.size == MAP_BYTES and slot.tensor_map is not None

    @classmethod
    def skeleton(cls, y, slot: Slot) -> dict:
        """What the PTX shows of the map -- its rank and mode (``.2d``, ``.tile``/``.im2col``),
        whether copies load or store through it, the ``.param``'s alignment -- and TODOs for
        what only the host knows: the tensor's extents and element type, the box, the swizzle."""
        row = cls.map_lines(y, slot.short, slot.maps_at().get(0, []), 0, None, slot.pp.align,
                            1 + slot.pp.index * 1000)
        return slot.row("tensor_map", **row)

    @classmethod
    def struct_members(cls, y, slot: Slot, stem: str, taken: list) -> tuple:
        """The tensor maps inside a by-value struct (CUTLASS's Params: ``param+128``), at their
        offsets: (how many, why the entry cannot be probed or None)."""
        n = 0
        for off, uses in sorted(slot.maps_at().items()):
            if off % 64 or any(lo < off + MAP_BYTES and off < hi for lo, hi in taken):
                continue
            taken.append((off, off + MAP_BYTES))
            cls.map_lines(y, f"{stem}{off}", uses, 2, off, 64, 1 + slot.pp.index * 1000 + off)
            n += 1
        return n, None

    @staticmethod
    def map_lines(y, name: str, uses: list, indent: int, offset, align: int, seed: int) -> dict:
        pad = "  " * indent
        rank = max((_rank(op) for _n, op in uses), default=0) or 2
        mode = "im2col" if any(".im2col" in op for _n, op in uses) else "tiled"
        stores = [n for n, op in uses if ".global.shared" in op or op.startswith("cp.reduce")]
        loads = [n for n, _op in uses if n not in stores]
        role = "inout" if stores and loads else ("output" if stores else "input")
        where = ", ".join(f"s{n}" for n, _op in uses[:3]) + (f" (+{len(uses) - 3})" if len(uses) > 3 else "")
        nulls = "[" + ", ".join(["null"] * rank) + "]"
        eg = "[" + ", ".join(["64"] * rank) + "]"
        y.line(f"{pad}- name: {yaml_scalar(name)}")
        if offset is not None:
            y.line(f"{pad}  offset: {offset}")
        y.line(f"{pad}  kind: tensor_map               # a TMA tensor map (its address goes to {where}): the host "
               "encodes it (cuTensorMapEncode)")
        y.line(f"{pad}  align: {align}                     # as the .param declares")
        y.line(f"{pad}  mode: {mode}                   # the copies' {'.im2col' if mode == 'im2col' else '.tile'}")
        y.line(f"{pad}  dims: {nulls}                # TODO: the tensor extents, innermost first, rank {rank} "
               f"(e.g. {eg})")
        if mode == "tiled":
            y.line(f"{pad}  box: {nulls}                 # TODO: the box one copy moves, innermost first (e.g. {eg})")
        else:
            corner = "[" + ", ".join(["null"] * (rank - 2)) + "]"
            zeros = "[" + ", ".join(["0"] * (rank - 2)) + "]"
            for key in ("lower_corner", "upper_corner"):
                y.line(f"{pad}  {key}: {corner}           # TODO: the im2col pixel box' {key.split('_')[0]} corner "
                       f"(e.g. {zeros})")
            for key in ("channels_per_pixel", "pixels_per_column"):
                y.line(f"{pad}  {key}: null           # TODO: (e.g. 8)")
        y.line(f"{pad}  swizzle: null                  # TODO: none, 32B, 64B or 128B: the shared tile's layout "
               "(e.g. none)")
        y.line(f"{pad}  tensor:                        # the memory the map describes (allocated, filled by the probe)")
        y.line(f"{pad}    name: {yaml_scalar(name + '_tensor')}")
        y.line(f"{pad}    dtype: null                  # TODO: its element type (e.g. f16)")
        y.line(f"{pad}    shape: null                  # TODO: elements, outermost first: dims reversed (e.g. {eg})")
        y.line(f"{pad}    role: {role}                   # {len(loads)} load(s), {len(stores)} store(s) "
               "through the map")
        if role != "output":
            y.line(f"{pad}    fill: {{rule: uniform, seed: {seed}, range: [-1.0, 1.0]}}")
        return {"rank": rank, "mode": mode, "role": role}


def _rank(name: str) -> int:
    for part in name.split("."):
        if len(part) == 2 and part[0] in "12345" and part[1] == "d":
            return int(part[0])
    return 0


def _tensor(c: Ctx, d, where: str, name: str) -> Buffer:
    raw = c.need(d, "tensor", where)
    if not isinstance(raw, dict):
        raise c.err(f"{where}.tensor", "expected a buffer mapping (name, dtype, shape, role, fill)", d, "tensor")
    c.keys(raw, {"name", "dtype", "shape", "bytes", "align", "role", "fill", "poison", "what"}, f"{where}.tensor")
    tname = raw.get("name", f"{name}_tensor")
    if not isinstance(tname, str) or not tname:
        raise c.err(f"{where}.tensor.name", "expected a non-empty string", raw, "name")
    t = Buffer.parse(c, raw, f"{where}.tensor", tname, 0, False)
    if t.dtype not in DATA_TYPES:
        raise c.err(f"{where}.tensor.dtype", f"{t.dtype}: no tensor-map element type", raw, "dtype")
    if t.align < 16:
        raise c.err(f"{where}.tensor.align", f"{t.align}: a TMA tensor's address is 16-byte aligned", raw, "align")
    return t


def _map_dtype(c: Ctx, d, where: str, tensor: Buffer) -> str:
    """The map's element type: the tensor's unless ``dtype:`` names another of the same size
    (CUTLASS encodes its half_t maps as UINT16: a copy moves the same bytes either way)."""
    v = d.get("dtype", tensor.dtype)
    if not isinstance(v, str) or v not in DATA_TYPES:
        what = "null (a TODO left?)" if v is None else repr(v)
        raise c.err(f"{where}.dtype", f"{what}: no tensor-map element type (one of {', '.join(DATA_TYPES)})",
                    d, "dtype")
    if dt.TYPES[v].size != dt.TYPES[tensor.dtype].size:
        raise c.err(f"{where}.dtype", f"{v} is {dt.TYPES[v].size} bytes, the tensor's {tensor.dtype} "
                    f"{dt.TYPES[tensor.dtype].size}: a map's element is the tensor's size", d, "dtype")
    return v


def _choice(c: Ctx, d, where: str, key: str, allowed: tuple, default: str) -> str:
    v = d.get(key, default)
    if not isinstance(v, str) or v not in allowed:
        what = "null (a TODO left?)" if v is None else repr(v)
        raise c.err(f"{where}.{key}", f"{what} is not one of {', '.join(allowed)}", d, key)
    return v


def _ints(c: Ctx, d, where: str, key: str, default: tuple, lo: int, hi: int, n: Optional[int] = None,
          lo_len: int = 1) -> tuple:
    v = d.get(key, list(default))
    if not isinstance(v, list) or (n is not None and len(v) != n) or (n is None and not lo_len <= len(v) <= 5):
        want = f"{n} integer(s)" if n is not None else f"{lo_len} to 5 integers"
        what = "null (a TODO left?)" if v is None else repr(v)
        raise c.err(f"{where}.{key}", f"{what}: expected a list of {want}", d, key)
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
            raise c.err(f"{where}.{key}[{i}]", f"{x!r}: expected an integer in {lo}..{hi}", d, key)
    return tuple(v)


def _box(c: Ctx, d, where: str, mode: str, rank: int, t, swizzle: str) -> dict:
    """A tiled map's box (each extent 1..256; the inner one a multiple of 16 bytes, within the
    swizzle's span), or an im2col map's pixel box corners, channels and pixels."""
    if mode == "tiled":
        box = _ints(c, d, where, "box", (), 1, 256, n=rank)
        inner = box[0] * t.size
        if inner % 16:
            raise c.err(f"{where}.box[0]", f"{box[0]} x {t.size} bytes: a box's inner extent is a multiple of 16 "
                        "bytes", d, "box")
        if swizzle in SWIZZLE_SPAN and inner > SWIZZLE_SPAN[swizzle]:
            raise c.err(f"{where}.box[0]", f"{inner} bytes: more than the {SWIZZLE_SPAN[swizzle]} a {swizzle} "
                        "swizzle spans", d, "box")
        return {"box": box}
    corners = rank - 2
    return {"lower_corner": _ints(c, d, where, "lower_corner", (0,) * corners, -(1 << 15), 1 << 15, n=corners),
            "upper_corner": _ints(c, d, where, "upper_corner", (0,) * corners, -(1 << 15), 1 << 15, n=corners),
            "channels_per_pixel": c.int(c.need(d, "channels_per_pixel", where) and d, "channels_per_pixel",
                                        f"{where}.channels_per_pixel", 1),
            "pixels_per_column": c.int(c.need(d, "pixels_per_column", where) and d, "pixels_per_column",
                                       f"{where}.pixels_per_column", 1)}


def _covers(c: Ctx, d, where: str, tensor: Buffer, dims: tuple, strides: tuple, t) -> None:
    """The map stays inside its tensor: its last element's byte is within the buffer (a map
    over more than the buffer would copy memory the probe does not own)."""
    last = (dims[0] - 1) * t.size + sum((n - 1) * s for n, s in zip(dims[1:], strides)) + t.size
    if last > tensor.bytes:
        raise c.err(f"{where}.dims", f"dims {list(dims)} with strides {list(strides)} reach byte {last}, beyond "
                    f"{tensor.name}'s {tensor.bytes}", d, "dims")
    for i, (n, s) in enumerate(zip(dims, strides)):
        if dims[i + 1] == 1:      # a dimension of extent 1 is never stepped: CUTLASS gives it stride 0
            continue
        if s < n * (t.size if i == 0 else strides[i - 1]):
            raise c.err(f"{where}.strides[{i}]", f"{s} bytes: less than dimension {i}'s extent "
                        f"({n} x {t.size if i == 0 else strides[i - 1]} bytes): rows overlap", d, "strides")
