"""``splice spec`` growth with module size and on a big multi-entry module.

    python bench/spec.py [--repeat N] [--big PATH] [--skip-series] [--baseline-tree DIR]

* series: enc5 copied ×1/×2/×4/×8 into one module (entries renamed ``…_cK``); each size is timed
  as ``splice spec FILE --json`` in fresh processes; prints min / median and the ratio of each
  doubling (target ≤ 2.1: linear growth).
* big: ``--big PATH`` (e.g. CuPy's thrust PTX, 463 entries / 800k lines: see
  docs/results/cpu-speed.md for how to extract it), else a module synthesized here from renamed
  copies of tests/data/ptx/modern until it has 400+ entries; prints wall and peak RSS (targets
  ≤ 20 s and ≤ 600 MB on the thrust module).
* ``--baseline-tree DIR``: a checkout of the code before the change, run on the same files in the
  same run (e.g. ``git worktree add /tmp/base origin/main``), for the ratio old / new.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import ROOT, load, run, splice_cmd, summary

MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b[^\n]*\n", re.M)


def copies(text: str, n: int) -> str:
    """``n`` copies of a module's functions after one header, every entry renamed."""
    head_end = re.search(r"^[^\n]*\.(entry|func)\b", text, re.M).start()
    head, rest = text[:head_end], text[head_end:]
    names = re.findall(r"\.entry\s+([\w$]+)", rest)
    out = [head]
    for k in range(n):
        part = rest
        for nm in names:
            part = re.sub(r"(?<![\w$])" + re.escape(nm) + r"(?![\w$])", f"{nm}_c{k}", part)
        out.append(part)
    return "".join(out)


def synth_big(min_entries: int = 400) -> str:
    """Renamed copies of the modern test modules (sm_90-era NVVM/Triton/CUTLASS output) behind
    one header, until the module has ``min_entries`` entries."""
    parts = [".version 8.4\n.target sm_90a\n.address_size 64\n"]
    files = [f for f in sorted(MODERN.glob("*.ptx")) if "debug" not in f.name]
    entries, k = 0, 0
    while entries < min_entries:
        for f in files:
            body = _HEADER.sub("", f.read_text())
            body = re.sub(r"\.section\s+\.debug[\s\S]*?\n}\n", "", body)
            names = set(re.findall(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", body)) | \
                set(re.findall(r"^\s*\.(?:global|shared|const)\s[^;=]*?([\w$]+)\s*(?:\[|=|;)", body, re.M))
            for nm in sorted(names, key=len, reverse=True):
                body = re.sub(r"(?<![\w$%])" + re.escape(nm) + r"(?![\w$])", f"{nm}_k{k}", body)
            parts.append(body)
            entries += len(re.findall(r"\.entry\s", body))
            k += 1
    return "".join(parts)


def time_spec(path: Path, repeat: int, tree: Path = ROOT, cpu_out=None):
    """(walls, peak RSS) of ``repeat`` fresh ``splice spec PATH --json``; the CPU times go to
    ``cpu_out`` (a list) when given: on a shared machine they are the figures to compare."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    walls, rss, cpus = [], [], []
    for _ in range(repeat):
        w, r, _out, cpu = run(splice_cmd("spec", path, "--json"), env, cwd=tree)
        walls.append(w)
        rss.append(r)
        cpus.append(cpu)
    print(f"  {path.name}{' (baseline tree)' if tree != ROOT else ''}: CPU time {summary(cpus)}", flush=True)
    if cpu_out is not None:
        cpu_out[:] = cpus
    return walls, rss


def series(tmp: Path, repeat: int, base) -> None:
    enc5 = (ROOT / "corpus" / "enc5.ptx").read_text()
    prev = prev_cpu = None
    for n in (1, 2, 4, 8):
        p = tmp / f"enc5x{n}.ptx"
        p.write_text(copies(enc5, n))
        cpus: list = []
        walls, rss = time_spec(p, repeat, cpu_out=cpus)
        med, med_cpu = statistics.median(walls), statistics.median(cpus)
        grow = (f", ×{med / prev:.2f} the previous size (target ≤ 2.1; CPU time "
                f"×{med_cpu / prev_cpu:.2f})" if prev else "")
        old = ""
        if base:
            bw, _ = time_spec(p, repeat, base)
            old = f"; baseline tree {summary(bw)}, ratio old/new {statistics.median(bw) / med:.2f}"
        print(f"enc5 ×{n} ({p.read_text().count(chr(10))} lines): {summary(walls)}, "
              f"peak RSS {max(rss):.0f} MB{grow}{old}", flush=True)
        prev, prev_cpu = med, med_cpu


def big(tmp: Path, path, repeat: int, base) -> None:
    if path is None:
        path = tmp / "synth_big.ptx"
        path.write_text(synth_big())
    text = Path(path).read_text()
    n_ent = len(re.findall(r"\.entry\s", text))
    cpus: list = []
    walls, rss = time_spec(Path(path), repeat, cpu_out=cpus)
    print(f"{Path(path).name} ({n_ent} entries, {text.count(chr(10))} lines): {summary(walls)}, "
          f"peak RSS {max(rss):.0f} MB (targets ≤ 20 s, ≤ 600 MB on the 463-entry thrust module: "
          f"ratios {statistics.median(walls) / 20:.2f}, {max(rss) / 600:.2f})", flush=True)
    if base:
        bcpus: list = []
        bw, brss = time_spec(Path(path), 1, base, cpu_out=bcpus)
        print(f"  baseline tree: {summary(bw)}, peak RSS {max(brss):.0f} MB; "
              f"ratio old/new {statistics.median(bw) / statistics.median(walls):.2f} "
              f"(CPU time {statistics.median(bcpus) / statistics.median(cpus):.2f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", default=None, help="a big multi-entry module (default: synthesized)")
    ap.add_argument("--skip-series", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--baseline-tree", type=Path, default=None)
    args = ap.parse_args(argv)
    print(f"before: {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_series:
            series(Path(tmp), args.repeat, args.baseline_tree)
        if not args.skip_big:
            big(Path(tmp), args.big, args.repeat, args.baseline_tree)
    print(f"after:  {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
