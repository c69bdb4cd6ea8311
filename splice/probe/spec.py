"""Probe specs: how to run one kernel (grid, block, shared memory, clusters, the entry's
``.param`` list parameter by parameter, seeded fills, which outputs are compared).

``load_spec(path)`` reads a YAML spec (format: docs/probe-spec.md) into frozen dataclasses and
validates it; every error is a :class:`SpecError` (a ``SpliceError``) naming the file, the
line:col of the offending key and the key's path, e.g.
``probes/enc5.yaml:24:13: params.fields[1].offset: 12 is not 8-byte aligned``.

Two shapes of ``params:`` are read:

* a list, one entry per ``.param`` of the entry in order: scalars, buffer pointers, texture and
  surface objects, by-value structs (``kind: struct`` with ``size`` and ``fields``);
* the first specs' mapping ``{size, fields}``: one by-value struct, the entry's only parameter.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import SpliceError
from ..util import user_path
from .language import dtypes as dt

KINDS = ("buffer", "texture", "surface", "scalar", "table")
PARAM_KINDS = KINDS + ("struct",)
ROLES = ("input", "output", "inout")
FILL_RULES = ("zeros", "constant", "uniform", "normal", "integers", "arange", "e4m3", "e5m2",
              "weight_image", "from", "f16_uniform", "constant_u16")
FORMATS = {"rgba16f": ("f16", 4), "rg16f": ("f16", 2), "r32f": ("f32", 1),
           "rgba32f": ("f32", 4), "rgba8": ("u8", 4)}
TOP_KEYS = {"name", "ptx", "entry", "arch", "build_arch", "seed", "launch", "params", "frame",
            "notes", "work", "globals"}
LAUNCH_KEYS = {"grid", "block", "shared", "cluster", "sequence", "stream"}
FIELD_KEYS = {"name", "offset", "kind", "dtype", "value", "bytes", "image_bytes", "shape",
              "align", "role", "fill", "poison", "width", "height", "format", "size", "fields",
              "what", "ptx_name", "entries", "count", "each", "geometry", "depth", "layers"}
FILL_KEYS = {"rule", "seed", "range", "max_code", "value", "f16_regions", "mean", "std",
             "start", "step", "path", "what"}


#: CUDA's gridDim limits (x, y, z) and the largest buffer a spec may declare (1 TiB: above any
#: device's memory, so only a typo reaches it)
GRID_MAX = ((1 << 31) - 1, 65535, 65535)
MAX_BUFFER_BYTES = 1 << 40
#: threads a block may have on every GPU since sm_20 (maxThreadsPerBlock)
MAX_BLOCK_THREADS = 1024
#: most dimensions of a buffer's ``shape:`` (numpy 1's limit; numpy 2's is 64)
MAX_DIMS = 32
#: largest ``align:`` of a buffer or table (the device allocates align - 1 bytes more)
MAX_ALIGN = 1 << 21


class SpecError(SpliceError, ValueError):
    """A probe spec is malformed.  ``key`` is the YAML path (``params[2].dtype``)."""

    def __init__(self, message: str, path: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, key: str = "", detail: str = ""):
        self.key = key
        super().__init__(f"{key}: {message}" if key else message, path, line, column, detail)


@dataclass(frozen=True)
class Region:
    """A byte range [lo, hi) of a weight image filled as f16 instead of e4m3."""

    lo: int
    hi: int
    low: float
    high: float
    what: str = ""


@dataclass(frozen=True)
class Fill:
    rule: str
    seed: int = 0
    low: float = 0.0
    high: float = 1.0
    max_code: int = 0x38          # e4m3/e5m2: largest magnitude code (e4m3 0x38 = 1.0)
    value: Any = 0                # constant / constant_u16
    regions: tuple[Region, ...] = ()
    mean: float = 0.0
    std: float = 1.0
    start: float = 0.0
    step: float = 1.0
    path: str = ""                # rule from: the .npy file (resolved against the spec)


@dataclass(frozen=True)
class Field:
    """One device object or scalar: a field of a by-value struct, or a whole ``.param``."""
    name: str
    offset: int
    kind: str
    size: int                     # bytes the field occupies in its parameter
    dtype: str = "u64"            # scalar type, or a buffer's element type
    value: tuple = ()             # scalar values (one per launch of a sequence: see Launch)
    bytes: int = 0                # buffer allocation (bytes)
    image_bytes: int = 0          # weight image: documented extent (<= bytes)
    width: int = 0
    height: int = 0
    format: str = ""
    geometry: str = "2d"          # textures/surfaces: 1d, 2d, 3d, a1d, a2d (images.py)
    depth: int = 0                # 3d only
    layers: int = 0               # a1d / a2d only
    fill: Optional[Fill] = None
    poison: Optional[int] = None  # outputs: byte (0..255) or element bit pattern written first
    poison_is_byte: bool = True
    shape: tuple = ()             # buffer shape in elements (2-D outputs get a heatmap)
    role: str = "input"           # input | output | inout
    align: int = 256              # device-address alignment
    entries: tuple = ()           # kind table: the buffers it points at, in order (tables.py)
    line: int = 0
    column: int = 0

    @property
    def is_output(self) -> bool:
        return self.role in ("output", "inout")

    @property
    def element(self) -> dt.DType:
        if self.kind in ("texture", "surface"):
            return dt.TYPES[FORMATS[self.format][0]]
        return dt.lookup(self.dtype) or dt.TYPES["u8"]


@dataclass(frozen=True)
class Param:
    """One ``.param`` of the entry: a scalar, a pointer/object (one field at offset 0) or a
    by-value struct (its fields)."""
    index: int
    name: str
    kind: str
    size: int
    align: int
    fields: tuple[Field, ...]
    ptx_name: str = ""
    line: int = 0
    column: int = 0


@dataclass(frozen=True)
class Frame:
    field: str
    width: int
    height: int
    format: str


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_static: int = 0
    shared_dynamic: int = 0
    cluster: Optional[tuple[int, int, int]] = None
    sequence: tuple = ()          # ({scalar name: value}, ...): one launch each, in order
    stream: str = "nonblocking"   # nonblocking | default (the legacy NULL stream)

    @property
    def launches(self) -> int:
        return max(1, len(self.sequence))


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    ptx: str
    entry: str
    arch: str
    launch: Launch
    params: tuple[Param, ...]
    frame: Optional[Frame]
    frames: tuple[str, ...]       # the outputs reported as "the frame" (all outputs by default)
    seed: int = 0
    notes: str = ""
    source: str = ""
    build_arch: str = ""          # cubins for this arch; "" = the device the probe runs on
    work: tuple = ()              # declared (("flops", n), ("bytes", n)) of one frame
    legacy: bool = False          # written as the single-struct {size, fields} form
    at: tuple = ()                # (("entry", line, col), ("launch.block", line, col), ...)
    globals: tuple = ()           # module variables (kind global fields; tables.py)

    def where(self, key: str) -> tuple:
        """(line, col) of a top-level or launch.* key in the spec file, or (None, None)."""
        for k, line, col in self.at:
            if k == key:
                return line, col
        return None, None

    @property
    def fields(self) -> tuple[Field, ...]:
        """Every field: the parameters' (a table's entries before it), then the globals."""
        from .tables import flatten

        return flatten(self.params, self.globals)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def outputs(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.is_output)

    @property
    def grid(self):
        return self.launch.grid

    @property
    def block(self):
        return self.launch.block

    @property
    def shared_static(self):
        return self.launch.shared_static

    @property
    def shared_dynamic(self):
        return self.launch.shared_dynamic

    @property
    def param_size(self) -> int:
        return sum(p.size for p in self.params) if self.legacy or not self.params else self.params[0].size

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


# ---------------------------------------------------------------- validation helpers

class _Ctx:
    """Where a value sits: the key path and the YMap/YList that holds it (for line:col)."""

    def __init__(self, source: str):
        self.source = source

    def err(self, where: str, msg: str, holder=None, key=None, detail: str = "") -> SpecError:
        line = col = None
        if holder is not None:
            pos = None
            if hasattr(holder, "vat") and key is not None and key in holder:
                pos = holder.vat(key)
            elif hasattr(holder, "item_at") and isinstance(key, int) and key < len(holder.item_at):
                pos = holder.item_at[key]
            elif hasattr(holder, "line"):
                pos = (holder.line, holder.column)
            if pos:
                line, col = pos
        return SpecError(msg, self.source, line, col, key=where, detail=detail)

    def keys(self, d: dict, allowed: set, where: str):
        for k in d:
            if k not in allowed:
                line = col = None
                if hasattr(d, "at"):
                    line, col = d.at(k)
                raise SpecError(f"unknown key {k!r} (known: {', '.join(sorted(allowed))})",
                                self.source, line, col, key=f"{where}.{k}" if where else str(k))

    def need(self, d, key: str, where: str):
        if not isinstance(d, dict):
            raise self.err(where, "expected a mapping", d)
        if key not in d:
            raise self.err(f"{where}.{key}" if where else key, "missing", d)
        return d[key]

    def int(self, d, key, where, lo: Optional[int] = 0, default=None) -> int:
        v = d.get(key, default) if isinstance(d, dict) else d
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(where, f"expected an integer, got {v!r}", d, key)
        if lo is not None and v < lo:
            raise self.err(where, f"{v} is below {lo}", d, key)
        return v

    def num(self, v, where, holder=None, key=None) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.err(where, f"expected a number, got {v!r}", holder, key)
        try:
            return float(v)
        except OverflowError:    # an integer of 400 digits: no float holds it (was a traceback)
            raise self.err(where, f"{str(v)[:20]}... ({len(str(v))} digits): too large for a float", holder,
                           key) from None

    def dim3(self, d, key, where) -> tuple:
        v = d[key]
        if isinstance(v, int) and not isinstance(v, bool):
            v = [v]
        if not isinstance(v, list) or not 1 <= len(v) <= 3:
            raise self.err(where, "expected a list of 1..3 integers", d, key)
        vals = []
        for i, x in enumerate(v):
            if isinstance(x, bool) or not isinstance(x, int):
                raise self.err(f"{where}[{i}]", f"expected an integer, got {x!r}", d, key)
            if x < 1:
                raise self.err(f"{where}[{i}]", f"{x} is below 1", d, key)
            vals.append(x)
        return tuple(vals + [1] * (3 - len(vals)))

    def pair(self, d, key, where) -> tuple:
        v = d[key]
        if not isinstance(v, list) or len(v) != 2:
            raise self.err(f"{where}.{key}", "expected [low, high]", d, key)
        return (self.num(v[0], f"{where}.{key}[0]", d, key), self.num(v[1], f"{where}.{key}[1]", d, key))


def _fill(c: _Ctx, d: Any, where: str, base: Path, holder=None) -> Fill:
    if not isinstance(d, dict):   # placed at the fill: key (a scalar has no position of its own)
        raise c.err(where, f"expected a mapping (rule: …), got {d!r}", holder if holder is not None else d, "fill")
    c.keys(d, FILL_KEYS, where)
    rule = c.need(d, "rule", where)
    if rule not in FILL_RULES:
        raise c.err(f"{where}.rule", f"unknown fill rule {rule!r} (known: {', '.join(FILL_RULES)})",
                    d, "rule")
    regions = tuple(_region(c, r, f"{where}.f16_regions[{i}]")
                    for i, r in enumerate(d.get("f16_regions", []) or []))
    low, high = c.pair(d, "range", where) if "range" in d else (0.0, 1.0)
    if rule == "integers" and "range" not in d:
        raise c.err(f"{where}.range", "missing (integers: [low, high], both included)", d)
    max_code = c.int(d, "max_code", f"{where}.max_code", 0, 0x38)
    limit = dt.FP8_MAX_CODE["e5m2" if rule == "e5m2" else "e4m3"]
    if max_code > limit:
        raise c.err(f"{where}.max_code", f"{max_code:#x} would allow a NaN/inf code (at most {limit:#x})",
                    d, "max_code")
    path = ""
    if rule == "from":
        p = c.need(d, "path", where)
        if not isinstance(p, str) or not p.strip():
            raise c.err(f"{where}.path", f"expected a file name, got {p!r}", d, "path")
        local = _local(c, p, f"{where}.path", d, "path")
        path = str(local if local.is_absolute() else base / local)
        if not Path(path).exists():
            raise c.err(f"{where}.path", f"no such file {p!r}", d, "path")
        if not Path(path).is_file():   # a FIFO or /dev/zero would hang or flood np.load on the GPU run
            raise c.err(f"{where}.path", f"{p!r} is not a regular file (a .npy array)", d, "path")
        with open(path, "rb") as fh:   # np.load on the GPU run: a ValueError traceback for anything else
            if fh.read(6) != b"\x93NUMPY":
                raise c.err(f"{where}.path", f"{p!r} is not a .npy array (numpy.save writes one)", d, "path")
    value = d.get("value", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise c.err(f"{where}.value", f"expected a number, got {value!r}", d, "value")
    std = c.num(d.get("std", 1.0), f"{where}.std", d, "std")
    if std < 0:
        raise c.err(f"{where}.std", f"{std} is negative", d, "std")
    return Fill(rule=rule, seed=c.int(d, "seed", f"{where}.seed", 0, 0), low=low, high=high,
                max_code=max_code, value=value, regions=regions,
                mean=c.num(d.get("mean", 0.0), f"{where}.mean", d, "mean"), std=std,
                start=c.num(d.get("start", 0.0), f"{where}.start", d, "start"),
                step=c.num(d.get("step", 1.0), f"{where}.step", d, "step"), path=path)


def _check_fill(c: _Ctx, fill: Fill, t, d, where: str) -> None:
    """What the fill's numbers must be for its element type ``t``, checked with the spec (before
    the GPU run, where numpy's ``ValueError``/``OverflowError`` were tracebacks, or worse,
    silent: ``constant: .nan`` in an s32 buffer stored INT_MIN, ``value: 1e23`` the type's max)."""
    import math

    fd = d.get("fill") if hasattr(d, "get") else None
    rule = fill.rule

    def bad(key: str, msg: str):
        return c.err(f"{where}.fill.{key}", msg, fd if fd is not None else d, key)

    used = {"uniform": ("range",), "integers": ("range",), "normal": ("mean", "std"), "arange": ("start", "step"),
            "constant": ("value",)}.get(rule, ())
    nums = {"range": (fill.low, fill.high), "mean": (fill.mean,), "std": (fill.std,), "start": (fill.start,),
            "step": (fill.step,), "value": (fill.value,)}
    for key in used:
        if key == "value" and t.is_float:    # a constant NaN or infinity is a float input like any other
            if t.kind != "fp8":              # (fp8 rounds to its nearest finite code)
                _float_bits(c, t, c.num(fill.value, f"{where}.fill.value", fd, key), f"{where}.fill.value", fd)
            continue
        if not all(math.isfinite(x) for x in nums[key]):
            raise bad(key, f"{', '.join(str(x) for x in nums[key])}: not a finite number")
    if rule in ("uniform", "integers") and fill.high < fill.low:
        raise bad("range", f"[{fill.low:g}, {fill.high:g}] is empty (low above high)")
    if t.is_float or t.kind == "fp8":
        return
    lo, hi = _int_range(t)
    if rule in ("uniform", "integers"):
        a, b = math.ceil(fill.low), math.floor(fill.high)
        if a > b:
            raise bad("range", f"[{fill.low:g}, {fill.high:g}] holds no integer")
        if a < lo or b > hi:
            raise bad("range", f"[{a}, {b}] goes beyond {t.name} ({lo}..{hi})")
    if rule == "constant" and not (lo <= fill.value <= hi and fill.value == int(fill.value)):
        raise bad("value", f"{fill.value!r} is not a {t.name} ({lo}..{hi})")
    if rule == "arange" and not all(float(x).is_integer() and abs(x) < 2 ** 63 for x in (fill.start, fill.step)):
        raise bad("start" if not float(fill.start).is_integer() or abs(fill.start) >= 2 ** 63 else "step",
                  f"an integer arange needs whole numbers below 2^63, got start {fill.start:g}, step {fill.step:g}")


def _int_range(t) -> tuple:
    bits = 8 * t.size
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.kind == "int" else (0, (1 << bits) - 1)


def _region(c: _Ctx, r, w: str) -> Region:
    lo = c.int(c.need(r, "lo", w) and r, "lo", f"{w}.lo")
    hi = c.int(r, "hi", f"{w}.hi")
    if hi <= lo:
        raise c.err(f"{w}.hi", f"{hi} <= lo {lo}", r, "hi")
    if lo % 2 or hi % 2:
        raise c.err(f"{w}.lo", "f16 regions must be 2-byte aligned", r, "lo")
    c.need(r, "range", w)
    low, high = c.pair(r, "range", w)
    if not (low <= high and abs(low) < float("inf") and abs(high) < float("inf")):   # NaN fails both
        raise c.err(f"{w}.range", f"[{low:g}, {high:g}]: expected finite numbers, low <= high", r, "range")
    return Region(lo, hi, low, high, str(r.get("what", "")))


def _scalar_value(c: _Ctx, t, v, where: str, holder, key):
    """One element of a scalar's value (or of a ``launch.sequence`` override of it)."""
    if t.is_float:
        return c.num(v, where, holder, key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise c.err(where, f"expected an integer, got {v!r}", holder, key)
    lo = -(1 << (8 * t.size - 1))          # negative unsigned values wrap (-1 = all ones)
    if not lo <= v < (1 << (8 * t.size)):
        raise c.err(where, f"{v} does not fit .{t.name}", holder, key)
    return v


def _scalar(c: _Ctx, d, where: str, name: str, offset: int) -> Field:
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
    out = [_scalar_value(c, t, v, f"{where}.value[{i}]", d, "value") for i, v in enumerate(vals)]
    if offset % t.size:
        raise c.err(f"{where}.offset", f"{offset} is not {t.size}-byte aligned", d, "offset")
    return Field(name, offset, "scalar", t.size * len(out), dtype=t.name, value=tuple(out),
                 line=getattr(d, "line", 0), column=getattr(d, "column", 0))


def _poison(c: _Ctx, d, where: str, t: dt.DType, default: int) -> tuple:
    """(bits, is_byte): an int is a byte for buffers; {value: x} is an element value."""
    p = d.get("poison", default)
    if isinstance(p, dict):
        c.keys(p, {"value", "byte"}, f"{where}.poison")
        if "byte" in p:
            return _byte(c, c.int(p, "byte", f"{where}.poison.byte", 0), f"{where}.poison.byte", p, "byte"), True
        return _poison_value(c, t, p.get("value", 0), f"{where}.poison.value", p), False
    return _byte(c, c.int(d, "poison", f"{where}.poison", 0, default), f"{where}.poison", d, "poison"), True


def _poison_value(c: _Ctx, t: dt.DType, v, where: str, holder) -> int:
    """The bits of an element poison ``{value: x}``, checked as a value of the element type: a
    list, null or 2^128 were a numpy traceback, 1e40 in an f32 a silent inf, .nan in a u32 or
    0.5 in an e4m3 silently some other bits (the astype of a float to an integer storage)."""
    import numpy as np

    if not t.is_float:
        return _scalar_value(c, t, v, where, holder, "value") & ((1 << (8 * t.size)) - 1)
    x = c.num(v, where, holder, "value")
    if t.kind == "fp8":
        table = dt.E4M3 if t.name == "e4m3" else dt.E5M2
        hits = np.flatnonzero(np.isnan(table) if x != x else table == x)
        if not hits.size:
            raise c.err(where, f"{x!r} is no {t.name} value (give its byte: poison: {{byte: N}})", holder, "value")
        return int(hits[0])
    return _float_bits(c, t, x, where, holder)


def _float_bits(c: _Ctx, t: dt.DType, x: float, where: str, holder) -> int:
    """The bits of ``x`` as float type ``t`` (not fp8); a finite ``x`` that rounds to an
    infinity there (1e40 in an f32, 70000 in an f16) is an error at ``where``, not a silent inf."""
    import numpy as np

    with np.errstate(over="ignore"):
        if t.name == "bf16":
            bits = int(dt.f32_to_bf16_bits(np.array([x], dtype=np.float32))[0])
            back = float(dt.bf16_bits_to_f32(np.array([bits]))[0])
        else:
            arr = np.array([x], dtype=t.storage)
            bits, back = int(arr.view(f"<u{t.size}")[0]), float(arr[0])
    if np.isfinite(x) and not np.isfinite(back):
        raise c.err(where, f"{x!r} does not fit {t.name} (it would be {back})", holder, "value")
    return bits


def _byte(c: _Ctx, v: int, where: str, holder, key) -> int:
    """A poison byte: 0..255 (999 was accepted, then numpy's OverflowError on the GPU run)."""
    if v > 0xFF:
        raise c.err(where, f"{v} is not a byte (0..255; poison: {{value: X}} gives an element value)", holder, key)
    return v


def _buffer(c: _Ctx, d, where: str, name: str, offset: int, legacy: bool, base: Path) -> Field:
    t = dt.lookup(d.get("dtype", "u8"))
    if t is None or t.name not in dt.BUFFER_TYPES:
        raise c.err(f"{where}.dtype", f"{d.get('dtype')!r} is not a buffer element type "
                    f"({', '.join(dt.BUFFER_TYPES)})", d, "dtype")
    shape: tuple = ()
    if "shape" in d:
        s = d["shape"]
        s = [s] if isinstance(s, int) and not isinstance(s, bool) else s
        if not isinstance(s, list) or not s:
            raise c.err(f"{where}.shape", "expected a list of positive integers", d, "shape")
        if len(s) > MAX_DIMS:     # the read-back reshape: numpy's ValueError traceback after the GPU run
            raise c.err(f"{where}.shape", f"{len(s)} dimensions: more than the {MAX_DIMS} an array may have "
                        "(numpy's limit)", d, "shape")
        shape = tuple(_pos(c, x, f"{where}.shape[{i}]", d) for i, x in enumerate(s))
    if "bytes" not in d and not shape:
        raise c.err(f"{where}.bytes", "missing (give bytes: or shape:)", d)
    elems = 1
    for x in shape:
        elems *= x
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
    align = c.int(d, "align", f"{where}.align", 1, 256)
    if align & (align - 1):
        raise c.err(f"{where}.align", f"{align} is not a power of two", d, "align")
    if align > MAX_ALIGN:    # the device pads each buffer by align - 1: 2^64 was an overflow on the GPU
        raise c.err(f"{where}.align", f"{align}: more than the {MAX_ALIGN} bytes a buffer may be aligned to "
                    "(a 2 MiB page: cudaMalloc's largest granularity)", d, "align")
    fill = _fill(c, d["fill"], f"{where}.fill", base, d) if "fill" in d else None
    if fill is not None:
        _check_fill(c, fill, t, d, where)
    role = d.get("role")
    if role is None:
        role = "output" if (legacy and fill is not None and fill.rule == "zeros") else "input"
    if role not in ROLES:
        raise c.err(f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}", d, "role")
    if fill is None:
        if legacy:
            raise c.err(f"{where}.fill", "missing", d)
        fill = Fill("zeros")
    for i, r in enumerate(fill.regions):
        if r.hi > nbytes:
            raise c.err(f"{where}.fill.f16_regions[{i}].hi", f"{r.hi} beyond the buffer ({nbytes})", d, "fill")
    poison, is_byte = _poison(c, d, where, t, 0xFF)
    return Field(name, offset, "buffer", 8, dtype=t.name, bytes=nbytes, image_bytes=image, fill=fill,
                 shape=shape, role=role, align=align, poison=poison, poison_is_byte=is_byte,
                 line=getattr(d, "line", 0), column=getattr(d, "column", 0))


def _pos(c: _Ctx, x, where: str, holder) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise c.err(where, f"expected a positive integer, got {x!r}", holder, "shape")
    return x


#: CUDA's 2-D texture and surface limits (maxTexture2D, maxSurface2D; every arch since sm_50);
#: every geometry's limits: images.LIMITS
MAX_IMAGE = (131072, 65536)


def _image(c: _Ctx, d, where: str, name: str, offset: int, kind: str, base: Path) -> Field:
    from . import images

    ext = images.parse(c, d, where, kind)     # geometry, width, height, depth, layers
    fmt = d.get("format", "rgba16f")
    if fmt not in FORMATS:
        raise c.err(f"{where}.format", f"{fmt!r} is not one of {', '.join(FORMATS)}", d, "format")
    t = dt.TYPES[FORMATS[fmt][0]]
    _image_bytes(c, d, where, kind, ext, fmt)
    fill = _fill(c, d["fill"], f"{where}.fill", base, d) if "fill" in d else None
    if fill is not None:
        _check_fill(c, fill, t, d, where)
    line, col = getattr(d, "line", 0), getattr(d, "column", 0)
    if kind == "texture":
        if fill is None:
            raise c.err(f"{where}.fill", "missing", d)
        return Field(name, offset, kind, 8, format=fmt, fill=fill, role="input", line=line, column=col, **ext)
    role = d.get("role", "output")
    if role not in ROLES:
        raise c.err(f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}", d, "role")
    poison = c.int(d, "poison", f"{where}.poison", 0, (1 << (8 * t.size)) - 1)
    if poison >= 1 << (8 * t.size):
        raise c.err(f"{where}.poison", f"{poison:#x} does not fit one {t.name} channel", d, "poison")
    return Field(name, offset, kind, 8, format=fmt, fill=fill or Fill("zeros"), poison=poison,
                 poison_is_byte=False, role=role, line=line, column=col, **ext)


def _image_bytes(c: _Ctx, d, where: str, kind: str, ext: dict, fmt: str) -> None:
    """An image's texels together held to a buffer's bound: each extent within CUDA's limit is
    not enough (a 3d one of 16384^3 rgba32f texels is 64 TiB, an a2d one at its limits 32 PiB;
    the host builds the texels before the GPU sees them: an out-of-memory naming no spec)."""
    from . import images

    ename, ch = FORMATS[fmt]
    dims = [ext[k] for k in images.EXTENTS[ext["geometry"]]]
    n = dt.TYPES[ename].size * ch
    for v in dims:
        n *= v
    if n > MAX_BUFFER_BYTES:
        raise c.err(where, f"{' x '.join(map(str, dims))} {fmt} texels are {n} bytes: more than the "
                    f"{MAX_BUFFER_BYTES} a {kind} (as a buffer) may hold", d)


def _field(c: _Ctx, d: Any, where: str, offset: Optional[int], legacy: bool, base: Path) -> Field:
    """A struct field (``offset`` None: read it from ``d``) or a whole ``.param`` (offset 0)."""
    if not isinstance(d, dict):
        raise c.err(where, "expected a mapping", d)
    c.keys(d, FIELD_KEYS, where)
    name = c.need(d, "name", where)
    if not isinstance(name, str) or not name:
        raise c.err(f"{where}.name", "expected a non-empty string", d, "name")
    if offset is None:
        offset = c.int(c.need(d, "offset", where) and d, "offset", f"{where}.offset")
    kind = c.need(d, "kind", where)
    if kind not in KINDS:
        raise c.err(f"{where}.kind", f"{kind!r} is not one of {', '.join(KINDS)}", d, "kind")
    if kind == "scalar":
        return _scalar(c, d, where, name, offset)
    if offset % 8:
        raise c.err(f"{where}.offset", f"{offset} is not 8-byte aligned", d, "offset")
    if kind == "buffer":
        return _buffer(c, d, where, name, offset, legacy, base)
    if kind == "table":
        from .tables import parse_table

        return parse_table(c, d, where, name, offset, base)
    return _image(c, d, where, name, offset, kind, base)


def _struct_fields(c: _Ctx, raw, size: int, where: str, legacy: bool, base: Path) -> tuple:
    if not isinstance(raw, list) or not raw:
        raise c.err(f"{where}.fields", "expected a non-empty list", raw)
    fields = tuple(_field(c, f, f"{where}.fields[{i}]", None, legacy, base) for i, f in enumerate(raw))
    spans = []
    for i, f in enumerate(fields):
        w = f"{where}.fields[{i}].offset"
        if f.offset + f.size > size:
            raise c.err(w, f"{f.name} ends at {f.offset + f.size} > {where}.size {size}", raw[i], "offset")
        for j, (lo, hi) in enumerate(spans):
            if f.offset < hi and lo < f.offset + f.size:
                raise c.err(w, f"{f.name} overlaps {where}.fields[{j}]", raw[i], "offset")
        spans.append((f.offset, f.offset + f.size))
    return fields


def _param(c: _Ctx, d, i: int, base: Path) -> Param:
    where = f"params[{i}]"
    if not isinstance(d, dict):
        raise c.err(where, "expected a mapping", d)
    line, col = getattr(d, "line", 0), getattr(d, "column", 0)
    if d.get("kind") == "struct":
        c.keys(d, {"name", "kind", "size", "align", "fields", "ptx_name", "what"}, where)
        name = c.need(d, "name", where)
        size = c.int(c.need(d, "size", where) and d, "size", f"{where}.size", 1)
        align = c.int(d, "align", f"{where}.align", 1, 8)
        fields = _struct_fields(c, c.need(d, "fields", where), size, where, False, base)
        return Param(i, str(name), "struct", size, align, fields, str(d.get("ptx_name", "")), line, col)
    if "offset" in d:
        raise c.err(f"{where}.offset", "a .param has no offset (fields of a kind: struct do)", d, "offset")
    f = _field(c, d, where, 0, False, base)
    align = f.size if f.kind == "scalar" else 8
    return Param(i, f.name, f.kind, f.size, align, (f,), str(d.get("ptx_name", "")), line, col)


def _params(c: _Ctx, data, base: Path) -> tuple:
    raw = c.need(data, "params", "")
    if isinstance(raw, dict):              # the first specs: one by-value struct
        c.keys(raw, {"size", "fields", "align", "name"}, "params")
        size = c.int(c.need(raw, "size", "params") and raw, "size", "params.size", 1)
        fields = _struct_fields(c, c.need(raw, "fields", "params"), size, "params", True, base)
        return (Param(0, str(raw.get("name", "params")), "struct", size,
                      c.int(raw, "align", "params.align", 1, 8), fields,
                      line=getattr(raw, "line", 0), column=getattr(raw, "column", 0)),), True
    if not isinstance(raw, list) or (not raw and not data.get("globals")):   # [] : globals only
        raise c.err("params", "expected a list (one entry per .param) or {size, fields}", data, "params")
    params = tuple(_param(c, d, i, base) for i, d in enumerate(raw))
    return params, False


def _launch(c: _Ctx, data, params) -> Launch:
    launch = c.need(data, "launch", "")
    if not isinstance(launch, dict):
        raise c.err("launch", "expected a mapping", data, "launch")
    c.keys(launch, LAUNCH_KEYS, "launch")
    c.need(launch, "grid", "launch")
    c.need(launch, "block", "launch")
    grid = c.dim3(launch, "grid", "launch.grid")
    for a, (g, most) in enumerate(zip(grid, GRID_MAX)):
        if g > most:     # cuLaunchKernel would refuse it, after the inputs were built and copied
            raise c.err(f"launch.grid[{a}]", f"{g} blocks: more than the {most} CUDA allows in "
                        f"dimension {'xyz'[a]}", launch, "grid")
    block = c.dim3(launch, "block", "launch.block")
    if block[0] * block[1] * block[2] > MAX_BLOCK_THREADS:
        raise c.err("launch.block", f"{block[0] * block[1] * block[2]} threads: more than {MAX_BLOCK_THREADS}",
                    launch, "block")
    if block[2] > 64:
        raise c.err("launch.block", f"block z {block[2]} is more than 64", launch, "block")
    shared = launch.get("shared", {}) or {}
    if not isinstance(shared, dict):
        raise c.err("launch.shared", "expected {static: N, dynamic: N}", launch, "shared")
    c.keys(shared, {"static", "dynamic"}, "launch.shared")
    dyn = c.int(shared, "dynamic", "launch.shared.dynamic", 0, 0)
    if dyn > 227 * 1024:
        raise c.err("launch.shared.dynamic", f"{dyn} bytes: more than the 227 KiB a Hopper block can have",
                    shared, "dynamic")
    cluster = c.dim3(launch, "cluster", "launch.cluster") if "cluster" in launch else None
    if cluster is not None:
        for a, (g, k) in enumerate(zip(grid, cluster)):
            if g % k:
                raise c.err("launch.cluster", f"grid {list(grid)} is not a multiple of the cluster "
                            f"{list(cluster)} in dimension {'xyz'[a]}", launch, "cluster")
    seq = _sequence(c, launch, params)
    stream = launch.get("stream", "nonblocking")
    if stream not in ("nonblocking", "default"):
        raise c.err("launch.stream", f"{stream!r} is not nonblocking or default", launch, "stream")
    return Launch(grid, block, c.int(shared, "static", "launch.shared.static", 0, 0), dyn, cluster,
                  seq, stream)


def _sequence(c: _Ctx, launch, params) -> tuple:
    """launch.sequence: one mapping per launch, {scalar name: value}: e.g. split-K tiles."""
    raw = launch.get("sequence", []) or []
    if not isinstance(raw, list):
        raise c.err("launch.sequence", "expected a list of {scalar: value} mappings", launch, "sequence")
    scalars = {f.name: f for p in params for f in p.fields if f.kind == "scalar"}
    out = []
    for i, step in enumerate(raw):
        w = f"launch.sequence[{i}]"
        if not isinstance(step, dict):
            raise c.err(w, "expected a mapping {scalar: value}", raw, i)
        for k, v in step.items():
            if k not in scalars:
                raise c.err(f"{w}.{k}", f"not a scalar parameter (scalars: {', '.join(scalars) or 'none'})",
                            step, k)
            n = len(scalars[k].value)
            vals = v if isinstance(v, list) else [v]
            if len(vals) != n or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in vals):
                raise c.err(f"{w}.{k}", f"expected {n} number(s) like the parameter's value", step, k)
            t = dt.TYPES[scalars[k].dtype]     # checked as the value itself: .nan or 1.5 in an s32, 10^30
            for j, x in enumerate(vals):       # were a traceback, a truncation and a wrap on the GPU run
                _scalar_value(c, t, x, f"{w}.{k}[{j}]", step, k)
        out.append(tuple(sorted((k, tuple(v if isinstance(v, list) else [v])) for k, v in step.items())))
    return tuple(out)


def _frame(c: _Ctx, data, fields) -> tuple:
    by_name = {f.name: f for f in fields}
    outputs = [f.name for f in fields if f.is_output]
    fr = data.get("frame", "all")
    if fr in ("all", None):
        names = tuple(outputs)
    else:
        if not isinstance(fr, dict):
            raise c.err("frame", "expected {field: NAME} or 'all'", data, "frame")
        c.keys(fr, {"field"}, "frame")
        fname = c.need(fr, "field", "frame")
        if fname not in by_name:
            raise c.err("frame.field", f"{fname!r} is not a parameter field", fr, "field")
        if not by_name[fname].is_output:
            raise c.err("frame.field", f"{fname!r} is a {by_name[fname].kind} with role "
                        f"{by_name[fname].role}, not an output", fr, "field")
        names = (fname,)
    if not outputs:
        raise c.err("params", "no output: give a buffer (a table entry, a global) role: output/inout, or a surface",
                    data, "params")
    first = by_name[names[0]] if names else None
    frame = None
    if first is not None:
        w, h = first.width, first.height
        if first.kind == "buffer" and len(first.shape) >= 2:
            h, w = first.shape[0], first.shape[1]
        frame = Frame(first.name, w, h, first.format or first.dtype)
    return frame, names


def _work(c: _Ctx, data) -> tuple:
    w = data.get("work")
    if w is None:
        return ()
    if not isinstance(w, dict):
        raise c.err("work", "expected {flops: N, bytes: N}", data, "work")
    c.keys(w, {"flops", "bytes"}, "work")
    return tuple((k, c.int(w, k, f"work.{k}", 0)) for k in ("flops", "bytes") if k in w)


def parse_spec(data: Any, source: str = "<spec>", base: Optional[Path] = None) -> ProbeSpec:
    """Validate a decoded YAML document (plain dicts, or recipe.YMap with positions)."""
    c = _Ctx(source)
    if data is None:
        raise c.err("top level", "empty file: expected a mapping (name, ptx, entry, launch, params)")
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise c.err("top level", f"expected a mapping, got {kind}", data)
    c.keys(data, TOP_KEYS, "")
    base = base or Path(source).parent
    name = c.need(data, "name", "")
    # the report's file names: build/probe/reports/<name>-<module>/ (str() of a list, None, or a
    # name with '/' or '..' put the reports elsewhere, outside the report directory)
    if not isinstance(name, (str, int)) or isinstance(name, bool) or not str(name).strip() or \
            "/" in str(name) or "\\" in str(name) or str(name).strip(".") == "":
        raise c.err("name", f"expected a name for the report files (no '/'), got {name!r}", data, "name")
    for k in ("arch", "build_arch", "notes"):
        if k in data and not isinstance(data[k], str):
            raise c.err(k, f"expected text, got {data[k]!r}", data, k)
    build_arch = ""
    if data.get("build_arch"):    # ptxas' -arch: refused on the GPU run (after the build started) before
        from ..ptx.sass import normalize_arch

        try:
            build_arch = normalize_arch(data["build_arch"])     # "90a" -> "sm_90a", as --arch
        except ValueError:
            raise c.err("build_arch", f"not a GPU architecture: {data['build_arch']!r} (expected e.g. sm_90 "
                        "or sm_90a)", data, "build_arch") from None
    entry = c.need(data, "entry", "")
    if not isinstance(entry, str) or not entry:
        raise c.err("entry", "expected the .entry name", data, "entry")
    ptx = c.need(data, "ptx", "")
    if not isinstance(ptx, str) or not ptx.strip():
        raise c.err("ptx", f"expected the module's file name, got {ptx!r}", data, "ptx")
    ptx = str(_local(c, ptx, "ptx", data, "ptx"))
    params, legacy = _params(c, data, base)
    from .tables import flatten, parse_globals

    globals_ = parse_globals(c, data, base)
    seen: dict = {}
    for f in flatten(params, globals_):
        if f.name in seen:
            raise SpecError(f"{f.name!r} repeats the one at line {seen[f.name]}", source,
                            f.line or None, f.column or None, key="params")
        seen[f.name] = f.line
    frame, frames = _frame(c, data, flatten(params, globals_))
    return ProbeSpec(
        name=str(name), ptx=ptx, entry=entry,
        arch=str(data.get("arch", "")), launch=_launch(c, data, params), params=params,
        frame=frame, frames=frames, seed=c.int(data, "seed", "seed", 0, 0),
        notes=str(data.get("notes", "")), source=source,
        build_arch=build_arch, work=_work(c, data), legacy=legacy,
        at=_positions(data), globals=globals_)


def _positions(data) -> tuple:
    out = []
    if hasattr(data, "vat"):
        out += [(k, *data.vat(k)) for k in data]
        launch = data.get("launch")
        if hasattr(launch, "vat"):
            out += [(f"launch.{k}", *launch.vat(k)) for k in launch]
    return tuple(out)


def _local(c: "_Ctx", spelled: str, where: str, holder, key) -> Path:
    """A file name the spec spells: ``~`` expanded, a URL or an unknown user refused at its key,
    as in a recipe (``util.user_path``)."""
    try:
        return user_path(spelled)
    except SpliceError as exc:
        raise c.err(where, exc.message, holder, key) from None


def load_spec(path: str | Path) -> ProbeSpec:
    from ..cut.recipe import load_yaml_marked

    path = Path(path)
    if path.is_dir():
        raise SpecError("is a directory, not a probe spec", str(path))
    from ..util import read_utf8
    from ..yamlsafe import DEFAULT_LIMITS

    try:
        text = read_utf8(path, "a probe spec is UTF-8 YAML", DEFAULT_LIMITS.max_bytes)
    except FileNotFoundError:
        raise SpecError("no such file", str(path)) from None
    if not text.strip():
        raise SpecError("empty file: expected a probe spec mapping (docs/probe-spec.md)", str(path))
    data = load_yaml_marked(text, str(path))
    from ..util import home_dir

    return parse_spec(data, str(path), home_dir(path))     # a stream's (/dev/stdin): the working directory
