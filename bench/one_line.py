"""A module whose body is one line against the same statements one per line (issue 9).

    python bench/one_line.py [--statements N] [--repeat R] [--json]

Builds the same kernel body twice — N statements one per line (the baseline), and all N on a
single line, as a minifier writes it (``--statements 400000`` is about 10 MB) — and parses
each R times in this process with the content-hash memo off (the statement-shape cache warm
after the first run, as for any real module).  Prints min and median seconds of each and the
ratio one-line / separate lines; the promise is a ratio close to 1 (before the fix a 10 MB
line went to Lark whole: 76-108 s).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_p)\n{\n" \
       "\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<8>;\n\t.reg .pred %p<4>;\n"


def statements(n: int) -> list:
    """A mix of shapes as nvcc writes them: arithmetic, a guarded branch, labels, vector loads."""
    out = []
    for i in range(n):
        r = i % 60 + 1
        k = i % 7
        if k == 0:
            out.append(f"add.s32 %r{r}, %r{(r % 60) + 1}, {i};")
        elif k == 1:
            out.append(f"mad.lo.s32 %r{r}, %r{r}, 3, %r{(r + 3) % 60 + 1};")
        elif k == 2:
            out.append(f"setp.lt.s32 %p1, %r{r}, {i};")
        elif k == 3:
            out.append(f"@%p1 bra $L__BB0_{i};")
        elif k == 4:
            out.append(f"$L__BB0_{i - 1}:")
            out.append(f"shl.b32 %r{r}, %r{r}, 2;")
        elif k == 5:
            out.append(f"ld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd1+{16 * i}];")
        else:
            out.append(f"cvt.u64.u32 %rd2, %r{r};")
    return out


def module(stmts, one_line: bool) -> str:
    body = (" ".join(stmts) if one_line else "\n".join(s if s.endswith(":") else "\t" + s for s in stmts))
    return HEAD + body + "\n\tret;\n}\n"


def timed(text: str, repeat: int) -> list:
    from splice.ptx import parse

    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        parse(text, "bench.ptx", cache=False)
        out.append(time.perf_counter() - t)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--statements", type=int, default=400_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    stmts = statements(a.statements)
    lines, one = module(stmts, False), module(stmts, True)
    timed(lines, 1)   # warm the shape cache for both (same shapes)
    base, got = timed(lines, a.repeat), timed(one, a.repeat)
    res = {"statements": a.statements, "bytes_one_line": len(one.encode()),
           "lines_min_s": min(base), "lines_median_s": statistics.median(base),
           "one_line_min_s": min(got), "one_line_median_s": statistics.median(got),
           "ratio_min": min(got) / min(base), "ratio_median": statistics.median(got) / statistics.median(base)}
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{a.statements} statements, one-line module {res['bytes_one_line'] / 1e6:.1f} MB")
        print(f"  one per line : min {res['lines_min_s']:.2f} s  median {res['lines_median_s']:.2f} s")
        print(f"  all on 1 line: min {res['one_line_min_s']:.2f} s  median {res['one_line_median_s']:.2f} s")
        print(f"  ratio one-line / lines: min {res['ratio_min']:.2f}  median {res['ratio_median']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
