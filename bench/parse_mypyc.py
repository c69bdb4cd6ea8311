"""Would compiling the parser remove a small module's cold cost?  The same commit's parser, pure
Python against ``direct.py``, ``top.py`` and ``shapes.py`` compiled by mypyc, cold, in the same run.

    python bench/parse_mypyc.py [FILES…] [--rounds N] [--ref GITREF]

Both trees come from ``git archive GITREF`` (default HEAD) into a temporary folder; mypyc (from
the ``lint`` extra's mypy) compiles the three hot modules of one of them (~30 s of gcc).  Each
round runs ``bench/parse.py``'s cold child (a fresh process: import, grammar built, one timed
parse) on every file with each tree, interleaved; the figure is the files' lines over their
summed parse CPU time.  Prints max and median per tree and the ratio of the medians.  Default
files: the first 40 ZLUDA ``spirv_run`` modules of the shared corpus (17–45 lines).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from parse import _CHILD  # noqa: E402  (the cold child of bench/parse.py, the same measure)

HOT = ["splice/ptx/direct.py", "splice/ptx/top.py", "splice/ptx/shapes.py"]


def _tree(ref: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "splice", "grammars", "pyproject.toml"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _compile(tree: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mypyc", *HOT], cwd=tree, capture_output=True, text=True)
    if proc.returncode != 0 or not list((tree / "splice" / "ptx").glob("direct*.so")):
        sys.exit(f"mypyc failed (pip install -e '.[lint]' brings mypy):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def _rate(tree: Path, files: list) -> float:
    cpu = 0.0
    lines = 0
    for f in files:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(f), str(tree), "cold"],
                             capture_output=True, text=True, check=True)
        cpu += json.loads(out.stdout)["cold_cpu"]
        lines += f.read_text(errors="surrogateescape").count("\n")
    return lines / cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--ref", default="HEAD")
    args = ap.parse_args(argv)
    files = args.files or sorted((ROOT.parent / "shared" / "ptx-corpus" / "zluda" / "ptx" / "src" / "test"
                                  / "spirv_run").glob("*.ptx"))[:40]
    if not files:
        sys.exit("no files (the shared corpus is not beside the clone: name some)")
    with tempfile.TemporaryDirectory() as tmp:
        pure, compiled = _tree(args.ref, Path(tmp) / "pure"), _tree(args.ref, Path(tmp) / "mypyc")
        _compile(compiled)
        rates: dict = {"pure": [], "mypyc": []}
        for _ in range(args.rounds):
            for name, tree in (("pure", pure), ("mypyc", compiled)):
                rates[name].append(_rate(tree, files))
    for name, v in rates.items():
        print(f"{name:6}: {len(files)} modules, lines/s of parse CPU in all: max {max(v):.0f}, "
              f"median {statistics.median(v):.0f} ({args.rounds} rounds)")
    print(f"ratio mypyc / pure (medians): {statistics.median(rates['mypyc']) / statistics.median(rates['pure']):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
