"""Parse throughput: splice's front end against pyptx (PyPI) on the same files, in the same run.

    python bench/parse.py [FILES…] [--corpus DIR…] [--json]

For each file it reports lines/s and MB/s for
- ``cold``: a fresh process's first parse (grammar built, empty statement-shape cache, no
  content-hash memo) — the figure the ≥ 100k lines/s target is about;
- ``warm shapes``: the same file again with the shape cache populated but the content memo off;
- ``repeat``: parse of the same text again with the content-hash memo (≥ 1M lines/s target);
- ``pyptx``: pyptx.parser.parse on the same text (the baseline; "FAIL" where it rejects the file).
Each cold figure runs in its own subprocess so one file's shapes do not warm the next.
Also generated here: ``enc5+init.ptx``, enc5 with a module-level ``.global .b8`` table of 217k
numbers (the shape that used to fall back to Lark).  ``--corpus DIR`` adds every .ptx under DIR;
the summary lists every module of 1000+ lines under the ≥ 100k lines/s target, and enc5's rate
against its ≥ 200k target.
Inputs: the stand-in layers (corpus/, built by corpus/build.py) and the largest files of the
shared corpus (../shared/ptx-corpus, gpuocelot's thrust and Rodinia PTX).  One core: the parser
is single-threaded.
"""
from __future__ import annotations

import argparse
import json
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
parser.lark_parser()
t_grammar = time.perf_counter() - t0
text = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read()
t = time.perf_counter(); parser.parse(text, sys.argv[1], cache=False); cold = time.perf_counter() - t
warm = min(_timed() for _timed in [lambda: (lambda t: (parser.parse(text, sys.argv[1], cache=False), time.perf_counter() - t)[1])(time.perf_counter())] * 3)
parser.parse(text, sys.argv[1])
t = time.perf_counter(); parser.parse(text, sys.argv[1]); rep = time.perf_counter() - t
print(json.dumps({"cold": cold, "grammar": t_grammar, "warm": warm, "repeat": rep, "shapes": parser.shape_stats()}))
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
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = [f for f in (args.files or DEFAULT + [init_module(Path(tmp))]) if f.exists()]
        for d in args.corpus:
            files += sorted(d.rglob("*.ptx"))
        return _report(files, args.json, not args.no_pyptx)


def _report(files, as_json, pyptx=True) -> int:
    rows = []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="surrogateescape")
        lines = text.count("\n") + 1
        mb = len(text.encode("utf-8", "surrogateescape")) / 1e6
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(f), str(ROOT)], capture_output=True, text=True)
        if proc.returncode != 0:   # a file that does not parse (the corpus's deliberate errors)
            print(f"skipped {f}: {proc.stderr.strip().splitlines()[-1][:100]}", file=sys.stderr)
            continue
        r = json.loads(proc.stdout)
        py_t, py_err = _pyptx(text) if pyptx else (None, "not run")
        row = {"file": str(f.relative_to(ROOT.parent)) if ROOT.parent in f.parents else f.name,
               "lines": lines, "MB": round(mb, 3),
               "cold_lines_s": lines / r["cold"], "cold_MB_s": mb / r["cold"],
               "warm_lines_s": lines / r["warm"], "repeat_lines_s": lines / max(r["repeat"], 1e-9),
               "grammar_s": r["grammar"], "shapes": r["shapes"]["shapes"],
               "pyptx_lines_s": (lines / py_t) if py_t else None, "pyptx_error": py_err}
        row["ratio_vs_pyptx"] = (row["cold_lines_s"] / row["pyptx_lines_s"]) if py_t else None
        rows.append(row)
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    hdr = f"{'file':58} {'lines':>7} {'cold l/s':>9} {'MB/s':>5} {'warm l/s':>9} {'repeat l/s':>11} {'pyptx l/s':>9} {'×pyptx':>6}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        py = f"{r['pyptx_lines_s']:9.0f}" if r["pyptx_lines_s"] else f"{'FAIL' if r['pyptx_error'] != 'not run' else '—':>9}"
        ratio = f"{r['ratio_vs_pyptx']:6.1f}" if r["ratio_vs_pyptx"] else f"{'—':>6}"
        print(f"{r['file'][-58:]:58} {r['lines']:7d} {r['cold_lines_s']:9.0f} {r['cold_MB_s']:5.2f} "
              f"{r['warm_lines_s']:9.0f} {r['repeat_lines_s']:11.0f} {py} {ratio}")
    tot_lines = sum(r["lines"] for r in rows)
    tot_cold = sum(r["lines"] / r["cold_lines_s"] for r in rows)
    print(f"\nall files: {tot_lines} lines, cold {tot_lines / tot_cold:.0f} lines/s "
          f"(target ≥ 100000; ratio {tot_lines / tot_cold / 100000:.2f}); grammar build "
          f"{rows[0]['grammar_s'] * 1000:.0f} ms per process, not counted")
    for r in rows:
        if r["pyptx_error"] and r["pyptx_error"] != "not run":
            print(f"pyptx failed on {r['file']}: {r['pyptx_error']}")
    big = [r for r in rows if r["lines"] >= 1000]
    slow = [r for r in big if r["cold_lines_s"] < 100_000]
    worst = min(big, key=lambda r: r["cold_lines_s"]) if big else None
    if worst:
        print(f"modules of 1000+ lines: {len(big)}; slowest {worst['file']} at {worst['cold_lines_s']:.0f} "
              f"lines/s (ratio to 100k: {worst['cold_lines_s'] / 100_000:.2f}); under target: "
              + (", ".join(r["file"] for r in slow) or "none"))
    for r in rows:
        if r["file"].endswith("enc5.ptx") and "+" not in r["file"]:
            print(f"enc5 cold {r['cold_lines_s']:.0f} lines/s (target ≥ 200000; ratio {r['cold_lines_s'] / 200_000:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
