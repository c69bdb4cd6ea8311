"""extract → apply of every epilogue of both layers, compared to the original by SASS.

For each layer: compile the original once (ptxas -O3 sm_90, normalised SASS + resources), then
for each epilogue E<n> extract it (``splice extract --epilogue n``), apply it back with an
``epilogue: n`` recipe (abi inline), compile the spliced module and compare; finally all of the
layer's epilogues at once (one recipe, one cut each).  Prints one line per epilogue and the
counts; exit status 1 if any differs.  Needs ptxas and cuobjdump/nvdisasm.

    python bench/epilogue_cuts.py [corpus/enc5.ptx corpus/dec1.ptx] [--only 21,23] [--mode each|all|both]
                                  [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from splice.cut.epilogue_roundtrip import roundtrip_text  # noqa: E402
from splice.cut.kernel import load_kernel  # noqa: E402
from splice.ptx import sass  # noqa: E402


def _sass(text_or_path, arch="sm_90"):
    c = sass.compile_ptx(text_or_path, arch, 3, timeout=1800)
    return sass.normalized_sass(c.cubin) + sass._resource_lines(c.resources)


def _first_diff(a, b) -> str:
    for i in range(max(len(a), len(b))):
        la = a[i] if i < len(a) else "<end>"
        lb = b[i] if i < len(b) else "<end>"
        if la != lb:
            return f"insn {i}: {la!r} vs {lb!r}"
    return ""


def scan(module: Path, only=None, mode: str = "both") -> dict:
    k = load_kernel(str(module))
    k.epilogues
    t0 = time.perf_counter()
    ref = _sass(module)
    t_ref = time.perf_counter() - t0
    rows = []
    idx = [e.index for e in k.epilogues if only is None or e.index in only]
    todo = (idx if mode in ("each", "both") else []) + (["all"] if mode in ("all", "both") else [])
    for i in todo:
        which = idx if i == "all" else [i]
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            try:
                text = roundtrip_text(module, k.name, which, Path(d), k)
                got = _sass(text)
                ok, why = got == ref, _first_diff(ref, got)
            except Exception as exc:  # a failure is a result of the scan, reported per row
                ok, why = False, f"{type(exc).__name__}: {exc}"
        e = next((x for x in k.epilogues if x.index == i), None)
        row = {"epilogue": i, "statements": e.count if e else sum(x.count for x in k.epilogues
                                                                   if x.index in idx),
               "identical": ok, "diff": "" if ok else why, "seconds": round(time.perf_counter() - t, 2)}
        rows.append(row)
        print(f"{module.name} E{i}: {row['statements']} statements, "
              f"{'SASS identical' if ok else 'DIFFERS: ' + why} ({row['seconds']} s)", flush=True)
    each = [r for r in rows if r["epilogue"] != "all"]
    n_ok = sum(r["identical"] for r in each)
    together = next((r["identical"] for r in rows if r["epilogue"] == "all"), None)
    print(f"{module.name}: {n_ok}/{len(each)} epilogues SASS-identical one at a time; all {len(idx)} at "
          f"once: {'-' if together is None else 'identical' if together else 'DIFFERS'}; reference "
          f"compile {t_ref:.1f} s", flush=True)
    return {"module": str(module), "epilogues": len(idx), "checked_one_at_a_time": len(each),
            "identical": n_ok, "all_at_once": together, "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("modules", nargs="*", default=[str(ROOT / "corpus/enc5.ptx"), str(ROOT / "corpus/dec1.ptx")])
    ap.add_argument("--only", help="comma-separated epilogue numbers")
    ap.add_argument("--mode", choices=("each", "all", "both"), default="both",
                    help="one epilogue per recipe, all of a layer's at once, or both")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if not (sass.find_tool("ptxas") and (sass.find_tool("cuobjdump") or sass.find_tool("nvdisasm"))):
        print("needs ptxas and cuobjdump or nvdisasm (pip install nvidia-cuda-cuobjdump)")
        return 2
    only = {int(x) for x in a.only.split(",")} if a.only else None
    res = [scan(Path(m), only, a.mode) for m in a.modules]
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    ok = all(r["identical"] == r["checked_one_at_a_time"] and r["all_at_once"] is not False for r in res)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
