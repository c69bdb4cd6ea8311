"""``splice probe``: the report side (rich summary, --json, PNGs in --report-dir, progress bars).

    splice probe RECIPE.yaml [--runs 50 --warmup 5 --graph --stages all|cut|1,8,61 --harness]
    splice probe PROBE.yaml MODULE.ptx [...]
    --report-dir DIR   the spliced/instrumented PTX, the frame-difference heatmap PNG, probe.json
    --json             one JSON object on stdout (progress goes to stderr)

Exit status: 0 when the frames (and every output buffer) are byte-identical, fully written and
deterministic and neither the debug stages nor the phase harness found a difference; 1 when a
difference was found; 2 for user errors (bad recipe, ptxas errors, no such file).
"""
from __future__ import annotations

import json
from pathlib import Path


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


def cmd_probe(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..probe.modules import resolve
    from ..report.probe import RichUI, print_report
    from ..probe.session import ProbeOptions, run_probe

    pair = resolve(args.target, args.module)
    report_dir = Path(args.report_dir) if args.report_dir else Path("build/probe/reports") / pair.name
    opt = ProbeOptions(runs=args.runs, warmup=args.warmup, graph=args.graph, stages=args.stages,
                       harness=args.harness, report_dir=report_dir,
                       profile=getattr(args, "profile", False), ncu=getattr(args, "ncu", False))
    err = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False, disable=not err.is_terminal) as prog:
        res = run_probe(pair, opt, RichUI(prog))
    res = _jsonable(res)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "probe.json").write_text(json.dumps(res, indent=1) + "\n")
    res["report_dir"] = str(report_dir)
    if args.json:
        print(json.dumps(res))
    else:
        print_report(res, Console())
        from ..report.plot_profile import print_perf
        print_perf(res, Console())
    return 0 if res["ok"] else 1

