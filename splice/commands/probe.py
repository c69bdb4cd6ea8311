"""``splice probe``: orchestration (the probe's stages) and the files it writes.

    splice probe RECIPE.yaml [--runs 200 --warmup 5 --graph --stages all|cut|1,8,61 --harness]
                             [--cache warm|cold --ci-width 0.005 --time-budget 10 --confidence 0.95
                              --min-sample-ms 1 --timing-seed 0]
    splice probe PROBE.yaml MODULE.ptx [...]
    splice probe init MODULE.ptx [--entry E] -o spec.yaml
    --report-dir DIR   the spliced/instrumented PTX, one difference heatmap PNG per 2-D output
                       that differs, NAME.timing.png (the frame times of A, A' and B), probe.json
    --json             one JSON object on stdout (progress goes to stderr)

Exit status: 0 when every output is byte-identical, fully written and deterministic and neither
the debug stages nor the phase harness found a difference; 1 when a difference was found; 2 for
user errors (bad spec or recipe, a spec that disagrees with the entry's .param list, ptxas
errors, no cupy or no GPU), always before anything runs on the GPU.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..errors import SpliceError
from ..report import jsonout


def _jsonable(o):
    import numpy as np

    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    return o


#: the most timed (or warm-up) rounds one probe runs: a round is a frame or two, so a million
#: rounds is already hours for a slow kernel
MAX_RUNS = 1_000_000


def _options(args):
    from ..probe.session import ProbeOptions

    for name in ("runs", "warmup"):
        v = getattr(args, name)
        if v < 0:
            raise SpliceError(f"--{name} {v}: must be 0 or more", args.target)
        if v > MAX_RUNS:    # --runs 99999999999: a typo that would time frames for days
            raise SpliceError(f"--{name} {v}: at most {MAX_RUNS}", args.target)
    if args.graph and args.runs == 0:    # graph replay is timed with the runs: none, nothing timed
        raise SpliceError("--graph times CUDA-graph replay over the --runs: --runs 0 times nothing", args.target)
    for flag, v in (("--entry", args.entry), ("-o", args.output)):
        if v is not None:   # dropped in silence, the user would look for a file never written
            raise SpliceError(f"{flag} is an option of `splice probe init`, not of a probe run", args.target)
    rd = args.report_dir
    if rd is not None and os.path.exists(rd) and not os.path.isdir(rd):   # known now, not after the GPU run
        raise SpliceError("--report-dir: not a directory (the probe writes its reports into it)", rd)
    if rd is not None:
        _creatable(rd)
    if args.runs == 0:       # nothing is timed: a timing option would be dropped in silence
        for flag, dest, unset in TIMING_OPTIONS:
            if getattr(args, dest) != unset:
                raise SpliceError(f"{flag} chooses how frames are timed: --runs 0 times nothing", args.target)
    return ProbeOptions(runs=args.runs, warmup=args.warmup, graph=args.graph, stages=args.stages,
                        harness=args.harness, compile_cache=not args.no_cache,
                        profile=bool(getattr(args, "profile", False)), ncu=bool(getattr(args, "ncu", False)),
                        timing=_timing_options(args))


def _timing_options(args):
    """--cache, --ci-width, --time-budget, --confidence, --min-sample-ms, --timing-seed, each
    checked here (a usage error before anything runs on the GPU)."""
    from ..probe.timing import TimingOptions

    checks = (("--ci-width", args.ci_width, 0.0 < args.ci_width < 1.0, "above 0 and below 1 (0.005 = 0.5 %)"),
              ("--time-budget", args.time_budget, 0.0 < args.time_budget <= 86400.0, "seconds above 0, at most a day"),
              ("--confidence", args.confidence, 0.0 < args.confidence < 1.0, "above 0 and below 1 (0.95)"),
              ("--min-sample-ms", args.min_sample_ms, 0.0 <= args.min_sample_ms <= 1000.0, "0 to 1000 ms"))
    for flag, v, ok, what in checks:
        if not ok:               # NaN is refused too: every comparison with it is false
            raise SpliceError(f"{flag} {v}: must be {what}", args.target)
    if not 0 <= args.timing_seed < 2 ** 63:
        raise SpliceError(f"--timing-seed {args.timing_seed}: must be 0 or more, below 2**63", args.target)
    return TimingOptions(cache=args.cache, target=args.ci_width, budget_s=args.time_budget,
                         confidence=args.confidence, min_sample_ms=args.min_sample_ms, seed=args.timing_seed)


def _creatable(rd: str) -> None:
    """``--report-dir`` under a file, or under a directory this user cannot write (``/proc/x``,
    a read-only mount): known before the GPU run, where ``mkdir`` failed only after it."""
    here = os.path.abspath(rd)
    while not os.path.lexists(here):
        here = os.path.dirname(here)
    if not os.path.isdir(here):
        raise SpliceError(f"--report-dir: {here} is a file, not a directory", rd)
    if here != os.path.abspath(rd):       # it will be created under here
        if not os.access(here, os.W_OK | os.X_OK):
            raise SpliceError(f"--report-dir: cannot create it under {here}: permission denied", rd)
    elif not os.access(here, os.W_OK | os.X_OK):
        raise SpliceError("--report-dir: cannot write into it: permission denied", rd)


def write_maps(maps: dict, report_dir: Path, stem: str, inputs=()) -> dict:
    """One log-scaled heatmap PNG per differing 2-D output: {output: path}."""
    from ..report.png import encode, heat
    from ..util import write_atomic

    out = {}
    for name, m in maps.items():
        path = report_dir / f"{stem}.{name}-diff.png"
        write_atomic(path, encode(heat(m)), inputs=inputs)
        out[name] = str(path)
    return out


def cmd_probe(args) -> int:
    if args.target == "init":   # always the subcommand: a file named init in the cwd is ./init
        return cmd_probe_init(args)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..probe.modules import resolve
    from ..probe.session import run_probe
    from ..report.console import make_console
    from ..report.probe import RichUI, print_report
    from ..util import write_atomic

    opt = _options(args)
    pair = resolve(args.target, args.module)
    report_dir = Path(args.report_dir) if args.report_dir else Path("build/probe/reports") / pair.name
    opt = dataclasses.replace(opt, report_dir=report_dir)
    err = make_console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False, disable=not err.is_terminal) as prog:
        run = run_probe(pair, opt, RichUI(prog))
    res = _jsonable(run.result)
    write_atomic(report_dir / f"{pair.name}.spliced.ptx", pair.spliced, inputs=pair.inputs)
    for name, text in run.texts.items():
        write_atomic(report_dir / f"{pair.name}.{name.replace(':', '.')}.ptx", text, inputs=pair.inputs)
    heatmaps = write_maps(run.maps, report_dir, pair.name, pair.inputs)
    for name, path in heatmaps.items():
        res["compare"]["outputs"][name]["heatmap"] = path
    first = res["compare"]["frame"][0]
    if first in heatmaps:
        res["compare"]["heatmap"] = heatmaps[first]
    if res.get("timing"):
        from ..report.probe import timing_record
        from ..report.timing import write_timing_png

        res["timing"]["png"] = write_timing_png(timing_record(res["timing"]), report_dir / f"{pair.name}.timing.png",
                                                f"{pair.name}: frame time", pair.inputs)
    res["report_dir"] = str(report_dir)
    write_atomic(report_dir / "probe.json", jsonout.dumps(res, indent=1) + "\n", inputs=pair.inputs)
    if args.json:
        print(jsonout.dumps(res))
    else:
        from ..report.plot_profile import print_perf

        print_report(res, make_console())
        print_perf(res, make_console())
    return 0 if res["ok"] else 1


#: the options of a probe run, with the value each has when not given
#: the timing's options (a probe run's), with their defaults
TIMING_OPTIONS = (("--cache", "cache", "warm"), ("--ci-width", "ci_width", 0.005),
                  ("--time-budget", "time_budget", 10.0), ("--confidence", "confidence", 0.95),
                  ("--min-sample-ms", "min_sample_ms", 1.0), ("--timing-seed", "timing_seed", 0))
RUN_OPTIONS = (("--runs", "runs", 200), ("--warmup", "warmup", 5), ("--graph", "graph", False),
               ("--stages", "stages", None), ("--harness", "harness", False), ("--profile", "profile", False),
               ("--ncu", "ncu", False), ("--report-dir", "report_dir", None),
               ("--no-cache", "no_cache", False)) + TIMING_OPTIONS


def _refuse_run_options(args) -> None:
    """``probe init`` runs nothing on the GPU: a run's option given to it was dropped in
    silence (``splice probe init m.ptx --stages cut -o s.yaml`` wrote the skeleton, exit 0)."""
    for flag, dest, unset in RUN_OPTIONS:
        if getattr(args, dest, unset) != unset:
            raise SpliceError(f"{flag} is an option of a probe run, not of `splice probe init`", args.module)


def _readable_back(text: str, rows: list, module) -> None:
    """Refuse a skeleton larger than a probe spec may be: ``probe init`` of an entry of 20000
    parameters wrote 1.9 MB of YAML that ``splice probe`` then refused to read (1 MiB bound)."""
    from ..yamlsafe import DEFAULT_LIMITS

    size = len(text.encode("utf-8", "surrogateescape"))
    if size > DEFAULT_LIMITS.max_bytes:
        raise SpliceError(f"the probe spec of this entry would be {size} bytes ({len(rows)} parameters): "
                          f"over the {DEFAULT_LIMITS.max_bytes} bytes a probe spec may hold, so splice could "
                          "not read it back; nothing written", module)


def cmd_probe_init(args) -> int:
    """``splice probe init MODULE --entry E -o spec.yaml``: a spec skeleton from the .param list."""
    from ..probe.init import skeleton
    from ..util import read_text, write_atomic

    if not args.module:
        raise SpliceError("probe init needs a module: splice probe init MODULE.ptx [--entry E] -o spec.yaml")
    _refuse_run_options(args)
    mod = Path(args.module)
    if not mod.exists():
        raise SpliceError("no such module", args.module)
    variables: list = []
    text, params = skeleton(read_text(mod), args.module, args.entry, variables)
    _readable_back(text, params, args.module)
    if args.output:
        write_atomic(args.output, text, inputs=[mod])   # never the module itself, by any path
    if args.json:
        print(jsonout.dumps({"module": args.module, "output": args.output, "params": params,
                             "globals": variables, **({} if args.output else {"spec": text})}))
    elif args.output:
        from ..errors import printable

        tables = sum(1 for r in params if r["kind"] == "table")
        todo = text.count("TODO")
        print(f"wrote {printable(args.output)}: {len(params)} parameters "
              f"({sum(1 for r in params if r['kind'] == 'buffer')} buffers"
              + (f", {tables} pointer tables" if tables else "") + ")"
              + (f", {len(variables)} module globals" if variables else "")
              + f"; fill in every null ({todo} TODO(s): what def-use could not decide)")
    else:
        print(text, end="")
    return 0
