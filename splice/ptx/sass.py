"""ptxas / cuobjdump / nvdisasm as the judge of emitted PTX.

splice's front end must print PTX that ptxas turns into the *same machine code* as the original.
Text equality is not enough (the canonical printer is allowed to change whitespace, comments and
spelling), and a GPU is not always at hand, so the check is: compile both with ptxas, disassemble,
normalise away what legitimately differs between two builds (addresses, encodings, comments,
headers), and compare opcode + operands. This module is that check and nothing more.

Design notes (why it looks like this):

* Dependency-free (stdlib only) so tests and CI can use it without the parser stack.
* Tools are found on PATH and in the ``nvidia`` PyPI wheels (``nvidia-cuda-cuobjdump``,
  ``nvidia-cuda-nvdisasm``, ``nvidia-cuda-nvcc`` put binaries under ``site-packages/nvidia/*/bin``,
  which is not on PATH), newest release first, and ``SPLICE_PTXAS`` / ``SPLICE_CUOBJDUMP`` /
  ``SPLICE_NVDISASM`` override both: a pinned toolchain must win over whatever happens to be
  installed.  A module is compiled by the newest ptxas that accepts its ``.version`` and
  ``.target`` (:func:`select_ptxas`): the ptxas 13.0 of a CUDA toolkit on PATH refuses Triton's
  ``.version 9.4``, which the ``ptxas`` extra's 13.5 compiles.
* Every subprocess runs in a fresh temporary directory with a time limit that grows with its
  input (:func:`ptxas_timeout`); a timeout is :class:`ToolTimedOut`, never a rejection: the
  tool judged nothing.  Nothing is written next to
  the input, because inputs are often corpus files in a read-only checkout.  The directory goes
  on every path: a timeout, an exception, and SIGTERM/SIGHUP too, since ``splice.cli`` turns
  those into an exception for the command's duration (``splice.signals.stop_on_signals``) and
  ``subprocess.run`` kills its child on any exception.
* Failures raise :class:`PtxasError` carrying the stderr, the parsed ``file:line`` diagnostics and a
  ``Repro command:`` line (the Triton convention), so a failing round-trip can be rerun by hand.
  PTX given as a path is named in that line; PTX given as text is saved only where the caller
  says (``repro_dir``, e.g. the output's directory): nothing is left in the system temp dir.
* No printing, and no global state beyond memos of facts about tool binaries (a release, a
  header a ptxas refuses), keyed by the binary's path, size and mtime.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence, Union

from ..errors import SassToolError, ToolTimedOut  # defined there: the CLI catches them without loading this module
from ..signals import signals_deferred, stoppable_child
from ..util import read_text
import struct

__all__ = [
    "Compiled",
    "Diagnostic",
    "FoundTool",
    "NoPtxasAccepts",
    "PtxasError",
    "ResourceUsage",
    "SassToolError",
    "ToolNotFoundError",
    "ToolTimedOut",
    "compile_ptx",
    "disassemble",
    "find_tool",
    "normalized_sass",
    "normalize_arch",
    "parse_diagnostics",
    "parse_resource_usage",
    "ptxas_timeout",
    "require_tool",
    "sass_equal",
    "select_ptxas",
    "tool_candidates",
]

#: Environment variables that override where each tool is looked for.
ENV_OVERRIDES = {
    "ptxas": "SPLICE_PTXAS",
    "cuobjdump": "SPLICE_CUOBJDUMP",
    "nvdisasm": "SPLICE_NVDISASM",
}

#: A tool's time limit, in seconds, when nothing sets one: a base for small inputs plus a share
#: per megabyte of input.  A fixed 120 s stopped ptxas on a valid 10,000-entry module (3 MB:
#: 273 s with -v on a loaded machine); this gives it 120 + 3 x 60 = 300 s.  ptxas' limit is set
#: with ``--ptxas-timeout`` or ``SPLICE_PTXAS_TIMEOUT`` (:func:`ptxas_timeout`).
DEFAULT_TIMEOUT = 120.0
TIMEOUT_PER_MB = 60.0
TIMEOUT_ENV = "SPLICE_PTXAS_TIMEOUT"


def scaled_timeout(size: int) -> float:
    """The default limit for a tool working on ``size`` bytes."""
    return DEFAULT_TIMEOUT + TIMEOUT_PER_MB * size / 1e6


def ptxas_timeout(size: int) -> float:
    """ptxas' limit for a module of ``size`` bytes: ``SPLICE_PTXAS_TIMEOUT`` (seconds; the CLI's
    ``--ptxas-timeout`` sets it for the command) when set, else :func:`scaled_timeout`."""
    value = os.environ.get(TIMEOUT_ENV)
    if not value:
        return scaled_timeout(size)
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise SassToolError(f"{TIMEOUT_ENV}={value!r}: not a number of seconds above 0")
    return seconds


def timeout_hint(tool: str) -> str:
    """How to give ``tool`` more time, for a timeout's message."""
    if tool == "ptxas":
        return (f"it judged nothing; give it longer with --ptxas-timeout SECONDS or {TIMEOUT_ENV} (default "
                f"{DEFAULT_TIMEOUT:g} s + {TIMEOUT_PER_MB:g} s per MB of PTX)")
    return f"it judged nothing (limit: {DEFAULT_TIMEOUT:g} s + {TIMEOUT_PER_MB:g} s per MB of input)"

PtxInput = Union[str, bytes, os.PathLike]


# --------------------------------------------------------------------------------------------
# errors and results
# --------------------------------------------------------------------------------------------


class ToolNotFoundError(SassToolError, FileNotFoundError):
    """ptxas / cuobjdump / nvdisasm is not installed (tests turn this into a skip)."""


class NoPtxasAccepts(SassToolError):
    """ptxas is installed, but no copy found accepts the module's ``.version`` and ``.target``
    (a user error: exit 2, each ptxas named with its release and its refusal)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Diagnostic:
    """One ptxas message. ``file`` is the input's display name, ``line`` is None for messages
    that carry no position (``ptxas fatal : ...``)."""

    file: str | None
    line: int | None
    severity: str  # "error", "warning", "fatal", "info"
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.line is not None else (f"{self.file}: " if self.file else "")
        return f"{where}{self.severity}: {self.message}"


class PtxasError(SassToolError):
    """ptxas rejected the input (a timeout is :class:`ToolTimedOut`, which judged nothing).

    Carries everything needed to act on the failure without rerunning: ``stderr`` (raw text),
    ``diagnostics`` (parsed ``file:line`` messages, file names mapped back to the caller's name
    for the input), ``command`` (argv) and ``repro`` (a shell line that reproduces the failure;
    for PTX given as text, the text is preserved in a ``splice-repro-*.ptx`` file in the
    caller's ``repro_dir``, or the line names ``<input.ptx>`` when there is none).
    """

    def __init__(self, message: str, *, stderr: str, command: Sequence[str], repro: str,
                 diagnostics: Sequence[Diagnostic], returncode: int | None):
        self.stderr = stderr
        self.command = tuple(command)
        self.repro = repro
        self.diagnostics = tuple(diagnostics)
        self.returncode = returncode
        self.message = message
        first = [str(d) for d in self.diagnostics if d.severity in ("error", "fatal")][:5]
        body = "\n".join(first) if first else stderr.strip()
        super().__init__(f"{message}\n{body}\nRepro command: {repro}")

    def __reduce__(self):
        """Rebuilt from its fields (``roundtrip --jobs --sass`` sends a worker's error to the
        parent): the default would call ``__init__`` without its keyword arguments."""
        return (_ptxas_error, (type(self), self.message, self.stderr, self.command, self.repro,
                               self.diagnostics, self.returncode))

    def command_for(self, path: str) -> str:
        """The failing ptxas command as a shell line compiling ``path`` (where a caller put the
        same PTX) to /dev/null."""
        argv = list(self.command)
        argv[-3:] = [path, "-o", "/dev/null"]
        return shlex.join(argv)

    @property
    def lines(self) -> tuple[int, ...]:
        """Line numbers of the error diagnostics, in order (handy for assertions)."""
        return tuple(d.line for d in self.diagnostics if d.line is not None and d.severity in ("error", "fatal"))


@dataclasses.dataclass(frozen=True, slots=True)
class ResourceUsage:
    """What ``ptxas -v`` reports for one function (entry or ``.func``).

    Fields ptxas omits for a function stay at 0 / None: ``registers`` is None for non-entry
    functions in whole-program mode (ptxas reports only their frame), ``shared`` is static shared
    memory in bytes, ``constant`` maps a cmem bank to its byte count.
    """

    function: str
    is_entry: bool = False
    arch: str | None = None
    registers: int | None = None
    barriers: int | None = None
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared: int = 0
    cumulative_stack: int = 0
    constant: tuple[tuple[int, int], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Compiled:
    """A successful ptxas run: the cubin bytes, ptxas' full ``-v`` text and its parsed form."""

    cubin: bytes
    stderr: str
    resources: dict[str, ResourceUsage]
    arch: str
    command: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    cached: bool = False  # True when it came from the compile cache (splice.ptx.cache)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")


# --------------------------------------------------------------------------------------------
# locating tools
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class FoundTool:
    """One installed copy of a CUDA tool: where it is, where splice found it (``SPLICE_PTXAS``,
    ``PATH``, ``nvidia wheel``) and which CUDA release it is (``ptxas --version``'s ``release
    13.5, V13.5.37``; ``release`` None when the tool does not say)."""

    path: str
    origin: str
    release: tuple[int, int] | None
    version: str

    def __str__(self) -> str:
        rel = f"release {self.release[0]}.{self.release[1]}, " if self.release else ""
        return f"{self.path} ({rel}{self.version}; {self.origin})"


#: facts about files, keyed by the file's identity (real path, size, mtime): a changed file is
#: a new key, so these memos never go stale
_versions: dict[tuple, tuple[tuple[int, int] | None, str]] = {}
_refusals: dict[tuple, str | None] = {}
_RELEASE_RE = re.compile(r"release (\d+)\.(\d+),\s*(V[\w.]+)")


def _stamp(path: str) -> tuple:
    real = os.path.realpath(path)
    st = os.stat(real)
    return (real, st.st_size, st.st_mtime_ns)


def tool_version(path: str) -> tuple[tuple[int, int] | None, str]:
    """(release, version text) of a tool from its ``--version``: ``((13, 5), "V13.5.37")``, or
    ``(None, what it said)`` for a tool that names no release."""
    stamp = _stamp(path)
    if stamp not in _versions:
        try:
            proc = run_tool([path, "--version"], timeout=60)
            out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            out = "no answer to --version in 60 s"
        except OSError as exc:
            out = f"cannot run it: {exc.strerror or exc}"
        m = _RELEASE_RE.search(out)
        last = (out.strip().splitlines() or ["no version"])[-1].strip()[:80]
        _versions[stamp] = ((int(m.group(1)), int(m.group(2))), m.group(3)) if m else (None, last)
    return _versions[stamp]


def _found(path: str, origin: str) -> FoundTool:
    release, version = tool_version(path)
    return FoundTool(os.path.abspath(path), origin, release, version)


def _wheel_bin_dirs() -> list[Path]:
    """bin/ folders inside the installed ``nvidia`` namespace package (PyPI CUDA wheels).

    Newer CUDA majors first (``cu13`` before ``cu12``), then the per-component wheels
    (``cuda_nvcc``, ``cuda_cuobjdump`` ...)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    roots = list(spec.submodule_search_locations or [])
    dirs: list[Path] = []
    for root in roots:
        cands = [p for p in Path(root).glob("*/bin") if p.is_dir()]

        def key(p: Path) -> tuple[int, int, str]:
            m = re.fullmatch(r"cu(\d+)", p.parent.name)
            return (0, -int(m.group(1)), "") if m else (1, 0, p.parent.name)

        dirs.extend(sorted(cands, key=key))
    return dirs


def _explicit(name: str) -> str | None:
    """The tool ``SPLICE_<NAME>`` names, or None when it is not set.  An explicit choice: if it
    names no executable that is an error, not a silent fallback."""
    env = ENV_OVERRIDES.get(name, "SPLICE_" + name.upper())
    override = os.environ.get(env)
    if not override:
        return None
    # a file that is not executable (SPLICE_PTXAS=kernel.ptx) is no tool: it was run and
    # failed as "splice: kernel.ptx: permission denied", no word of SPLICE_PTXAS
    path = shutil.which(override) or (override if os.path.isfile(override) and os.access(override, os.X_OK)
                                      else None)
    if path is None:
        raise ToolNotFoundError(f"{env}={override!r} does not name an executable")
    return os.path.abspath(path)


def _installed(name: str) -> list[tuple[str, str]]:
    """(path, origin) of every copy of ``name`` on PATH (in PATH's order) and in the nvidia
    wheels' bin folders (newest CUDA major first), each real file once."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    dirs = [(d, "PATH") for d in os.get_exec_path() if d] + [(str(d), "nvidia wheel") for d in _wheel_bin_dirs()]
    for d, origin in dirs:
        found = shutil.which(name, path=d)
        if found is None:
            continue
        real = os.path.realpath(found)
        if real not in seen:
            seen.add(real)
            out.append((os.path.abspath(found), origin))
    return out


def tool_candidates(name: str) -> list[FoundTool]:
    """Every copy of ``name`` splice could run, the one it prefers first: the ``SPLICE_<NAME>``
    setting alone when there is one (an explicit choice wins over whatever is installed), else
    every copy on PATH and in the nvidia wheels, newest release first (PATH before a wheel of the
    same release)."""
    explicit = _explicit(name)
    if explicit is not None:
        return [_found(explicit, ENV_OVERRIDES.get(name, "SPLICE_" + name.upper()))]
    found = [_found(p, origin) for p, origin in _installed(name)]
    return sorted(found, key=lambda t: (t.release is None, [-v for v in t.release or (0, 0)]))


def find_tool(name: str) -> str | None:
    """Absolute path of the ``name`` (ptxas, cuobjdump, nvdisasm, nvcc) splice runs when nothing
    narrows the choice, or None when it is not installed: ``SPLICE_<NAME>`` when set, else the
    newest release on PATH or in the nvidia wheels (:func:`tool_candidates`).  For a given
    module, :func:`select_ptxas` may pass over a ptxas that does not accept it."""
    explicit = _explicit(name)      # taken as given: no --version run for it
    if explicit is not None:
        return explicit
    found = tool_candidates(name)
    return found[0].path if found else None


def require_tool(name: str) -> str:
    """Like :func:`find_tool` but raises :class:`ToolNotFoundError` when the tool is missing."""
    path = find_tool(name)
    if path is None:
        raise ToolNotFoundError(
            f"{name} not found (looked at ${ENV_OVERRIDES.get(name, 'SPLICE_' + name.upper())}, PATH, and the "
            f"nvidia wheels' bin folders; pip install nvidia-cuda-{'nvcc' if name == 'ptxas' else name})")
    return path


def tools_summary() -> list[str]:
    """What splice runs, one line per tool and one per other copy found: for ``splice
    --version``, so that a user knows which ptxas judges a module before it does."""
    out = []
    for name in ("ptxas", "nvdisasm", "cuobjdump"):
        try:
            found = tool_candidates(name)
        except ToolNotFoundError as exc:
            out.append(f"{name:<9} {exc}")
            continue
        if not found:
            extra = "ptxas" if name == "ptxas" else "sass"
            out.append(f"{name:<9} not found (PATH, the nvidia wheels; pip install -e '.[{extra}]')")
            continue
        out.append(f"{name:<9} {found[0]}")
        out.extend(f"{'':<9} also {t}" for t in found[1:])
        if name == "ptxas" and len(found) > 1:
            out.append(f"{'':<9} a module is compiled by the first of these that accepts its .version and .target")
    return out


# --------------------------------------------------------------------------------------------
# which ptxas accepts a module
# --------------------------------------------------------------------------------------------

_HEADER_RE = {d: re.compile(rf"^[ \t]*\.{d}[ \t]+([^\n/;]+)", re.M) for d in ("version", "target")}


def ptx_header(text: str) -> dict[str, str]:
    """The module's ``.version`` and ``.target`` as written (an absent key: a directive the text
    lacks), read from the text before its first function."""
    head = text[:text.find(".entry")] if ".entry" in text else text
    head = head[:head.find(".func")] if ".func" in head else head
    out = {}
    for d, rx in _HEADER_RE.items():
        m = rx.search(head)
        if m:
            out[d] = m.group(1).strip()
    return out


def _refusal(tool: FoundTool, header: dict[str, str], sm: str) -> str | None:
    """Why ``tool`` refuses a module of this header for ``-arch=sm`` (ptxas' own first message:
    ``Unsupported .version 9.4; current version is '9.0'``), or None when it accepts it.  Found
    by compiling the header alone, once per tool, header and arch."""
    key = (_stamp(tool.path), tuple(sorted(header.items())), sm)
    if key not in _refusals:
        # the target's architecture alone (``debug`` asks for debug sections an empty module
        # lacks); no ``.address_size``: a 32-bit module no ptxas takes for sm_90 is refused by
        # the compile itself, as a module ptxas rejects, not as a ptxas too old for it
        target = header.get("target", sm).split(",")[0].strip()
        text = f".version {header['version']}\n.target {target}\n"
        with tempfile.TemporaryDirectory(prefix="splice-ptxas-") as tmp:
            src = os.path.join(tmp, "header.ptx")
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            try:
                proc = run_tool([tool.path, f"-arch={sm}", "-O0", src, "-o", os.path.join(tmp, "h.cubin")],
                                cwd=tmp, timeout=60)
            except subprocess.TimeoutExpired:
                raise ToolTimedOut(f"ptxas ({tool.path}) did not answer in 60 s on a module header") from None
        err = (proc.stderr + proc.stdout).decode("utf-8", "replace")
        diags = [d.message for d in parse_diagnostics(err) if d.severity in ("error", "fatal")]
        _refusals[key] = None if proc.returncode == 0 else (diags[0] if diags else err.strip()[:200]
                                                            or exit_text(proc.returncode))
    return _refusals[key]


def select_ptxas(text: str, arch: str | int, name: str = "<ptx>") -> str:
    """The ptxas that compiles this module: ``SPLICE_PTXAS`` when set (the user's choice, not
    second-guessed), else the newest installed one that accepts the module's ``.version`` and
    ``.target`` for ``arch``.  A ptxas 13.0 on PATH refuses Triton's ``.version 9.4``, which the
    ``ptxas`` extra's 13.5 takes: the newest is not always the one on PATH.  None accepts:
    :class:`NoPtxasAccepts` (exit 2) naming the module's header and every ptxas found, with its
    release and its refusal."""
    first = require_tool("ptxas")
    header = ptx_header(text)
    if os.environ.get(ENV_OVERRIDES["ptxas"]) or "version" not in header:
        return first     # explicit, or no .version to judge by: ptxas says what is wrong
    sm = normalize_arch(arch)
    refused = []
    for tool in tool_candidates("ptxas"):
        why = _refusal(tool, header, sm)
        if why is None:
            return tool.path
        refused.append(f"  {tool}: {why}")
    what = ", ".join(f".{d} {v}" for d, v in header.items())
    if all("for option" in r for r in refused):   # `--arch sm_999`: ptxas judged its options, not the module
        head = f"{name}: no ptxas found takes -arch={sm} (ptxas refuses its options, not the module)"
    else:
        head = f"{name}: no ptxas found accepts this module ({what}; -arch={sm})"
    raise NoPtxasAccepts(head + ":\n" + "\n".join(refused) + "\ninstall a newer one (pip install "
                         "nvidia-cuda-nvcc: the `ptxas` extra) or name one with SPLICE_PTXAS")


# --------------------------------------------------------------------------------------------
# ptxas
# --------------------------------------------------------------------------------------------


def normalize_arch(arch: str | int) -> str:
    """``90a`` / ``"sm_90a"`` / ``90`` / ``"compute_90"`` -> ``"sm_90a"`` / ``"sm_90"``."""
    s = str(arch).strip().lower()
    for prefix in ("sm_", "compute_", "sm"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    if not re.fullmatch(r"[0-9]{2,3}[af]?", s):     # \d took "sm_٩٠" (Arabic-Indic digits) to ptxas
        raise ValueError(f"not a GPU architecture: {arch!r}")
    return "sm_" + s


_DIAG_RE = re.compile(
    r"^ptxas\s+(?P<file>.+?),\s+line\s+(?P<line>\d+);\s*(?P<sev>error|warning|fatal|info)\s*:\s*(?P<msg>.*)$")
_DIAG_NOPOS_RE = re.compile(r"^ptxas\s+(?P<sev>error|warning|fatal)\s*:\s*(?P<msg>.*)$")


def parse_diagnostics(text: str, rename: dict[str, str] | None = None) -> list[Diagnostic]:
    """Parse ptxas messages (``ptxas FILE, line N; error : MSG`` and ``ptxas fatal : MSG``).

    ``rename`` maps file names as ptxas printed them (temp paths) to names the caller knows."""
    rename = rename or {}
    paths = [(k, v) for k, v in rename.items() if os.sep in k]    # temp paths quoted inside a message

    def msg(m: re.Match) -> str:
        text = m.group("msg").strip()
        for k, v in paths:
            text = text.replace(k, v)
        return text

    out: list[Diagnostic] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        m = _DIAG_RE.match(line)
        if m:
            f = m.group("file")
            out.append(Diagnostic(rename.get(f, f), int(m.group("line")), m.group("sev"), msg(m)))
            continue
        m = _DIAG_NOPOS_RE.match(line)
        if m:
            out.append(Diagnostic(None, None, m.group("sev"), msg(m)))
    return out


_RE_COMPILING = re.compile(r"Compiling (?P<kind>entry function|function) '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_RE_PROPS = re.compile(r"Function properties for (?P<name>\S+)")
_RE_FRAME = re.compile(
    r"(?P<frame>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")
_RE_USED = re.compile(r"Used (?P<regs>\d+) registers")
_RE_BARRIERS = re.compile(r"used (?P<n>\d+) barriers")
_RE_SMEM = re.compile(r"(?P<n>\d+) bytes smem")
_RE_CMEM = re.compile(r"(?P<n>\d+) bytes cmem\[(?P<bank>\d+)\]")
_RE_CUMSTACK = re.compile(r"(?P<n>\d+) bytes cumulative stack size")


def parse_resource_usage(text: str) -> dict[str, ResourceUsage]:
    """Per-function resource usage from ``ptxas -v`` output.

    ptxas prints, per entry, ``Compiling entry function 'X' for 'sm_NN'`` then ``Function
    properties for X`` / frame+spill line / ``Used N registers, ...``; non-entry functions get only
    the properties block (their registers count towards the callers). A function that appears
    twice (a .func listed under several kernels) keeps the values from its last block, which are
    identical in practice."""
    recs: dict[str, dict] = {}
    order: list[str] = []
    current: str | None = None  # function the next "Used ..." line belongs to
    props: str | None = None  # function the next frame line belongs to

    def rec(name: str) -> dict:
        if name not in recs:
            recs[name] = {"function": name}
            order.append(name)
        return recs[name]

    for raw in text.splitlines():
        line = raw.strip()
        m = _RE_COMPILING.search(line)
        if m:
            current = m.group("name")
            r = rec(current)
            r["is_entry"] = m.group("kind") == "entry function"
            r["arch"] = m.group("arch")
            props = None
            continue
        m = _RE_PROPS.search(line)
        if m:
            props = m.group("name")
            rec(props)
            current = props  # a "Used ..." line after a .func's properties belongs to that .func
            continue
        m = _RE_FRAME.search(line)
        if m and props is not None:
            r = rec(props)
            r["stack_frame"] = int(m.group("frame"))
            r["spill_stores"] = int(m.group("st"))
            r["spill_loads"] = int(m.group("ld"))
            continue
        m = _RE_USED.search(line)
        if m and current is not None:
            r = rec(current)
            r["registers"] = int(m.group("regs"))
            if (b := _RE_BARRIERS.search(line)):
                r["barriers"] = int(b.group("n"))
            if (s := _RE_SMEM.search(line)):
                r["shared"] = int(s.group("n"))
            if (c := _RE_CUMSTACK.search(line)):
                r["cumulative_stack"] = int(c.group("n"))
            banks = tuple((int(c.group("bank")), int(c.group("n"))) for c in _RE_CMEM.finditer(line))
            if banks:
                r["constant"] = banks
            continue
    return {name: ResourceUsage(**recs[name]) for name in order}


def _is_path_input(ptx: PtxInput) -> bool:
    if isinstance(ptx, os.PathLike):
        return True
    if isinstance(ptx, bytes):
        return False
    # A str is PTX text unless it is a single line naming an existing file: PTX text always has
    # a newline (.version / .target / .address_size are separate directives).
    return "\n" not in ptx and len(ptx) < 4096 and os.path.isfile(ptx)


def _read_text(ptx: PtxInput) -> tuple[str, str]:
    """(text, display name) of the input."""
    if _is_path_input(ptx):

        p = Path(os.fsdecode(ptx))
        return read_text(p), str(p)
    if isinstance(ptx, bytes):
        return ptx.decode("utf-8", errors="surrogateescape"), "<ptx>"
    return str(ptx), "<ptx>"


def run_tool(cmd: Sequence[str], *, cwd: str | None = None, timeout: float = DEFAULT_TIMEOUT
             ) -> subprocess.CompletedProcess:
    """``subprocess.run`` that never orphans the child: whatever interrupts it (a timeout, Ctrl-C,
    SIGTERM/SIGHUP turned into an exception by the CLI) kills and reaps the child first.

    With ``cwd`` (splice's private temporary directory, removed on every path) the tool's
    ``TMPDIR`` is that directory too: cuobjdump and ptxas write ``tmpxft_*`` files there, and
    one killed mid-run (Ctrl-C during ``roundtrip --sass``) left them in ``/tmp`` for ever."""
    env = None if cwd is None else {**os.environ, "TMPDIR": cwd, "TMP": cwd, "TEMP": cwd}
    proc = None
    with contextlib.ExitStack() as stack:
        try:
            with signals_deferred():   # a signal during the spawn waits until `proc` is tracked
                proc = subprocess.Popen(list(cmd), cwd=cwd, stdin=subprocess.DEVNULL, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                stack.enter_context(stoppable_child(proc))   # SIGTERM kills it from any thread
            out, err = _bounded_communicate(proc, timeout, MAX_TOOL_OUTPUT)
        except BaseException:
            if proc is not None:
                proc.kill()
                for stream in (proc.stdout, proc.stderr):   # closed, not drained: a grandchild
                    try:                                     # still printing gets SIGPIPE
                        stream.close()
                    except OSError:
                        pass
                proc.wait()
            raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)


#: the most a tool may print on stdout or stderr; more is a broken or hostile tool (a
#: ``SPLICE_PTXAS`` that loops printing), killed before it fills the memory
MAX_TOOL_OUTPUT = 1 << 30


def _ptxas_error(cls, message, stderr, command, repro, diagnostics, returncode):
    return cls(message, stderr=stderr, command=command, repro=repro, diagnostics=diagnostics,
               returncode=returncode)


class ToolOutputTooLarge(SassToolError):
    """A tool printed more than :data:`MAX_TOOL_OUTPUT` bytes; it was killed."""


def _bounded_communicate(proc: subprocess.Popen, timeout: float, limit: int) -> tuple[bytes, bytes]:
    """``proc.communicate(timeout=...)`` that stops reading, and raises
    :class:`ToolOutputTooLarge`, once either stream passes ``limit`` bytes."""
    deadline = time.monotonic() + timeout
    bufs: dict = {proc.stdout: [], proc.stderr: []}
    sizes = dict.fromkeys(bufs, 0)
    with selectors.DefaultSelector() as sel:
        for stream in bufs:
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout, b"".join(bufs[proc.stdout]),
                                                b"".join(bufs[proc.stderr]))
            for key, _ev in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                bufs[key.fileobj].append(chunk)
                sizes[key.fileobj] += len(chunk)
                if sizes[key.fileobj] > limit:
                    tool = os.path.basename(str(list(proc.args)[0]))     # type: ignore[arg-type]
                    raise ToolOutputTooLarge(f"{tool} printed more than {limit} bytes: stopped "
                                             f"(is it really {tool}?)")
    proc.wait(max(deadline - time.monotonic(), 0.001))
    for stream in bufs:
        stream.close()
    return b"".join(bufs[proc.stdout]), b"".join(bufs[proc.stderr])


def _save_repro(text: str, repro_dir: str | os.PathLike | None) -> str:
    """Where the repro line finds PTX that was given as text: a copy in ``repro_dir``, or a
    placeholder when the caller keeps no copy (nothing is left in the system temp dir)."""
    if repro_dir is None:
        return "<input.ptx>"
    fd, path = tempfile.mkstemp(prefix="splice-repro-", suffix=".ptx", dir=repro_dir)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)
    return path


def compile_ptx(ptx: PtxInput, arch: str | int, opt_level: int | None = 3, extra: Iterable[str] = (), *,
                timeout: float | None = None, name: str | None = None,
                repro_dir: str | os.PathLike | None = None, cache=None, resources: bool = True) -> Compiled:
    """Assemble PTX with ptxas and return the cubin plus parsed resource usage.

    ``ptx`` is PTX text (str/bytes) or a path (``os.PathLike``, or a str naming an existing file
    and containing no newline). ``arch`` is e.g. ``"sm_90a"`` or ``90``. ``extra`` is appended to
    the ptxas command line (e.g. ``("-c",)`` for relocatable code with unresolved externs).
    ``name`` is how the input is called in diagnostics (default: the path, or ``<ptx>``).
    ``opt_level=None`` leaves ``-O`` off (ptxas' default); PTX with ``.target sm_XX, debug``
    (nvcc -G) needs that or 0, since ptxas refuses optimised debugging.  ``resources=False``
    leaves ``-v`` off (``Compiled.resources`` is then empty): on a module of thousands of
    entries ``-v`` costs ptxas several times the compile.  The ptxas is :func:`select_ptxas`'s;
    ``timeout`` (seconds) defaults to :func:`ptxas_timeout` of the module's size.

    The input is copied into a private temp directory, so ptxas never writes beside it and
    diagnostics can be mapped back reliably; the directory is removed on every path.  On a
    failure, PTX given as text is kept for the repro line only in ``repro_dir``.  Raises
    :class:`PtxasError` on a non-zero exit, :class:`ToolTimedOut` on a timeout (ptxas judged
    nothing), :class:`ToolNotFoundError` if ptxas is missing, :class:`NoPtxasAccepts` when no
    ptxas found takes the module's ``.version``/``.target``.  ``cache`` (a
    :class:`splice.ptx.cache.CompileCache`) returns a stored result for the same text, ptxas and
    options without running ptxas, and stores a fresh one."""
    sm = normalize_arch(arch)
    if opt_level is not None and not 0 <= int(opt_level) <= 4:
        raise ValueError(f"opt_level must be 0..4 or None, got {opt_level!r}")
    text, display = _read_text(ptx)
    from_path = _is_path_input(ptx)
    display = name or display
    ptxas = select_ptxas(text, sm, display)
    oflag = [] if opt_level is None else [f"-O{int(opt_level)}"]
    rest = [*(["-v"] if resources else []), *(str(e) for e in extra)]
    flags = [*oflag, *rest]
    key = cache.key(text, ptxas, sm, oflag, rest) if cache is not None else None
    hit = cache.get(key, display) if key is not None else None
    if hit is not None:
        return dataclasses.replace(hit, cached=True)
    limit = ptxas_timeout(len(text)) if timeout is None else timeout
    with tempfile.TemporaryDirectory(prefix="splice-ptxas-") as tmp:
        src = os.path.join(tmp, "input.ptx")
        out = os.path.join(tmp, "output.cubin")
        with open(src, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(text)
        cmd = [ptxas, f"-arch={sm}", *flags, src, "-o", out]
        rename = {src: display, "input.ptx": display}
        repro_in = os.path.abspath(os.fsdecode(ptx)) if from_path else None

        def repro() -> str:
            return shlex.join([ptxas, f"-arch={sm}", *flags, repro_in or _save_repro(text, repro_dir),
                               "-o", "/dev/null"])

        def fail(message: str, stderr: str, rc: int | None) -> PtxasError:
            return PtxasError(message, stderr=stderr, command=cmd, repro=repro(),
                              diagnostics=parse_diagnostics(stderr, rename), returncode=rc)

        try:
            proc = run_tool(cmd, cwd=tmp, timeout=limit)
        except subprocess.TimeoutExpired:
            raise ToolTimedOut(f"ptxas timed out after {limit:g} s on {display} ({sm}): {timeout_hint('ptxas')}"
                               f"\nRepro command: {repro()}") from None
        except ToolOutputTooLarge as e:
            raise fail(f"{e} on {display} ({sm})", "", None) from None
        stderr = proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace")
        if proc.returncode != 0 or not os.path.exists(out):
            raise fail(f"ptxas failed on {display} ({sm}), {exit_text(proc.returncode)}", stderr, proc.returncode)
        with open(out, "rb") as fb:
            cubin = fb.read()
    compiled = Compiled(cubin=cubin, stderr=stderr, resources=parse_resource_usage(stderr), arch=sm,
                        command=tuple(cmd), diagnostics=tuple(parse_diagnostics(stderr, rename)))
    if key is not None:
        cache.put(key, compiled)
    return compiled


def exit_text(returncode: int | None) -> str:
    """How a tool ended, in words: ``exit code 3``, or ``killed by SIGSEGV`` for the negative
    status ``subprocess`` gives a child a signal ended (``exit code -11`` read as a ptxas code);
    None: splice stopped it (it printed past ``MAX_TOOL_OUTPUT``)."""
    if returncode is None:
        return "stopped by splice"
    if returncode < 0:

        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


UNRESOLVED_EXTERN = "Unresolved extern function"


def compile_any(ptx: PtxInput, arch: str | int, opt_level: int | None = 3, extra: Iterable[str] = (),
                **kw) -> Compiled:
    """:func:`compile_ptx`, again with ``-c`` (compile only, no device link) when ptxas says the
    module calls an extern function defined elsewhere: relocatable device code (``nvcc -rdc``,
    device-side launches through ``cudaLaunchDeviceV2``) is still a module whose SASS,
    registers and spills are its own.  For the views of a module (``sass-mix``,
    ``spec --pressure``), never for validating a splice (whose module must link as the original
    does)."""
    extra = tuple(extra)
    try:
        return compile_ptx(ptx, arch, opt_level, extra, **kw)
    except PtxasError as exc:
        if "-c" in extra or UNRESOLVED_EXTERN not in (exc.stderr or ""):
            raise
    return compile_ptx(ptx, arch, opt_level, extra + ("-c",), **kw)


# --------------------------------------------------------------------------------------------
# disassembly and normalisation
# --------------------------------------------------------------------------------------------


def disassemble(cubin: bytes, *, tool: str = "auto", timeout: float | None = None) -> str:
    """SASS text of a cubin: ``cuobjdump -sass`` (preferred: per-function listing), else
    ``nvdisasm``. ``tool`` forces one of them ("cuobjdump" / "nvdisasm")."""
    if tool not in ("auto", "cuobjdump", "nvdisasm"):
        raise ValueError(f"unknown disassembler {tool!r}")
    order = ["cuobjdump", "nvdisasm"] if tool == "auto" else [tool]
    exe = None
    for t in order:
        exe = find_tool(t)
        if exe:
            tool = t
            break
    if exe is None:
        raise ToolNotFoundError("neither cuobjdump nor nvdisasm found (pip install nvidia-cuda-cuobjdump)")
    with tempfile.TemporaryDirectory(prefix="splice-sass-") as tmp:
        path = os.path.join(tmp, "input.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        cmd = [exe, "-sass", path] if tool == "cuobjdump" else [exe, path]
        limit = scaled_timeout(len(cubin)) if timeout is None else timeout
        try:
            proc = run_tool(cmd, cwd=tmp, timeout=limit)
        except subprocess.TimeoutExpired:
            raise ToolTimedOut(f"{tool} timed out after {limit:g} s: {timeout_hint(tool)}") from None
        if proc.returncode != 0:
            raise SassToolError(f"{tool} failed (exit {proc.returncode}): "
                                f"{proc.stderr.decode('utf-8', 'replace').strip()}\n"
                                f"Repro command: {shlex.join(cmd)}")
        return proc.stdout.decode("utf-8", "replace")


# An instruction line in either tool's output: /*0a30*/  [@P0] OPCODE operands ;  [/* 0x... */]
_INSN_RE = re.compile(r"^\s*/\*(?P<addr>[0-9a-fA-F]{4,})\*/\s+(?P<text>[^;]*?)\s*;")
_CUOBJ_FUNC_RE = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")
_NVDIS_TEXT_RE = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")
_NVDIS_SECTION_RE = re.compile(r"^\s*\.section\s+")
_HEX_RE = re.compile(r"(?<![\w.])(-?)0x([0-9a-fA-F]+)\b")
#: opcodes whose immediate operands are code addresses (rewritten to instruction indices, so an
#: address shift elsewhere is not reported as a difference here).
_BRANCHY = {"BRA", "BRX", "JMP", "JMX", "CALL", "BSSY", "SSY", "PBK", "PCNT", "PRET", "BPT", "JCAL", "CAL", "RET",
            "BREAK"}
_LABEL_REF_RE = re.compile(r"`\(\s*([^)\s]+)\s*\)")
_LABEL_DEF_RE = re.compile(r"^\s*([^\s:/]+):\s*$")


def _split_functions(sass: str) -> list[tuple[str, list[tuple[int, str]]]]:
    funcs: list[tuple[str, list[tuple[int, str]]]] = []
    cur: list[tuple[int, str]] | None = None
    nvdisasm_mode = "Function :" not in sass
    for raw in sass.splitlines():
        if nvdisasm_mode:
            m = _NVDIS_TEXT_RE.match(raw)
            if m:
                cur = []
                funcs.append((m.group("name"), cur))
                continue
            if _NVDIS_SECTION_RE.match(raw):
                cur = None
                continue
        else:
            m = _CUOBJ_FUNC_RE.match(raw)
            if m:
                cur = []
                funcs.append((m.group("name"), cur))
                continue
        if cur is None:
            continue
        m = _INSN_RE.match(raw)
        if m:
            cur.append((int(m.group("addr"), 16), " ".join(m.group("text").split())))
    return funcs


def _normalize_insn(text: str, addr_index: dict[int, int], label_index: dict[str, int]) -> str:
    body = text
    op_start = body.split()[1] if body.startswith("@") and len(body.split()) > 1 else body.split()[0]
    base = op_start.split(".")[0]
    if base in _BRANCHY and ".ABS" not in op_start:  # absolute targets are relocations: keep
        def sub(m: re.Match) -> str:
            if m.group(1):  # negative -> relative offset, keep as written
                return m.group(0)
            v = int(m.group(2), 16)
            return f"@L{addr_index[v]}" if v in addr_index else m.group(0)

        body = _HEX_RE.sub(sub, body)
        body = _LABEL_REF_RE.sub(lambda m: f"@L{label_index.get(m.group(1), m.group(1))}", body)
    return body


def normalized_sass(cubin: bytes | str, *, tool: str = "auto", include_nops: bool = False) -> list[str]:
    """SASS reduced to what must match between two builds of equivalent PTX.

    Keeps, per function in cubin order, a ``function NAME`` line followed by one line per
    instruction: guard predicate, opcode with modifiers, operands. Drops instruction addresses,
    encodings, ``/* */`` comments, headers (``code for``, ``.headerflags``), non-code sections,
    whitespace differences, and trailing padding ``NOP``s (ptxas pads functions to a fixed
    alignment, so their count is not meaningful); ``BRA`` to itself (the end-of-function trap loop)
    is kept. Branch / call / BSSY targets become ``@L<index>`` of the target instruction, so both
    cuobjdump and nvdisasm output compare equal across unrelated address shifts. ``cubin`` may
    also be already-disassembled text (str)."""
    sass = cubin if isinstance(cubin, str) else disassemble(cubin, tool=tool)
    lines: list[str] = []
    # nvdisasm labels: map ".L_x_N:" lines to the index of the following instruction
    for name, insns in _split_functions(sass):
        addr_index = {a: i for i, (a, _) in enumerate(insns)}
        label_index: dict[str, int] = {}
        if "Function :" not in sass:
            label_index = _nvdisasm_labels(sass, name, addr_index)
        body = [_normalize_insn(t, addr_index, label_index) for _, t in insns]
        if not include_nops:
            while body and body[-1] == "NOP":
                body.pop()
        lines.append(f"function {name}")
        lines.extend(body)
    return lines


def _nvdisasm_labels(sass: str, func: str, addr_index: dict[int, int]) -> dict[str, int]:
    """Label name -> instruction index for one function in nvdisasm output (``.L_x_N``, the
    function's own symbol, and ``$caller$callee`` subroutine labels)."""
    labels: dict[str, int] = {}
    inside = False
    pending: list[str] = []
    for raw in sass.splitlines():
        m = _NVDIS_TEXT_RE.match(raw)
        if m:
            inside = m.group("name") == func
            continue
        if inside and _NVDIS_SECTION_RE.match(raw):
            break
        if not inside:
            continue
        lm = _LABEL_DEF_RE.match(raw)
        if lm:
            pending.append(lm.group(1))
            continue
        im = _INSN_RE.match(raw)
        if im and pending:
            idx = addr_index.get(int(im.group("addr"), 16))
            for p in pending:
                labels[p] = idx if idx is not None else -1
            pending = []
    return labels


def resource_lines(res: dict[str, ResourceUsage]) -> list[str]:
    out = []
    for name in sorted(res):
        r = res[name]
        out.append(f"resources {name}: regs={r.registers} barriers={r.barriers} shared={r.shared} "
                   f"stack={r.stack_frame} spills={r.spill_stores}/{r.spill_loads} "
                   f"cumstack={r.cumulative_stack}")
    return out


def sass_equal(ptx_a: PtxInput, ptx_b: PtxInput, arch: str | int, *, opt_level: int | None = 3,
               extra: Iterable[str] = (), compare_resources: bool = True,
               timeout: float | None = None, cache=None) -> tuple[bool, str | None]:
    """Compile both PTX inputs for ``arch`` and compare their normalised SASS.

    Returns ``(True, None)`` when equal, else ``(False, description of the first difference)``:
    function name, instruction index and both lines (or a function / resource mismatch). With
    ``compare_resources`` the per-function registers / barriers / static shared / stack from
    ``ptxas -v`` are compared too, since e.g. a changed ``.shared`` array size leaves the code
    unchanged. Raises :class:`PtxasError` if either input does not assemble."""
    extra = tuple(extra)
    kw = dict(timeout=timeout, cache=cache, resources=compare_resources)
    ca = compile_ptx(ptx_a, arch, opt_level, extra, name="a.ptx", **kw)
    cb = compile_ptx(ptx_b, arch, opt_level, extra, name="b.ptx", **kw)
    sa, sb = normalized_sass(ca.cubin), normalized_sass(cb.cubin)
    if compare_resources:
        sa += resource_lines(ca.resources)
        sb += resource_lines(cb.resources)
    if sa == sb:
        return True, None
    func = "<none>"
    idx = -1
    for i in range(max(len(sa), len(sb))):
        la = sa[i] if i < len(sa) else "<end>"
        lb = sb[i] if i < len(sb) else "<end>"
        if la.startswith("function "):
            func, idx = la[len("function "):], -1
        else:
            idx += 1
        if la != lb:
            if la.startswith(("function ", "resources ")) or lb.startswith(("function ", "resources ")):
                return False, f"line {i}: {la!r} != {lb!r}"
            return False, f"function {func}, instruction {idx}: {la!r} != {lb!r}"
    return False, "outputs differ"  # unreachable: lists differ but no index found


def elf_sections(cubin: bytes) -> dict[str, bytes]:
    """A cubin's sections by name (ELF64, little-endian, as ptxas writes them): the code of a
    function is ``.text.<function>``, so two cubins' machine code compares byte for byte where no
    disassembler is installed (the debug sections differ with the PTX's line info, the code
    need not)."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2 or cubin[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]

    def name(off: int) -> str:
        return cubin[names + off:cubin.index(b"\0", names + off)].decode("latin-1")
    return {name(h[0]): (cubin[h[4]:h[4] + h[5]] if h[1] != 8 else b"") for h in heads}   # 8: SHT_NOBITS
