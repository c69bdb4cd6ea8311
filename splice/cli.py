"""The ``splice`` command.  Only this module and ``splice.report`` print.

Each subcommand is a small function taking the parsed arguments and returning an exit status;
heavy modules are imported inside them so ``splice --help`` stays instant.  Every user error
(syntax, recipe, expectation, ptxas) is a ``SpliceError``/``PtxSyntaxError``: printed as
``file:line:col: message`` with exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
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
    p.set_defaults(func=cmd_stats)

    p = _add_json(sub.add_parser("index", help="the notes' statement index: sN LN text"))
    p.add_argument("file")
    p.add_argument("--entry", help="entry name (default: every entry)")
    p.add_argument("--range", help="only statements sA-sB")
    p.set_defaults(func=cmd_index)

    p = _add_json(sub.add_parser("roundtrip", help="parse, re-emit, compare (and SASS with --sass)"))
    p.add_argument("paths", nargs="+", help="PTX files or directories")
    p.add_argument("--sass", action="store_true", help="compile canonical output with ptxas, compare SASS")
    p.add_argument("--arch", default=None, help="ptxas arch (default: from .target, at least sm_90)")
    p.add_argument("--jobs", type=int, default=1)
    p.set_defaults(func=cmd_roundtrip)

    p = _add_json(sub.add_parser("canonical", help="print the canonical form of a PTX file"))
    p.add_argument("file")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_canonical)

    p = _add_json(sub.add_parser("spec", help="analyse a kernel: phases, provenance, epilogues, cut ABI"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("--phases", action="store_true")
    p.add_argument("--epilogues", action="store_true")
    p.add_argument("--abi", help="statement range s7771-s7794 or phase:8")
    p.set_defaults(func=_lazy("splice.report.spec", "cmd_spec"))

    p = _add_json(sub.add_parser("notes", help="draft Markdown notes in the shape of the user's own"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.report.spec", "cmd_notes"))

    p = _add_json(sub.add_parser("apply", help="apply a cut recipe: splice native phases, validate with ptxas"))
    p.add_argument("recipe")
    p.add_argument("-o", "--output", help="output PTX path (default from the recipe, under build/)")
    p.add_argument("--no-ptxas", action="store_true", help="skip ptxas validation")
    p.add_argument("--diff", action="store_true", help="show the full highlighted PTX diff")
    p.set_defaults(func=_lazy("splice.report.apply", "cmd_apply"))

    p = _add_json(sub.add_parser("extract", help="write a phase as a native-phase file against the symbolic ABI"))
    p.add_argument("file")
    p.add_argument("--entry")
    p.add_argument("--phase", type=int)
    p.add_argument("--statements", help="sA-sB")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_lazy("splice.report.apply", "cmd_extract"))

    p = _add_json(sub.add_parser("probe", help="run original and spliced modules on the GPU and compare frames"))
    p.add_argument("target", help="a recipe YAML, or a probe spec YAML followed by a module")
    p.add_argument("module", nargs="?", help="PTX module (with a probe spec)")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--graph", action="store_true", help="also time CUDA-graph replay")
    p.add_argument("--stages", help="debug stages: phase list like 1,8,61 or 'cut'")
    p.add_argument("--harness", action="store_true", help="phase harness: cut range vs native phase")
    p.add_argument("--report-dir", default=None)
    p.set_defaults(func=_lazy("splice.report.probe", "cmd_probe"))
    return ap


def _lazy(module: str, name: str):
    def run(args):
        import importlib

        return getattr(importlib.import_module(module), name)(args)
    return run


# --------------------------------------------------------------------------------------------
# front-end commands
# --------------------------------------------------------------------------------------------

def cmd_stats(args) -> int:
    from collections import Counter

    from .ptx import Instruction, Label, parse_file, statement_index, walk

    mod = parse_file(args.file)
    entries = []
    for fn in mod.functions():
        if fn.body is None:
            continue
        ops = Counter()
        n_instr = n_labels = 0
        for st in walk(fn.body.items):
            if isinstance(st, Instruction):
                n_instr += 1
                ops[st.name] += 1
            elif isinstance(st, Label):
                n_labels += 1
        n_index = len(statement_index(mod.source, fn.name)) if fn.is_entry else None
        entries.append({"name": fn.name, "kind": fn.kind, "line": fn.line, "instructions": n_instr,
                        "labels": n_labels, "statements": n_index,
                        "opcodes": dict(ops.most_common())})
    data = {"path": args.file, "lines": mod.source.count("\n") + 1, "functions": entries}
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    from .report.console import stats_table

    stats_table(data, args.top)
    return 0


def cmd_index(args) -> int:
    from .ptx import parse_file, statement_index

    mod = parse_file(args.file)
    names = [args.entry] if args.entry else [f.name for f in mod.entries()]
    lo, hi = 1, None
    if args.range:
        a, _, b = args.range.partition("-")
        lo, hi = int(a.lstrip("s")), int((b or a).lstrip("s"))
    out = {}
    for name in names:
        try:
            idx = statement_index(mod.source, name)
        except KeyError:
            raise SystemExit(_fail(f"{args.file}: no entry {name!r}"))
        out[name] = [s for s in idx if s.n >= lo and (hi is None or s.n <= hi)]
    if args.json:
        print(json.dumps({k: [{"n": s.n, "line": s.line, "last_line": s.last_line, "text": s.text}
                              for s in v] for k, v in out.items()}))
        return 0
    for name, stmts in out.items():
        if len(out) > 1:
            print(f"# {name}")
        for s in stmts:
            print(f"s{s.n} L{s.line} {s.text}")
    return 0


def cmd_canonical(args) -> int:
    from .ptx import canonical, parse_file
    from .util import write_atomic

    text = canonical(parse_file(args.file))
    if args.output:
        write_atomic(args.output, text)
    if args.json:
        print(json.dumps({"path": args.file, "output": args.output,
                          "canonical": None if args.output else text}))
    elif not args.output:
        sys.stdout.write(text)
    return 0


def cmd_roundtrip(args) -> int:
    from .report.roundtrip import run_roundtrip

    return run_roundtrip(args)


# --------------------------------------------------------------------------------------------

def _fail(message: str) -> int:
    print(f"splice: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    from .errors import SpliceError
    from .ptx.errors import PtxSyntaxError

    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 0
    from .ptx.sass import SassToolError

    try:
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
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
