"""``roundtrip --jobs N`` against ``--jobs 1`` by CPU time, for a machine other processes load.

    python bench/roundtrip_cpu.py [PATHS…] [--repeat N] [--jobs N]

On a shared machine the wall-clock speed-up of bench/roundtrip.py says how many cores the
command got, not how well it splits its work.  This script measures what an idle machine's
wall time would be made of, from CPU times, which the load does not change much:

- ``--jobs 1``: the CPU time of a fresh process checking every file (imports included);
- ``--jobs N``: the parent's CPU time until its workers are forked (imports, grammar, reading
  the files to split) plus the CPU time of the busiest worker (read from /proc when the last
  result is in): the critical path when every process has a core of its own.

Each figure is a fresh process; prints min and median of the repeats, the estimated speed-up
and the workers' CPU times (their sum against ``--jobs 1`` is what the split costs).  The
target (≥ 1.8×) is decided by bench/roundtrip.py on an idle machine; this is the estimate to
look at when no idle machine is at hand.  Linux only (/proc).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _timing import ROOT, load, summary

CHILD = r"""
import json, os, sys, time
c0 = time.process_time()
from splice.commands import roundtrip as rt, roundtrip_split as sp
tick = os.sysconf("SC_CLK_TCK")
jobs, paths = int(sys.argv[1]), sys.argv[2:]
seen = {}

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick

class Timed(sp.Scheduler):
    def __init__(self, *a, **k):
        seen["up"] = time.process_time() - c0
        super().__init__(*a, **k)

    def results(self):
        for i in range(len(self.work)):
            while self.done[i] is None:
                self._step()
        seen["workers"] = [cpu(w.pid) for w in self.workers]
        yield from super().results()

sp.Scheduler = Timed
rows = list(rt.check_files(rt.collect(paths), False, None, None, jobs))
print(json.dumps({"cpu": time.process_time() - c0, "files": len(rows), **seen}))
"""


def measure(jobs: int, paths) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(jobs), *map(str, paths)], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    paths = args.paths or [ROOT.parent / "shared" / "ptx-corpus"]
    print(f"{', '.join(map(str, paths))}; before: {load()}", flush=True)
    one, par, sums = [], [], []
    for _ in range(args.repeat):
        one.append(measure(1, paths)["cpu"])
        r = measure(args.jobs, paths)
        par.append(r["up"] + max(r["workers"]))
        sums.append(sum(r["workers"]))
        print(f"  jobs {args.jobs}: parent until the fork {r['up']:.3f} s, workers "
              f"{', '.join(f'{w:.3f}' for w in r['workers'])} s ({r['files']} files)", flush=True)
    print(f"after: {load()}")
    print(f"--jobs 1 CPU: {summary(one)}")
    print(f"--jobs {args.jobs} critical path (parent until the fork + busiest worker): {summary(par)}; "
          f"workers' CPU in all {summary(sums)}")
    est = statistics.median(one) / statistics.median(par)
    print(f"estimated idle speed-up jobs {args.jobs} vs 1: {est:.2f} (medians), "
          f"{min(one) / min(par):.2f} (mins); target ≥ 1.8 (decided by bench/roundtrip.py on an idle machine)")
    return 0


if __name__ == "__main__":
    t = time.perf_counter()
    status = main()
    print(f"({time.perf_counter() - t:.0f} s)")
    sys.exit(status)
