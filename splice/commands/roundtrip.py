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
import sys
from pathlib import Path
from typing import Optional

from ..report import jsonout
from .roundtrip_check import check_job
from . import checked_arch, max_jobs
from ..errors import SpliceError
from .roundtrip_split import Scheduler
from ..errors import printable
from ..ptx.cache import default_cache
from ..ptx.sass import require_tool
from ..report.console import progress, roundtrip_table


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
    def unreadable(exc: OSError):
        raise SpliceError(f"cannot read the directory: {(exc.strerror or str(exc)).lower()}",
                          os.fsdecode(exc.filename) if exc.filename else str(top))

    for root, _dirs, files in os.walk(str(top), onerror=unreadable):
        for f in files:
            if f.endswith(".ptx"):
                x = os.path.join(root, f)
                if os.path.isfile(x):
                    yield x


def _check_args(args) -> None:
    """Refuse what cannot be right before any file is read: a path that is not there, an
    ``--arch`` ptxas would reject only after the whole corpus was parsed."""
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


def check_files(files, sass: bool, arch: Optional[str] = None, cache=None, jobs: int = 1):
    """An iterator of RoundTrip results in the order of ``files``.  With ``jobs > 1`` the
    worker processes are started here, before the caller starts a progress display's thread
    (forking a process that runs threads is unsafe); a file much bigger than its share of the
    corpus is checked function body by function body (``splice.commands.roundtrip_split``)."""
    work = [(p, sass, arch, cache) for p in files]
    if jobs <= 1 or (len(files) <= 1 and sass):   # one file alone is split when not --sass
        return map(check_job, work)

    # the grammar is not built here: most files never need it (``parser.lark_parser``), and a
    # worker whose file does builds it there, in parallel with the others
    if cache is not None:
        cache.warm()
    return Scheduler(work, jobs, split=not sass).results()


def run_roundtrip(args) -> int:
    _check_args(args)
    files = collect(args.paths)
    if not files:

        print(printable(f"splice roundtrip: no .ptx files in {', '.join(args.paths)}"), file=sys.stderr)
        return 2
    cache = None
    if args.sass:

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

        with progress() as bar:
            task = bar.add_task("round trip", total=len(files))
            for r in rows:
                results.append(r)
                bar.advance(task)
        roundtrip_table(results, args.sass)
    return 0 if all(r.ok for r in results) else 1
