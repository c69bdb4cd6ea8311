"""Every `splice probe` proof run in one go (for the H200 device run; see docs/results/probe-h200.md).

    python3 bench/probe_h200.py --out DIR

Runs the CLI once per case in a fresh process (stdout JSON -> DIR/<case>.json, stderr ->
DIR/<case>.log, PNGs/PTX under DIR/<case>/), then prints one summary table and writes
DIR/summary.json.  Cases: the inline/call/call-shared enc5 phase-8 recipes and the dec1 recipe
(graph replay on), the wrong recipe (stages all + harness), a second run of the inline recipe
(two-run agreement), a PROBE.yaml MODULE.ptx run, and the corpus GEMM and Triton matmul (correct
and wrong recipes, sm_80 PTX against sm_90 PTX).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CASES = [
    ("enc5_p8", ["recipes/enc5_p8.yaml", "--graph", "--stages", "all", "--harness"]),
    ("enc5_p8_call", ["tests/data/recipes/enc5_p8_call.yaml", "--graph", "--harness"]),
    ("enc5_p8_call_shared", ["tests/data/recipes/enc5_p8_call_shared.yaml", "--graph", "--harness"]),
    ("dec1_p8", ["recipes/dec1_p8.yaml", "--graph", "--stages", "all", "--harness"]),
    ("enc5_p8_wrong", ["tests/data/recipes/enc5_p8_wrong.yaml", "--stages", "all", "--harness", "--runs", "10"]),
    ("enc5_p8_run2", ["recipes/enc5_p8.yaml", "--graph"]),
    ("enc5_self", ["probes/enc5.yaml", "corpus/enc5.ptx", "--runs", "20", "--stages", "1,8,61"]),
    # kernels that are not the stand-ins (docs/results/probe-any-kernel.md)
    ("gemm_p1", ["recipes/gemm_f16f32_p1.yaml", "--graph", "--stages", "all", "--harness"]),
    ("gemm_p1_wrong", ["tests/data/recipes/gemm_f16f32_p1_wrong.yaml", "--stages", "all", "--harness"]),
    ("triton_p1", ["recipes/triton_matmul_p1.yaml", "--graph", "--stages", "all", "--harness"]),
    ("triton_p1_wrong", ["tests/data/recipes/triton_matmul_p1_wrong.yaml", "--stages", "all", "--harness"]),
    ("gemm_sm80_vs_sm90", ["probes/gemm_sm80.yaml", "corpus/gemm/gemm_sm90.ptx"]),
    ("triton_sm80_vs_sm90a", ["probes/matmul_sm80.yaml", "corpus/triton/matmul_sm90.ptx"]),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--timeout", type=int, default=240)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name, argv in CASES:
        if a.only and name not in a.only:
            continue
        cmd = [sys.executable, "-m", "splice.cli", "probe", *argv, "--json", "--report-dir", str(out / name)]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            rc, so, se = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, so, se = "timeout", e.stdout or "", e.stderr or ""
            so = so.decode() if isinstance(so, bytes) else so
            se = se.decode() if isinstance(se, bytes) else se
        dt = time.time() - t0
        (out / f"{name}.json").write_text(so)
        (out / f"{name}.log").write_text(" ".join(cmd) + "\n" + se)
        row = {"cmd": "splice probe " + " ".join(argv), "rc": rc, "wall_s": round(dt, 1)}
        try:
            r = json.loads(so)
        except Exception:  # noqa: BLE001
            row["error"] = se[-1500:]
            print(f"== {name}: rc={rc} ({dt:.0f}s)\n{se[-1500:]}", flush=True)
            summary[name] = row
            continue
        c = r["compare"]
        row.update({"ok": r["ok"], "identical": r["identical"], "bytes_differ": c["bytes_differ"],
                    "pixels_differ": c.get("pixels_differ"), "max_ulp": c.get("max_ulp"),
                    "first_xy": c.get("first_xy") or c.get("first_index"),
                    "outputs_compare": {k: {x: v.get(x) for x in ("dtype", "identical", "elements_differ",
                                                                  "first_index", "max_ulp", "max_abs_err",
                                                                  "max_rel_err", "heatmap")}
                                        for k, v in c.get("outputs", {}).items()},
                    "sha": {k: v["sha256"][0] for k, v in r["frames"].items()},
                    "uncovered": {k: v["uncovered"] for k, v in r["frames"].items()},
                    "outputs_unwritten": {k: v["outputs"] for k, v in r["frames"].items()},
                    "timings_s": r["timings_s"]})
        tm = r.get("timing")
        if tm:
            row["timing"] = {n: {k: round(v, 4) if isinstance(v, float) else v
                                 for k, v in tm[n]["events"].items()} for n in ("original", "spliced")}
            row["ratio"] = tm["ratio"]
            row["ratio_min"] = tm["ratio_min"]
            if "graph_ratio" in tm:
                row["graph"] = {n: round(tm[n]["graph"]["median_ms"], 4) for n in ("original", "spliced")}
                row["graph_ratio"] = tm["graph_ratio"]
        if r.get("stages"):
            row["stages_first"] = r["stages"]["first_divergence"]
            row["stages_n"] = len(r["stages"]["stages"])
            row["stages_stride"] = r["stages"]["stride"]
            row["stages_instrumented_frames_equal"] = r["stages"]["instrumented_frames_equal_plain"]
        if r.get("harness"):
            row["harness"] = [{k: h.get(k) for k in ("cut", "phase", "equal", "live_outs_differ", "threads_differ",
                                                     "first", "skipped")} for h in r["harness"]["rows"]]
        if r.get("roofline"):
            rf = r["roofline"]
            row["roofline"] = rf if "error" in rf else {
                "device": rf["device"], "original": {k: rf["original"].get(k) for k in (
                    "floor_ms", "bound", "of_floor", "mma_ms", "memory_ms", "tflops", "gbps", "work")}}
        summary[name] = row
        print(f"== {name}: rc={rc} ok={r['ok']} identical={r['identical']} ratio={row.get('ratio')} "
              f"graph_ratio={row.get('graph_ratio')} stages={row.get('stages_first')} "
              f"harness={row.get('harness')} ({dt:.0f}s)", flush=True)
    if "enc5_p8" in summary and "enc5_p8_run2" in summary:
        try:
            a1, a2 = summary["enc5_p8"]["timing"], summary["enc5_p8_run2"]["timing"]
            summary["two_run_agreement"] = {n: a2[n]["median_ms"] / a1[n]["median_ms"] - 1 for n in a1}
            print("two-run agreement (median, run2/run1 - 1):", summary["two_run_agreement"])
        except KeyError:
            pass
    cache = Path(os.environ.get("SPLICE_PROBE_CACHE", "build/probe"))
    for f in cache.glob("roofline-*.json"):
        shutil.copy(f, out / f.name)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
