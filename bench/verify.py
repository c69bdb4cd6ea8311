"""Time ``splice verify`` on the shipped recipes (enc5 phase 8 first: the issue's "well under a
second").

In one process: plan each recipe once (``run_apply`` without ptxas, the baseline: what
``splice apply --no-ptxas`` spends before verify runs), then verify its cuts ``--repeat`` times
and print min and median seconds, the ratio of verify to that plan time, and to the 1 s target.
``--process`` also times ``splice verify RECIPE --json`` in fresh processes (imports, parsing,
analysis, verify: what a user waits for).

``--scan FILE…`` is the identity scan: every entry of every file is cut into windows of
``--window`` statements, each window extracted (``splice extract --statements``) and applied
unchanged, and verified; it prints the verdict counts, the reasons, every *proved different*
(an identity cut that is not the identity: a bug in extract or binding) and the time per cut.
Usage: python bench/verify.py [--repeat N] [--process N] [RECIPE ...]
       python bench/verify.py --scan FILE... [--window N] [--per-entry N]
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


def _windows(k, size: int, limit: int) -> list:
    nums = [s.n for s in k.stmts if s.n is not None]
    out = []
    for i in range(0, len(nums), size):
        out.append((nums[i], nums[min(i + size, len(nums)) - 1]))
    return out[:limit]


def _reason_kind(reason: str) -> str:
    """A reason without its names and places, to count kinds."""
    import re

    text = re.sub(r"(branch to|call to|label) \S+?,?( |$)", r"\1 X ", reason.split(" (")[0])
    text = re.sub(r"^[%\w@]+: ", "", text)
    return re.sub(r"\b(in|out|[abcd])\d+\b|%\w+", "R", text)[:70]


def scan(files, size: int, limit: int) -> int:
    import tempfile
    from collections import Counter

    import yaml

    sys.path.insert(0, str(ROOT))
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan
    from splice.errors import SpliceError
    from splice.ptx import parse_file
    from splice.ptx.errors import PtxSyntaxError
    from splice.verify.compare import DIFFERENT, verify_plan

    counts, reasons, times = Counter(), Counter(), []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for f in files:
            try:
                mod = parse_file(f)
            except (PtxSyntaxError, SpliceError, OSError):
                counts["unparsed file"] += 1
                continue
            for fn in mod.entries():
                try:
                    k = load_kernel(f, fn.name, module=mod)
                except SpliceError:
                    continue
                for first, last in _windows(k, size, limit):
                    try:
                        (d / "n.ptx").write_text(extract(k, statements=(first, last))["text"])
                        (d / "r.yaml").write_text(yaml.safe_dump({
                            "module": str(Path(f).resolve()), "entry": fn.name,
                            "cuts": [{"statements": f"s{first}-s{last}", "native": "n.ptx"}]}))
                        recipe = load_recipe(str(d / "r.yaml"), search_path(str(d / "r.yaml")), None)
                        plan = make_plan(recipe, k)
                    except SpliceError:
                        counts["refused by extract/apply"] += 1
                        continue
                    t = time.perf_counter()
                    for r in verify_plan(plan):
                        counts[r.verdict] += 1
                        if r.reason:
                            reasons[_reason_kind(r.reason)] += 1
                        if r.verdict == DIFFERENT:
                            print(f"DIFFERENT {f} {fn.name} s{first}-s{last}: {r.reason}")
                    times.append(time.perf_counter() - t)
    print(", ".join(f"{n} {k}" for k, n in counts.most_common()))
    for why, n in reasons.most_common(25):
        print(f"  {n:5d}  {why}")
    if times:
        print(f"verify per cut: min {min(times) * 1e3:.2f} ms, median {statistics.median(times) * 1e3:.2f} ms, "
              f"max {max(times) * 1e3:.1f} ms over {len(times)} cuts")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("recipes", nargs="*", default=RECIPES)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--process", type=int, default=3, help="fresh-process runs (0: none)")
    ap.add_argument("--scan", nargs="+", metavar="FILE", help="identity scan over these PTX files")
    ap.add_argument("--window", type=int, default=25, help="statements per scan cut")
    ap.add_argument("--per-entry", type=int, default=12, help="scan cuts per entry at most")
    args = ap.parse_args()
    if args.scan:
        return scan(args.scan, args.window, args.per_entry)
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
