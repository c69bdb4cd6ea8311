"""``splice probe init --entry E`` on a big module of many entries: time and peak memory.

    python bench/init_entry.py [--copies 400] [--repeat 3] [--baseline /path/to/other/checkout]

The module is built here: the entries of tests/data/ptx/modern/many_params.ptx and
cutlass_grouped_sm80.ptx renamed and repeated ``--copies`` times (a multi-entry module of the kind
CuPy's thrust or a CUTLASS library ships), and ``probe init --entry`` asks for one small entry.
Each run is a fresh interpreter (``splice.cli.main``): wall time and its peak RSS (getrusage of
the child).  With ``--baseline``, the same runs of the other checkout's splice, interleaved, and
the ratio; ``spec --entry`` of the same entry is the reference a lazy parse reaches.  Figures
are min and median of ``--repeat`` runs.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("tests/data/ptx/modern/many_params.ptx", "tests/data/ptx/modern/cutlass_grouped_sm80.ptx")


def big_module(copies: int) -> tuple:
    """(text, the entry asked for): each source's body repeated with its entries renamed."""
    head = ".version 8.0\n.target sm_90\n.address_size 64\n"
    parts = []
    small = None
    for src in SOURCES:
        text = (ROOT / src).read_text()
        body = text[text.index(".address_size"):].split("\n", 1)[1]
        names = re.findall(r"\.entry\s+([\w$]+)", body)
        for k in range(copies):
            part = body
            for n in names:
                part = re.sub(r"(?<![\w$])" + re.escape(n) + r"(?![\w$])", f"{n}_c{k}", part)
            parts.append(part)
        small = small or f"{names[0]}_c{copies // 2}"
    return head + "\n".join(parts), small


def run(root: str, argv: list) -> tuple:
    """(seconds, peak RSS in MB) of ``splice argv`` from the checkout ``root``."""
    code = (f"import resource, sys; sys.path.insert(0, {root!r}); from splice.cli import main; "
            f"rc = main({argv!r}); print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "file=sys.stderr); sys.exit(rc)")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{root}: {' '.join(argv)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    peak = int(p.stderr.rsplit("PEAK", 1)[1].split()[0])
    return dt, peak / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", help="another checkout to compare with")
    args = ap.parse_args()
    text, entry = big_module(args.copies)
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "big.ptx")
        Path(path).write_text(text)
        print(f"module: {len(text) >> 20} MB, {text.count('.entry')} entries; asked for {entry}")
        trees = [("this", str(ROOT))] + ([("baseline", args.baseline)] if args.baseline else [])
        cmds = [("probe init --entry", ["probe", "init", path, "--entry", entry, "--json"]),
                ("spec --entry", ["spec", path, "--entry", entry, "--json"])]
        res: dict = {}
        for _r in range(args.repeat):
            for name, root in trees:
                for label, argv in cmds:
                    res.setdefault((name, label), []).append(run(root, argv))
        print(f"{'tree':10} {'command':22} {'min s':>8} {'median s':>9} {'peak MB':>8}")
        for (name, label), rows in res.items():
            ts = [t for t, _m in rows]
            print(f"{name:10} {label:22} {min(ts):8.2f} {statistics.median(ts):9.2f} {max(m for _t, m in rows):8.0f}")
        if args.baseline:
            for label, _argv in cmds:
                a = [t for t, _m in res[("this", label)]]
                b = [t for t, _m in res[("baseline", label)]]
                print(f"ratio this/baseline {label}: min {min(a) / min(b):.2f}, "
                      f"median {statistics.median(a) / statistics.median(b):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
