"""The ``splice`` command: argument parsing and error reporting.  Commands live in
``splice.commands`` (orchestration); only ``splice.report`` renders.

Each subcommand is a small function taking the parsed arguments and returning an exit status;
heavy modules are imported inside them so ``splice --help`` stays instant.  Every user error
(syntax, recipe, expectation, ptxas) is a ``SpliceError``/``PtxSyntaxError``: printed as
``file:line:col: message`` with exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import sys
import importlib
import io
from pathlib import Path
from . import __version__
from .errors import TIMEOUT_STATUS, SassToolError, SpliceError, ToolTimedOut, printable
from .ptx.errors import PtxSyntaxError
from .signals import Terminated, stop_on_signals
from .util import refuse_json_on_stdout
import signal


def _add_json(p):
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    return p


def _add_no_cache(p):
    p.add_argument("--no-cache", action="store_true",
                   help="run ptxas even when the compile cache ($SPLICE_CACHE or ~/.cache/splice) has the result")
    return p


def _add_ptxas_timeout(p):
    p.add_argument("--ptxas-timeout", type=_seconds, metavar="SECONDS",
                   help="ptxas' time limit (default: $SPLICE_PTXAS_TIMEOUT, else 120 s + 60 s per MB of PTX); "
                        "past it the command stops with status 124")
    return p


class _ShowVersion(argparse.Action):
    """``--version``: splice's version and the CUDA tools it would run, looked up only when asked
    (``splice --help`` stays instant)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sass = importlib.import_module("splice.ptx.sass")      # as _lazy: --help stays instant
        lines = [f"splice {__version__} ({Path(__file__).resolve().parent})", *sass.tools_summary()]
        sys.stdout.write("\n".join(lines) + "\n")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that keeps the actions its ``add_argument`` returned, in
    ``options``, and its subcommands' parsers in ``commands``: the checks below go over them
    without argparse's private ``_actions``.  ``add_subparsers`` makes each subcommand's parser
    of this class too."""

    def __init__(self, *args, **kwargs):
        self.options: list = []      # before argparse's __init__, which adds -h
        self.commands: dict = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.options.append(action)
        return action

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(**kwargs)
        self.commands = action.choices
        return action


def build_parser() -> "_Parser":
    """The command line: one subcommand per command, each run by its ``func`` (imported only
    when it runs), every option refusing an empty value."""
    ap = _Parser(prog="splice", description="Splice and patch NVIDIA PTX.")
    ap.add_argument("--version", action=_ShowVersion, help="splice's version and the ptxas, nvdisasm and "
                    "cuobjdump it runs")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    _front_end_commands(sub)
    _analysis_commands(sub)
    _cut_commands(sub)
    _probe_command(sub)
    _tune_command(sub)
    for cmd in sub.choices.values():
        _refuse_empty(cmd)
    return ap


def _front_end_commands(sub) -> None:
    """stats, index, roundtrip, canonical: the parser's commands."""
    p = _add_json(sub.add_parser("stats", help="entries, statement counts, opcode histogram"))
    p.add_argument("file")
    p.add_argument("--top", type=_count, default=25, help="opcodes shown in the histogram")
    p.add_argument("--entry", help="only this entry (name, unique substring or demangled name): "
                   "only its body is parsed")
    p.set_defaults(func=_lazy("splice.commands.frontend", "cmd_stats"))

    p = _add_json(sub.add_parser("index", help="the notes' statement index: sN LN text"))
    p.add_argument("file")
    p.add_argument("--entry", help="entry name (default: every entry)")
    p.add_argument("--range", help="only statements sA-sB")
    p.set_defaults(func=_lazy("splice.commands.frontend", "cmd_index"))

    p = _add_json(sub.add_parser("roundtrip", help="parse, re-emit, compare (and SASS with --sass)"))
    p.add_argument("paths", nargs="+", help="PTX files or directories")
    p.add_argument("--sass", action="store_true", help="compile canonical output with ptxas, compare SASS")
    p.add_argument("--arch", default=None, help="ptxas arch (default: from .target, at least sm_90)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (files are checked in parallel)")
    _add_no_cache(p)
    _add_ptxas_timeout(p)
    p.set_defaults(func=_lazy("splice.commands.roundtrip", "run_roundtrip"))

    p = _add_json(sub.add_parser("canonical", help="print the canonical form of a PTX file"))
    p.add_argument("file")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.commands.frontend", "cmd_canonical"))


def _analysis_commands(sub) -> None:
    """spec, notes: what a kernel is."""
    p = _add_json(sub.add_parser("spec", help="analyse a kernel: phases, provenance, epilogues, cut ABI "
                                              "(--pressure: also a recipe's spliced module or a native alone)"))
    p.add_argument("file")
    p.add_argument("--entry", help="exact, demangled, or a unique substring of the entry name")
    p.add_argument("--phases", action="store_true")
    p.add_argument("--epilogues", action="store_true")
    p.add_argument("--abi", help="statement range s7771-s7794 or phase:8")
    p.add_argument("--profile", help="names for parameter fields (profiles/*.yaml; default: the "
                   "first profile whose entries: globs match)")
    p.add_argument("--pressure", action="store_true",
                   help="live 32-bit registers per statement, peaks, curve PNG, ptxas -v next to it")
    p.add_argument("--png", help="pressure curve PNG path ('none': no PNG; default build/)")
    p.add_argument("--top", type=_count, default=None, help="pressure peaks shown (default 8)")
    p.add_argument("--no-ptxas", action="store_true", help="pressure without running ptxas -v")
    p.add_argument("--live", default=None,
                   help="with --pressure: the registers live before statement sNNNN (or line LNNNN), "
                        "each with its definitions and last use")
    p.add_argument("--arch", default=None, help="ptxas arch for --pressure (default: from .target, at least sm_90)")
    _add_ptxas_timeout(p)
    p.set_defaults(func=_lazy("splice.commands.spec", "cmd_spec"))

    p = _add_json(sub.add_parser("notes", help="draft Markdown notes in the shape of the user's own"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("-o", "--output")
    p.add_argument("--evidence", action="store_true",
                   help="append every claim of the draft with the statement ranges that prove it")
    p.add_argument("--profile", default=None,
                   help="a profile YAML whose word sets the draft may use (default: the first whose globs match)")
    p.set_defaults(func=_lazy("splice.commands.spec", "cmd_notes"))


def _cut_commands(sub) -> None:
    """apply, verify, extract, sass-mix: recipes and their cuts."""
    p = _add_json(sub.add_parser("apply", help="apply a cut recipe: splice native phases, validate with ptxas"))
    p.add_argument("recipe")
    p.add_argument("-o", "--output", help="output PTX path (default from the recipe, under build/)")
    p.add_argument("--no-ptxas", action="store_true", help="skip ptxas validation")
    p.add_argument("--diff", action="store_true", help="show the full highlighted PTX diff")
    _add_no_cache(p)
    p.add_argument("--verify-strict", action="store_true",
                   help="exit with splice verify's status (1 different, 3 not proven, 4 internal error) "
                        "instead of 0")
    p.add_argument("--no-verify", action="store_true", help="splice without proving the cuts (splice verify later)")
    _add_timeout(p)
    _add_ptxas_timeout(p)
    p.set_defaults(func=_lazy("splice.commands.apply", "cmd_apply"))

    p = _add_json(sub.add_parser("verify", help="prove each native cut of a recipe equal to the code it replaces"))
    p.add_argument("recipe")
    _add_timeout(p)
    p.set_defaults(func=_lazy("splice.commands.verify", "cmd_verify"))

    p = _add_json(sub.add_parser("extract", help="write a phase as a native-phase file against the symbolic ABI"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("--phase", type=int)
    p.add_argument("--statements", help="sA-sB")
    p.add_argument("--epilogue", type=int, help="E<n>: the statements after phase n")
    p.add_argument("--fused", action="store_true", help="with --epilogue N: phase N + E<N> (phase+epilogue)")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.commands.apply", "cmd_extract"))

    p = _add_json(sub.add_parser("sass-mix", help="SASS instruction mix per cut (recipe) or per region (module)"))
    p.add_argument("target", help="a recipe YAML, or a PTX module")
    p.add_argument("--entry")
    p.add_argument("--arch", default=None,
                   help="ptxas arch (default: the recipe's arch, or the module's .target, at least sm_90)")
    _add_ptxas_timeout(p)
    p.set_defaults(func=_lazy("splice.commands.perf", "cmd_sass_mix"))


def _probe_command(sub) -> None:
    """probe: the GPU runs (and ``probe init``, the spec skeleton)."""
    p = _add_json(sub.add_parser("probe", help="run original and spliced modules on the GPU and compare frames"))
    p.add_argument("target", help="a recipe YAML, a probe spec YAML followed by a module, init, or render")
    p.add_argument("module", nargs="?", help="PTX module (with a probe spec); init: the module; render: the spec")
    p.add_argument("extra", nargs="?", help="render: the module (default: the spec's own)")
    p.add_argument("--runs", type=int, default=200, help="the most timing rounds (the run stops earlier when "
                                                          "every interval is narrower than --ci-width)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--graph", action="store_true", help="a timing sample launches one captured CUDA graph of "
                                                        "its N frames")
    p.add_argument("--cache", choices=("warm", "cold"), default="warm",
                   help="cold: the L2 is flushed (2x its size written) before every timed launch")
    p.add_argument("--ci-width", type=float, default=0.005,
                   help="stop timing when every ratio's interval is at most this wide, relative (0.005)")
    p.add_argument("--time-budget", type=float, default=10.0, help="stop timing after this many seconds (10)")
    p.add_argument("--confidence", type=float, default=0.95, help="of the bootstrap intervals (0.95)")
    p.add_argument("--min-sample-ms", type=float, default=1.0,
                   help="one timing sample covers at least this much of the frame time: N frames per sample")
    p.add_argument("--timing-seed", type=int, default=0, help="seed of the round orders and the bootstrap")
    p.add_argument("--stages", help="debug stages: phase list like 1,8,61, 'cut', epilogues like E9,E21-E23 "
                                    "or 'epilogues'")
    p.add_argument("--harness", action="store_true", help="phase harness: cut range vs native phase")
    p.add_argument("--profile", action="store_true", help="per-phase/epilogue cycles (%%clock64 stamps per warp)")
    p.add_argument("--ncu", action="store_true", help="Nsight Compute on both modules, side by side")
    p.add_argument("--report-dir", default=None)
    _add_no_cache(p)
    _add_ptxas_timeout(p)
    p.add_argument("--entry", help="probe init: the entry (default: the first)")
    p.add_argument("-o", "--output", help="probe init: where to write the spec skeleton")
    p.add_argument("--cubin", help="probe render: load this cubin instead of compiling the module")
    p.add_argument("--repeat", type=int, default=2, help="probe render: renders of the module (default 2)")
    p.add_argument("--perturb", help="probe render: a stand-in's expect YAML; flip each phase's weights in turn")
    p.set_defaults(func=_lazy("splice.commands.probe", "cmd_probe"))


def _tune_command(sub) -> None:
    """tune: search a recipe's variants (splice.tune)."""
    p = _add_json(sub.add_parser("tune", help="search provably equal variants of a recipe for the fastest"))
    p.add_argument("space", help="a tune file (recipe: + tune:) or a recipe with a tune: section")
    p.add_argument("--plan", action="store_true", help="print the space's dimensions and size; run nothing")
    p.add_argument("-o", "--output", help="the run's folder: tune.db, variants/, best.yaml (default build/tune/<stem>)")
    p.add_argument("--executor", choices=("embedded", "ray"), default="embedded",
                   help="embedded: this host (default); ray: a Ray cluster (pip install -e '.[ray]')")
    p.add_argument("--address", help="--executor ray: the cluster to join (default: start a local one)")
    p.add_argument("--jobs", type=_count, default=None, help="CPU worker processes (default: the cores)")
    p.add_argument("--gpus", type=_count, default=None, help="GPU workers (default: every visible GPU)")
    p.add_argument("--no-gpu", action="store_true", help="screen on the CPU only (apply, verify, ptxas)")
    p.add_argument("--arch", default=None, help="the cubins' arch (default: the GPU's; with --no-gpu the recipe's): "
                   "a CPU screen for the GPU that will time it")
    for flag, what in (("--max-variants", "points of the space to run (a seeded sample past it)"),
                       ("--rounds", "timed rounds per variant in the first rung"),
                       ("--eta", "each rung keeps 1/eta of the variants"),
                       ("--final", "variants left for the last rung"),
                       ("--final-rounds", "rounds each variant of the last rung has in all"),
                       ("--seed", "the sample's and the bootstrap's seed")):
        p.add_argument(flag, type=int, default=None, help=what + " (default: the space's search:)")
    p.add_argument("--cache", choices=("warm", "cold"), default=None,
                   help="cold: the L2 flushed before every timed launch (default: the space's search:, warm)")
    for flag, what in (("--min-sample-ms", "one timing sample covers at least this much of the shortest module"),
                       ("--ci-width", "a GPU batch stops once every interval is at most this wide, relative"),
                       ("--time-budget", "seconds of timing per GPU batch at most")):
        p.add_argument(flag, type=float, default=None, help=what + " (default: the space's search:)")
    _add_timeout(p)
    p.add_argument("--reference", action="append", metavar="RECIPE",
                   help="a recipe timed beside the variants in the same rounds (e.g. the hand-made best); repeatable")
    p.add_argument("--png", help="the plot (default <output>/tune.png; 'none': no plot)")
    p.set_defaults(func=_lazy("splice.commands.tune", "cmd_tune"))


def _add_timeout(p) -> None:
    p.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="verify's time per cut (default 5, splice.verify.budget.DEFAULT_SECONDS); past it "
                        "the cut is 'not proven (budget)'")


def _seconds(value: str) -> float:
    """A time limit: a finite number of seconds above 0 (``--timeout 0`` proved nothing, ``nan``
    and ``inf`` no limit at all)."""
    try:
        t = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not (0 < t < 1e9):
        raise argparse.ArgumentTypeError(f"{value}: must be a number of seconds above 0 (and finite)")
    return t


def _count(value: str) -> int:
    """A number of rows shown: 1 or more (``--top -5`` showed nothing, or all but five)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: must be 1 or more")
    return n


def _nonempty(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty value names nothing")
    return value


def _refuse_empty(p: "_Parser") -> None:
    """Every text option and argument of ``p`` refuses an empty value (exit 2, naming the
    option): ``-o ''`` would otherwise mean "no -o" (stdout), ``--entry ''`` every entry,
    ``--range ''`` every statement -- a silent fallback where a shell variable was unset.
    ``--abi`` reports its own empty range, naming the module."""
    for action in p.options:
        if action.type is None and action.nargs != 0 and action.dest not in ("abi", "help"):
            action.type = _nonempty


def _refuse_dashdash_values(ap: "_Parser", args) -> None:
    """``--top=--`` (or ``-o=--``): argparse drops the ``--`` as its end-of-options marker and
    stores an empty *list* without calling the option's type, so the value reached the commands
    as ``[]`` (``TypeError`` tracebacks in stats, spec, roundtrip, notes).  Refused as a usage
    error (exit 2) naming the option.  An option given more than once (``action="append"``,
    ``tune --reference``) holds a list of values: there, the empty list is one of them."""
    parser = ap.commands[args.command]
    for action in parser.options:
        value = getattr(args, action.dest, None)
        if isinstance(action, argparse._AppendAction):
            value = next((v for v in value or () if isinstance(v, list)), None)
        if action.nargs is None and action.option_strings and isinstance(value, list):
            parser.error(f"argument {'/'.join(action.option_strings)}: '--' is not a value")


def _ptxas_runs(args) -> bool:
    """Does this command, in the mode asked for, run ptxas at all?"""
    return {"roundtrip": lambda: args.sass, "apply": lambda: not args.no_ptxas,
            "spec": lambda: args.pressure and not args.no_ptxas, "sass-mix": lambda: True,
            "probe": lambda: args.target != "init"}.get(args.command, lambda: False)()


@contextlib.contextmanager
def _ptxas_timeout(args):
    """``--ptxas-timeout``, for the command's duration, as the ``SPLICE_PTXAS_TIMEOUT`` that
    ``splice.ptx.sass`` reads wherever ptxas runs (threads, and the worker processes of
    ``roundtrip --jobs``, which inherit it); the previous value comes back after.  Refused in a
    mode that runs no ptxas (a limit dropped in silence)."""
    value = getattr(args, "ptxas_timeout", None)
    if value is None:
        yield
        return
    if not _ptxas_runs(args):
        where = getattr(args, "recipe", None) or getattr(args, "file", None) or getattr(args, "target", None) \
            or (getattr(args, "paths", None) or [None])[0]
        raise SpliceError("--ptxas-timeout: no ptxas runs in this mode (roundtrip needs --sass, spec "
                          "--pressure without --no-ptxas, apply without --no-ptxas)", where)
    name = "SPLICE_PTXAS_TIMEOUT"
    before = os.environ.get(name)
    os.environ[name] = repr(value)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _lazy(module: str, name: str):
    def run(args):

        return getattr(importlib.import_module(module), name)(args)
    return run


# --------------------------------------------------------------------------------------------

def _tell(text: str) -> None:
    """An error message on stderr, shown as printable text.  A stderr whose reader went away
    (``splice … 2>&1 | head -1``) loses the message, not the status: the ``BrokenPipeError`` of
    this print escaped ``main`` from its own error handler (exit 120, and a traceback for a
    stderr that could still take one)."""
    try:
        print(printable(text), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _fail(message: str) -> int:
    _tell(f"splice: {message}")
    return 2


_ERRNO_TEXT = {
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
    errno.ENAMETOOLONG: "file name too long",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.EEXIST: "a file is in the way",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOENT: "no such file",
    errno.EISDIR: "is a directory",
    errno.ENOSPC: "no space left on device",
}
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}$")   # write_atomic's mkstemp sibling


def _os_message(exc: OSError, args) -> str:
    """``path: reason`` for an OS error, naming what the user typed: an error on
    ``write_atomic``'s temp file or on a directory above the output names the output."""
    reason = _ERRNO_TEXT.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    name = exc.filename
    if name is None:
        return reason
    name = os.fsdecode(name)
    out = getattr(args, "output", None)
    here = os.path.abspath(name)
    if out:
        there = os.path.abspath(out)
        if os.path.dirname(here) == os.path.dirname(there) and \
                os.path.basename(here).startswith("." + os.path.basename(there) + "."):
            return f"{out}: cannot write the output: {reason}"
        if here == there:
            return f"{out}: cannot write the output: {reason}"
        if there.startswith(here.rstrip(os.sep) + os.sep):
            if exc.errno in (errno.EEXIST, errno.ENOTDIR):
                reason = "is a file, not a directory"
            return f"{out}: cannot write the output: {name}: {reason}"
    mt = _TEMP_NAME.match(os.path.basename(name))
    if mt:
        return f"{os.path.join(os.path.dirname(name), mt.group('name'))}: cannot write the output: {reason}"
    return f"{name}: {reason}"


def _buffer_raw_streams() -> None:
    """Under ``PYTHONUNBUFFERED=1`` (``python -u``, many containers) stdout's ``buffer`` is the raw
    ``FileIO``, whose ``write`` may write part of what it is given and say so only in its return
    value, which the text layer ignores: a file size limit or a full pipe cut ``splice canonical
    m.ptx > out.ptx`` short with exit status 0.  A ``BufferedWriter`` over it writes the rest or
    raises; line buffering keeps the unbuffered mode's promptness."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not getattr(sys, f"__{name}__") or not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
            continue     # already buffered, or replaced by a caller (a test's capture): left alone
        stream.flush()
        raw = io.FileIO(stream.fileno(), "wb", closefd=False)   # its own: the old one stays whole
        setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding,
                                            errors=stream.errors, line_buffering=True))


def _stdout_keeps_bytes() -> None:
    """Module text read with surrogateescape (a Latin-1 comment in a statement the index prints)
    goes back out as the same bytes instead of a UnicodeEncodeError under a strict locale; on a
    stream that is not UTF-8 (``PYTHONIOENCODING=ascii``, a Latin-1 locale) what cannot be
    encoded is replaced."""
    _buffer_raw_streams()
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        if (getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8":
            reconfigure(errors="surrogateescape")
        else:   # an ASCII or Latin-1 terminal: a table's "—" becomes "?", never a UnicodeEncodeError
            reconfigure(errors="replace")


def _refuse_json_beside_output(args) -> None:
    """``--json`` and an ``-o``/``--png`` that is standard output (``util.refuse_json_on_stdout``);
    the recipe's own ``output:`` is checked by ``apply`` once it is read."""
    if getattr(args, "json", False):
        for opt in ("output", "png"):
            value = getattr(args, opt, None)
            if value and value != "none":
                refuse_json_on_stdout(f"{'-o' if opt == 'output' else '--png'} {value}", value)


def main(argv=None) -> int:

    if sys.stderr is None:       # started with 2>&-: errors go nowhere rather than into a traceback
        sys.stderr = open(os.devnull, "w")
    if sys.stdout is None:       # started with >&-: say so, as cat's "write error" does
        _tell("splice: standard output is closed (>&-); redirect it, e.g. >/dev/null")
        return 2
    _stdout_keeps_bytes()
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 0
    _refuse_dashdash_values(ap, args)

    try:
        _refuse_json_beside_output(args)
        # SIGTERM/SIGHUP stop ptxas and clean up, as SIGINT does
        with stop_on_signals(), _ptxas_timeout(args):
            status = int(args.func(args) or 0)
        # what is still buffered is written now, where a file size limit or a full disk is an
        # error (exit 2) rather than a truncated output after a status of 0
        sys.stdout.flush()
        return status
    except (PtxSyntaxError, SpliceError) as exc:
        _tell(exc.render() if hasattr(exc, "render") else str(exc))
        return 2
    except ToolTimedOut as exc:   # it judged nothing: neither a rejection (2) nor a pass (0)
        _tell(f"splice: {exc}")
        return TIMEOUT_STATUS
    except SassToolError as exc:  # ptxas/cuobjdump missing or failing outside a recipe
        _tell(f"splice: {exc}")
        return 2
    except BrokenPipeError:    # an OSError too: the reader went away, nothing to report
        return 0
    except OSError as exc:     # ELOOP, ENAMETOOLONG, ENOTDIR, EACCES, EROFS, ENOENT, ...
        return _fail(_os_message(exc, args))
    except UnicodeDecodeError as exc:
        return _fail(f"input is not text: {exc}")
    except MemoryError:   # an address-space limit (ulimit -v) or a container's cap: said, not a traceback
        return _fail("out of memory: this run needs more memory than the process may use "
                     "(ulimit -v, a container's limit); the input is left as it was")
    except Terminated as exc:
        _tell(f"splice: stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130


def console_main() -> None:
    """The ``splice`` console script: ``main``, then leave without tearing the model down.

    Freeing a parsed 800k-line module object by object takes seconds after the work is done, and
    nothing is left to clean up at that point (outputs are written atomically and closed, worker
    pools shut down), so the process flushes its output and ends with ``os._exit`` and main's
    status.  Only here: tests and library users call ``main()`` and get a normal return.  A
    Ctrl-C that comes while ``main`` is still importing is the same quiet 130 as one during a
    command, never a traceback."""
    try:
        status = main()
    except KeyboardInterrupt:   # Ctrl-C before main's own handler (its imports, the parser)
        status = 130
    except SystemExit as exc:   # argparse's --help, --version and usage errors: its status, and the
        # flush below, where a reader that went away (splice --help | head -0) is no "Exception
        # ignored … BrokenPipeError" and status 120 from the interpreter's own last flush
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BrokenPipeError:     # the help was longer than the pipe took
        status = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # reader went away / stream closed or full: nothing to save
            pass
    os._exit(status)


if __name__ == "__main__":
    console_main()
