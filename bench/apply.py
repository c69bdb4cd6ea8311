"""``splice apply`` on enc5 against one ptxas compile of the spliced module, in the same run.

    python bench/apply.py [--runs N] [--recipe PATH]

Per repeat, in fresh processes: ``first`` is ``splice apply`` with an empty compile cache (the
original and the spliced module both compiled, concurrently, the original's compile overlapping
the planning), ``repeat`` the same command again (both compiles from the cache), ``no-cache``
with ``--no-cache``, ``no-ptxas`` with ``--no-ptxas``; the baseline is ``ptxas -O3`` of the spliced
module alone.  Prints min and median of each and the ratios (targets: repeat ≤ 1.15×, first ≤
1.2× on two cores) with the load average, since the machine is shared, and each command's CPU
time (the process and the ptxas runs it waited for): ``no-ptxas``'s is the planning that comes
before the spliced module's compile can start.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import ROOT, load, run, splice_cmd, summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--recipe", default=str(ROOT / "recipes" / "enc5_p8.yaml"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from splice.ptx.sass import require_tool

    ptxas = require_tool("ptxas")
    times = {"first": [], "repeat": [], "no-cache": [], "no-ptxas": [], "ptxas": []}
    cpu = {k: [] for k in times}   # CPU seconds of the process and the ptxas it waited for
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.ptx"
        for i in range(args.runs):
            env = dict(os.environ, SPLICE_CACHE=str(Path(tmp) / f"cache{i}"))
            cmd = splice_cmd("apply", args.recipe, "--json", "-o", out)
            for k, c in (("first", cmd), ("repeat", cmd), ("no-cache", cmd + ["--no-cache"]),
                         ("no-ptxas", cmd + ["--no-ptxas"]),
                         ("ptxas", [ptxas, "-arch=sm_90", "-O3", "-v", str(out), "-o", os.devnull])):
                wall, _rss, _out, own_cpu = run(c, env if k != "ptxas" else None)
                times[k].append(wall)
                cpu[k].append(own_cpu)
    print(f"after:  {load()}")
    base = times["ptxas"]
    for k, xs in times.items():
        ratio = f"  ratio (median/median) {statistics.median(xs) / statistics.median(base):.2f}, " \
                f"(min/min) {min(xs) / min(base):.2f}" if k != "ptxas" else "  (baseline: one ptxas -O3 of the spliced module)"
        print(f"{k:9} {summary(xs)}{ratio}\n{'':9} CPU {summary(cpu[k])}")
    rep = statistics.median(times["repeat"]) / statistics.median(base)
    first = statistics.median(times["first"]) / statistics.median(base)
    print(f"targets: repeat {rep:.2f} ≤ 1.15 {'ok' if rep <= 1.15 else 'MISSED'}; "
          f"first {first:.2f} ≤ 1.2 {'ok' if first <= 1.2 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
