"""``splice verify`` in bounded time: the Triton sm_90 wgmma phase under every one-edit mutant, and
how verify's time grows with the size of a cut.

1. **One-edit mutants.**  The extracted phase 1 of ``tests/data/ptx/modern/triton_matmul_wgmma_sm90a.ptx``
   and ``corpus/triton/matmul_sm90.ptx`` (64 accumulators, descriptors built from shared
   addresses), edited once each way (``one_edit_mutants``): every integer immediate with one bit
   flipped (a descriptor bit, a wgmma flag), scale-d set to 0, the two descriptors of a wgmma
   exchanged, two neighbouring lines exchanged, one line dropped.  Each is verified with the
   default budget (``--timeout``) and applied (``splice apply`` with ptxas, in a fresh process):
   the table gives verify's seconds (min / median / max) against the budget, and apply's wall time
   against budget + ptxas of the same module (the unchanged phase applied, A/A, in the same run).
   Before the explanation was memoised, one descriptor bit or scale-d 0 did not finish in 15
   minutes (``splice apply`` with it).
2. **Growth.**  Synthetic cuts of n chained wgmma (each reads the previous one's 64 accumulators)
   whose native changes the first descriptor: the difference reaches every accumulator through
   every later wgmma.  verify's time for n = 1, 2, 4, … 64, and the ratio between successive
   sizes (2 means linear).

Usage: python bench/verify_budget.py [--apply N] [--sizes 1,2,4,...]
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

MODULES = ("tests/data/ptx/modern/triton_matmul_wgmma_sm90a.ptx", "corpus/triton/matmul_sm90.ptx")
_INT = re.compile(r"(?<![\w%.$])(-?[0-9]+)(?![\w.])")


def body_lines(native: str) -> list:
    return [i for i, ln in enumerate(native.splitlines()) if ln.strip() and not ln.lstrip().startswith(("//", "."))]


def one_edit_mutants(native: str) -> list:
    """(name, native text) for every one-edit mutant of an extracted native."""
    lines = native.splitlines()
    body = body_lines(native)
    out = []

    def put(name, i, new):
        mut = list(lines)
        if new is None:
            del mut[i]
        else:
            mut[i] = new
        out.append((name, "\n".join(mut) + "\n"))

    for k, i in enumerate(body):
        ln = lines[i]
        for mt in _INT.finditer(ln):
            v = int(mt.group(1))
            for bit in (0, 4):
                put(f"line {k + 1}: {v} -> {v ^ (1 << bit)}", i, ln[:mt.start(1)] + str(v ^ (1 << bit)) + ln[mt.end(1):])
        if ln.lstrip().startswith("wgmma.mma_async"):
            ops = ln.rstrip(";").split("}, ", 1)[1].split(", ")
            put(f"line {k + 1}: scale-d 0", i, ln.replace(f", {ops[2]}, ", ", 0, ", 1))
            put(f"line {k + 1}: descriptors exchanged", i, ln.replace(f"{ops[0]}, {ops[1]},", f"{ops[1]}, {ops[0]},", 1))
        put(f"line {k + 1} dropped", i, None)
    for k in range(len(body) - 1):
        a, b = body[k], body[k + 1]
        mut = list(lines)
        mut[a], mut[b] = mut[b], mut[a]
        out.append((f"lines {k + 1} and {k + 2} exchanged", "\n".join(mut) + "\n"))
    return out


def extracted(module: str) -> str:
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel

    return extract(load_kernel(str(HERE / module)), phase=1)["text"]


def verify_mutants(module: str, tmp: Path, timeout: float) -> list:
    """(mutant name, verdict, budget ran out, seconds) of every one-edit mutant of ``module``."""
    import yaml

    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan
    from splice.errors import SpliceError
    from splice.verify.compare import verify_plan

    k = load_kernel(str(HERE / module))
    out = []
    for j, (name, text) in enumerate(one_edit_mutants(extracted(module))):
        (tmp / f"n{j}.ptx").write_text(text)
        (tmp / f"r{j}.yaml").write_text(yaml.safe_dump({"module": str(HERE / module),
                                                        "cuts": [{"phase": 1, "native": f"n{j}.ptx"}]}))
        try:
            plan = make_plan(load_recipe(str(tmp / f"r{j}.yaml"), search_path(str(tmp / f"r{j}.yaml")), None), k)
        except SpliceError as exc:
            out.append((name, "refused: " + str(exc).splitlines()[0][:60], False, 0.0))
            continue
        t = time.perf_counter()
        [r] = verify_plan(plan, timeout)
        out.append((name, r.verdict, r.budget, time.perf_counter() - t))
    return out


def apply_times(module: str, tmp: Path, count: int) -> tuple:
    """(apply wall seconds of the unchanged phase, of the first ``count`` mutants whose verify
    took longest), each ``splice apply`` in a fresh process with ptxas and no cache."""
    import subprocess

    import yaml

    def run(native: str, tag: str) -> float:
        (tmp / f"a{tag}.ptx").write_text(native)
        (tmp / f"a{tag}.yaml").write_text(yaml.safe_dump({"module": str(HERE / module),
                                                          "cuts": [{"phase": 1, "native": f"a{tag}.ptx"}]}))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "splice.cli", "apply", str(tmp / f"a{tag}.yaml"), "--no-cache",
                        "-o", str(tmp / f"o{tag}.ptx")], cwd=HERE, capture_output=True)
        return time.perf_counter() - t

    base = run(extracted(module), "base")
    muts = [run(text, str(j)) for j, (_n, text) in enumerate(one_edit_mutants(extracted(module))[:count])]
    return base, muts


def chain(n: int) -> tuple:
    """(original module, native with its first descriptor changed) of n chained wgmma."""
    regs = ", ".join(f"%f{i}" for i in range(64))
    wg = [f"\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{regs}}}, %rd{2 + (i % 2)}, %rd4, %p1, 1, 1, 0, 1;"
          for i in range(n)]
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry c(.param .u64 p0)\n{\n"
            "\t.reg .pred %p<2>;\n\t.reg .f32 %f<64>;\n\t.reg .b64 %rd<8>;\n\t.reg .b32 %r<4>;\n"
            "\tld.param.u64 %rd1, [p0];\n\tor.b64 %rd2, %rd1, 4611686293305294848;\n\tadd.s64 %rd3, %rd2, 2;\n"
            "\tadd.s64 %rd4, %rd2, 1024;\n\tsetp.ne.u64 %p1, %rd1, 0;\n\twgmma.fence.sync.aligned;\n"
            + "\n".join(wg) + "\n\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n"
            + "".join(f"\tst.global.f32 [%rd1+{4 * i}], %f{i};\n" for i in range(64)) + "\tret;\n}\n")
    return text


def growth(sizes, tmp: Path, timeout: float) -> list:
    """(n, nodes, seconds) of verifying the n-wgmma chain against its first-descriptor mutant."""
    import yaml

    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan
    from splice.verify.compare import verify_plan

    out = []
    for n in sizes:
        (tmp / f"c{n}.ptx").write_text(chain(n))
        k = load_kernel(str(tmp / f"c{n}.ptx"))
        last = 6 + n + 2
        native = extract(k, statements=(2, last))["text"].replace("4611686293305294848", "4611686293305294849", 1)
        (tmp / f"cn{n}.ptx").write_text(native)
        (tmp / f"cr{n}.yaml").write_text(yaml.safe_dump({"module": str(tmp / f"c{n}.ptx"),
                                                         "cuts": [{"statements": f"s2-s{last}", "native": f"cn{n}.ptx"}]}))
        plan = make_plan(load_recipe(str(tmp / f"cr{n}.yaml"), search_path(str(tmp / f"cr{n}.yaml")), None), k)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            [r] = verify_plan(plan, timeout)
            times.append(time.perf_counter() - t)
        out.append((n, r.nodes, min(times), r.verdict, r.budget))
    return out


def main() -> int:
    from splice.verify.budget import DEFAULT_SECONDS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apply", type=int, default=4, help="mutants also applied with ptxas per module (0: none)")
    ap.add_argument("--sizes", default="1,2,4,8,16,32,64")
    args = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for module in MODULES:
            res = verify_mutants(module, tmp, DEFAULT_SECONDS)
            secs = [s for _n, _v, _b, s in res]
            worst = max(worst, max(secs))
            verdicts = {}
            for _n, v, b, _s in res:
                key = v + (" (budget)" if b else "")
                verdicts[key] = verdicts.get(key, 0) + 1
            slow = sorted(res, key=lambda r: -r[3])[:3]
            print(f"{module}: {len(res)} one-edit mutants; verify min {min(secs) * 1e3:.0f} ms, median "
                  f"{statistics.median(secs) * 1e3:.0f} ms, max {max(secs) * 1e3:.0f} ms (budget {DEFAULT_SECONDS:g} s); "
                  + ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items())))
            print("  slowest: " + "; ".join(f"{n} {s * 1e3:.0f} ms ({v})" for n, v, _b, s in slow))
            if args.apply:
                base, muts = apply_times(module, tmp, args.apply)
                print(f"  splice apply (ptxas, fresh process): unchanged phase {base:.2f} s; mutants max "
                      f"{max(muts):.2f} s, median {statistics.median(muts):.2f} s; ratio max/unchanged "
                      f"{max(muts) / base:.2f} (bound: unchanged + {DEFAULT_SECONDS:g} s budget)")
        print("growth: n chained wgmma, the first descriptor changed (min of 3)")
        prev = None
        for n, nodes, secs, verdict, budget in growth([int(x) for x in args.sizes.split(",")], tmp, DEFAULT_SECONDS):
            ratio = f", x{secs / prev:.2f} for x2" if prev else ""
            print(f"  n={n:3d}: {nodes:6d} nodes, verify {secs * 1e3:8.1f} ms{ratio} [{verdict}{' (budget)' if budget else ''}]")
            prev = secs
    return 0 if worst <= DEFAULT_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
