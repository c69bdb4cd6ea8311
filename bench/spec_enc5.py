"""Benchmark: `splice spec` on corpus/enc5.ptx (parse + Kernel + phases + provenance + epilogues
+ the JSON document), against the 2 s target.  Not a timed test.

    python bench/spec_enc5.py [FILE] [--repeat N]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_S = 2.0


def once(path):
    from splice.analysis import Kernel
    from splice.analysis.spec import build_spec
    from splice.ptx import parse_file

    t0 = time.perf_counter()
    mod = parse_file(str(path))
    t1 = time.perf_counter()
    k = Kernel(mod)
    d = build_spec(k)
    k.phase_abi(min(8, len(k.phases))) if k.phases else None
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, d


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=str(ROOT / "corpus" / "enc5.ptx"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    runs = [once(a.file) for _ in range(max(1, a.repeat))]
    p, an, d = runs[0]     # the first run is cold in this process (parse_file may memoise)
    tot = p + an
    print(f"{Path(a.file).name}: {d['statements']} statements, {len(d.get('phases', []))} phases")
    print(f"first run: parse {p:.3f} s + analysis {an:.3f} s = {tot:.3f} s "
          f"(target {TARGET_S:.1f} s, ratio {tot / TARGET_S:.2f})")
    best_an = min(r[1] for r in runs)
    print(f"analysis alone, best of {len(runs)}: {best_an:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
