"""Time ``splice verify`` on the shipped recipes (enc5 phase 8 first: the issue's "well under a
second").

In one process: plan each recipe once (``run_apply`` without ptxas, the baseline: what
``splice apply --no-ptxas`` spends before verify runs), then verify its cuts ``--repeat`` times
and print min and median seconds, the ratio of verify to that plan time, and to the 1 s target.
``--process`` also times ``splice verify RECIPE --json`` in fresh processes (imports, parsing,
analysis, verify: what a user waits for).
Usage: python bench/verify.py [--repeat N] [--process N] [RECIPE ...]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0
RECIPES = ["recipes/enc5_p8.yaml", "recipes/dec1_p8.yaml", "tests/data/recipes/enc5_p8_call.yaml",
           "tests/data/recipes/enc5_p8_call_shared.yaml", "recipes/enc5_qkv_wave.yaml"]


def in_process(recipe: str, repeat: int) -> tuple:
    sys.path.insert(0, str(ROOT))
    from splice.cut.pipeline import run_apply
    from splice.verify.compare import verify_plan

    t = time.perf_counter()
    plan, _v, _o, _t = run_apply(str(ROOT / recipe), ptxas=False)
    base = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = verify_plan(plan)
        times.append(time.perf_counter() - t)
    return base, times, res


def fresh(recipe: str, runs: int) -> list:
    walls = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "splice.cli", "verify", str(ROOT / recipe), "--json"],
                       cwd=ROOT, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
    return walls


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("recipes", nargs="*", default=RECIPES)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--process", type=int, default=3, help="fresh-process runs (0: none)")
    args = ap.parse_args()
    worst = 0.0
    for recipe in args.recipes:
        base, times, res = in_process(recipe, args.repeat)
        lo, med = min(times), statistics.median(times)
        worst = max(worst, med)
        verdicts = ", ".join(sorted({r.verdict for r in res}))
        line = (f"{recipe}: verify {len(res)} cut(s) min {lo * 1e3:.1f} ms, median {med * 1e3:.1f} ms "
                f"(of {args.repeat}); plan (baseline) {base:.3f} s, verify/plan {med / base:.3f}; "
                f"{med / TARGET_S:.3f} x the {TARGET_S:.0f} s target [{verdicts}]")
        if args.process:
            walls = fresh(recipe, args.process)
            line += f"; splice verify per process min {min(walls):.2f} s median {statistics.median(walls):.2f} s"
        print(line)
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
