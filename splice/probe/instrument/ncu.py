"""Nsight Compute on the probe's modules: one profiled launch of each, side by side.

``ncu`` profiles a process, so each module is launched by a small launcher process
(``python -m splice.probe.instrument.ncu launch SPEC CUBIN ENTRY``) that builds the probe spec's inputs
through cupy (the same seeded buffers, textures and surface as the probe) and launches the
cubin once.  ncu runs it with

    ncu --clock-control none --target-processes all --kernel-name ENTRY --launch-count 1
        --section SpeedOfLight,Occupancy,LaunchStats,MemoryWorkloadAnalysis,WarpStateStats,
                  ComputeWorkloadAnalysis
        --metrics <spill requests> --csv --page raw

(``--clock-control none``: the GPU runs at its own clocks, as in the probe's timing).  The raw
page gives one row of metric columns; :func:`parse_raw_csv` reads it and :func:`summarise`
picks registers, occupancy, spill requests, stall reasons (``smsp__average_warp*_issue_stalled_*``)
and pipe utilisation (``sm__inst_executed_pipe_*`` / ``sm__pipe_*`` percentages).  Every raw
metric is kept in the JSON as well.  Without ncu on PATH ``--ncu`` is a usage error, said
before cupy is imported (``session._plan_build``); :func:`run` still reports a ncu gone since.
"""
from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path
from ..language.document import load_spec
from ..run.device import Device

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "MemoryWorkloadAnalysis",
            "WarpStateStats", "ComputeWorkloadAnalysis")
SPILL_METRICS = ("l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                 "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
                 "smsp__inst_executed_op_local_ld.sum", "smsp__inst_executed_op_local_st.sum")
SUMMARY = (   # (label, raw metric name)
    ("registers per thread", "launch__registers_per_thread"),
    ("block limit (registers)", "launch__occupancy_limit_registers"),
    ("theoretical occupancy %", "sm__maximum_warps_per_active_cycle_pct"),
    ("achieved occupancy %", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("duration (ns)", "gpu__time_duration.sum"),
    ("SM busy %", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("memory throughput %", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("issued IPC", "sm__inst_issued.avg.per_cycle_active"),
    ("spill requests", "derived__local_spilling_requests"),
    ("local load requests", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"),
    ("local store requests", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"),
    ("L1/TEX hit %", "l1tex__t_sector_hit_rate.pct"),
    ("L2 hit %", "lts__t_sector_hit_rate.pct"),
    ("DRAM throughput %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
)
_STALL = re.compile(r"^smsp__average_warps?_(?:latency_)?issue_stalled_(?P<r>\w+?)_per_issue_active\.ratio$")
_PIPE = re.compile(r"^sm__(?:inst_executed_pipe_|pipe_)(?P<p>\w+?)(?:_cycles_active)?\."
                   r"avg\.pct_of_peak_sustained_active$")


def find_ncu():
    return shutil.which("ncu")


def command(ncu: str, spec: Path, cubin: Path, entry: str, metrics: bool = True) -> list:
    extra = ["--metrics", ",".join(SPILL_METRICS)] if metrics else []
    sections = [a for s in SECTIONS for a in ("--section", s)]
    return [ncu, "--clock-control", "none", "--target-processes", "all", "--kernel-name", entry,
            "--launch-count", "1", *sections, *extra, "--csv", "--page", "raw",
            sys.executable, "-m", "splice.probe.instrument.ncu", "launch", str(spec), str(cubin), entry]


def _number(v: str):
    s = v.replace(",", "").strip()
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return v


def parse_raw_csv(text: str) -> dict:
    """{metric: value} of the (last) kernel row of ``ncu --csv --page raw`` output (a header
    row, a units row, then one row per profiled kernel; ncu's own ``==PROF==`` lines skipped)."""
    rows = [ln for ln in text.splitlines() if ln.startswith('"')]
    if len(rows) < 3:
        raise ValueError("no kernel row in ncu's output")
    head, _units, *data = list(csv.reader(io.StringIO("\n".join(rows))))
    return {h: _number(v) for h, v in zip(head, data[-1])}


def summarise(raw: dict) -> dict:
    """summary (SUMMARY labels), stalls {reason: warps per issue}, pipes {pipe: % of peak}."""
    summary = {label: raw.get(name) for label, name in SUMMARY}
    stalls = {}
    pipes = {}
    for k, v in raw.items():
        if not isinstance(v, (int, float)):
            continue
        mm = _STALL.match(k)
        if mm:
            stalls[mm.group("r")] = v
            continue
        mm = _PIPE.match(k)
        if mm:
            pipes[mm.group("p")] = max(v, pipes.get(mm.group("p"), 0))
    return {"summary": summary, "stalls": stalls, "pipes": pipes}


def profile_module(spec: Path, cubin: Path, entry: str, timeout: float = 300) -> dict:
    ncu = find_ncu()
    cmd = command(ncu, spec, cubin, entry)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or '"' not in proc.stdout:
        # an ncu that does not know one of the spill metrics refuses the whole run: the
        # sections alone still give registers, occupancy, stalls and pipes
        cmd = command(ncu, spec, cubin, entry, metrics=False)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        return {"error": f"ncu exit {proc.returncode}: {(proc.stderr or proc.stdout)[-2000:]}",
                "command": cmd}
    try:
        raw = parse_raw_csv(proc.stdout)
    except ValueError as e:
        return {"error": f"{e}: {proc.stdout[-2000:]}", "command": cmd}
    return {**summarise(raw), "raw": raw, "command": cmd}


def run(pair, built) -> dict:
    """ncu on the original and the spliced cubin; ``{"error": …}`` when ncu is not installed."""
    if find_ncu() is None:
        return {"error": "ncu (Nsight Compute) not on PATH: --ncu skipped"}
    out = {}
    for side in ("original", "spliced"):
        out[side] = profile_module(Path(pair.spec_path).resolve(), Path(built[side].path).resolve(),
                                   pair.entry)
        if out[side].get("error"):
            return {"error": f"{side}: {out[side]['error']}", **out}
    return out


def _launch(spec_path: str, cubin: str, entry: str) -> int:
    """The launcher ncu runs: the spec's inputs, one launch of ``entry`` from ``cubin``."""
    spec = load_spec(spec_path)
    dev = Device(spec)
    dev.load("m", Path(cubin), entry)
    dev.render("m")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "launch":
        sys.exit(_launch(*sys.argv[2:]))
    print("usage: python -m splice.probe.instrument.ncu launch SPEC CUBIN ENTRY", file=sys.stderr)
    sys.exit(2)
