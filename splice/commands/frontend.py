"""Front-end commands: ``splice stats``, ``splice index``, ``splice canonical``."""
from __future__ import annotations

from ..errors import SpliceError
from ..report import jsonout
from ..analysis.entries import defined_once, resolve_name
from ..ptx import Instruction, Label, canonical, parse_file, statement_index, walk
from ..ptx.index import SourceLines
from ..ptx.parser import parse_entry
from ..report.console import stats_table
from ..util import check_output, read_text, write_atomic, write_stdout
from collections import Counter
from ..analysis.entries import resolve_entry
from ..cut.recipe import statement_range


def module_of(args):
    """(module, entry name or None): with ``--entry`` only that entry's body is parsed."""
    if not getattr(args, "entry", None):
        return parse_file(args.file), None

    chosen: list = []

    def choose(names):
        chosen.append(resolve_name(names, args.entry, args.file))
        return chosen[0]

    mod = parse_entry(read_text(args.file), args.file, choose)
    return mod, (chosen[0] if chosen else resolve_name([f.name for f in mod.entries()], args.entry, args.file))


def cmd_stats(args) -> int:



    mod, only = module_of(args)
    lines = SourceLines(mod.source)   # one scan of the text for every entry's index
    entries = []
    for fn in mod.functions():
        if fn.body is None or (only is not None and fn.name != only):
            continue
        ops = Counter()
        n_instr = n_labels = 0
        for st in walk(fn.body.items):
            if isinstance(st, Instruction):
                n_instr += 1
                ops[st.name] += 1
            elif isinstance(st, Label):
                n_labels += 1
        n_index = len(statement_index(mod.source, fn.name, lines)) if fn.is_entry else None
        entries.append({"name": fn.name, "kind": fn.kind, "line": fn.line, "instructions": n_instr,
                        "labels": n_labels, "statements": n_index,
                        "opcodes": dict(ops.most_common())})
    data = {"path": args.file, "lines": mod.source.count("\n") + 1, "functions": entries}
    if args.json:
        print(jsonout.dumps(data, indent=1))
        return 0

    stats_table(data, args.top)
    return 0


def cmd_index(args) -> int:


    mod = parse_file(args.file)
    lines = SourceLines(mod.source)
    names = [f.name for f in mod.entries()]
    if not names:    # a library of .func only (-rdc): an empty listing would look like an empty entry
        raise SpliceError("no .entry in the module: index lists the statements of entries", args.file)
    if args.entry:   # exact, demangled or a unique substring, as every other --entry

        names = [resolve_entry(mod, args.entry)]

    for name in names:     # a name defined twice: the second's statements were never listed
        defined_once(mod, mod.function(name))
    lo, hi = 1, None
    if args.range:

        try:
            lo, hi = statement_range(args.range, args.file, (None, None), "s")
        except SpliceError as exc:
            raise SpliceError(f"--range: {exc.message}", args.file) from None
    out = {}
    for name in names:
        try:
            idx = statement_index(mod.source, name, lines)
        except KeyError:
            raise SpliceError(f"no entry {name!r}", args.file) from None
        out[name] = [s for s in idx if s.n >= lo and (hi is None or s.n <= hi)]
    if args.json:
        print(jsonout.dumps({k: [{"n": s.n, "line": s.line, "last_line": s.last_line, "text": s.text}
                              for s in v] for k, v in out.items()}))
        return 0
    for name, stmts in out.items():
        if len(out) > 1:
            print(f"# {name}")
        for s in stmts:
            print(f"s{s.n} L{s.line} {s.text}")
    return 0


def cmd_canonical(args) -> int:

    if args.output:
        check_output(args.output, [args.file])
    text = canonical(parse_file(args.file))
    if args.output:
        write_atomic(args.output, text, inputs=[args.file])
    if args.json:
        print(jsonout.dumps({"path": args.file, "output": args.output,
                          "canonical": None if args.output else text}))
    elif not args.output:
        write_stdout(text)
    return 0
