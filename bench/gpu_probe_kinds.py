"""The probe's new parameter kinds on the GPU, in one command: splice's tensor-map encoder against
cuda-bindings' wrapper, the soundness bed's mutants again (its asynchronous-proxy mutants encode
their maps with that encoder), tensor maps in the probe (the TMA + wgmma GEMM of corpus/tma with
a correct and a wrong wgmma phase cut; the CUTLASS 3.x TMA GEMM of corpus/cutlass with its
filled spec), module texture/surface references (bound, or refused by the driver with its call
and CUresult), and the GPU tests of both.

    PYTHONPATH=/tmp/site:. python3 bench/gpu_probe_kinds.py "$OUT"

Each row runs in its own process with its own time limit, cut to what is left of the whole
run's budget (``--budget``, 230 s: a row the budget cannot reach says so); OUT gets
<row>.json (the probe's JSON), <row>.err / <row>.log, mutants/ (the bed's tables),
results.jsonl and summary.md.  Expected on an H200 (about 3 minutes):

  tmap_encode       exit 0: splice's encoder encodes every map (the mutants' rank-1 map among
                    them), byte for byte what cuda-bindings' wrapper writes wherever the wrapper
                    succeeds, its enum values cuda.h's; the row shows the wrapper's CUresult per map
  mutants           exit 0 (bench/verify_mutants.py: OK, errors (expected 0) none): every
                    asynchronous-proxy/TMA mutant has a GPU outcome instead of an encode error
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

#: the whole run's seconds (a row gets what is left, at most its own limit)
BUDGET_S = 230
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


def probe(name: str, args: list, limit: float, out: Path) -> tuple:
    """(exit status, the probe's JSON or None, stderr, seconds)."""
    cmd = [sys.executable, "-m", "splice.cli", "probe", *args, "--json", "--report-dir", str(out / name)]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=limit)
        rc, stdout, stderr = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = 124, "", f"timed out after {limit:.0f} s\n{exc.stderr or ''}"
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


def script(name: str, argv: list, limit: float, out: Path) -> tuple:
    """(exit status, the output's last lines, seconds) of a bench script run in its own process."""
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=limit)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as exc:
        got = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        rc, log = 124, f"timed out after {limit:.0f} s\n{got}"
    (out / f"{name}.log").write_text(log)
    return rc, [ln for ln in log.strip().splitlines() if ln.strip()], round(time.monotonic() - t0, 1)


def encoder_rows(out: Path, left) -> list:
    """tmap_encode (splice's encoder against cuda-bindings') and mutants (the soundness bed)."""
    rc, lines, secs = script("tmap_encode", ["bench/tmap_encode_check.py"], min(60, left()), out)
    maps = [json.loads(ln) for ln in lines if ln.startswith("{")]
    words = "; ".join(f"{m['map'].split(' (')[0]}: splice {m['splice'][:60]}, cuda-bindings {m['cuda_bindings']}"
                      for m in maps)
    rows = [{"name": "tmap_encode", "rc": rc, "ok": rc == 0, "seconds": secs,
             "facts": (words + "; " if words else "") + (lines[-1][:160] if lines else "no output")}]
    rc, lines, secs = script("mutants", ["bench/verify_mutants.py", "--out", str(out / "mutants")],
                             min(120, left()), out)
    shown = [ln for ln in lines if ln.startswith(("errors (expected 0)", "unsound", "OK", "FAILED"))]
    rows.append({"name": "mutants", "rc": rc, "ok": rc == 0, "seconds": secs,
                 "facts": "; ".join(shown)[:300] or (lines[-1][:200] if lines else "no output")})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for the whole run")
    args = ap.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget

    def left() -> float:
        return max(1.0, deadline - time.monotonic())

    rows = encoder_rows(out, left)
    texref_bound = None
    for name, pargs, want, limit in ROWS:
        if left() <= 5:
            rows.append({"name": name, "rc": None, "ok": False, "seconds": 0, "facts": "not run: budget spent"})
            continue
        if name == "texref_wrong" and texref_bound is False:
            rows.append({"name": name, "rc": None, "ok": True, "seconds": 0,
                         "facts": "not run: the driver refused module references (row texref)"})
            continue
        rc, res, err, secs = probe(name, pargs, min(limit, left()), out)
        if name == "texref":
            texref_bound = rc == 0
        ok = rc in want and (name != "texref_wrong" or rc == 1)
        if rc == 2 and name.startswith("texref"):     # a refusal counts only when the driver's
            ok = ok and any(call in err for call in DRIVER_CALLS)
        rows.append({"name": name, "rc": rc, "ok": ok, "seconds": round(secs, 1), "facts": facts(name, rc, res, err)})
    t0 = time.monotonic()
    if left() <= 5:
        rows.append({"name": "pytest_gpu", "rc": None, "ok": False, "seconds": 0, "facts": "not run: budget spent"})
        return _write(rows, out)
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-m", "gpu",
                            *GPU_TESTS], cwd=ROOT, capture_output=True, text=True, timeout=min(150, left()))
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = 124, f"timed out (the run's budget of {args.budget:.0f} s)"
    (out / "pytest_gpu.log").write_text(log)
    tail = [ln for ln in log.strip().splitlines() if ln.strip()]
    driver = [ln.strip() for ln in log.splitlines() if ln.strip().startswith("DRIVER ")]
    skipped = any("skipped" in ln for ln in tail[-1:])
    rows.append({"name": "pytest_gpu", "rc": rc, "ok": rc == 0 and not skipped,
                 "seconds": round(time.monotonic() - t0, 1),
                 "facts": (tail[-1] if tail else "") + (f"; {driver[0]}" if driver else "")})
    return _write(rows, out)


def _write(rows: list, out: Path) -> int:
    """results.jsonl and summary.md; the table printed last; 0 when every row is as expected."""
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
