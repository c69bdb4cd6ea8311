"""Time ``splice apply`` without ptxas on the enc5 stand-in (recipes/enc5_p8.yaml).

Each run is a fresh Python process (``splice apply --no-ptxas --json``, output to a temp dir), so
imports, parsing and analysis are all counted; prints the median seconds and the ratio to the
1.5 s target.  Usage: python bench/apply.py [--runs N] [--recipe PATH]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 1.5
ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--recipe", default=str(ROOT / "recipes" / "enc5_p8.yaml"))
    args = ap.parse_args()
    walls, inner = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "splice.cli", "apply", args.recipe, "--no-ptxas",
                                   "--json", "-o", str(Path(tmp) / "out.ptx")], cwd=ROOT,
                                  capture_output=True, text=True)
            walls.append(time.perf_counter() - t)
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return proc.returncode
            inner.append(json.loads(proc.stdout)["timings"]["apply"])
    wall = statistics.median(walls)
    print(f"splice apply --no-ptxas {Path(args.recipe).name}: {wall:.3f} s wall per process "
          f"(median of {args.runs}; in-process apply {statistics.median(inner):.3f} s), "
          f"{wall / TARGET_S:.2f} x the {TARGET_S} s target")
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
