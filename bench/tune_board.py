"""The leaderboard of one or more tune runs, short enough to print last (bench/tune_gpu.sh): per
store, the A/A band and how the GPU batches stopped, then the best timed variants and every
reference (the hand-made recipes timed in the same rounds) with ratio, 95 % interval, verdict,
rounds got / asked, registers and spills; then the independent probe of the written best.yaml
when its JSON is there.  Read from the stores themselves, so a run stopped by its time limit
still shows what it timed.

    python bench/tune_board.py build/tune-gpu/tune-enc5 build/tune-gpu/tune-enc5_stream [--top 10]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def _choices(row: dict, prefix: str = "") -> str:
    """The variant's choices; a native by its file name less the prefix every native of the
    store shares (enc5_stream_) and .ptx, so the directives still fit the column."""
    if "reference" in row["choices"]:
        return "reference " + Path(row["choices"]["reference"]).name

    def short(k: str, v) -> str:
        if not k.startswith("native"):
            return str(v)
        name = Path(str(v)).name
        return name[len(prefix):].removesuffix(".ptx") or name

    return ", ".join(f"{k} {short(k, v)}" for k, v in row["choices"].items())


def _native_prefix(rows: list) -> str:
    import os

    names = [Path(str(v)).name for r in rows for k, v in r["choices"].items() if k.startswith("native")]
    return os.path.commonprefix(names) if len(set(names)) > 1 else ""


def _ratio(r: dict) -> str:
    return "-" if r.get("ratio") is None else f"{r['ratio']:.4f} [{r['low']:.4f}, {r['high']:.4f}]"


def _probe(folder: Path) -> str:
    p = folder / "probe-best.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError):
        return "probe of best.yaml: no result" + (f" ({p} unreadable)" if p.exists() else "")
    t = d.get("timing") or {}
    iv = t.get("interval") or [None, None]
    ratio = f"{t['ratio']:.4f} [{iv[0]:.4f}, {iv[1]:.4f}] {t.get('verdict')}" if t.get("ratio") is not None else "-"
    aa = t.get("aa") or {}
    band = f", A/A band ±{aa['band'] * 100:.2f} %" if aa.get("band") is not None else ""
    return f"probe of best.yaml: outputs identical {d.get('identical')}, ratio {ratio}{band}, {t.get('rounds')} rounds"


def show(folder: Path, top: int) -> None:
    from splice.tune.results import board
    from splice.tune.store import Store

    st = Store(folder / "tune.db")
    try:
        b = board(st, {})
    finally:
        st.close()
    counts = ", ".join(f"{n} {k}" for k, n in sorted(b["counts"].items()))
    orig = (b.get("original") or {}).get("resources") or {}
    print(f"== {folder.name}: {counts}; original {orig.get('registers')} registers, spills "
          f"{orig.get('spill_stores')}/{orig.get('spill_loads')} bytes")
    aa, tm = b.get("aa"), b.get("timing") or {}
    if aa:
        print(f"   A/A (control/original) {_ratio(aa)}, band ±{aa['band'] * 100:.2f} %, {aa['rounds']} rounds; "
              f"GPU batches {tm.get('batches')} (stopped: {tm.get('stopped')}), withheld {tm.get('withheld')}")
    timed = [v for v in b["variants"] if v["ratio"] is not None]
    refs = [v for v in timed if "reference" in v["choices"]]
    shown = [v for v in timed if "reference" not in v["choices"]][:top]
    prefix = _native_prefix(b["variants"])
    print(f"   {'#':>3} {'variant / reference':<84} {'regs':>4} {'spill':>9} {'ratio [95 %]':<26} "
          f"{'verdict':<17} rounds")
    for i, v in enumerate(sorted(shown + refs, key=lambda v: v["ratio"]), 1):
        spill = "-" if v["spill_stores"] is None else f"{v['spill_stores']}/{v['spill_loads']}"
        print(f"   {i:>3} {_choices(v, prefix)[:84]:<84} {v['registers'] or '-':>4} {spill:>9} {_ratio(v):<26} "
              f"{v['verdict'] or '-':<17} {v['rounds']}/{v['asked']}")
    dropped = [v for v in b["variants"] if v["state"] == "dropped" and v["ratio"] is None]
    if dropped:
        print(f"   dropped before timing: {len(dropped)} (first: {dropped[0]['dropped'][:100]})")
    print("   " + _probe(folder))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="tune output folders (each holds tune.db)")
    ap.add_argument("--top", type=int, default=10, help="timed variants shown per store (references always)")
    args = ap.parse_args(argv)
    for f in args.folders:
        if not (Path(f) / "tune.db").is_file():
            print(f"== {Path(f).name}: no tune.db (the run did not start)")
            continue
        show(Path(f), args.top)


if __name__ == "__main__":
    main()
