"""``splice apply`` and ``splice extract``: run the cut pipeline, write outputs, hand the results to
splice.report for rendering."""
from __future__ import annotations

from ..report import jsonout


def to_json(plan, val, out, timings, diff_lines=None) -> dict:
    cuts = []
    for c in plan.cuts:
        cuts.append({
            "cut": c.cut.index, "title": c.title, "phase": c.phase, "statements": [c.first, c.last],
            "removed_statements": c.removed, "removed_lines": list(c.lines), "added_statements": c.binding.added,
            "abi": c.binding.abi, "native": c.native, "params": c.params, "function": c.binding.func,
            "facts": {k: v for k, v in c.facts.items() if not k.endswith("_regs")},
            "binding": c.binding.table, "notes": c.binding.notes,
        })
    data = {"recipe": plan.recipe.path, "module": str(plan.recipe.module), "entry": plan.entry,
            "output": str(out), "cuts": cuts, "shared_scratch_bytes": plan.added_shared,
            "directives": {k: list(v) if isinstance(v, tuple) else v for k, v in plan.recipe.directives.items()},
            "timings": {k: round(v, 4) for k, v in timings.items()}}
    if val is not None:
        data["ptxas"] = {"arch": val.arch, **val.usage(plan.entry),
                         "cached": {"before": bool(val.before and val.before.cached), "after": val.after.cached}}
    if diff_lines is not None:
        data["diff"] = "".join(diff_lines)
    return data


def cmd_apply(args) -> int:
    from ..cut.pipeline import recipe_inputs, run_apply
    from ..ptx.cache import default_cache
    from ..util import write_atomic

    _refuse_dropped_options(args)
    cache = default_cache(not args.no_cache)
    p, val, out, timings = run_apply(args.recipe, args.output, not args.no_ptxas, cache=cache)
    if args.json and args.output is None:      # -o is checked by cli before anything runs
        from ..util import refuse_json_on_stdout

        refuse_json_on_stdout(f"output: {out}", out)
    write_atomic(out, p.text, inputs=recipe_inputs(p.recipe))
    from .verify import apply_hook

    try:
        verified, status = apply_hook(p, args, timings)
    except KeyboardInterrupt:
        # Ctrl-C (or SIGTERM) while verifying: the output is written and stays; say so, then
        # stop as an interrupted command does
        _report(p, val, out, timings, args, None, "interrupted")
        raise
    _report(p, val, out, timings, args, verified, "skipped" if verified is None else "done")
    return status


def _refuse_dropped_options(args) -> None:
    from ..errors import SpliceError

    if args.no_cache and args.no_ptxas:     # --no-cache forces compiles --no-ptxas does not run
        raise SpliceError("--no-cache makes ptxas run and --no-ptxas runs none: drop one", args.recipe)
    if getattr(args, "no_verify", False):
        for flag, given in (("--verify-strict", args.verify_strict), ("--timeout", args.timeout is not None)):
            if given:
                raise SpliceError(f"{flag} is about the verify --no-verify skips: drop one", args.recipe)


def _report(p, val, out, timings, args, verified, verify_status: str) -> None:
    """apply's report; ``verify_status``: done, skipped (--no-verify) or interrupted (Ctrl-C
    while verifying, after the output was written)."""
    from ..cut.pipeline import unified_diff

    if args.json:
        from .verify import verify_json

        # the diff is only computed when it is printed: on a big module it costs as much as the plan
        diff = unified_diff(p, str(out)) if args.diff else None
        data = to_json(p, val, out, timings, diff)
        print(jsonout.dumps({**data, "verify": verify_json(verified) if verified is not None else None,
                             "verify_status": verify_status}, indent=1))
        return
    from ..report.apply import print_report
    from ..report.verify import print_verify_lines, print_verify_status

    print_report(p, val, out, timings, unified_diff(p, str(out)), args.diff)
    if verified is not None:
        print_verify_lines(verified)
    else:
        print_verify_status(verify_status, str(p.recipe.path))


def cmd_extract(args) -> int:
    from ..cut.extract import extract
    from ..cut.kernel import load_kernel
    from ..cut.recipe import _range
    from ..errors import SpliceError
    from ..util import check_output, write_atomic, write_stdout

    epi = getattr(args, "epilogue", None)
    if sum(x is not None for x in (args.phase, args.statements, epi)) != 1:
        raise SpliceError("extract needs exactly one of --phase N, --epilogue N or --statements sA-sB",
                          args.file)
    if args.output:
        check_output(args.output, [args.file])
    k = load_kernel(args.file, args.entry)
    st = _range(args.statements, args.file, (None, None), "s") if args.statements else None
    fused = bool(getattr(args, "fused", False))
    if fused and epi is None:
        raise SpliceError("--fused needs --epilogue N (phase N fused with E<N>)", args.file)
    r = extract(k, phase=args.phase, statements=st, source_name=args.file, epilogue=epi, fused=fused)
    if args.output:
        write_atomic(args.output, r["text"], inputs=[args.file])
    if args.json:
        print(jsonout.dumps({k2: v for k2, v in r.items()}, indent=1, default=str))
    elif not args.output:
        write_stdout(r["text"])
    else:
        from ..errors import printable

        print(f"wrote {printable(args.output)}: s{r['first']}-s{r['last']}, {r['facts'].get('mma')} mma, "
              f"{r['facts']['live_in']} live-in, {r['facts']['live_out']} live-out")
    return 0
