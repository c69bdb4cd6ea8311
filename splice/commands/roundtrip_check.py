"""One file's round trip -- parse, emit, compare with the input; with ``--sass`` the canonical
print's SASS against the original's -- as a whole-file check (``roundtrip``) and a worker's job
(``roundtrip_split``) both run it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import SassToolError
from ..ptx import PtxSyntaxError, canonical, emit, parse
from ..ptx import sass as S
from ..ptx.sass import exit_text
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


def check_job(job) -> RoundTrip:
    """Worker entry point (module level, so a process pool can pickle it)."""
    path, sass, arch, cache = job
    return check_file(path, sass, arch, cache)
