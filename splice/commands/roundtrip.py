"""``splice roundtrip``: the front end's proof, runnable on any PTX a user has.

Per file: parse; lossless emit must give the same bytes; with ``--sass``, ptxas compiles the
original and the *canonical* print, and the normalised SASS must be identical.  A file ptxas
rejects in its original form gets ``sass_identical: null`` (nothing to compare against).
"""
from __future__ import annotations

import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from ..ptx import PtxSyntaxError, canonical, emit, parse
from ..util import read_text


@dataclass
class RoundTrip:
    path: str
    parsed: bool
    identical: bool
    sass_identical: Optional[bool]
    error: Optional[str]
    lines: int = 0
    note: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.parsed and self.identical and self.sass_identical is not False


def collect(paths) -> list:
    out = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.ptx") if x.is_file()))
        else:
            out.append(p)
    return out


_TARGET = re.compile(r"^\s*\.target\s+([^\n/]*)", re.M)


def ptxas_options(text: str, arch: Optional[str] = None):
    """(arch, opt_level) for compiling ``text``: its own target when that is sm_90 or newer,
    else sm_90 (PTX is forward compatible); ``-O0``-free builds for ``debug`` targets."""
    m = _TARGET.search(text)
    target = m.group(1) if m else ""
    opt = None if "debug" in target else 3
    if arch:
        return arch, opt
    sm = re.search(r"sm_(\d+)([a-z]?)", target)
    if sm and int(sm.group(1)) >= 90:
        return f"sm_{sm.group(1)}{sm.group(2)}", opt
    return "sm_90", opt


def check_file(path: Path, sass: bool, arch: Optional[str] = None) -> RoundTrip:
    try:
        text = read_text(path)
    except OSError as exc:
        return RoundTrip(str(path), False, False, None, f"{path}: {exc.strerror}")
    lines = text.count("\n")
    try:
        mod = parse(text, str(path), cache=False)
    except PtxSyntaxError as exc:
        return RoundTrip(str(path), False, False, None, exc.render(), lines)
    identical = emit(mod) == text
    sass_identical = None
    note = None
    if sass:
        sass_identical, note = _compare_sass(text, canonical(mod), *ptxas_options(text, arch))
    return RoundTrip(str(path), True, identical, sass_identical,
                     None if identical else "lossless emit differs from the input", lines, note)


def _compare_sass(original: str, canon: str, arch: str, opt):
    from ..ptx import sass as S

    try:
        S.compile_ptx(original, arch, opt)
        extra: tuple[str, ...] = ()
    except S.ToolNotFoundError:
        return None, "ptxas not found"
    except S.PtxasError as exc:
        try:  # relocatable code (unresolved .extern .func): compile-only
            S.compile_ptx(original, arch, opt, ("-c",))
            extra = ("-c",)
        except S.PtxasError:
            return None, "ptxas rejects the original: " + _first_error(exc)
    try:
        same, diff = S.sass_equal(original, canon, arch, opt_level=opt, extra=extra)
    except S.PtxasError as exc:
        return False, "ptxas rejects the canonical form: " + (exc.stderr or str(exc)).strip()[:300]
    return same, diff


def _first_error(exc) -> str:
    for line in (getattr(exc, "stderr", "") or "").splitlines():
        if "error" in line.lower() or "fatal" in line.lower():
            return line.strip()[:200]
    return (str(exc).splitlines() or [""])[0]


def _check_args(args) -> None:
    """Refuse what cannot be right before any file is read: a path that is not there, an
    ``--arch`` ptxas would reject only after the whole corpus was parsed."""
    from ..errors import SpliceError
    from ..ptx.sass import normalize_arch

    for p in args.paths:
        if not os.path.lexists(p):
            raise SpliceError("no such file or directory", p)
    if args.arch is not None:
        try:
            args.arch = normalize_arch(args.arch)
        except ValueError:
            raise SpliceError(f"--arch {args.arch!r}: not a GPU architecture (expected e.g. sm_90 or "
                              "sm_90a)", args.paths[0]) from None


def run_roundtrip(args) -> int:
    _check_args(args)
    files = collect(args.paths)
    if not files:
        print(f"splice roundtrip: no .ptx files in {', '.join(args.paths)}", file=sys.stderr)
        return 2
    results = []

    def work(p):
        return check_file(p, args.sass, args.arch)

    pool = ThreadPoolExecutor(max(1, args.jobs))
    try:
        if args.json:
            for r in pool.map(work, files):
                results.append(r)
                print(json.dumps({k: v for k, v in asdict(r).items() if k not in ("lines",)}))
        else:
            from ..report.console import progress

            with progress() as bar:
                task = bar.add_task("round trip", total=len(files))
                for r in pool.map(work, files):
                    results.append(r)
                    bar.advance(task)
    finally:  # interrupted (Ctrl-C, SIGTERM): files not started yet are not started
        pool.shutdown(wait=True, cancel_futures=True)
    if not args.json:
        from ..report.console import roundtrip_table

        roundtrip_table(results, args.sass)
    return 0 if all(r.ok for r in results) else 1
