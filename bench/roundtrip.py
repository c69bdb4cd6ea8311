"""``splice roundtrip --jobs 2`` against ``--jobs 1`` on the same corpus, in the same run.

    python bench/roundtrip.py [PATHS…] [--repeat N] [--sass] [--jobs N]

Default corpus: ../shared/ptx-corpus (when present), tests/data/ptx and corpus/ (300+ files
with the shared corpus).  Each figure is a fresh ``splice roundtrip --json`` process; prints min
and median of the repeats and the speed-up (target: jobs 2 ≥ 1.8× jobs 1 on two cores).  With
``--sass`` every file is also compiled by ptxas (with ``--no-cache``, so the cache does not hide
the work).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from _timing import ROOT, load, run, splice_cmd, summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sass", action="store_true")
    args = ap.parse_args(argv)
    paths = args.paths or [p for p in (ROOT.parent / "shared" / "ptx-corpus", ROOT / "tests" / "data" / "ptx",
                                       ROOT / "corpus") if p.exists()]
    n_files = sum(len(list(p.rglob("*.ptx"))) if p.is_dir() else 1 for p in paths)
    extra = ["--sass", "--no-cache"] if args.sass else []
    print(f"{n_files} files under {', '.join(map(str, paths))}; before: {load()}", flush=True)
    t = {1: [], args.jobs: []}
    cpu = {1: [], args.jobs: []}
    for _ in range(args.repeat):
        for j in t:
            cmd = splice_cmd("roundtrip", *paths, "--json", "--jobs", j, *extra)
            wall, _rss, _out, own_cpu = run(cmd, check=False)
            t[j].append(wall)
            cpu[j].append(own_cpu)
    print(f"after: {load()}")
    for j, xs in t.items():
        par = statistics.median([c / w for c, w in zip(cpu[j], xs)])
        print(f"--jobs {j}: {summary(xs)}; CPU time (process and workers) {summary(cpu[j])}; "
              f"CPU/wall {par:.2f}")
    sp_med = statistics.median(t[1]) / statistics.median(t[args.jobs])
    sp_min = min(t[1]) / min(t[args.jobs])
    print(f"speed-up jobs {args.jobs} vs 1: {sp_med:.2f} (medians), {sp_min:.2f} (mins); target ≥ 1.8 "
          f"{'ok' if sp_med >= 1.8 else 'MISSED'}")
    print("(CPU/wall is the number of cores the command kept busy: on a machine loaded by other "
          "processes the wall-time speed-up is bounded by the cores it can get; "
          "bench/roundtrip_cpu.py estimates the idle speed-up from CPU times)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
