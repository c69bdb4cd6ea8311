"""The default test run (``python -m pytest -q``, what a contributor runs many times a day) of
this tree against a baseline commit's, paired: the two alternate, in the same hour, each figure a
fresh pytest process.

    python bench/test_run.py [--baseline REF] [--repeat N] [--out FILE]

The baseline (default: the commit before the test-run changes of 2026-12-01, ``61de003``) is
checked out with ``git worktree`` into a temporary folder; each tree runs with its own code first
on ``PYTHONPATH`` (the commands the tests start as subprocesses import it too) and its own
``pyproject.toml`` (the baseline: every test in one process; this tree: ``-n auto`` and the
``slow`` tests deselected -- CI runs them with ``-m slow``).  Prints wall and CPU time (the
process and the workers it waited for), min and median of the repeats, the ratio of the medians
and the tests each run passed / skipped / failed; target: this tree ≤ 240 s on an idle 2-core
machine.  The load average before and after is printed: on a shared machine the figures mean
only as much as the load allows.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import ROOT, load, run, summary

BASELINE = "61de003"


def counts(out: bytes) -> str:
    """pytest's last line (``4601 passed, 123 skipped … in 447.12s``), without the time."""
    lines = [ln for ln in out.decode("utf-8", "replace").splitlines() if re.search(r"\b(passed|failed)\b", ln)]
    return re.sub(r"\s+in [\d.]+s.*$", "", lines[-1].strip("= ")) if lines else "no summary"


def one_run(tree: Path) -> tuple[float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTEST_ADDOPTS", None)
    wall, _rss, out, cpu = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                               env=env, cwd=tree, check=False)
    return wall, cpu, counts(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help="the commit to compare with (default %(default)s)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)
    report = []

    def say(text: str) -> None:
        print(text, flush=True)
        report.append(text)

    with tempfile.TemporaryDirectory(prefix="splice-bench-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.baseline],
                       check=True)
        try:
            trees = {f"baseline {args.baseline}": base, "this tree": ROOT}
            say(f"default test run, paired; before: {load()}")
            wall = {k: [] for k in trees}
            cpu = {k: [] for k in trees}
            for i in range(args.repeat):
                for name, tree in trees.items():
                    w, c, result = one_run(tree)
                    wall[name].append(w)
                    cpu[name].append(c)
                    say(f"  run {i + 1} {name:<20} wall {w:7.1f} s  cpu {c:7.1f} s  {result}")
            for name in trees:
                say(f"{name:<20} wall {summary(wall[name])}; cpu {summary(cpu[name])}")
            (b, a) = (statistics.median(wall[k]) for k in trees)
            say(f"ratio this tree / baseline (median wall): {a / b:.3f}; after: {load()}")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    if args.out:
        args.out.write_text("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
