"""Entry names for people: Itanium demangling, short display names, and ``--entry`` matching.

Compilers name entries ``_Z14wgmma_gemm_f16PK6__halfS1_Pfi`` (nvcc) or with hundreds of
characters of template arguments (CUTLASS).  A user names an entry by its exact name, its
demangled name (``wgmma_gemm_f16(__half const*, __half const*, float*, int)``), the demangled
function name (``wgmma_gemm_f16``) or any substring that only one entry contains; an ambiguous
substring is an error listing the candidates, never a guess.

Demangling uses ``c++filt`` (binutils) when it is on PATH, in one call for all names; without
it a small built-in reader gives the function name of the common ``_Z<len><name>…`` and
``_ZN…E…`` forms (parameters shown as ``(…)``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from typing import Optional

from ..errors import SpliceError

SHORT = 60


def demangle_all(names) -> dict:
    """{mangled: demangled} for every ``_Z`` name (others map to themselves)."""
    names = list(dict.fromkeys(names))
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return out
    tool = shutil.which("c++filt")
    if tool:
        try:
            r = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                               text=True, timeout=20, check=True)
            lines = r.stdout.splitlines()
            if len(lines) == len(mangled):
                out.update(zip(mangled, lines))
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    for n in mangled:
        out[n] = _builtin(n)
    return out


_LEN = re.compile(r"(\d{1,9})(?!\d)")   # a longer length is no mangled name: the name itself


def _builtin(name: str) -> str:
    """Function name of ``_Z<len><id>…`` / ``_ZN<len><id>…E…``; the name itself otherwise."""
    s = name[2:]
    nested = s.startswith("N")
    if nested:
        s = s[1:]
    parts = []
    while s:
        mm = _LEN.match(s)
        if not mm:
            break
        n = int(mm.group(1))
        start = mm.end()
        parts.append(s[start:start + n])
        s = s[start + n:]
        if not nested:
            break
    if not parts:
        return name
    return "::".join(parts) + "(…)"


def short(display: str, width: int = SHORT) -> str:
    """A display name that fits a table header: the parameter list folded to ``(…)`` when
    too long, then the middle elided."""
    if len(display) <= width:
        return display
    if "(" in display:
        head = display[:display.index("(")]
        display = head + "(…)"
    if len(display) <= width:
        return display
    keep = width - 1
    return display[:keep * 2 // 3] + "…" + display[-(keep - keep * 2 // 3):]


def display_name(name: str) -> str:
    return short(demangle_all([name])[name])


def resolve_entry(module, query: str) -> str:
    """The entry ``query`` names (see the module docstring); SpliceError when none or several,
    and one that says so when ``query`` names a ``.func`` rather than an ``.entry`` (a device
    function has no launch to probe or analyse as a kernel)."""
    ents = [f.name for f in module.entries() if f.body is not None]
    if not _matches(ents, query)[1]:
        funcs = [f.name for f in module.functions() if not f.is_entry and f.body is not None]
        dem, hits = _matches(funcs, query)
        if len(hits) == 1:
            dem = dem or demangle_all(hits)
            which = "" if hits[0] == query else f" ({short(dem[hits[0]])}: {hits[0]})"
            raise SpliceError(f"--entry {query!r} names a .func{which}, not an .entry", path=module.path,
                              detail=_listing(ents))
    return resolve_name(ents, query, module.path)


def _matches(names: list, query: str) -> tuple:
    """(demangled names, the names the first rule that matches any picks): exact, demangled,
    demangled without parameters, last component, substring."""
    if query in names:
        return {}, [query]
    dem = demangle_all(names)
    base = {n: dem[n].split("(", 1)[0] for n in names}
    for test in (lambda n: dem[n] == query, lambda n: base[n] == query,
                 lambda n: base[n].rsplit("::", 1)[-1] == query,
                 lambda n: query in n or query in dem[n]):
        hits = [n for n in names if test(n)]
        if hits:
            return dem, hits
    return dem, []


def resolve_name(ents: list, query: str, path: Optional[str] = None) -> str:
    """:func:`resolve_entry` over a list of entry names (``path`` names the module in errors)."""
    dem, hits = _matches(ents, query)
    if len(hits) == 1:
        return hits[0]
    dem = dem or demangle_all(ents)
    if len(hits) > 1:
        raise SpliceError(f"--entry {query!r} matches {len(hits)} entries; name one of them",
                          path=path, detail=_lines(hits, dem))
    raise SpliceError(f"no entry {query!r}", path=path, detail=_listing(ents, dem))


#: the most names an error lists: a module of 50000 kernels printed 50000 lines for one typo
MAX_LISTED = 20


def _lines(names: list, dem: Optional[dict] = None) -> str:
    """Up to ``MAX_LISTED`` names, one a line (demangled beside the name when ``dem`` is given),
    then how many more there are and where to see them all."""
    shown = "\n".join(f"  {short(dem[n])}  ({n})" if dem else f"  {n}" for n in names[:MAX_LISTED])
    more = len(names) - MAX_LISTED
    return shown + (f"\n  … and {more} more (splice stats --json FILE lists every one)" if more > 0 else "")


def _listing(ents: list, dem: Optional[dict] = None) -> str:
    """The entries an error lists."""
    if not ents:
        return "the module has no .entry with a body"
    return "entries:\n" + _lines(ents, dem)


def lookup(module, query: Optional[str]):
    """The Function ``query`` names (``None``: the module's first entry with a body)."""
    if query is None:
        ents = [f for f in module.entries() if f.body is not None]
        return defined_once(module, ents[0]) if ents else None
    twice = module.redefined()
    if query in twice:     # the .func k of `.func k {…} .entry k {…}` was reported as "names a .func"
        defined_once(module, module.function(query))
    try:
        fn = module.function(query)
    except KeyError:
        return defined_once(module, module.function(resolve_entry(module, query)))
    if not fn.is_entry:     # a kernel is an .entry: a .func has no launch, no .param block to probe
        raise SpliceError(f"--entry {query!r} names a .func, not an .entry", path=module.path,
                          detail=_listing([e.name for e in module.entries()]))
    return defined_once(module, fn)


def defined_once(module, fn, whole: bool = False):
    """``fn``, unless the module defines its name more than once (``whole``: any name): every
    lookup by name took the first definition, so ``spec`` showed the first ``.entry k`` twice
    and never the second, ``--entry k`` analysed (or spliced) whichever came first, and a kernel
    calling a ``.func f`` defined twice was analysed through the first ``f``, without a word."""
    twice = module.redefined()
    name = fn.name if fn.name in twice else (next(iter(twice), None) if whole else None)
    if name is not None:
        lines = twice[name]
        raise SpliceError(f"{name!r} is defined {len(lines)} times (lines "
                          f"{', '.join(map(str, lines[:MAX_LISTED]))}): ptxas refuses the module (duplicate "
                          "definition of function) and splice cannot tell which one is meant", path=module.path,
                          line=lines[1])
    return fn
