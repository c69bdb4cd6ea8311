"""``splice apply`` and ``splice extract``: run the cut pipeline, write outputs, hand the results to
splice.report for rendering."""
from __future__ import annotations

from ..report import jsonout
from ..cut.extract import extract
from ..cut.kernel import load_kernel
from ..cut.pipeline import recipe_inputs, run_apply, unified_diff
from ..cut.recipe import statement_range
from ..errors import SpliceError
from ..ptx.cache import default_cache
from ..report.apply import print_report
from ..report.verify import print_verify_lines
from ..util import check_output, write_atomic, write_stdout
from .verify import apply_hook
from ..errors import printable
from ..util import refuse_json_on_stdout
from .verify import verify_json


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
            "timings": {k: round(v, 4) for k, v in timings.items()}}
    if val is not None:
        data["ptxas"] = {"arch": val.arch, **val.usage(plan.entry),
                         "cached": {"before": bool(val.before and val.before.cached), "after": val.after.cached}}
    if diff_lines is not None:
        data["diff"] = "".join(diff_lines)
    return data


def cmd_apply(args) -> int:

    if args.no_cache and args.no_ptxas:     # --no-cache forces compiles --no-ptxas does not run

        raise SpliceError("--no-cache makes ptxas run and --no-ptxas runs none: drop one", args.recipe)
    cache = default_cache(not args.no_cache)
    p, val, out, timings = run_apply(args.recipe, args.output, not args.no_ptxas, cache=cache)
    if args.json and args.output is None:      # -o is checked by cli before anything runs

        refuse_json_on_stdout(f"output: {out}", out)
    write_atomic(out, p.text, inputs=recipe_inputs(p.recipe))

    verified, status = apply_hook(p, args, timings)
    if args.json:

        # the diff is only computed when it is printed: on a big module it costs as much as the plan
        diff = unified_diff(p, str(out)) if args.diff else None
        data = to_json(p, val, out, timings, diff)
        print(jsonout.dumps({**data, "verify": verify_json(verified)}, indent=1))
        return status

    print_report(p, val, out, timings, unified_diff(p, str(out)), args.diff)
    print_verify_lines(verified)
    return status


def cmd_extract(args) -> int:

    epi = getattr(args, "epilogue", None)
    if sum(x is not None for x in (args.phase, args.statements, epi)) != 1:
        raise SpliceError("extract needs exactly one of --phase N, --epilogue N or --statements sA-sB",
                          args.file)
    if args.output:
        check_output(args.output, [args.file])
    k = load_kernel(args.file, args.entry)
    st = statement_range(args.statements, args.file, (None, None), "s") if args.statements else None
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

        print(f"wrote {printable(args.output)}: s{r['first']}-s{r['last']}, {r['facts'].get('mma')} mma, "
              f"{r['facts']['live_in']} live-in, {r['facts']['live_out']} live-out")
    return 0
