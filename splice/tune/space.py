"""The search space: a ``tune:`` section over a recipe's cuts, enumerated lazily.

    recipe: enc5_phases.yaml        # a tune file names its recipe (or sits inside it as tune:)
    tune:
      ranges: {offsets: [8512, 8528]}
      space:
        - cuts: all                 # all | 3 | [1, 2] | "1-3,5" (the recipe's cut numbers)
          fence: [none, start, end] # one choice shared by the cuts named (together: true)
        - cuts: [5, 6]
          together: false           # one choice per cut: a dimension each
          order: [original, k-major, chain-major]
          loads: [as-is, hoisted, sunk, split]
        - cuts: 1
          abi: [inline, call]
          native: [../native/a.ptx, ../native/b.ptx]
          params: {woff: offsets, unroll: "1..4"}
      directives: {maxnreg: [none, 168], minblocks: [none, 3]}   # the recipe keys; none: left out
      search: {rounds: 3, eta: 2, final: 4, final_rounds: 30, max_variants: 64, seed: 0,
               cache: warm, min_sample_ms: 1.0, ci_width: 0.005, time_budget: 60}

The space is the product of its dimensions; a variant is one index into it, decoded digit by
digit (mixed radix), so ``size`` is known without enumerating and any point is built alone.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from ..cut.binding import ABIS
from ..errors import SpliceError
from ..util import home_dir, read_utf8, user_path
from ..yamlsafe import YList, YMap, load_yaml_marked
from . import schedule as sch
from .directives import check_choices

CUT_DIMENSIONS = ("order", "fence", "loads", "abi", "native", "params")
ITEM_KEYS = {"cuts", "together", "threads", *CUT_DIMENSIONS}
TUNE_KEYS = {"space", "ranges", "directives", "search"}
SEARCH_KEYS = {"rounds": 3, "eta": 2, "final": 4, "final_rounds": 30, "max_variants": 64, "seed": 0}
#: the timing method's settings a search takes (docs/timing.md; probe's --cache, --min-sample-ms,
#: --ci-width, --time-budget): every GPU batch is timed with them
TIMING_KEYS = ("cache", "min_sample_ms", "ci_width", "time_budget")
DIRECTIVES = ("maxnreg", "minblocks")
_RANGE = re.compile(r"\s*(-?\d{1,18})\s*\.\.\s*(-?\d{1,18})\s*(?:/\s*(\d{1,18}))?\s*$")
MAX_RANGE = 1 << 16


@dataclass(frozen=True)
class Dimension:
    """One digit of a variant's index: a key set to one of ``choices`` on ``cuts``."""
    key: str                  # order | fence | loads | abi | native | params.NAME | maxnreg | minblocks
    cuts: tuple               # the recipe's cut numbers it sets (empty for a directive)
    choices: tuple
    line: int = 0
    threads: int = 0          # abi: the block size a call-shared choice writes (its threads:)

    @property
    def name(self) -> str:
        return f"{self.key}@{_cuts_text(self.cuts)}" if self.cuts else self.key


def _cuts_text(cuts: tuple) -> str:
    return ",".join(map(str, cuts))


@dataclass(frozen=True)
class Search:
    rounds: int = 3                 # the round caps: rung r asks for rounds * eta^r
    eta: int = 2
    final: int = 4
    final_rounds: int = 30
    max_variants: int = 64
    seed: int = 0
    cache: str = "warm"             # warm | cold
    min_sample_ms: float = 1.0      # a sample covers at least this much of the shortest module
    ci_width: float = 0.005         # a batch stops once every interval is at most this wide
    time_budget: float = 60.0       # seconds of timing per GPU batch at most


def search_error(key: str, value) -> str:
    """Why ``value`` is no setting for search key ``key`` ('' when it is one)."""
    if key in TIMING_KEYS:
        if key == "cache":
            return "" if value in ("warm", "cold") else f"expected warm or cold, got {value!r}"
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        lo, hi = {"min_sample_ms": (0.0, 1e4), "ci_width": (1e-6, 1.0), "time_budget": (1e-3, 1e6)}[key]
        return "" if number and lo <= value <= hi else f"expected a number {lo:g}..{hi:g}, got {value!r}"
    low = 0 if key == "seed" else (2 if key == "eta" else 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        return f"expected a whole number of at least {low}, got {value!r}"
    return ""


@dataclass
class Space:
    path: str                     # the tune file
    recipe_path: str              # the recipe whose cuts it varies
    recipe: YMap                  # that recipe's YAML (without tune:)
    dims: list
    search: Search
    notes: list = field(default_factory=list)

    @property
    def size(self) -> int:
        return math.prod(len(d.choices) for d in self.dims)

    def point(self, index: int) -> dict:
        """{dimension name: choice} of variant ``index`` (mixed radix, first dimension fastest)."""
        if not 0 <= index < self.size:
            raise IndexError(index)
        out = {}
        for d in self.dims:
            index, digit = divmod(index, len(d.choices))
            out[d.name] = d.choices[digit]
        return out

    def indices(self, limit: Optional[int] = None, seed: int = 0) -> Iterator[int]:
        """Every index in order when the space is at most ``limit``; else ``limit`` of them drawn
        without repetition (seeded), index 0 (every first choice, usually the recipe itself)
        first.  Lazy: a space of 10^12 points is sampled, never listed."""
        n = self.size
        if limit is None or n <= limit:
            yield from range(n)
            return
        yield 0
        rng, seen = random.Random(seed), {0}
        while len(seen) < limit:
            i = rng.randrange(n)
            if i not in seen:
                seen.add(i)
                yield i


# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------

def load_space(path: str) -> Space:
    """A tune file (``recipe:`` and ``tune:``) or a recipe holding a ``tune:`` section."""
    text = read_utf8(path, "a tune file is UTF-8 YAML", 1 << 20)
    data = load_yaml_marked(text, path)
    if not isinstance(data, YMap) or "tune" not in data:
        raise SpliceError("a tune file is a YAML mapping with a tune: section (and recipe: naming the "
                          "recipe, unless the file is that recipe)", path, 1)
    tune = data["tune"]
    if not isinstance(tune, YMap):
        raise SpliceError("tune: expected a mapping (space:, ranges:, directives:, search:)", path,
                          *data.vat("tune"))
    recipe_path, recipe = _recipe_of(data, path, home_dir(path))
    _known(tune, TUNE_KEYS, "tune", path)
    ranges = _ranges(tune.get("ranges"), path, tune)
    ncuts = len(recipe["cuts"]) if isinstance(recipe.get("cuts"), YList) else 0
    dims = _dimensions(tune.get("space"), path, tune, ncuts, ranges, home_dir(path))
    dims += _directives(tune.get("directives"), path, tune, ranges)
    return Space(path, recipe_path, recipe, dims, _search(tune.get("search"), path, tune))


def _known(m: YMap, keys: set, what: str, path: str) -> None:
    for k in m:
        if k not in keys:
            raise SpliceError(f"{what}: unknown key {k!r} (expected one of {', '.join(sorted(keys))})",
                              path, *m.at(k))


def _recipe_of(data: YMap, path: str, home: Path) -> tuple:
    """(recipe path, its YAML without tune:) for a tune file or a recipe holding tune:."""
    if "recipe" not in data:
        base = YMap({k: v for k, v in data.items() if k != "tune"})
        base.key_at, base.value_at = data.key_at, data.value_at
        return path, base
    _known(data, {"recipe", "tune", "description"}, "tune file", path)
    spelled = data["recipe"]
    if not isinstance(spelled, str) or not spelled.strip():
        raise SpliceError(f"recipe: expected a file name, got {spelled!r}", path, *data.vat("recipe"))
    rp = home / user_path(spelled, path, *data.vat("recipe"))
    if not rp.is_file():
        raise SpliceError(f"recipe {spelled!r} not found (looked at {rp})", path, *data.vat("recipe"))
    recipe = load_yaml_marked(read_utf8(str(rp), "a recipe is UTF-8 YAML", 1 << 20), str(rp))
    if not isinstance(recipe, YMap) or not isinstance(recipe.get("cuts"), YList):
        raise SpliceError("the recipe has no cuts: list", str(rp), 1)
    return str(rp), recipe


def _search(raw, path: str, tune: YMap) -> Search:
    if raw is None:
        return Search()
    if not isinstance(raw, YMap):
        raise SpliceError("search: expected a mapping", path, *tune.vat("search"))
    _known(raw, set(SEARCH_KEYS) | set(TIMING_KEYS), "search", path)
    vals = {}
    for k, v in raw.items():
        why = search_error(str(k), v)
        if why:
            raise SpliceError(f"search: {k}: {why}", path, *raw.vat(k))
        vals[str(k)] = v
    return Search(**vals)


def _ranges(raw, path: str, tune: YMap) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, YMap):
        raise SpliceError("ranges: expected a mapping of names to lists", path, *tune.vat("ranges"))
    return {str(k): _values(v, path, raw.vat(k), {}, f"ranges: {k}") for k, v in raw.items()}


def _values(v, path: str, at: tuple, ranges: dict, what: str) -> tuple:
    """A dimension's choices: a list, a named range, ``lo..hi[/step]``, or one value."""
    if isinstance(v, YList):
        if not v:
            raise SpliceError(f"{what}: an empty list has no choice", path, *at)
        if any(isinstance(x, (YList, YMap)) for x in v):
            raise SpliceError(f"{what}: choices are numbers or names, not lists or mappings", path, *at)
        return tuple(v)
    if isinstance(v, str) and v in ranges:
        return ranges[v]
    if isinstance(v, str) and _RANGE.match(v):
        return _span(v, path, at, what)
    if isinstance(v, YMap) or v is None:
        raise SpliceError(f"{what}: expected a list of choices, got {v!r}", path, *at)
    return (v,)


def _span(v: str, path: str, at: tuple, what: str) -> tuple:
    lo, hi, step = _RANGE.match(v).groups()
    lo_i, hi_i, step_i = int(lo), int(hi), int(step or 1)
    if hi_i < lo_i or step_i < 1:
        raise SpliceError(f"{what}: empty range {v!r}", path, *at)
    if (hi_i - lo_i) // step_i + 1 > MAX_RANGE:
        raise SpliceError(f"{what}: {v!r} has more than {MAX_RANGE} values", path, *at)
    return tuple(range(lo_i, hi_i + 1, step_i))


def _cut_numbers(v, path: str, at: tuple, ncuts: int) -> tuple:
    if v == "all":
        return tuple(range(1, ncuts + 1))
    if isinstance(v, int) and not isinstance(v, bool):
        nums = [v]
    elif isinstance(v, YList) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        nums = list(v)
    elif isinstance(v, str) and re.fullmatch(r"\s*\d{1,6}(\s*-\s*\d{1,6})?(\s*,\s*\d{1,6}(\s*-\s*\d{1,6})?)*\s*", v):
        nums = []
        for part in v.split(","):
            a, _, b = part.partition("-")
            nums.extend(range(int(a), int(b or a) + 1))
    else:
        raise SpliceError(f"cuts: expected all, a cut number, a list or \"1-3,5\", got {v!r}", path, *at)
    bad = [n for n in nums if not 1 <= n <= ncuts]
    if bad or not nums:
        has = f"cuts 1-{ncuts}" if ncuts else "no cuts (a tune file names its recipe with recipe:)"
        raise SpliceError(f"cuts: the recipe has {has}, not {bad[0] if bad else 'none'}", path, *at)
    return tuple(sorted(set(nums)))


def _dimensions(raw, path: str, tune: YMap, ncuts: int, ranges: dict, home: Path) -> list:
    if raw is None:
        return []
    if not isinstance(raw, YList):
        raise SpliceError("space: expected a list of items (cuts: plus the keys they vary)", path,
                          *tune.vat("space"))
    dims: list = []
    taken: dict = {}
    for i, item in enumerate(raw):
        at = raw.item_at[i] if i < len(raw.item_at) else (None, None)
        if not isinstance(item, YMap):
            raise SpliceError("space: each item is a mapping (cuts:, fence:, order: …)", path, *at)
        for d in _item(item, path, at, ncuts, ranges, home):
            for c in d.cuts:
                if (c, d.key) in taken:
                    raise SpliceError(f"cut {c}: {d.key} is already varied by the item at line "
                                      f"{taken[(c, d.key)]}", path, d.line)
                taken[(c, d.key)] = d.line
            dims.append(d)
    return dims


def _item(item: YMap, path: str, at: tuple, ncuts: int, ranges: dict, home: Path) -> list:
    _known(item, ITEM_KEYS, "space item", path)
    if "cuts" not in item:
        raise SpliceError("space item: cuts: is required (all, a number, a list)", path, *at)
    cuts = _cut_numbers(item["cuts"], path, item.vat("cuts"), ncuts)
    together = item.get("together", True)
    if not isinstance(together, bool):
        raise SpliceError("together: expected true or false", path, *item.vat("together"))
    groups = [cuts] if together else [(c,) for c in cuts]
    threads = _threads(item, path)
    out = []
    for key in CUT_DIMENSIONS:
        if key not in item:
            continue
        for kd, choices, line in _choices(key, item, path, ranges, home):
            if kd == "abi" and "call-shared" in choices and not threads:
                raise SpliceError("abi: call-shared needs the block size: add threads: N to this item", path,
                                  *item.vat("abi"))
            out += [Dimension(kd, g, choices, line, threads if kd == "abi" else 0) for g in groups]
    if not out:
        raise SpliceError("space item: names no dimension (order, fence, loads, abi, native, params)", path, *at)
    return out


def _threads(item: YMap, path: str) -> int:
    t = item.get("threads", 0)
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= 1024 or ("threads" in item and t < 1):
        raise SpliceError("threads: expected the block size, 1..1024 (for abi call-shared)", path, *item.vat("threads"))
    if t and "abi" not in item:
        raise SpliceError("threads: only an abi: dimension with call-shared uses it", path, *item.at("threads"))
    return t


def _choices(key: str, item: YMap, path: str, ranges: dict, home: Path) -> list:
    """[(dimension key, choices, line)] of one key of an item (``params`` gives one per name)."""
    line = item.vat(key)[0] or 0
    if key == "params":
        ps = item["params"]
        if not isinstance(ps, YMap) or not ps:
            raise SpliceError("params: expected a mapping of template parameters to choices", path, *item.vat(key))
        return [(f"params.{k}", _param_values(ps, k, path, ranges), ps.vat(k)[0] or line) for k in ps]
    choices = _values(item[key], path, item.vat(key), ranges, key)
    _check_choices(key, choices, path, item.vat(key), home)
    if key == "native":
        choices = tuple(str(home / str(c)) for c in choices)
    return [(key, choices, line)]


def _param_values(ps: YMap, k, path: str, ranges: dict) -> tuple:
    vals = _values(ps[k], path, ps.vat(k), ranges, f"params: {k}")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise SpliceError(f"params: {k}: expected integers or expressions, got {v!r}", path, *ps.vat(k))
    return vals


def _check_choices(key: str, choices: tuple, path: str, at: tuple, home: Path) -> None:
    allowed = {"fence": sch.FENCES, "loads": sch.LOADS, "abi": ABIS}.get(key)
    for c in choices:
        if key == "order":
            try:
                sch.check_order(str(c))
            except ValueError as exc:
                raise SpliceError(f"order: {exc}", path, *at) from None
        elif allowed is not None and c not in allowed:
            raise SpliceError(f"{key}: {c!r} is not one of {', '.join(allowed)}", path, *at)
        elif key == "native" and not (home / str(c)).is_file():
            raise SpliceError(f"native: {c!r} not found (looked at {home / str(c)})", path, *at)


def _directives(raw, path: str, tune: YMap, ranges: dict) -> list:
    if raw is None:
        return []
    if not isinstance(raw, YMap):
        raise SpliceError("directives: expected a mapping (maxnreg:, minblocks:)", path, *tune.vat("directives"))
    _known(raw, set(DIRECTIVES), "directives", path)
    out = []
    for k in raw:
        vals = _values(raw[k], path, raw.vat(k), ranges, k)
        check_choices(str(k), vals, path, raw.vat(k))
        out.append(Dimension(str(k), (), vals, raw.vat(k)[0] or 0))
    return out
