"""Identity cuts over the bundled third-party kernels: how many ``splice verify`` proves equal.

Every phase and every epilogue of every entry of the third-party PTX bundled with splice
(tests/data/ptx/modern, tests/data/ptx/tensor_core, tests/data/ptx/thirdparty, corpus/triton,
corpus/gemm — Triton, CUTLASS, LLVM, NVCC, ZLUDA and gpuocelot output; splice's own stand-ins
enc5/dec1 are left out) is extracted (``splice extract``), applied unchanged and verified.  An
identity cut can only be *proved equal* or *not proven*: a *proved different* is a bug in extract
or binding and is printed; so is an internal error.

It prints the verdict counts, the reasons of the cuts not proven (grouped), the refusals of
extract/apply, and verify's time per cut (min / median / max).  ``--windows N`` adds every
window of N statements of each entry (``bench/verify.py --scan`` does that for any file list).

``--root DIR`` runs the code of another checkout of splice on the same kernels (the kernels are
always this tree's): ``python bench/verify_identity.py --root /path/to/main`` gives the count
before a change, the default the count after it.

Usage: python bench/verify_identity.py [--root DIR] [--windows N] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SETS = ("tests/data/ptx/modern/*.ptx", "tests/data/ptx/tensor_core/*.ptx",
        "tests/data/ptx/thirdparty/**/*.ptx", "corpus/triton/*.ptx", "corpus/gemm/*.ptx")


def kernels() -> list:
    out = []
    for pattern in SETS:
        out += sorted(HERE.glob(pattern))
    return out


def reason_kind(reason: str) -> str:
    """A reason without its names and places, to count kinds."""
    text = re.sub(r"(branch to|call to|label) \S+?,?( |$)", r"\1 X ", reason.split(" (")[0])
    text = re.sub(r"^[%\w@]+: ", "", text)
    return re.sub(r"\b(in|out|acc|[abcd])\d+\b|%\w+", "R", text)[:80]


def targets(k, windows: int) -> list:
    """(selector dict, label) of every identity cut of kernel ``k``."""
    out = [({"phase": p.index}, f"phase {p.index}") for p in k.phases]
    out += [({"epilogue": e.index}, f"E{e.index}") for e in k.epilogues]
    if windows:
        nums = [s.n for s in k.stmts if s.n is not None]
        for i in range(0, len(nums), windows):
            a, b = nums[i], nums[min(i + windows, len(nums)) - 1]
            out.append(({"statements": f"s{a}-s{b}"}, f"s{a}-s{b}"))
    return out


def extract_args(sel: dict) -> dict:
    if "phase" in sel:
        return {"phase": sel["phase"]}
    if "epilogue" in sel:
        return {"epilogue": sel["epilogue"]}
    a, b = sel["statements"][1:].split("-s")
    return {"statements": (int(a), int(b))}


def one_cut(f, fn, k, sel, tmp: Path):
    """(verdict or 'refused', reason, verify seconds) of one identity cut."""
    import yaml

    from splice.cut.extract import extract
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan
    from splice.errors import SpliceError
    from splice.verify.compare import verify_plan

    try:
        (tmp / "n.ptx").write_text(extract(k, **extract_args(sel))["text"])
        (tmp / "r.yaml").write_text(yaml.safe_dump({"module": str(f), "entry": fn,
                                                    "cuts": [{**sel, "native": "n.ptx"}]}))
        recipe = load_recipe(str(tmp / "r.yaml"), search_path(str(tmp / "r.yaml")), None)
        plan = make_plan(recipe, k)
    except SpliceError as exc:
        return "refused", str(exc).splitlines()[0], 0.0
    t = time.perf_counter()
    [r] = verify_plan(plan)
    return r.verdict, r.reason, time.perf_counter() - t


def run(windows: int) -> dict:
    from splice.cut.kernel import load_kernel
    from splice.errors import SpliceError
    from splice.ptx import parse_file
    from splice.ptx.errors import PtxSyntaxError

    counts: Counter = Counter()
    reasons: Counter = Counter()
    refusals: Counter = Counter()
    odd, times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for f in kernels():
            try:
                mod = parse_file(str(f))
            except (PtxSyntaxError, SpliceError, OSError):
                continue
            for fn in mod.entries():
                try:
                    k = load_kernel(str(f), fn.name, module=mod)
                    cuts = targets(k, windows)
                except SpliceError:
                    continue
                for sel, label in cuts:
                    verdict, reason, secs = one_cut(f, fn.name, k, sel, Path(tmp))
                    counts[verdict] += 1
                    if verdict == "refused":
                        refusals[reason_kind(reason)] += 1
                        continue
                    times.append(secs)
                    if verdict != "proved equal":
                        reasons[reason_kind(reason)] += 1
                    if verdict not in ("proved equal", "not proven"):
                        odd.append(f"{verdict}: {f.relative_to(HERE)} {fn.name} {label}: {reason}")
    return {"counts": dict(counts), "reasons": dict(reasons.most_common()),
            "refusals": dict(refusals.most_common()), "odd": odd,
            "verify_seconds": {"min": min(times, default=0.0), "median": statistics.median(times) if times else 0.0,
                               "max": max(times, default=0.0), "cuts": len(times)}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(HERE), help="the splice checkout whose code runs (default: this one)")
    ap.add_argument("--windows", type=int, default=0, help="also every window of N statements")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.root).resolve()))
    res = run(args.windows)
    if args.json:
        print(json.dumps({"root": args.root, **res}, indent=1))
        return 0
    total = sum(res["counts"].values())
    print(f"code: {args.root}")
    for why, n in res["reasons"].items():
        print(f"  not proven {n:4d}  {why}")
    for why, n in res["refusals"].items():
        print(f"  refused    {n:4d}  {why}")
    for line in res["odd"]:
        print("  " + line)
    t = res["verify_seconds"]
    print(f"verify per cut: min {t['min'] * 1e3:.1f} ms, median {t['median'] * 1e3:.1f} ms, max {t['max']:.2f} s")
    print(f"identity cuts: {total}; " + ", ".join(f"{v} {k}" for k, v in sorted(res["counts"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
