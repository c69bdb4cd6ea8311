"""How ``spec --json``, ``notes`` and ``spec --pressure`` grow with one entry's size.

The inputs are enc5's body repeated 2, 4 and 8 times inside one entry (bench/big_entry.py:
73k, 147k, 293k lines).  Each round runs every (command, size) once, in an order that changes
from round to round (paired runs: a slow moment of the shared machine hits every size), plus
the smallest size a second time as the A/A control.  Printed per command: min and median wall
time and peak RSS per size, the ratio of each doubling (min over min, median over median) and
the A/A ratio, for wall time and for CPU time (the machine is shared).  Linear work gives 2.0 per doubling; the goal is at most 2.1.

    python bench/notes_scaling.py [--repeats 3] [--sizes 2,4,8] [--commands spec,notes,pressure]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import load, run, splice_cmd  # noqa: E402
from big_entry import big_entry  # noqa: E402

COMMANDS = {
    "spec": lambda p: splice_cmd("spec", p, "--json"),
    "notes": lambda p: splice_cmd("notes", p, "-o", "/dev/null"),
    "pressure": lambda p: splice_cmd("spec", p, "--pressure", "--no-ptxas", "--png", "none"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="2,4,8")
    ap.add_argument("--commands", default="spec,notes,pressure")
    a = ap.parse_args(argv)
    sizes = [int(x) for x in a.sizes.split(",")]
    cmds = a.commands.split(",")
    with tempfile.TemporaryDirectory() as d:
        files = {}
        for n in sizes:
            files[n] = Path(d) / f"enc5x{n}.ptx"
            files[n].write_text(big_entry(n))
        lines = {n: files[n].read_text().count("\n") for n in sizes}
        print(f"inputs: " + ", ".join(f"x{n} {lines[n]} lines" for n in sizes) + f"; {load()}")
        wall: dict = {}
        cpu: dict = {}
        rss: dict = {}
        for r in range(a.repeats):
            order = [(c, n) for c in cmds for n in sizes] + [(c, "A/A") for c in cmds]
            order = order[r % len(order):] + order[:r % len(order)]     # a new order each round
            for c, n in order:
                size = sizes[0] if n == "A/A" else n
                t, mb, _out, tc = run(COMMANDS[c](files[size]))
                wall.setdefault((c, n), []).append(t)
                cpu.setdefault((c, n), []).append(tc)
                rss.setdefault((c, n), []).append(mb)
    print("wall time (the machine is shared: CPU time below is the steadier figure)")
    _report(cmds, sizes, wall, rss)
    print("\nCPU time (user + system of the command)")
    _report(cmds, sizes, cpu, rss)
    return 0


def _report(cmds, sizes, wall, rss) -> None:
    print("| command | size | min | median | peak RSS | ratio per doubling (min / median) |")
    print("|---|---|---|---|---|---|")
    for c in cmds:
        prev = None
        for n in sizes:
            w = wall[(c, n)]
            lo, med = min(w), statistics.median(w)
            ratio = f"{lo / prev[0]:.2f} / {med / prev[1]:.2f}" if prev else "–"
            print(f"| {c} | x{n} | {lo:.2f} s | {med:.2f} s | {max(rss[(c, n)]):.0f} MB | {ratio} |")
            prev = (lo, med)
        aa = wall[(c, "A/A")]
        base = wall[(c, sizes[0])]
        print(f"| {c} | A/A x{sizes[0]} | {min(aa):.2f} s | {statistics.median(aa):.2f} s | "
              f"{max(rss[(c, 'A/A')]):.0f} MB | {min(aa) / min(base):.2f} / "
              f"{statistics.median(aa) / statistics.median(base):.2f} |")


if __name__ == "__main__":
    sys.exit(main())
