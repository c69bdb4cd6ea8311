"""``splice spec`` and ``splice notes``: analyse, then hand the data to splice.report."""
from __future__ import annotations

import sys

from ..errors import SpliceError
from ..report import jsonout


def _kernels(args):
    """The kernels to report, built one at a time: a module of hundreds of entries must not
    hold every entry's analyses at once.  The text is scanned for lines and entries once.
    The model is built with the cyclic collector off and then kept out of its view while the
    entries are analysed (``util.collector_paused`` / ``heap_frozen``: on CuPy's thrust
    module the collector re-walking the model cost more CPU than the analyses)."""
    from ..analysis import Kernel
    from ..ptx import parse_file
    from ..ptx.index import SourceLines
    from ..util import collector_paused

    if args.entry:   # only that entry's body is parsed: one kernel of a huge module is cheap
        from .frontend import _module

        with collector_paused(freeze=True):
            mod, name = _module(args)
        yield Kernel(mod, name)
        return
    with collector_paused(freeze=True):
        mod = parse_file(args.file)
    ents = [f.name for f in mod.entries() if f.body is not None]
    if not ents:
        raise SpliceError("no .entry with a body", path=args.file)
    if args.abi is not None:
        ents = ents[:1]
    lines = SourceLines(mod.source)
    for e in ents:
        yield Kernel(mod, e, lines)


def _display_names(module) -> dict:
    """{entry: display name} for every entry of the module with a body, demangled in one
    ``c++filt`` call (one call per entry cost 463 processes on CuPy's thrust module)."""
    from ..analysis.entries import demangle_all, short

    dem = demangle_all([f.name for f in module.entries() if f.body is not None])
    return {n: short(d) for n, d in dem.items()}


def cmd_spec(args) -> int:
    """The model is frozen out of the collector's view from its parse to the end of the output
    (``_kernels``, ``util.heap_frozen``)."""
    from ..util import heap_frozen

    _mode_options(args)
    with heap_frozen():
        return _spec(args)


def _mode_options(args) -> None:
    """Refuse an option the chosen mode would drop in silence: ``--png``, ``--no-ptxas``,
    ``--arch`` and ``--top`` belong to ``--pressure``; ``--pressure`` reports every entry's
    curve and reads no ``--phases``/``--epilogues``/``--abi``/``--profile`` (``--abi`` cut the
    report to the first entry); ``--arch`` is ptxas' and ``--no-ptxas`` runs none."""
    pressure = getattr(args, "pressure", False)
    if not pressure:
        given = [f for f, v in (("--png", args.png), ("--no-ptxas", args.no_ptxas), ("--arch", args.arch),
                                ("--top", args.top is not None), ("--live", getattr(args, "live", None)))
                 if v]
        if given:
            raise SpliceError(f"{given[0]} is an option of --pressure: add --pressure", args.file)
        return
    given = [f for f, v in (("--phases", args.phases), ("--epilogues", args.epilogues),
                            ("--abi", args.abi is not None), ("--profile", args.profile)) if v]
    if given:
        raise SpliceError(f"{given[0]} is not an option of --pressure (the curve covers every statement): "
                          f"run it without --pressure", args.file)
    if args.no_ptxas and args.arch is not None:
        raise SpliceError("--arch is ptxas' target and --no-ptxas runs no ptxas: drop one", args.file)
    if args.top is None:
        args.top = PRESSURE_TOP


#: pressure peaks shown when --top is not given
PRESSURE_TOP = 8


def _spec(args) -> int:
    from ..analysis.abi import parse_abi_spec
    from ..analysis.spec import build_spec

    has_abi = args.abi is not None      # `--abi ''` is a bad range, not "no --abi"
    show_all = not (args.phases or args.epilogues or has_abi)
    if getattr(args, "pressure", False):       # splice spec --pressure (commands/perf.py)
        from .perf import cmd_pressure

        return cmd_pressure(args, lambda: _kernels(args))
    if str(args.file).endswith((".yaml", ".yml")):
        raise SpliceError("a recipe is read by --pressure (the module it splices); spec's other views "
                          "take a PTX module", args.file)
    want_ph = show_all or args.phases
    want_ep = show_all or args.epilogues
    from ..analysis.vocab import find_profile, load_profile, load_profiles

    prof = load_profile(args.profile) if getattr(args, "profile", None) else None
    known = None if prof else load_profiles()     # read once, matched per entry
    out = []
    shown: dict = {}
    for k in _kernels(args):
        shown = shown or _display_names(k.module)
        d = build_spec(k, phases=True, epilogues=want_ep or args.json,
                       profile=prof or find_profile(k.name, profiles=known) or False,
                       display_name=shown.get(k.name))
        if has_abi:
            d["abi"] = parse_abi_spec(k, args.abi).as_dict()
        out.append((k.name, d))
        del k  # only the data outlives the loop
    if args.json:
        jsonout.dump({"path": args.file, "entries": [d for _, d in out]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from ..report.spec import print_spec

    print_spec(out, want_ph, want_ep, has_abi)
    return 0


def cmd_notes(args) -> int:
    """The draft, its claims with their evidence (``--json``: ``claims``; ``--evidence``: a
    section listing them), in the words of the entry's profile where their rules hold."""
    from ..analysis import Kernel
    from ..analysis.notes import notes_document
    from ..analysis.vocab import find_profile, load_profile
    from ..ptx import parse_file
    from ..util import check_output, write_atomic

    if args.output:
        check_output(args.output, [args.file])
    prof = load_profile(args.profile) if getattr(args, "profile", None) else None
    mod = parse_file(args.file)
    k = Kernel(mod, args.entry)
    text, claims = notes_document(k, prof or find_profile(k.name) or False)
    if getattr(args, "evidence", False):
        from ..analysis.notes_claims import evidence_markdown

        text += evidence_markdown(claims)
    if args.output:
        write_atomic(args.output, text, inputs=[args.file])
        if args.json:
            print(jsonout.dumps({"entry": k.name, "output": args.output, "epilogues": len(k.epilogues),
                                 "phases": len(k.phases), "claims": claims}))
        return 0
    if args.json:
        print(jsonout.dumps({"entry": k.name, "markdown": text, "claims": claims}))
        return 0
    sys.stdout.write(text)
    return 0
