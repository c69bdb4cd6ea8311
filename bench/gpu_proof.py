"""The GPU proof runs of the shipped recipes, in one process-per-probe batch for one device call.

    python bench/gpu_proof.py OUTDIR [--only NAME,...] [--budget SECONDS] [--reports DIR]

Each row runs ``splice probe … --json`` with its own time limit, keeps the JSON, and reduces it
to the facts docs/results/ quote: exit status, outputs identical, first diverging stage or
harness cut, the frame-time ratio (median of interleaved runs) and ptxas' registers/spills.
OUTDIR gets results.jsonl (one reduced row per probe), summary.md (the table) and log.txt
(stderr of every run).  Rows are independent: a failing or slow one does not stop the batch,
and ``--budget`` skips what would not fit in the device call.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

# (name, probe arguments, expected exit status, time limit s)
ROWS = [
    ("enc5_p8", ["recipes/enc5_p8.yaml", "--runs", "50"], 0, 150),
    ("dec1_p8", ["recipes/dec1_p8.yaml", "--runs", "50"], 0, 90),
    ("enc5_p8_wrong", ["tests/data/recipes/enc5_p8_wrong.yaml", "--runs", "0", "--stages", "cut",
                       "--harness"], 1, 150),
    ("gemm_p1", ["recipes/gemm_f16f32_p1.yaml", "--runs", "50", "--harness"], 0, 90),
    ("gemm_p1_wrong", ["tests/data/recipes/gemm_f16f32_p1_wrong.yaml", "--runs", "0", "--harness"], 1, 90),
    ("triton_p1", ["recipes/triton_matmul_p1.yaml", "--runs", "50", "--harness"], 0, 90),
    ("triton_p1_wrong", ["tests/data/recipes/triton_matmul_p1_wrong.yaml", "--runs", "0", "--harness"], 1, 90),
    ("enc5_e21", ["recipes/enc5_e21.yaml", "--runs", "30"], 0, 120),
    ("enc5_act_epilogues", ["recipes/enc5_act_epilogues.yaml", "--runs", "30"], 0, 150),
    ("enc5_e11", ["recipes/enc5_e11.yaml", "--runs", "30"], 0, 120),
    ("enc5_e61", ["recipes/enc5_e61.yaml", "--runs", "30"], 0, 120),
    ("dec1_e9", ["recipes/dec1_e9.yaml", "--runs", "30", "--harness"], 0, 90),
    ("enc5_all_epilogues", ["recipes/enc5_all_epilogues.yaml", "--runs", "30"], 0, 180),
    ("dec1_e9_wrong_rounding", ["tests/data/recipes/dec1_e9_wrong_rounding.yaml", "--runs", "0",
                                "--stages", "cut", "--harness"], 1, 90),
    ("dec1_e9_wrong_shuffle", ["tests/data/recipes/dec1_e9_wrong_shuffle.yaml", "--runs", "0",
                               "--stages", "cut", "--harness"], 1, 90),
    ("perf_enc5_fence", ["recipes/perf/enc5_fence.yaml", "--runs", "60"], 0, 180),
    ("perf_enc5_fence_start", ["recipes/perf/enc5_fence_start.yaml", "--runs", "60"], 0, 180),
    ("perf_dec1_fence", ["recipes/perf/dec1_fence.yaml", "--runs", "60"], 0, 90),
    ("enc5_p8_profile", ["recipes/enc5_p8.yaml", "--runs", "20", "--profile"], 0, 180),
    # the bound harness (issue 12): cuts that read parameters, sample the texture, write the
    # frame surface (E61) or scatter into the arena (E60) run against the spec's own memory
    ("enc5_e61_harness", ["recipes/enc5_e61.yaml", "--runs", "0", "--harness"], 0, 120),
    ("enc5_e61_wrong_tap", ["tests/data/recipes/enc5_e61_wrong_tap.yaml", "--runs", "0", "--stages", "cut",
                            "--harness"], 1, 150),
    ("enc5_e60_identity_harness", ["tests/data/recipes/enc5_e60_identity.yaml", "--runs", "0", "--harness"],
     0, 120),
    ("enc5_all_epilogues_harness", ["recipes/enc5_all_epilogues.yaml", "--runs", "0", "--harness"], 0, 300),
    ("enc5_qkv_wave_harness", ["recipes/enc5_qkv_wave.yaml", "--runs", "0", "--harness"], 0, 150),
    ("gemm_e1_identity_harness", ["tests/data/recipes/gemm_e1_identity.yaml", "--runs", "0", "--harness"], 0, 90),
    ("gemm_e1_wrong_swap", ["tests/data/recipes/gemm_e1_wrong_swap.yaml", "--runs", "0", "--stages", "cut",
                            "--harness"], 1, 90),
    ("gemm_e1_fault", ["tests/data/recipes/gemm_e1_fault.yaml", "--runs", "0"], 2, 90),
]


def reduce(name: str, rc: int, want: int, seconds: float, res: dict | None) -> dict:
    """The facts a results table quotes, from one probe's JSON (None: no JSON came back)."""
    row = {"name": name, "rc": rc, "expected_rc": want, "seconds": round(seconds, 1)}
    if not res:
        return row
    row["identical"] = res.get("identical")
    row["covered"] = res.get("covered")
    cmp = res.get("compare") or {}
    row["differing"] = {k: {x: v.get(x) for x in ("elements_differ", "first_index", "first_xy", "max_ulp")}
                        for k, v in (cmp.get("outputs") or {}).items() if not v.get("identical", True)}
    tm = res.get("timing") or {}
    for k in ("ratio", "ratio_min"):
        if k in tm:
            row[k] = round(tm[k], 4)
    if "interval" in tm:         # the timing's interval, the A/A band and the verdict (docs/timing.md)
        row["interval"] = [round(x, 4) for x in tm["interval"]]
        row["aa_band"] = round(tm["aa"]["band"], 4)
        row["verdict"] = tm["verdict"]
    for side in ("original", "spliced"):
        ev = (tm.get(side) or {}).get("events") or {}
        if ev:
            row[f"{side}_ms"] = [round(ev.get("min_ms", 0), 4), round(ev.get("median_ms", 0), 4)]
        mod = (res.get("modules") or {}).get(side) or {}
        r = (mod.get("resources") or {}).get(res.get("entry")) or {}
        if r:
            row[f"{side}_regs_spills"] = [r.get("registers"), r.get("spill_stores"), r.get("spill_loads")]
    for key in ("stages", "harness"):
        fd = (res.get(key) or {}).get("first_divergence")
        if key in res:
            row[f"{key}_first_divergence"] = fd
    h = res.get("harness")
    if h:
        hr = h.get("rows") or []
        row["harness"] = {
            "cases": len(hr), "equal": sum(1 for r in hr if r.get("equal") is True),
            "differ": [r["title"] for r in hr if r.get("equal") is False],
            "skipped": {r["title"]: r["skipped"] for r in hr if r.get("skipped")},
            "written": {r["title"]: {k: v["bytes_written"] for k, v in (r.get("memory") or {}).items()
                                     if v.get("bytes_written")} for r in hr if r.get("memory")}}
    if "profile" in res:
        p = res["profile"]
        row["profile"] = {s: {k: p[s].get(k) for k in ("parts_vs_whole", "overhead", "top", "sum_ratio")}
                          for s in ("original", "spliced") if isinstance(p.get(s), dict)}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--budget", type=float, default=540.0)
    ap.add_argument("--reports", default="build/gpu-proof-reports", help="probe report dirs (PNGs, PTX)")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {x for x in a.only.split(",") if x}
    t_end = time.monotonic() + a.budget
    rows = []
    with open(out / "log.txt", "a") as log, open(out / "results.jsonl", "a") as jl:
        for name, args, want, limit in ROWS:
            if only and name not in only:
                continue
            left = t_end - time.monotonic()
            if left < 20:
                rows.append({"name": name, "skipped": "device-call budget spent"})
                continue
            cmd = [sys.executable, "-m", "splice.cli", "probe", *args, "--json",
                   "--report-dir", str(Path(a.reports) / name)]
            log.write(f"== {name}: {' '.join(cmd)}\n")
            log.flush()
            t0 = time.monotonic()
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=min(limit, left))
                rc, stdout = p.returncode, p.stdout
                log.write(p.stderr[-4000:])
            except subprocess.TimeoutExpired:
                rc, stdout = 124, ""
                log.write(f"timed out after {min(limit, left):.0f}s\n")
            try:
                res = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else None
            except (json.JSONDecodeError, IndexError):
                res = None
                log.write(stdout[-2000:])
            row = reduce(name, rc, want, time.monotonic() - t0, res)
            rows.append(row)
            jl.write(json.dumps(row) + "\n")
            jl.flush()
            log.write(f"rc={rc} ({'as expected' if rc == want else 'UNEXPECTED'})\n")
            log.flush()
    lines = ["| probe | rc (expected) | identical | ratio (median / min) [interval] verdict | first divergence "
             "| seconds |", "|---|---|---|---|---|---|"]
    for r in rows:
        fd = r.get("stages_first_divergence") or r.get("harness_first_divergence") or ""
        lines.append(f"| {r['name']} | {r.get('rc', '-')} ({r.get('expected_rc', '-')}) | {r.get('identical')} | "
                     f"{r.get('ratio', '-')} / {r.get('ratio_min', '-')} {r.get('interval', '')} "
                     f"{r.get('verdict', '')} | "
                     f"{json.dumps(fd) if fd else ''} | "
                     f"{r.get('seconds', r.get('skipped', ''))} |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r.get("rc") == r.get("expected_rc") for r in rows if "rc" in r) else 1


if __name__ == "__main__":
    sys.exit(main())
