"""``splice spec`` and ``splice notes``: analyse, then hand the data to splice.report."""
from __future__ import annotations

import json
import sys

from ..errors import SpliceError


def _kernels(args):
    from ..analysis import Kernel
    from ..ptx import parse_file

    mod = parse_file(args.file)
    if args.entry:
        return [Kernel(mod, args.entry)]
    ents = [f.name for f in mod.entries() if f.body is not None]
    if not ents:
        raise SpliceError("no .entry with a body", path=args.file)
    return [Kernel(mod, e) for e in ents]


def cmd_spec(args) -> int:
    from ..analysis.abi import parse_abi_spec
    from ..analysis.spec import build_spec

    ks = _kernels(args)
    if getattr(args, "pressure", False):       # splice spec --pressure (commands/perf.py)
        from .perf import cmd_pressure
        return cmd_pressure(args, ks)
    if args.abi and len(ks) > 1:
        ks = ks[:1]
    show_all = not (args.phases or args.epilogues or args.abi)
    want_ph = show_all or args.phases
    want_ep = show_all or args.epilogues
    out = []
    for k in ks:
        d = build_spec(k, phases=True, epilogues=want_ep or args.json)
        if args.abi:
            d["abi"] = parse_abi_spec(k, args.abi).as_dict()
        out.append((k, d))
    if args.json:
        json.dump({"path": args.file, "entries": [d for _, d in out]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from ..report.spec import print_spec

    print_spec([(k.name, d) for k, d in out], want_ph, want_ep, bool(args.abi))
    return 0


def cmd_notes(args) -> int:
    from ..analysis import Kernel
    from ..analysis.notes import notes_markdown
    from ..ptx import parse_file
    from ..util import write_atomic

    mod = parse_file(args.file)
    k = Kernel(mod, args.entry)
    text = notes_markdown(k)
    if args.output:
        write_atomic(args.output, text)
        if args.json:
            print(json.dumps({"entry": k.name, "output": args.output,
                              "epilogues": len(k.epilogues), "phases": len(k.phases)}))
        return 0
    if args.json:
        print(json.dumps({"entry": k.name, "markdown": text}))
        return 0
    sys.stdout.write(text)
    return 0
