"""Parse throughput: splice's front end against pyptx (PyPI) on the same files, in the same run.

    python bench/parse.py [FILES…] [--corpus DIR…] [--repeat N] [--baseline GITREF] [--json]

For each file it reports lines/s and MB/s for
- ``cold``: a fresh process's first parse (grammar built, lexers included; empty
  statement-shape cache, no content-hash memo) — the figure the ≥ 100k lines/s target is
  about.  ``--repeat N`` (default 3) runs N fresh processes per file: min and median of the
  wall time, and the min of the parse's CPU time (``time.process_time``: what to read on a
  shared machine);
- ``--baseline GITREF``: the same cold runs, interleaved, with the parser of that commit (its
  ``splice/`` and ``grammars/`` from ``git archive``), and the ratio baseline/this (min CPU);
- ``fresh``: the module's own cost: the min of 3 parses of the same file in the same process after
  its cold parse, each with an empty shape cache (nothing of the module is remembered; only the
  process has touched the parser's code and data once).  Under 100 lines, ``cold`` is mostly that
  first touch (~0.2 ms whatever the module: docs/results/cpu-speed.md), ``fresh`` what the module
  itself costs;
- ``warm shapes``: the same file again with the shape cache populated but the content memo off;
- ``repeat``: parse of the same text again with the content-hash memo (≥ 1M lines/s target);
- ``pyptx``: pyptx.parser.parse on the same text (the baseline; "FAIL" where it rejects the file).
Each cold figure runs in its own subprocess so one file's shapes do not warm the next.
Also generated here: ``enc5+init.ptx``, enc5 with a module-level ``.global .b8`` table of 217k
numbers (the shape that used to fall back to Lark).  ``--corpus DIR`` adds every .ptx under DIR;
the summary gives, per size bucket (under 100 lines, 100–999, 1000+), the slowest module and
every one under the ≥ 100k lines/s target, and enc5's rate against its ≥ 200k target.
Inputs: the stand-in layers (corpus/, built by corpus/build.py) and the largest files of the
shared corpus (../shared/ptx-corpus, gpuocelot's thrust and Rodinia PTX).  One core: the parser
is single-threaded.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [ROOT / "corpus" / "enc5.ptx", ROOT / "corpus" / "dec1.ptx",
           ROOT.parent / "shared" / "ptx-corpus" / "gpuocelot" / "tests" / "ptx" / "thrust" / "Sort.ptx",
           ROOT.parent / "shared" / "ptx-corpus" / "gpuocelot" / "tests" / "ptx" / "thrust" / "histogram.ptx",
           ROOT.parent / "shared" / "ptx-corpus" / "zluda" / "ptx" / "src" / "test" / "_Z9vectorAddPKfS0_Pfi.ptx"]

_CHILD = r"""
import sys, time, json
sys.path.insert(0, sys.argv[2])
t0 = time.perf_counter()
from splice.ptx import parser
getattr(parser, "build_grammar", parser.lark_parser)()   # older trees built every lexer in lark_parser
t_grammar = time.perf_counter() - t0
text = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read()
t = time.perf_counter(); c = time.process_time(); parser.parse(text, sys.argv[1], cache=False)
cold_cpu = time.process_time() - c; cold = time.perf_counter() - t
if len(sys.argv) > 3:   # cold only (repeats and baseline runs)
    print(json.dumps({"cold": cold, "cold_cpu": cold_cpu})); sys.exit(0)
fresh = float("inf")
for _ in range(3):   # the module's own cost: a fresh shape cache each time, the process past its first touch
    parser._SHAPES = type(parser._SHAPES)(parser._SHAPES._lark)
    t = time.perf_counter(); parser.parse(text, sys.argv[1], cache=False); fresh = min(fresh, time.perf_counter() - t)
warm = min(_timed() for _timed in [lambda: (lambda t: (parser.parse(text, sys.argv[1], cache=False), time.perf_counter() - t)[1])(time.perf_counter())] * 3)
parser.parse(text, sys.argv[1])
t = time.perf_counter(); parser.parse(text, sys.argv[1]); rep = time.perf_counter() - t
print(json.dumps({"cold": cold, "cold_cpu": cold_cpu, "grammar": t_grammar, "fresh": fresh, "warm": warm, "repeat": rep, "shapes": parser.shape_stats()}))
"""


def _pyptx(text: str):
    try:
        from pyptx.parser import parse
    except ImportError:
        return None, "pyptx not installed"
    t = time.perf_counter()
    try:
        parse(text)
    except Exception as exc:  # noqa: BLE001 - a baseline that fails is reported, not fatal
        return None, type(exc).__name__ + ": " + str(exc).splitlines()[0][:80]
    return time.perf_counter() - t, None


def init_module(tmp: Path) -> Path:
    """enc5 with a 217k-number ``.global`` initializer after its header (as NVVM prints one: on
    one line)."""
    import random

    rnd = random.Random(13)
    text = (ROOT / "corpus" / "enc5.ptx").read_text()
    at = text.index(".address_size")
    at = text.index("\n", at) + 1
    table = ", ".join(str(rnd.randrange(256)) for _ in range(217_000))
    p = tmp / "enc5+init.ptx"
    p.write_text(text[:at] + f"\n.global .align 4 .b8 splice_table[217000] = {{{table}}};\n" + text[at:])
    return p


def main(argv=None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--corpus", nargs="*", type=Path, default=[])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-pyptx", action="store_true", help="skip the pyptx baseline (slow on big files)")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per file for the cold figure")
    ap.add_argument("--baseline", metavar="GITREF", help="also time the parser of this commit, interleaved")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = [f for f in (args.files or DEFAULT + [init_module(Path(tmp))]) if f.exists()]
        for d in args.corpus:   # a file given after --corpus is taken as a file
            files += sorted(d.rglob("*.ptx")) if d.is_dir() else [d] if d.exists() else []
        base = _baseline_tree(args.baseline, Path(tmp)) if args.baseline else None
        return _report(files, args.json, not args.no_pyptx, max(1, args.repeat), base)


def _baseline_tree(ref: str, tmp: Path) -> Path:
    """``splice/`` and ``grammars/`` of commit ``ref``, unpacked under ``tmp``."""
    out = tmp / "baseline"
    out.mkdir()
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "splice", "grammars"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
    return out


def _cold(f: Path, tree: Path):
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(f), str(tree), "cold"],
                          capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def _measure(f: Path, repeat: int, base):
    """The full child run once, then cold-only runs (interleaved with the baseline's) up to
    ``repeat`` per tree: (first run's figures, [(wall, cpu)], [(wall, cpu)] of the baseline)."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(f), str(ROOT)], capture_output=True, text=True)
    if proc.returncode != 0:   # a file that does not parse (the corpus's deliberate errors)
        print(f"skipped {f}: {proc.stderr.strip().splitlines()[-1][:100]}", file=sys.stderr)
        return None, [], []
    r = json.loads(proc.stdout)
    ours, theirs = [(r["cold"], r["cold_cpu"])], []
    for k in range(repeat):
        if base is not None:
            b = _cold(f, base)
            if b:
                theirs.append((b["cold"], b["cold_cpu"]))
        if k:
            c = _cold(f, ROOT)
            ours.append((c["cold"], c["cold_cpu"]))
    return r, ours, theirs


def _report(files, as_json, pyptx=True, repeat=3, base=None) -> int:
    rows = []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="surrogateescape")
        lines = text.count("\n") + 1
        mb = len(text.encode("utf-8", "surrogateescape")) / 1e6
        r, ours, theirs = _measure(f, repeat, base)
        if r is None:
            continue
        walls = sorted(w for w, _c in ours)
        py_t, py_err = _pyptx(text) if pyptx else (None, "not run")
        row = {"file": str(f.relative_to(ROOT.parent)) if ROOT.parent in f.parents else f.name,
               "lines": lines, "MB": round(mb, 3),
               "cold_lines_s": lines / walls[0], "cold_median_lines_s": lines / statistics.median(walls),
               "cold_cpu_lines_s": lines / min(c for _w, c in ours), "cold_MB_s": mb / walls[0],
               "fresh_lines_s": lines / r["fresh"], "warm_lines_s": lines / r["warm"], "repeat_lines_s": lines / max(r["repeat"], 1e-9),
               "grammar_s": r["grammar"], "shapes": r["shapes"]["shapes"],
               "pyptx_lines_s": (lines / py_t) if py_t else None, "pyptx_error": py_err}
        if theirs:
            row["baseline_cpu_lines_s"] = lines / min(c for _w, c in theirs)
            row["baseline_lines_s"] = lines / min(w for w, _c in theirs)
            row["speedup_cpu"] = row["cold_cpu_lines_s"] / row["baseline_cpu_lines_s"]
        row["ratio_vs_pyptx"] = (row["cold_lines_s"] / row["pyptx_lines_s"]) if py_t else None
        rows.append(row)
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    _table(rows, repeat)
    return 0


def _table(rows, repeat) -> None:
    hdr = (f"{'file':50} {'lines':>7} {'cold l/s':>9} {'median':>9} {'CPU l/s':>9} {'base CPU':>9} {'×base':>5} "
           f"{'MB/s':>5} {'warm l/s':>9} {'repeat l/s':>11} {'pyptx l/s':>9} {'×pyptx':>6}")
    print(f"cold: min and median wall of {repeat} fresh processes, min CPU (process_time); "
          "base: the --baseline commit, interleaved")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        py = f"{r['pyptx_lines_s']:9.0f}" if r["pyptx_lines_s"] else f"{'FAIL' if r['pyptx_error'] != 'not run' else '—':>9}"
        ratio = f"{r['ratio_vs_pyptx']:6.1f}" if r["ratio_vs_pyptx"] else f"{'—':>6}"
        bl = (f"{r['baseline_cpu_lines_s']:9.0f} {r['speedup_cpu']:5.2f}" if "speedup_cpu" in r
              else f"{'—':>9} {'—':>5}")
        print(f"{r['file'][-50:]:50} {r['lines']:7d} {r['cold_lines_s']:9.0f} {r['cold_median_lines_s']:9.0f} "
              f"{r['cold_cpu_lines_s']:9.0f} {bl} {r['cold_MB_s']:5.2f} "
              f"{r['warm_lines_s']:9.0f} {r['repeat_lines_s']:11.0f} {py} {ratio}")
    _summary(rows)


#: module sizes reported apart: under 100 lines a cold parse is mostly the process's first-call
#: cost (~0.3 ms: code and caches warming, not parsing), which lines/s cannot express
_BUCKETS = ((1, 100), (100, 1000), (1000, 10**9))


def _bucket(big, label: str) -> None:
    """The slowest module of a size bucket by wall and by CPU, and every one under 100k."""
    if not big:
        return
    lines = sum(r["lines"] for r in big)
    total = sum(r["lines"] / r["cold_cpu_lines_s"] for r in big)
    print(f"modules of {label} lines: {len(big)}, {lines} lines, {lines / total:.0f} lines/s CPU in all")
    for key, what in (("cold_lines_s", "wall"), ("cold_cpu_lines_s", "CPU")):
        slow = [r for r in big if r[key] < 100_000]
        worst = min(big, key=lambda r: r[key])
        names = ", ".join(r["file"].split("/")[-1] for r in slow[:8]) + (", …" if len(slow) > 8 else "")
        print(f"  by {what}: slowest {worst['file']} at {worst[key]:.0f} lines/s "
              f"(ratio to 100k: {worst[key] / 100_000:.2f}); under target: {len(slow)}"
              + (f" ({names})" if slow else ""))
    slow = [r for r in big if r["fresh_lines_s"] < 100_000]
    worst = min(big, key=lambda r: r["fresh_lines_s"])
    names = ", ".join(r["file"].split("/")[-1] for r in slow[:8]) + (", …" if len(slow) > 8 else "")
    print(f"  by the module's own cost (fresh: min of 3 parses after the cold one, each with an empty shape "
          f"cache): slowest {worst['file']} at {worst['fresh_lines_s']:.0f} lines/s (ratio to 100k: "
          f"{worst['fresh_lines_s'] / 100_000:.2f}); under target: {len(slow)}" + (f" ({names})" if slow else ""))


def _summary(rows) -> None:
    tot_lines = sum(r["lines"] for r in rows)
    tot_cold = sum(r["lines"] / r["cold_lines_s"] for r in rows)
    print(f"\nall files: {tot_lines} lines, cold {tot_lines / tot_cold:.0f} lines/s "
          f"(target ≥ 100000; ratio {tot_lines / tot_cold / 100000:.2f}); grammar build "
          f"{rows[0]['grammar_s'] * 1000:.0f} ms per process (lexers included), not counted")
    for r in rows:
        if r["pyptx_error"] and r["pyptx_error"] != "not run":
            print(f"pyptx failed on {r['file']}: {r['pyptx_error']}")
    for lo, hi in _BUCKETS:
        _bucket([r for r in rows if lo <= r["lines"] < hi], f"{lo}+" if hi > 10**8 else f"{lo}-{hi - 1}")
    for r in rows:
        if r["file"].endswith("enc5.ptx") and "+" not in r["file"]:
            print(f"enc5 cold {r['cold_lines_s']:.0f} lines/s wall, {r['cold_cpu_lines_s']:.0f} CPU "
                  f"(target ≥ 200000; ratio {r['cold_lines_s'] / 200_000:.2f})")


if __name__ == "__main__":
    sys.exit(main())
