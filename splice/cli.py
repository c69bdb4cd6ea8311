"""The ``splice`` command: argument parsing and error reporting.  Commands live in
``splice.commands`` (orchestration); only ``splice.report`` renders.

Each subcommand is a small function taking the parsed arguments and returning an exit status;
heavy modules are imported inside them so ``splice --help`` stays instant.  Every user error
(syntax, recipe, expectation, ptxas) is a ``SpliceError``/``PtxSyntaxError``: printed as
``file:line:col: message`` with exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import sys


def _add_json(p):
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    return p


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="splice", description="Splice and patch NVIDIA PTX.")
    ap.add_argument("--version", action="version", version="splice 0.1.0")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = _add_json(sub.add_parser("stats", help="entries, statement counts, opcode histogram"))
    p.add_argument("file")
    p.add_argument("--top", type=int, default=25, help="opcodes shown in the histogram")
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
    p.add_argument("--jobs", type=int, default=1)
    p.set_defaults(func=_lazy("splice.commands.roundtrip", "run_roundtrip"))

    p = _add_json(sub.add_parser("canonical", help="print the canonical form of a PTX file"))
    p.add_argument("file")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.commands.frontend", "cmd_canonical"))

    p = _add_json(sub.add_parser("spec", help="analyse a kernel: phases, provenance, epilogues, cut ABI"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("--phases", action="store_true")
    p.add_argument("--epilogues", action="store_true")
    p.add_argument("--abi", help="statement range s7771-s7794 or phase:8")
    p.set_defaults(func=_lazy("splice.commands.spec", "cmd_spec"))

    p = _add_json(sub.add_parser("notes", help="draft Markdown notes in the shape of the user's own"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.commands.spec", "cmd_notes"))

    p = _add_json(sub.add_parser("apply", help="apply a cut recipe: splice native phases, validate with ptxas"))
    p.add_argument("recipe")
    p.add_argument("-o", "--output", help="output PTX path (default from the recipe, under build/)")
    p.add_argument("--no-ptxas", action="store_true", help="skip ptxas validation")
    p.add_argument("--diff", action="store_true", help="show the full highlighted PTX diff")
    p.set_defaults(func=_lazy("splice.commands.apply", "cmd_apply"))

    p = _add_json(sub.add_parser("extract", help="write a phase as a native-phase file against the symbolic ABI"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("--phase", type=int)
    p.add_argument("--statements", help="sA-sB")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.commands.apply", "cmd_extract"))

    p = _add_json(sub.add_parser("probe", help="run original and spliced modules on the GPU and compare frames"))
    p.add_argument("target", help="a recipe YAML, or a probe spec YAML followed by a module")
    p.add_argument("module", nargs="?", help="PTX module (with a probe spec)")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--graph", action="store_true", help="also time CUDA-graph replay")
    p.add_argument("--stages", help="debug stages: phase list like 1,8,61 or 'cut'")
    p.add_argument("--harness", action="store_true", help="phase harness: cut range vs native phase")
    p.add_argument("--report-dir", default=None)
    p.set_defaults(func=_lazy("splice.commands.probe", "cmd_probe"))
    return ap


def _lazy(module: str, name: str):
    def run(args):
        import importlib

        return getattr(importlib.import_module(module), name)(args)
    return run


# --------------------------------------------------------------------------------------------

def _fail(message: str) -> int:
    print(f"splice: {message}", file=sys.stderr)
    return 2


def _stdout_keeps_bytes() -> None:
    """Module text read with surrogateescape (a Latin-1 comment in a statement the index prints)
    goes back out as the same bytes instead of a UnicodeEncodeError under a strict locale."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "encoding", "").lower().replace("-", "") == "utf8":
            reconfigure(errors="surrogateescape")


def main(argv=None) -> int:
    from .errors import SpliceError
    from .ptx.errors import PtxSyntaxError

    _stdout_keeps_bytes()
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 0
    from .ptx.sass import SassToolError
    from .util import Terminated, stop_on_signals

    try:
        with stop_on_signals():   # SIGTERM/SIGHUP stop ptxas and clean up, as SIGINT does
            return int(args.func(args) or 0)
    except (PtxSyntaxError, SpliceError) as exc:
        print(exc.render() if hasattr(exc, "render") else str(exc), file=sys.stderr)
        return 2
    except SassToolError as exc:  # ptxas/cuobjdump missing or failing outside a recipe
        print(f"splice: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        return _fail(f"{exc.filename}: no such file")
    except IsADirectoryError as exc:
        return _fail(f"{exc.filename}: is a directory")
    except PermissionError as exc:
        return _fail(f"{exc.filename}: permission denied")
    except UnicodeDecodeError as exc:
        return _fail(f"input is not text: {exc}")
    except Terminated as exc:
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
