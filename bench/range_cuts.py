"""Identity cuts of statement ranges: extract --statements → apply → SASS compared, per entry.

    python bench/range_cuts.py KERNEL.ptx ... [--windows 4] [--max-len 30] [--seed 5]

``bench/roundtrip_cuts.py`` cuts phases and epilogues only, so a kernel without tensor cores is
never cut by it.  This script cuts, for every entry, the whole body (s2 to the next-to-last
statement) and ``--windows`` random ranges of up to ``--max-len`` statements, each through the CLI
as a user would (a subprocess: a traceback or a hang is seen), and compares the spliced module's
SASS with the original's (``verify`` is run too and its exit status shown).  An outcome is
``identical``, ``SASS DIFFERS``, ``refused`` (exit 2, message shown: a range that splits a
``{ }`` scope is refused by extract, by design) or ``FAIL``.  docs/results/unseen-kernels.md
records its runs (2026-12-01).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scan_commands import outcome, splice  # noqa: E402  (the CLI runner shared with the command scan)


def entries(path: str) -> list:
    """(name, statement count) of every entry with a body."""
    rc, out, _err = splice(["stats", path, "--json"])
    if rc != 0:
        return []
    return [(f["name"], f["statements"]) for f in json.loads(out).get("functions", [])
            if f.get("kind") == ".entry" and f.get("statements")]


def windows(n: int, count: int, max_len: int, rnd: random.Random) -> list:
    out = [(2, max(2, n - 1))]
    for _ in range(count):
        a = rnd.randint(1, n)
        out.append((a, min(n, a + rnd.randint(0, max_len))))
    return out


def cut(path: str, entry: str, a: int, b: int, tmp: Path) -> str:
    """The outcome of one window."""
    from splice.cut.recipe import _default_opt_level
    from splice.ptx.sass import compile_ptx, normalized_sass

    res = splice(["extract", path, "--entry", entry, "--statements", f"s{a}-s{b}", "-o", str(tmp / "n.ptx")])
    if res[0] != 0:
        return "extract " + outcome(res)
    r = tmp / "r.yaml"
    r.write_text(f"module: {os.path.abspath(path)}\nentry: '{entry}'\noutput: {tmp / 'o.ptx'}\n"
                 f"cuts:\n  - statements: s{a}-s{b}\n    native: n.ptx\n")
    res = splice(["apply", str(r), "--json"])
    if res[0] != 0:
        return "apply " + outcome(res)
    arch = (json.loads(res[1]).get("ptxas") or {}).get("arch") or "sm_90"
    opt = _default_opt_level(Path(path))
    try:
        same = (normalized_sass(compile_ptx(Path(path), arch, opt).cubin)
                == normalized_sass(compile_ptx(tmp / "o.ptx", arch, opt).cubin))
    except Exception as exc:  # noqa: BLE001 - reported as the outcome
        return f"FAIL sass: {type(exc).__name__}: {str(exc)[:160]}"
    verified = splice(["verify", str(r)])[0]
    return ("identical" if same else "SASS DIFFERS") + f" (verify exit {verified})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--windows", type=int, default=4, help="random windows per entry (besides the whole body)")
    ap.add_argument("--max-len", type=int, default=30, help="longest random window, in statements")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    tally: dict = {}
    with tempfile.TemporaryDirectory(prefix="splice-range-cuts-") as td:
        for path in args.files:
            for entry, n in entries(path):
                for a, b in windows(n, args.windows, args.max_len, rnd):
                    res = cut(path, entry, a, b, Path(td))
                    kind = res.split(" (")[0] if not res.startswith(("extract", "apply")) else res.split(":")[0]
                    tally[kind] = tally.get(kind, 0) + 1
                    print(f"{Path(path).name:36s} {entry[:30]:30s} s{a}-s{b}: {res}", flush=True)
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())))
    return 1 if any(k.startswith(("SASS", "FAIL", "apply FAIL", "extract FAIL")) for k in tally) else 0


if __name__ == "__main__":
    sys.exit(main())
