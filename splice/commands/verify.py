"""``splice verify RECIPE``: plan the recipe's cuts (no ptxas, nothing written) and prove each
native cut equal to the statements it replaces, on the CPU (splice.verify).

Exit status: 0 every cut proved equal, 1 some cut proved different, 3 some cut not proven (a
construct the checker does not model, or its time budget, ``--timeout``, ran out), 4 an internal
error of the checker (a bug: neither a proof nor a refutation), 2 a user error as everywhere."""
from __future__ import annotations

import time

from ..report import jsonout


def verify_json(results) -> list:
    """The per-cut JSON form, shared with ``splice apply --json`` (its ``verify`` key)."""
    out = []
    for r in results:
        out.append({
            "cut": r.cut, "title": r.title, "abi": r.abi, "verdict": r.verdict, "reason": r.reason,
            "budget": r.budget, "entries": r.entries,
            "live_outs": len(r.rows), "nodes": r.nodes, "seconds": round(r.seconds, 4),
            "differences": [{"name": d.name, "register": d.reg, "definite": d.definite,
                             "message": d.message, "original": d.original, "native": d.native,
                             "at_original": d.where_original, "at_native": d.where_native}
                            for d in r.differing],
        })
    return out


def exit_status(results) -> int:
    """4 an internal error in any cut (never hidden behind another verdict), else 1 any proved
    different, 3 any not proven, 0 every cut proved equal."""
    from ..verify.compare import EXIT

    codes = {EXIT[r.verdict] for r in results}
    for code in (4, 1, 3):
        if code in codes:
            return code
    return 0


def timeout_of(args):
    from ..verify.budget import DEFAULT_SECONDS

    t = getattr(args, "timeout", None)
    return DEFAULT_SECONDS if t is None else t


def cmd_verify(args) -> int:
    from ..cut.pipeline import run_apply
    from ..report.verify import print_verify
    from ..verify.compare import verify_plan

    t0 = time.perf_counter()
    plan, _val, _out, timings = run_apply(args.recipe, None, ptxas=False)
    t1 = time.perf_counter()
    results = verify_plan(plan, timeout_of(args))
    t2 = time.perf_counter()
    status = exit_status(results)
    if args.json:
        print(jsonout.dumps({"recipe": plan.recipe.path, "module": str(plan.recipe.module),
                          "entry": plan.entry, "status": status, "timeout": timeout_of(args),
                          "cuts": verify_json(results),
                          "timings": {"plan": round(t1 - t0, 4), "verify": round(t2 - t1, 4)}},
                         indent=1))
    else:
        print_verify(plan, results, {"plan": t1 - t0, "verify": t2 - t1})
    return status


def apply_hook(plan, args, timings) -> tuple:
    """``splice apply`` verifies every cut it splices, each within ``--timeout``: (per-cut
    results, exit status).  The status is apply's own 0 unless ``--verify-strict`` asks for
    verify's.  ``--no-verify``: (None, 0)."""
    from ..verify.compare import verify_plan

    if getattr(args, "no_verify", False):
        return None, 0
    t0 = time.perf_counter()
    results = verify_plan(plan, timeout_of(args))
    timings["verify"] = time.perf_counter() - t0
    status = exit_status(results) if getattr(args, "verify_strict", False) else 0
    return results, status
