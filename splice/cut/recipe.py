"""Cut recipes: YAML that names a module, an entry and a list of cuts.

    module: enc5.ptx                 # relative to the recipe, else found on the corpus search path
    entry: cuda_dldn_engine_swin_enc5_kernel
    arch: sm_90                      # ptxas target (default sm_90), opt_level: 3 (0 for a debug target)
    output: ../build/enc5_p8.ptx     # default: build/<recipe stem>.ptx (relative to the cwd)
    cuts:
      - phase: 8                     # or  phases: 1-10 | statements: s7771-s7794 | lines: 12051-12206
                                     #     epilogue: 21 | epilogues: 23-59/2 | phase+epilogue: 21
        native: native/enc5_p8.ptx   # relative to the recipe
        abi: inline                  # inline | call | call-shared
        params: {woff: 8512}         # template parameters (override the native header's)
        values: {W: "%rd3"}          # named values: %W in the native phase is this register
        threads: 128                 # block size (call-shared only)
        sync: warp                   # call-shared: warp | cta | none
        expect: {mma: 24, shape: 96x32x32, weight_bytes: 8512..9036, live_in: 80, live_out: 48}

The loader keeps the line and column of every key and value, so a schema error names the
YAML key and its line (``recipe.yaml:7:5: cut 1: unknown key 'phsae'``).
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..util import DIRECTORY_NAME, home_dir, names_a_directory, not_a_file, read_input, read_utf8, user_path
from ..yamlsafe import DEFAULT_LIMITS, YList, YMap, load_yaml_marked  # noqa: F401  (re-exported)

#: ``tune:`` is the search space ``splice tune`` reads and validates (docs/tune.md); apply, verify
#: and probe ignore it, so a recipe holding its own space applies as it is
TOP_KEYS = {"module", "entry", "arch", "opt_level", "output", "cuts", "description", "name",
            "maxnreg", "minblocks", "maxntid", "tune"}
#: the entry's performance directives a recipe sets (docs/recipes.md, "Entry directives"): key ->
#: the PTX directive written before the entry's body
DIRECTIVE_KEYS = {"maxnreg": ".maxnreg", "minblocks": ".minnctapersm", "maxntid": ".maxntid"}
#: ptxas's range for ``.maxnreg`` on sm_90 (below 24 it raises the count itself, with a warning;
#: above 255 it ignores the directive, with a warning: both a silent no-op for a recipe)
MAXNREG_RANGE = (24, 255)
#: ``.minnctapersm``: at most 32 resident blocks per SM (sm_90's limit)
MINBLOCKS_RANGE = (1, 32)
CUT_KEYS = {"phase", "phases", "statements", "lines", "epilogue", "epilogues", "phase+epilogue", "native",
            "abi", "params", "values", "expect", "threads", "sync", "name", "description"}
SELECTORS = ("phase", "phases", "statements", "lines", "epilogue", "epilogues", "phase+epilogue")
# selectors naming epilogues (E<n> = the statements after phase n's last mma); see cut/epilogue.py
EPILOGUE_SELECTORS = ("epilogue", "epilogues", "phase+epilogue")
EXPECT_KEYS = {"mma", "shape", "weight_bytes", "live_in", "live_out", "statements", "chains",
               "phases", "statement_count", "kind", "constants", "memory"}


# --------------------------------------------------------------------------------------------
# the recipe model
# --------------------------------------------------------------------------------------------

@dataclass
class Cut:
    index: int                  # 1-based position in the recipe's cut list
    select: str                 # phase | phases | statements | lines
    targets: tuple              # phase numbers, or one (lo, hi) range
    native: Path
    native_shown: str
    abi: str = "inline"
    params: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    threads: Optional[int] = None
    sync: Optional[str] = None
    name: Optional[str] = None
    line: int = 0
    at: dict = field(default_factory=dict)     # key -> (line, column) in the recipe

    def where(self, key=None) -> tuple:
        return self.at.get(key, (self.line, None)) if key else (self.line, None)


@dataclass
class Recipe:
    path: str
    module: Path
    module_shown: str
    entry: Optional[str]
    arch: str
    opt_level: int
    output: Path
    cuts: list
    description: str = ""
    at: dict = field(default_factory=dict)
    directives: dict = field(default_factory=dict)   # maxnreg/minblocks/maxntid as given (checked)

    def error(self, message, key=None, cut: Optional[Cut] = None, detail="") -> SpliceError:
        if cut is not None:
            line, col = cut.where(key)
            message = f"cut {cut.index}: {message}"
        else:
            line, col = self.at.get(key, (None, None))
        return SpliceError(message, self.path, line, col, detail)


def _range(text, path, at, prefix=""):
    """'s7771-s7794' / '7771-7794' / 7771 -> (7771, 7794)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return (text, text)
    s = str(text).strip()
    p = f"(?:{prefix})?" if prefix else ""
    # re.A: \d is 0-9 only, not every script's digits ('s١' is not s1)
    mt = (re.fullmatch(rf"{p}(\d{{1,40}})\s*(?:-|\.\.|–)\s*{p}(\d{{1,40}})", s, re.I | re.A)
          or re.fullmatch(rf"{p}(\d{{1,40}})", s, re.I | re.A))
    if not mt:
        want = f"{prefix}A-{prefix}B" if prefix else "A-B"
        raise SpliceError(f"expected a range like {want}, got {s!r}", path, *at)
    lo = int(mt.group(1))
    hi = int(mt.group(2)) if mt.lastindex and mt.lastindex > 1 else lo
    if hi < lo:
        raise SpliceError(f"empty range {s!r}", path, *at)
    return (lo, hi)


def _phase_list(v, path, at) -> tuple:
    """8 | [3, 5, 7] | "1-3,7" | "23-59/2" (every second number from 23 to 59) -> numbers."""
    if isinstance(v, bool):
        raise SpliceError("phases: expected numbers", path, *at)
    if isinstance(v, int):
        return (v,)
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(_phase_list(x, path, at))
        return tuple(out)
    out = []
    for part in str(v).split(","):
        rng, slash, step = part.strip().partition("/")
        lo, hi = _range(rng.strip(), path, at)
        if slash and not (re.fullmatch(r"[0-9]{1,40}", step.strip()) and int(step) > 0):
            raise SpliceError(f"expected a step like 23-59/2, got {part.strip()!r}", path, *at)
        numbers = range(lo, hi + 1, int(step) if slash else 1)
        if len(out) + _length(numbers) > MAX_PHASES:
            raise SpliceError(f"phases: {part.strip()!r} lists more than {MAX_PHASES} phases", path, *at)
        out.extend(numbers)
    return tuple(out)


#: the most phase numbers one ``phases:`` may list: a range is expanded, so ``1-99999999999``
#: must be refused before it becomes a list (no kernel has this many mma phases)
MAX_PHASES = 1 << 16


def _length(numbers: range) -> int:
    """``len`` of a range too long for a C size (``len`` itself raises OverflowError)."""
    if numbers.stop <= numbers.start:
        return 0
    return (numbers.stop - numbers.start + numbers.step - 1) // numbers.step


def resolve_module(spec: str, recipe_dir: Path, search_path, entry: Optional[str] = None,
                   where: tuple = ()) -> Optional[Path]:
    """The module a recipe names: a path (absolute, or relative to the recipe), else, per
    search-path directory in order, a file of that name or — when the recipe names its entry —
    the one ``*.ptx`` file of the directory that declares ``.entry <entry>``.  The second rule is
    what lets a recipe written against the stand-in ``enc5.ptx`` run unchanged on a user's own
    corpus, whose files are named otherwise (``0018-PREPASS_ENTRYPOINT_NAME.ptx``); the user's
    directories come first, so the stand-in never shadows the real kernel.  A directory where
    several files declare the entry is an error naming them (``where``: the recipe and its
    ``module:`` line): the first in name order was taken, so a typo in ``module:`` ran the recipe
    on whichever came first — an earlier spliced output of the same kernel, say."""
    p = user_path(spec)
    if p.is_absolute():
        return p if _named_file(p, spec, where) else None
    if _named_file(recipe_dir / p, spec, where):
        return recipe_dir / p
    for d in search_path or ():
        d = user_path(str(d))
        for c in (d / p, d / p.name):
            if _named_file(c, spec, where):
                return c
        if entry:
            hits = _files_with_entry(d, entry)
            if len(hits) > 1:
                path, line, col = (tuple(where) + (None, None, None))[:3]
                raise SpliceError(f"module {spec!r} is not a file, and {len(hits)} files of {d} declare "
                                  f".entry {entry}: name the one to use in module:", path, line, col,
                                  detail="candidates:\n" + "\n".join(f"  {h}" for h in hits[:MAX_CANDIDATES])
                                  + (f"\n  … and {len(hits) - MAX_CANDIDATES} more" if len(hits) > MAX_CANDIDATES
                                     else ""))
            if hits:
                return hits[0]
    return None


def _named_file(c: Path, spec: str, where: tuple) -> bool:
    """Whether ``c`` is the regular file ``module:`` names; something else by that name (a
    directory, a FIFO, a device, a link to nothing) is an error, not a name to search further
    for: the search went on by entry and ran the recipe on another module of the corpus."""
    if c.is_file():
        return True
    if not os.path.lexists(c):
        return False
    try:
        kind = not_a_file(c.stat().st_mode) or ("a FIFO (a recipe's module is read more than once)"
                                                   if stat.S_ISFIFO(c.stat().st_mode) else "not a regular file")
    except OSError:
        kind = "a symbolic link to nothing (its target is missing, or the links loop)"
    path, line, col = (tuple(where) + (None, None, None))[:3]
    raise SpliceError(f"module {spec!r}: {c} is {kind}, not a file", path, line, col)


#: the candidates an ambiguous module search lists (a corpus may hold thousands of copies)
MAX_CANDIDATES = 20


#: PTX comments, as bytes (a block comment never closed runs to the end, matched once: linear)
_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)


def _files_with_entry(directory: Path, entry: str) -> list:
    """Every regular ``*.ptx`` of ``directory`` that declares ``.entry <entry>`` outside a
    comment (a note's ``// .entry k`` made the search ambiguous), in name order."""
    if not directory.is_dir():
        return []
    pat = re.compile(rb"\.entry\s+" + re.escape(entry.encode()) + rb"(?![\w$])")
    hits = []
    for f in sorted(directory.glob("*.ptx")):
        try:   # only regular files: a FIFO or a device named *.ptx must not hang the scan
            raw = read_input(f) if f.is_file() else None
            if raw is not None and pat.search(raw) and pat.search(_COMMENTS.sub(b" ", raw)):
                hits.append(f)
        except OSError:
            continue
    return hits


def default_search_path(recipe_dir: Path, extra=()) -> list:
    """Corpus directories tried for a module named by name: ``extra`` (the CLI passes the
    user's ``$SPLICE_CORPUS`` entries first), then ``corpus/`` next to and above the recipe, then
    ``./corpus``."""
    out = [Path(x) for x in extra]
    for d in (recipe_dir, *recipe_dir.resolve().parents[:3]):
        out.append(d / "corpus")
    out.append(Path.cwd() / "corpus")
    seen, uniq = set(), []
    for d in out:
        k = str(d)
        if k not in seen:
            seen.add(k)
            uniq.append(d)
    return uniq


def _read_text(path: str, what: str) -> str:
    try:
        return read_utf8(path, f"a {what} is UTF-8 YAML", DEFAULT_LIMITS.max_bytes)
    except FileNotFoundError:
        raise SpliceError(f"{what} not found", path) from None


def _arch(data: YMap, path: str, module: Path) -> str:
    """The recipe's ptxas target, checked here so a typo names its line, not a ptxas run; by
    default the module's own ``.target`` when it is sm_90 or newer (an ``sm_90a`` module's wgmma
    or an ``sm_100a`` module's tcgen05 do not assemble for sm_90), else sm_90."""
    from ..ptx.sass import normalize_arch

    raw = data.get("arch", _default_arch(module))
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise SpliceError(f"arch: expected an architecture like sm_90, got {raw!r}", path, *data.vat("arch"))
    try:
        return normalize_arch(raw)
    except ValueError:
        raise SpliceError(f"arch: not a GPU architecture: {raw!r} (expected e.g. sm_90 or sm_90a)", path,
                          *data.vat("arch")) from None


def _output(data: YMap, path: str) -> Path:
    """The recipe's ``output:``: a file name, nothing else.  ``str()`` of a null or a list would
    be a file named ``None`` or ``['a']`` written beside the recipe.  ``~`` is expanded and a URL
    refused as for ``module:`` and ``native:`` (``output: ~/x.ptx`` made a directory named ``~``
    beside the recipe, ``http://h/x.ptx`` one named ``http:``)."""
    raw = data["output"]
    if not isinstance(raw, str) or not raw.strip() or names_a_directory(raw):
        raise SpliceError(f"output: expected a file name, got {raw!r}", path, *data.vat("output"))
    return user_path(raw, path, *data.vat("output"))


def load_recipe(path, search_path=None, output: Optional[str] = None) -> Recipe:
    path = str(path)
    data = load_yaml_marked(_read_text(path, "recipe"), path)
    if not isinstance(data, YMap):
        raise SpliceError("a recipe is a YAML mapping (module:, entry:, cuts:)", path, 1)
    for k in data:
        if k not in TOP_KEYS:
            raise SpliceError(f"unknown key {k!r} (expected one of {', '.join(sorted(TOP_KEYS))})", path,
                              *data.at(k))
    for k in ("module", "cuts"):
        if k not in data:
            raise SpliceError(f"missing required key {k!r}", path, data.line, data.column)
    rdir = home_dir(path)      # the working directory for a recipe read from a pipe (/dev/stdin)
    sp = default_search_path(rdir) if search_path is None else list(search_path)
    entry = data.get("entry")
    if entry is not None and (not isinstance(entry, str) or not entry.strip()):   # '': every entry, silently
        raise SpliceError(f"entry: expected an entry name, got {entry!r}", path, *data.vat("entry"))
    for k in ("description", "name"):
        if k in data and isinstance(data[k], (list, dict)):    # str() of a list was the description
            raise SpliceError(f"{k}: expected text, got {data[k]!r}", path, *data.vat(k))
    if not isinstance(data["module"], str) or not data["module"].strip():  # '': found by entry alone
        raise SpliceError(f"module: expected a file name, got {data['module']!r}", path, *data.vat("module"))
    user_path(data["module"], path, *data.vat("module"))     # ~nobody, a URL: refused at the line
    mod = resolve_module(data["module"], rdir, sp, entry, (path, *data.vat("module")))
    if mod is None:
        line, col = data.vat("module")
        raise SpliceError(f"module {data['module']!r} not found", path, line, col,
                          detail="looked next to the recipe and in: " + ", ".join(str(d) for d in sp))
    arch = _arch(data, path, mod)
    opt = data["opt_level"] if "opt_level" in data else _default_opt_level(mod)
    if not isinstance(opt, int) or isinstance(opt, bool) or not 0 <= opt <= 4:
        raise SpliceError("opt_level must be 0..4", path, *data.vat("opt_level"))
    if output:
        if names_a_directory(output):
            raise SpliceError(DIRECTORY_NAME, output)
        out = Path(output)
    elif "output" in data:
        out = rdir / _output(data, path)
    else:
        out = Path("build") / (Path(path).stem + ".ptx")
    cuts_y = data["cuts"]
    if not isinstance(cuts_y, YList) or not cuts_y:
        raise SpliceError("cuts: expected a non-empty list", path, *data.vat("cuts"))
    cuts = [_load_cut(i, cy, cuts_y.item_at[i - 1], path, rdir) for i, cy in enumerate(cuts_y, 1)]
    return Recipe(path, mod, str(data["module"]), entry, arch, opt, out, cuts,
                  str(data.get("description") or ""), {k: data.at(k) for k in data},
                  _directives(data, path))


def _int_in(data: YMap, key: str, lo: int, hi: int, path: str, why: str) -> int:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise SpliceError(f"{key}: expected an integer {lo}..{hi} ({why}), got {v!r}", path, *data.vat(key))
    return v


def _directives(data: YMap, path: str) -> dict:
    """The recipe's entry directives, checked at their lines: ``maxnreg: N`` (``.maxnreg``,
    24..255), ``minblocks: N`` (``.minnctapersm``, 1..32), ``maxntid: N | [x, y, z]``
    (``.maxntid``, at most 1024 threads).  Each is a value ptxas would otherwise take with a
    warning and ignore or change, which is a recipe that silently does not do what it says; a
    ``minblocks:`` without a block size is checked against the entry when the recipe is planned
    (``splice.cut.directives``)."""
    out: dict = {}
    if "maxnreg" in data:
        out["maxnreg"] = _int_in(data, "maxnreg", *MAXNREG_RANGE, path,
                                 "registers per thread; ptxas raises fewer than 24 and ignores more than 255")
    if "minblocks" in data:
        out["minblocks"] = _int_in(data, "minblocks", *MINBLOCKS_RANGE, path,
                                   "blocks resident per SM that ptxas must make room for")
    if "maxntid" in data:
        out["maxntid"] = _block(data, path)
    return out


def _block(data: YMap, path: str) -> tuple:
    """``maxntid: 128`` or ``[32, 1, 4]`` -> (x, y, z), each at least 1, at most 1024 threads."""
    v = data["maxntid"]
    items = [v] if not isinstance(v, list) else list(v)
    ok = 1 <= len(items) <= 3 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in items)
    if ok:
        items += [1] * (3 - len(items))
        ok = items[0] * items[1] * items[2] <= 1024
    if not ok:
        raise SpliceError(f"maxntid: expected a block size like 128 or [32, 1, 4] (at most 1024 threads), "
                          f"got {v!r}", path, *data.vat("maxntid"))
    return tuple(items)


def _target_line(module: Path) -> str:
    """The operands of the module's ``.target`` directive ('' when there is none)."""
    import re

    with open(module, "rb") as f:
        head = f.read(1 << 16).decode("utf-8", "replace")
    mt = re.search(r"^[ \t]*\.target[ \t]+([^\n/]*)", head, re.M)
    return mt.group(1) if mt else ""


def _default_opt_level(module: Path) -> int:
    """3, or 0 for a module built for debugging (``.target sm_90, debug``, ``nvcc -G``): ptxas
    refuses to optimise it ("Optimized debugging not supported"), as ``roundtrip --sass`` knows."""
    return 0 if "debug" in _target_line(module) else 3


def _default_arch(module: Path) -> str:
    """The module's own target when it is sm_90 or newer, else sm_90 (PTX is forward
    compatible; ``roundtrip --sass`` and ``sass-mix`` choose the same)."""
    import re

    sm = re.search(r"sm_(\d{1,4})([a-z]?)(?![\w])", _target_line(module))
    return f"sm_{sm.group(1)}{sm.group(2)}" if sm and int(sm.group(1)) >= 90 else "sm_90"


def _targets(i: int, cy: YMap, path: str, at0) -> tuple:
    """(selector, targets) of one cut: exactly one of phase/phases/statements/lines."""
    sels = [k for k in SELECTORS if k in cy]
    if len(sels) != 1:
        raise SpliceError(f"cut {i}: exactly one of {', '.join(SELECTORS)} is needed"
                          + (f", got {', '.join(sels)}" if sels else ""), path,
                          *(cy.at(sels[1]) if len(sels) > 1 else at0))
    sel = sels[0]
    v = cy[sel]
    if sel == "phase":
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise SpliceError(f"cut {i}: phase: expected a phase number (1-based), got {v!r}", path,
                              *cy.vat(sel))
        return sel, (v,)
    if sel == "epilogue":
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise SpliceError(f"cut {i}: epilogue: expected an epilogue number (E<n> follows phase n),"
                              f" got {v!r}", path, *cy.vat(sel))
        return sel, (v,)
    if sel in ("phases", "epilogues", "phase+epilogue"):
        targets = _phase_list(v, path, cy.vat(sel)) if v not in (None, "") else ()
        if not targets:
            raise SpliceError(f"cut {i}: {sel}: expected at least one number, got {v!r}", path, *cy.vat(sel))
        if any(t < 1 for t in targets):
            raise SpliceError(f"cut {i}: {sel}: numbers start at 1, got {v!r}", path, *cy.vat(sel))
        return sel, targets
    return sel, (_range(v, path, cy.vat(sel), "s" if sel == "statements" else "L"),)


def _check_cut_keys(i: int, cy: YMap, path: str) -> None:
    for k in cy:
        if k not in CUT_KEYS:
            raise SpliceError(f"cut {i}: unknown key {k!r} (expected one of {', '.join(sorted(CUT_KEYS))})",
                              path, *cy.at(k))
    for k in ("params", "values", "expect"):
        if k in cy and not isinstance(cy[k], YMap):
            raise SpliceError(f"cut {i}: {k}: expected a mapping", path, *cy.vat(k))
    exp = cy.get("expect") or YMap()
    for k in exp:
        if k not in EXPECT_KEYS:
            raise SpliceError(f"cut {i}: expect: unknown fact {k!r} (expected one of "
                              f"{', '.join(sorted(EXPECT_KEYS))})", path, *exp.at(k))
    if "phases" in exp and (not isinstance(exp["phases"], int) or isinstance(exp["phases"], bool)):
        raise SpliceError(f"cut {i}: expect: phases: expected a number of phases", path, *exp.vat("phases"))
    params = cy.get("params") or YMap()
    for k, v in params.items():
        if not isinstance(k, str):
            raise SpliceError(f"cut {i}: params: parameter names are words, got {k!r}", path, *params.at(k))
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise SpliceError(f"cut {i}: params: {k}: expected an integer or an expression, got {v!r}",
                              path, *params.vat(k))


def _load_cut(i: int, cy, at0, path: str, rdir: Path) -> Cut:
    from .binding import ABIS

    if not isinstance(cy, YMap):
        raise SpliceError(f"cut {i}: expected a mapping (phase:, native:, abi:)", path, *at0)
    _check_cut_keys(i, cy, path)
    sel, targets = _targets(i, cy, path, at0)
    if "native" not in cy:
        raise SpliceError(f"cut {i}: missing required key 'native'", path, *at0)
    abi = str(cy.get("abi", "inline"))
    if abi not in ABIS:
        raise SpliceError(f"cut {i}: abi: expected one of {', '.join(ABIS)}, got {abi!r}", path,
                          *cy.vat("abi"))
    thr = cy.get("threads")
    if thr is not None and (not isinstance(thr, int) or isinstance(thr, bool) or thr < 1 or thr > 1024):
        raise SpliceError(f"cut {i}: threads: expected 1..1024", path, *cy.vat("threads"))
    if abi == "call-shared" and thr is None:
        raise SpliceError(f"cut {i}: abi call-shared needs the block size: add threads: N to the cut",
                          path, *cy.vat("abi"))
    sync = cy.get("sync")
    if sync is not None and sync not in ("warp", "cta", "none"):
        raise SpliceError(f"cut {i}: sync: expected warp, cta or none", path, *cy.vat("sync"))
    for k in ("name", "description"):
        if k in cy and isinstance(cy[k], (list, dict)):
            raise SpliceError(f"cut {i}: {k}: expected text, got {cy[k]!r}", path, *cy.vat(k))
    for k in ("threads", "sync"):      # only call-shared's glue reads them: dropped in silence before
        if k in cy and abi != "call-shared":
            raise SpliceError(f"cut {i}: {k}: only abi call-shared uses it (this cut's abi is {abi}): "
                              "remove it or write abi: call-shared", path, *cy.at(k))
    vals = {}
    for k, reg in (cy.get("values") or {}).items():
        if not (isinstance(reg, str) and reg.startswith("%")):
            raise SpliceError(f"cut {i}: values: {k}: expected a register like %rd3", path,
                              *cy["values"].vat(k))
        vals[str(k)] = reg
    exp = cy.get("expect") or YMap()
    params = cy.get("params") or YMap()
    at = {k: cy.at(k) for k in cy}
    at.update({f"expect.{k}": exp.at(k) for k in exp})
    at.update({f"params.{k}": params.at(k) for k in params})
    if not isinstance(cy["native"], str) or not cy["native"].strip():   # str(None) is a file 'None'
        raise SpliceError(f"cut {i}: native: expected a file name, got {cy['native']!r}", path, *cy.vat("native"))
    native = rdir / user_path(cy["native"], path, *cy.vat("native"))     # ~ expanded as for module:
    return Cut(i, sel, targets, native, str(native), abi, dict(params), vals,
               dict(exp), thr, sync, cy.get("name"), at0[0], at)
