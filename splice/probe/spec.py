"""Probe specs: how to run one kernel (grid, block, shared memory, the by-value
parameter block field by field, seeded fills, which outputs form the frame).

``load_spec(path)`` reads a YAML spec (format: docs/probe-spec.md) into frozen
dataclasses and validates it; every error names the YAML key it is about, e.g.
``probes/enc5.yaml: params.fields[2].offset: 44 is not 8-byte aligned``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KINDS = ("buffer", "texture", "surface", "scalar")
SCALAR_DTYPES = {"uint8": 1, "uint16": 2, "uint32": 4, "int32": 4, "float32": 4, "uint64": 8}
FILL_RULES = ("zeros", "e4m3", "f16_uniform", "weight_image", "constant_u16")
FORMATS = ("rgba16f",)


class SpecError(ValueError):
    """A probe spec is malformed; the message starts with the offending key."""


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
    max_code: int = 0x38          # e4m3: largest magnitude code (0x38 = 1.0)
    value: int = 0                # constant_u16
    regions: tuple[Region, ...] = ()


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    kind: str
    size: int                     # bytes the field occupies in the parameter block
    dtype: str = "uint64"
    value: tuple = ()             # scalar values
    bytes: int = 0                # buffer allocation (bytes)
    image_bytes: int = 0          # weight image: documented extent (<= bytes)
    width: int = 0
    height: int = 0
    format: str = ""
    fill: Fill | None = None
    poison: int | None = None     # surface: u16 pattern written before every render


@dataclass(frozen=True)
class Frame:
    field: str
    width: int
    height: int
    format: str


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    ptx: str
    entry: str
    arch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_static: int
    shared_dynamic: int
    param_size: int
    fields: tuple[Field, ...]
    frame: Frame
    seed: int = 0
    notes: str = ""
    source: str = ""

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


# ---------------------------------------------------------------- validation helpers

def _need(d: dict, key: str, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise SpecError(f"{where}.{key}: missing" if where else f"{key}: missing")
    return d[key]


def _int(v: Any, where: str, lo: int | None = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise SpecError(f"{where}: expected an integer, got {v!r}")
    if lo is not None and v < lo:
        raise SpecError(f"{where}: {v} is below {lo}")
    return v


def _num(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(f"{where}: expected a number, got {v!r}")
    return float(v)


def _dim3(v: Any, where: str) -> tuple[int, int, int]:
    if not isinstance(v, list) or not 1 <= len(v) <= 3:
        raise SpecError(f"{where}: expected a list of 1..3 integers")
    vals = [_int(x, f"{where}[{i}]", 1) for i, x in enumerate(v)]
    while len(vals) < 3:
        vals.append(1)
    return tuple(vals)  # type: ignore[return-value]


def _fill(d: Any, where: str) -> Fill:
    if not isinstance(d, dict):
        raise SpecError(f"{where}: expected a mapping")
    rule = _need(d, "rule", where)
    if rule not in FILL_RULES:
        raise SpecError(f"{where}.rule: unknown fill rule {rule!r} (known: {', '.join(FILL_RULES)})")
    regions = []
    for i, r in enumerate(d.get("f16_regions", []) or []):
        w = f"{where}.f16_regions[{i}]"
        lo = _int(_need(r, "lo", w), f"{w}.lo")
        hi = _int(_need(r, "hi", w), f"{w}.hi")
        if hi <= lo:
            raise SpecError(f"{w}.hi: {hi} <= lo {lo}")
        if lo % 2 or hi % 2:
            raise SpecError(f"{w}.lo: f16 regions must be 2-byte aligned")
        rng = _need(r, "range", w)
        if not isinstance(rng, list) or len(rng) != 2:
            raise SpecError(f"{w}.range: expected [low, high]")
        regions.append(Region(lo, hi, _num(rng[0], f"{w}.range[0]"), _num(rng[1], f"{w}.range[1]"),
                              str(r.get("what", ""))))
    rng = d.get("range", [0.0, 1.0])
    if not isinstance(rng, list) or len(rng) != 2:
        raise SpecError(f"{where}.range: expected [low, high]")
    max_code = _int(d.get("max_code", 0x38), f"{where}.max_code")
    if max_code > 0x7E:
        raise SpecError(f"{where}.max_code: {max_code:#x} would allow the e4m3 NaN code 0x7f")
    return Fill(rule=rule, seed=_int(d.get("seed", 0), f"{where}.seed"),
                low=_num(rng[0], f"{where}.range[0]"), high=_num(rng[1], f"{where}.range[1]"),
                max_code=max_code, value=_int(d.get("value", 0), f"{where}.value"),
                regions=tuple(regions))


def _field(d: Any, where: str) -> Field:
    if not isinstance(d, dict):
        raise SpecError(f"{where}: expected a mapping")
    name = _need(d, "name", where)
    if not isinstance(name, str) or not name:
        raise SpecError(f"{where}.name: expected a non-empty string")
    offset = _int(_need(d, "offset", where), f"{where}.offset")
    kind = _need(d, "kind", where)
    if kind not in KINDS:
        raise SpecError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    fill = _fill(d["fill"], f"{where}.fill") if "fill" in d else None
    if kind == "scalar":
        dtype = _need(d, "dtype", where)
        if dtype not in SCALAR_DTYPES:
            raise SpecError(f"{where}.dtype: {dtype!r} is not one of {', '.join(SCALAR_DTYPES)}")
        value = _need(d, "value", where)
        if not isinstance(value, list):
            value = [value]
        vals = tuple(_num(v, f"{where}.value[{i}]") if dtype == "float32"
                     else _int(v, f"{where}.value[{i}]", None) for i, v in enumerate(value))
        size = SCALAR_DTYPES[dtype] * len(vals)
        if offset % SCALAR_DTYPES[dtype]:
            raise SpecError(f"{where}.offset: {offset} is not {SCALAR_DTYPES[dtype]}-byte aligned")
        return Field(name, offset, kind, size, dtype=dtype, value=vals)
    if offset % 8:
        raise SpecError(f"{where}.offset: {offset} is not 8-byte aligned")
    if kind == "buffer":
        nbytes = _int(_need(d, "bytes", where), f"{where}.bytes", 1)
        image = _int(d.get("image_bytes", nbytes), f"{where}.image_bytes", 1)
        if image > nbytes:
            raise SpecError(f"{where}.image_bytes: {image} exceeds bytes {nbytes}")
        if fill is None:
            raise SpecError(f"{where}.fill: missing")
        for i, r in enumerate(fill.regions):
            if r.hi > nbytes:
                raise SpecError(f"{where}.fill.f16_regions[{i}].hi: {r.hi} beyond the buffer ({nbytes})")
        return Field(name, offset, kind, 8, bytes=nbytes, image_bytes=image, fill=fill)
    width = _int(_need(d, "width", where), f"{where}.width", 1)
    height = _int(_need(d, "height", where), f"{where}.height", 1)
    fmt = d.get("format", "rgba16f")
    if fmt not in FORMATS:
        raise SpecError(f"{where}.format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if kind == "texture":
        if fill is None:
            raise SpecError(f"{where}.fill: missing")
        return Field(name, offset, kind, 8, width=width, height=height, format=fmt, fill=fill)
    poison = _int(d.get("poison", 0xFFFF), f"{where}.poison")
    return Field(name, offset, kind, 8, width=width, height=height, format=fmt, poison=poison)


def parse_spec(data: Any, source: str = "<spec>") -> ProbeSpec:
    """Validate a decoded YAML document; errors are prefixed with ``source``."""
    try:
        return _parse(data, source)
    except SpecError as e:
        raise SpecError(f"{source}: {e}") from None


def _parse(data: Any, source: str) -> ProbeSpec:
    if not isinstance(data, dict):
        raise SpecError("top level: expected a mapping")
    name = _need(data, "name", "")
    launch = _need(data, "launch", "")
    grid = _dim3(_need(launch, "grid", "launch"), "launch.grid")
    block = _dim3(_need(launch, "block", "launch"), "launch.block")
    if block[0] * block[1] * block[2] > 1024:
        raise SpecError("launch.block: more than 1024 threads")
    shared = launch.get("shared", {}) or {}
    s_static = _int(shared.get("static", 0), "launch.shared.static")
    s_dyn = _int(shared.get("dynamic", 0), "launch.shared.dynamic")
    params = _need(data, "params", "")
    psize = _int(_need(params, "size", "params"), "params.size", 1)
    raw_fields = _need(params, "fields", "params")
    if not isinstance(raw_fields, list) or not raw_fields:
        raise SpecError("params.fields: expected a non-empty list")
    fields = tuple(_field(f, f"params.fields[{i}]") for i, f in enumerate(raw_fields))
    seen: dict[str, int] = {}
    spans = []
    for i, f in enumerate(fields):
        if f.name in seen:
            raise SpecError(f"params.fields[{i}].name: {f.name!r} repeats params.fields[{seen[f.name]}]")
        seen[f.name] = i
        if f.offset + f.size > psize:
            raise SpecError(f"params.fields[{i}].offset: {f.name} ends at {f.offset + f.size} > params.size {psize}")
        for j, (lo, hi) in enumerate(spans):
            if f.offset < hi and lo < f.offset + f.size:
                raise SpecError(f"params.fields[{i}].offset: {f.name} overlaps params.fields[{j}]")
        spans.append((f.offset, f.offset + f.size))
    fr = _need(data, "frame", "")
    fname = _need(fr, "field", "frame")
    if fname not in seen:
        raise SpecError(f"frame.field: {fname!r} is not a parameter field")
    target = fields[seen[fname]]
    if target.kind != "surface":
        raise SpecError(f"frame.field: {fname!r} is a {target.kind}, not a surface")
    frame = Frame(fname, target.width, target.height, target.format)
    return ProbeSpec(
        name=str(name), ptx=str(_need(data, "ptx", "")), entry=str(_need(data, "entry", "")),
        arch=str(data.get("arch", "sm_90")), grid=grid, block=block, shared_static=s_static,
        shared_dynamic=s_dyn, param_size=psize, fields=fields, frame=frame,
        seed=_int(data.get("seed", 0), "seed"), notes=str(data.get("notes", "")), source=source)


def load_spec(path: str | Path) -> ProbeSpec:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise SpecError(f"{path}: not valid YAML: {e}") from None
    return parse_spec(data, str(path))
