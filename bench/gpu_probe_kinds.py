"""The probe's new parameter kinds on the GPU, in one command: tensor maps (the TMA + wgmma GEMM of
corpus/tma with a correct and a wrong wgmma phase cut; the CUTLASS 3.x TMA GEMM of corpus/cutlass
with its filled spec), module texture/surface references (bound, or refused by the driver with
its call and CUresult), and the GPU tests of both.

    PYTHONPATH=/tmp/site:. python3 bench/gpu_probe_kinds.py "$OUT"

Each row is ``splice probe … --json`` (or pytest) in its own process with its own time limit;
OUT gets <row>.json (the probe's JSON), <row>.err (its stderr), results.jsonl and summary.md.
Expected on an H200 (under 3 minutes):

  tma_p1            exit 0, identical
  tma_p1_wrong      exit 1, C differs, first diverging stage "cut 1 (phase 1)"
  cutlass_spec      exit 0, identical (the CUTLASS GEMM probed with its filled spec, against itself)
  texref            exit 0 identical (the driver binds module references) or exit 2 naming the
                    driver call and CUresult that refused them -- the row says which
  texref_wrong      exit 1, surf_out differs (only when texref bound)
  pytest_gpu        the GPU tests of the new kinds pass (tensor_map, texref, cutlass)
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (name, probe arguments, expected exit statuses, time limit s)
ROWS = [
    ("tma_p1", ["recipes/tma_wgmma_gemm_p1.yaml", "--runs", "5", "--stages", "cut"], (0,), 60),
    ("tma_p1_wrong", ["tests/data/recipes/tma_wgmma_gemm_p1_wrong.yaml", "--runs", "0", "--stages", "cut"],
     (1,), 60),
    ("cutlass_spec", ["probes/cutlass_tma_gemm_sm90a.yaml", "corpus/cutlass/cutlass_tma_gemm_sm90a.ptx",
                      "--runs", "5"], (0,), 90),
    ("texref", ["tests/data/probe/texref.yaml", "tests/data/ptx/probe/texref.ptx", "--runs", "2"], (0, 2), 45),
    ("texref_wrong", ["tests/data/probe/texref.yaml", "tests/data/ptx/probe/texref_wrong.ptx", "--runs", "0"],
     (1, 2), 45),
]
#: the driver calls a texref/surfref refusal names (kinds/texref.py)
DRIVER_CALLS = ("cuFuncGetModule", "cuModuleGetTexRef", "cuModuleGetSurfRef", "cuTexRefSet", "cuSurfRefSet")
GPU_TESTS = ["tests/test_probe_tensor_map_gpu.py", "tests/test_probe_texref_gpu.py", "tests/test_probe_cutlass_gpu.py"]


def probe(name: str, args: list, limit: int, out: Path) -> tuple:
    """(exit status, the probe's JSON or None, stderr, seconds)."""
    cmd = [sys.executable, "-m", "splice.cli", "probe", *args, "--json", "--report-dir", str(out / name)]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=limit)
        rc, stdout, stderr = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = 124, "", f"timed out after {limit} s\n{exc.stderr or ''}"
    secs = time.monotonic() - t0
    (out / f"{name}.err").write_text(stderr if isinstance(stderr, str) else stderr.decode(errors="replace"))
    res = None
    if stdout.strip():
        (out / f"{name}.json").write_text(stdout)
        try:
            res = json.loads(stdout)
        except json.JSONDecodeError:
            res = None
    return rc, res, stderr, secs


def facts(name: str, rc: int, res, err: str) -> str:
    """What the row shows, in a few words."""
    if rc == 2:
        last = [ln for ln in err.strip().splitlines() if ln.strip()]
        return "refused: " + (last[-1][:160] if last else "(no message)")
    if not res:
        return "no JSON"
    cmp = (res.get("compare") or {}).get("outputs") or {}
    differ = [k for k, v in cmp.items() if not v.get("identical", True)]
    stages = (res.get("stages") or {}).get("first_divergence") or {}
    words = ["identical" if res.get("identical") else f"differ: {', '.join(differ) or '?'}"]
    if stages:
        words.append(f"first diverging stage {stages.get('name')!r}")
    return "; ".join(words)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    texref_bound = None
    for name, pargs, want, limit in ROWS:
        if name == "texref_wrong" and texref_bound is False:
            rows.append({"name": name, "rc": None, "ok": True, "seconds": 0,
                         "facts": "not run: the driver refused module references (row texref)"})
            continue
        rc, res, err, secs = probe(name, pargs, limit, out)
        if name == "texref":
            texref_bound = rc == 0
        ok = rc in want and (name != "texref_wrong" or rc == 1)
        if rc == 2 and name.startswith("texref"):     # a refusal counts only when the driver's
            ok = ok and any(call in err for call in DRIVER_CALLS)
        rows.append({"name": name, "rc": rc, "ok": ok, "seconds": round(secs, 1), "facts": facts(name, rc, res, err)})
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-m", "gpu",
                            *GPU_TESTS], cwd=ROOT, capture_output=True, text=True, timeout=150)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = 124, "timed out after 150 s"
    (out / "pytest_gpu.log").write_text(log)
    tail = [ln for ln in log.strip().splitlines() if ln.strip()]
    driver = [ln.strip() for ln in log.splitlines() if ln.strip().startswith("DRIVER ")]
    skipped = any("skipped" in ln for ln in tail[-1:])
    rows.append({"name": "pytest_gpu", "rc": rc, "ok": rc == 0 and not skipped, "seconds": round(time.monotonic() - t0, 1),
                 "facts": (tail[-1] if tail else "") + (f"; {driver[0]}" if driver else "")})
    with (out / "results.jsonl").open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    lines = ["| row | exit | as expected | s | what it shows |", "|---|---|---|---|---|"]
    lines += [f"| {r['name']} | {r['rc']} | {'yes' if r['ok'] else 'NO'} | {r['seconds']} | {r['facts']} |"
              for r in rows]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
