"""Fills: how a buffer's, image's or global's initial contents are made (seeded, chunked,
reproducible: ``fill_data``), and the values a spec may give where an element type decides what
is valid -- a scalar's value, a poison pattern, a fill's range or constant.  Every check runs
when the spec is read, before the GPU: numpy's ``ValueError``/``OverflowError`` on the GPU run
were tracebacks, and worse, silent (``constant: .nan`` in an s32 buffer stored INT_MIN)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import dtypes as dt
from .context import Ctx

FILL_RULES = ("zeros", "constant", "uniform", "normal", "integers", "arange", "e4m3", "e5m2",
              "weight_image", "from", "f16_uniform", "constant_u16")


FILL_KEYS = {"rule", "seed", "range", "max_code", "value", "f16_regions", "mean", "std",
             "start", "step", "path", "what"}


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


def parse_fill(c: Ctx, d: Any, where: str, base: Path, holder=None) -> Fill:
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
        local = c.local(p, f"{where}.path", d, "path")
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


def check_fill(c: Ctx, fill: Fill, t, d, where: str) -> None:
    """What the fill's numbers must be for its element type ``t``, checked with the spec (before
    the GPU run, where numpy's ``ValueError``/``OverflowError`` were tracebacks, or worse,
    silent: ``constant: .nan`` in an s32 buffer stored INT_MIN, ``value: 1e23`` the type's max)."""
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
    lo, hi = int_range(t)
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


def int_range(t) -> tuple:
    bits = 8 * t.size
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.kind == "int" else (0, (1 << bits) - 1)


def _region(c: Ctx, r, w: str) -> Region:
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


def scalar_value(c: Ctx, t, v, where: str, holder, key):
    """One element of a scalar's value (or of a ``launch.sequence`` override of it)."""
    if t.is_float:
        return c.num(v, where, holder, key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise c.err(where, f"expected an integer, got {v!r}", holder, key)
    lo = -(1 << (8 * t.size - 1))          # negative unsigned values wrap (-1 = all ones)
    if not lo <= v < (1 << (8 * t.size)):
        raise c.err(where, f"{v} does not fit .{t.name}", holder, key)
    return v


def parse_poison(c: Ctx, d, where: str, t: dt.DType, default: int) -> tuple:
    """(bits, is_byte): an int is a byte for buffers; {value: x} is an element value."""
    p = d.get("poison", default)
    if isinstance(p, dict):
        c.keys(p, {"value", "byte"}, f"{where}.poison")
        if "byte" in p:
            return _byte(c, c.int(p, "byte", f"{where}.poison.byte", 0), f"{where}.poison.byte", p, "byte"), True
        return _poison_value(c, t, p.get("value", 0), f"{where}.poison.value", p), False
    return _byte(c, c.int(d, "poison", f"{where}.poison", 0, default), f"{where}.poison", d, "poison"), True


def _poison_value(c: Ctx, t: dt.DType, v, where: str, holder) -> int:
    """The bits of an element poison ``{value: x}``, checked as a value of the element type: a
    list, null or 2^128 were a numpy traceback, 1e40 in an f32 a silent inf, .nan in a u32 or
    0.5 in an e4m3 silently some other bits (the astype of a float to an integer storage)."""
    if not t.is_float:
        return scalar_value(c, t, v, where, holder, "value") & ((1 << (8 * t.size)) - 1)
    x = c.num(v, where, holder, "value")
    if t.kind == "fp8":
        table = dt.E4M3 if t.name == "e4m3" else dt.E5M2
        hits = np.flatnonzero(np.isnan(table) if x != x else table == x)
        if not hits.size:
            raise c.err(where, f"{x!r} is no {t.name} value (give its byte: poison: {{byte: N}})", holder, "value")
        return int(hits[0])
    return _float_bits(c, t, x, where, holder)


def _float_bits(c: Ctx, t: dt.DType, x: float, where: str, holder) -> int:
    """The bits of ``x`` as float type ``t`` (not fp8); a finite ``x`` that rounds to an
    infinity there (1e40 in an f32, 70000 in an f16) is an error at ``where``, not a silent inf."""
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


def _byte(c: Ctx, v: int, where: str, holder, key) -> int:
    """A poison byte: 0..255 (999 was accepted, then numpy's OverflowError on the GPU run)."""
    if v > 0xFF:
        raise c.err(where, f"{v} is not a byte (0..255; poison: {{value: X}} gives an element value)", holder, key)
    return v
