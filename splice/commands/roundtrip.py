"""``splice roundtrip``: the front end's proof, runnable on any PTX a user has.

Per file: parse; lossless emit must give the same bytes; with ``--sass``, ptxas compiles the
original and the *canonical* print, and the normalised SASS must be identical.  A file ptxas
rejects in its original form gets ``sass_identical: null`` (nothing to compare against).

``--jobs N`` checks files in N worker processes (parsing is pure Python, so threads would share
one core under the GIL); results are reported in input order.  ptxas results go through the
compile cache (splice.ptx.cache) unless ``--no-cache``.
"""
from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..ptx import PtxSyntaxError, canonical, emit, parse
from ..report import jsonout
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
            out.extend(Path(x) for x in sorted(_ptx_files(p), key=_path_key))
        else:
            out.append(p)
    return out


def _path_key(path: str) -> tuple:
    """The order ``Path`` objects sort in on POSIX (component by component), from the text:
    300 ``Path`` comparisons were most of a corpus' collection, before its first file."""
    return tuple(path.split(os.sep))


def _ptx_files(top: Path):
    """The regular ``*.ptx`` files under ``top`` (links to directories not followed, as ``rglob``
    did), as text; a directory this user cannot read is an error: ``rglob`` skipped it in
    silence, and the run reported every file it saw as the whole tree."""
    from ..errors import SpliceError

    def unreadable(exc: OSError):
        raise SpliceError(f"cannot read the directory: {(exc.strerror or str(exc)).lower()}",
                          os.fsdecode(exc.filename) if exc.filename else str(top))

    for root, _dirs, files in os.walk(str(top), onerror=unreadable):
        for f in files:
            if f.endswith(".ptx"):
                x = os.path.join(root, f)
                if os.path.isfile(x):
                    yield x


_TARGET = re.compile(r"^[ \t\r\f\v]*\.target\s+([^\n/]*)", re.M)   # (``^\s*``: quadratic on blank lines)


def ptxas_options(text: str, arch: Optional[str] = None):
    """(arch, opt_level) for compiling ``text``: its own target when that is sm_90 or newer,
    else sm_90 (PTX is forward compatible); ``-O0``-free builds for ``debug`` targets."""
    m = _TARGET.search(text)
    target = m.group(1) if m else ""
    opt = None if "debug" in target else 3
    if arch:
        return arch, opt
    sm = re.search(r"sm_(\d{1,4})([a-z]?)(?![\w])", target)
    if sm and int(sm.group(1)) >= 90:
        return f"sm_{sm.group(1)}{sm.group(2)}", opt
    return "sm_90", opt


def check_file(path: Path, sass: bool, arch: Optional[str] = None, cache=None) -> RoundTrip:
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
        sm, opt = ptxas_options(text, arch)
        sass_identical, note = _compare_sass(text, canonical(mod), sm, opt, cache, str(path))
    return RoundTrip(str(path), True, identical, sass_identical,
                     None if identical else "lossless emit differs from the input", lines, note)


def _compare_sass(original: str, canon: str, arch: str, opt, cache=None, name: str = "<ptx>"):
    """SASS of the original vs the canonical print.  A ptxas that is missing, or that fails
    without one diagnostic (a crash, ``/bin/false``, a wrong binary), stops the run (exit 2, as
    ``apply`` does): it judged nothing, and a note on a row that still counted as passing made
    ``--sass`` a silent no-op (``SPLICE_PTXAS=/nonexistent splice roundtrip --sass`` exited 0)."""
    from ..ptx import sass as S

    try:
        S.compile_ptx(original, arch, opt, cache=cache, name=name)
        extra: tuple[str, ...] = ()
    except S.PtxasError as exc:
        _judged(exc, name)
        try:  # relocatable code (unresolved .extern .func): compile-only
            S.compile_ptx(original, arch, opt, ("-c",), cache=cache, name=name)
            extra = ("-c",)
        except S.PtxasError:
            return None, "ptxas rejects the original: " + _first_error(exc)
    try:
        same, diff = S.sass_equal(original, canon, arch, opt_level=opt, extra=extra, cache=cache)
    except S.PtxasError as exc:
        return False, "ptxas rejects the canonical form: " + (exc.stderr or str(exc)).strip()[:300]
    return same, diff


def _judged(exc, name: str) -> None:
    """Raise when ptxas said nothing about the module it failed on (no diagnostic): the tool is
    broken, not the module.  (A timeout is no PtxasError: ``ToolTimedOut`` stops the run.)"""
    from ..errors import SassToolError
    from ..ptx.sass import exit_text

    refused = [d.message for d in exc.diagnostics or () if "for option" in d.message]
    if refused:     # `--arch sm_999`: ptxas judged its options, not the module (each row was a note, exit 0)
        raise SassToolError(f"ptxas refuses its options, not {name}: {refused[0]}")
    if exc.diagnostics:
        return
    tool = exc.command[0] if exc.command else "ptxas"
    what = ("exited 0 without writing a cubin" if exc.returncode == 0 else f"failed ({exit_text(exc.returncode)})")
    raise SassToolError(f"ptxas ({tool}) {what} on {name} with no diagnostic: it did not judge the module; "
                        f"check SPLICE_PTXAS / PATH\n{(exc.stderr or '').strip()[:2000] or '(no output)'}")


def _first_error(exc) -> str:
    """ptxas' first error, from its parsed diagnostics (temp paths renamed), else its stderr."""
    for d in getattr(exc, "diagnostics", ()) or ():
        if d.severity in ("error", "fatal"):
            return (f"line {d.line}: " if d.line else "") + f"{d.severity}: {d.message}"[:200]
    for line in (getattr(exc, "stderr", "") or "").splitlines():
        if "error" in line.lower() or "fatal" in line.lower():
            return line.strip()[:200]
    return (str(exc).splitlines() or [""])[0]


def _check_args(args) -> None:
    """Refuse what cannot be right before any file is read: a path that is not there, an
    ``--arch`` ptxas would reject only after the whole corpus was parsed."""
    from ..errors import SpliceError
    from . import checked_arch, max_jobs

    for p in args.paths:
        try:
            os.lstat(p)
        except OSError as exc:   # EACCES on a directory on the way was "no such file or directory" too
            raise SpliceError("no such file or directory" if exc.errno == errno.ENOENT else
                              f"cannot look it up: {(exc.strerror or str(exc)).lower()}", p) from None
        if not os.path.exists(p):    # was a row "not parsed" and exit 1, as if the file were PTX that failed
            raise SpliceError("a symbolic link to nothing (its target is missing, or the links loop)", p)
        if os.path.isdir(p) and not os.access(p, os.R_OK | os.X_OK):   # rglob skipped it: "no .ptx files"
            raise SpliceError("cannot read the directory: permission denied", p)
    if args.jobs < 1:
        raise SpliceError(f"--jobs {args.jobs}: must be 1 or more (worker processes)", args.paths[0])
    if args.jobs > max_jobs():
        raise SpliceError(f"--jobs {args.jobs}: at most {max_jobs()} worker processes here "
                          "(4 per CPU)", args.paths[0])
    if args.arch is not None and not args.sass:    # no ptxas runs: the arch would be dropped in silence
        raise SpliceError("--arch is the ptxas target of --sass: add --sass", args.paths[0])
    if args.no_cache and not args.sass:
        raise SpliceError("--no-cache is about the ptxas runs of --sass: add --sass", args.paths[0])
    args.arch = checked_arch(args.arch, args.paths[0])


def _check(job) -> RoundTrip:
    """Worker entry point (module level, so a process pool can pickle it)."""
    path, sass, arch, cache = job
    return check_file(path, sass, arch, cache)


def check_files(files, sass: bool, arch: Optional[str] = None, cache=None, jobs: int = 1):
    """An iterator of RoundTrip results in the order of ``files``.  With ``jobs > 1`` the
    worker processes are started here, before the caller starts a progress display's thread
    (forking a process that runs threads is unsafe); a file much bigger than its share of the
    corpus is checked function body by function body (``splice.commands.roundtrip_split``)."""
    work = [(p, sass, arch, cache) for p in files]
    if jobs <= 1 or (len(files) <= 1 and sass):   # one file alone is split when not --sass
        return map(_check, work)
    from .roundtrip_split import Scheduler

    # the grammar is not built here: most files never need it (``parser.lark_parser``), and a
    # worker whose file does builds it there, in parallel with the others
    if cache is not None:
        cache.warm()
    return Scheduler(work, jobs, split=not sass).results()


def run_roundtrip(args) -> int:
    _check_args(args)
    files = collect(args.paths)
    if not files:
        from ..errors import printable

        print(printable(f"splice roundtrip: no .ptx files in {', '.join(args.paths)}"), file=sys.stderr)
        return 2
    cache = None
    if args.sass:
        from ..ptx.cache import default_cache
        from ..ptx.sass import require_tool

        require_tool("ptxas")     # missing: exit 2 before any file, never a "not found" note per row

        cache = default_cache(not args.no_cache)
    rows = check_files(files, args.sass, args.arch, cache, args.jobs)
    results = []
    if args.json:
        for r in rows:
            results.append(r)
            # its fields as they are (all plain values): ``asdict``'s deep copy was a fifth of
            # what the parent of ``--jobs 2`` does while its workers check
            print(jsonout.dumps({k: v for k, v in vars(r).items() if k != "lines"}), flush=True)
    else:
        from ..report.console import progress, roundtrip_table

        with progress() as bar:
            task = bar.add_task("round trip", total=len(files))
            for r in rows:
                results.append(r)
                bar.advance(task)
        roundtrip_table(results, args.sass)
    return 0 if all(r.ok for r in results) else 1
