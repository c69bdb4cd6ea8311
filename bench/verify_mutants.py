"""The soundness bed of ``splice verify`` on the GPU: every memory mutant of
``bench/mutants_memory.py`` run as a real kernel next to its original, outputs compared bit for
bit, against the CPU verdict.

For each mutant: the CPU verdict (``splice verify`` of the spliced cut, as ``splice apply`` runs
it), the ground truth by construction, and the GPU outcome: the original run twice (A/A: a
kernel whose own outputs change run to run is *nondeterministic*, its mutant's comparison
meaningless) and the mutant once per seed, the output buffer, the scratch global buffer and the
surface array compared bit for bit.  A mutant is **unsound** when the GPU shows its outputs
differ and the CPU proved it equal; the last line printed is the summary table, whose
``unsound`` count must be 0.

The modules are built in few batches (every mutant's original and spliced kernel, renamed,
in one module per batch), compiled by ptxas in parallel, loaded with cupy.

Usage (from the repository root; lark from the carried wheels on the H200):
    PYTHONPATH=/tmp/site:. python bench/verify_mutants.py            # H200: CPU + GPU, ~1 min
    python bench/verify_mutants.py --dry-run                          # no GPU: plan, verify, ptxas
Results: $OUT/verify_mutants.json and $OUT/verify_mutants.md (OUT defaults to build/).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import mutants_memory as mm  # noqa: E402

SEEDS = (1, 2)


def ptxas_all(modules: list, workdir: Path, jobs: int) -> list:
    """Compile every batch module with ptxas in parallel: [(cubin path, names)]; a module ptxas
    refuses ends the run, naming it."""
    from splice.ptx.sass import find_tool

    ptxas = find_tool("ptxas")
    if ptxas is None:
        sys.exit("ptxas is not on PATH (nor in SPLICE_PTXAS or the nvidia wheels)")

    def one(i):
        text, names = modules[i]
        arch = "sm_100a" if ".target sm_100a" in text else "sm_90a"
        src, cubin = workdir / f"batch{i:02d}.ptx", workdir / f"batch{i:02d}.cubin"
        src.write_text(text)
        r = subprocess.run([ptxas, f"-arch={arch}", "-o", str(cubin), str(src)], capture_output=True, text=True)
        return i, r.returncode, r.stderr.strip(), cubin, names

    out = []
    with ThreadPoolExecutor(jobs) as pool:
        for i, rc, err, cubin, names in pool.map(one, range(len(modules))):
            if rc != 0:
                sys.exit(f"ptxas refused {workdir / f'batch{i:02d}.ptx'}:\n{err[:2000]}")
            out.append((cubin, names))
    return out


# --- the GPU side -------------------------------------------------------------------------------
def _inputs(cp, np, seed: int) -> tuple:
    """(input words, scratch global words, surface words) for one seed; the words that fill the
    wgmma operand region are small f16 pairs (no NaN/Inf masking a difference)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, mm.IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    halves = rng.uniform(-2, 2, 4096 // 2).astype(np.float16).view(np.uint32)
    words[8192 // 4:8192 // 4 + halves.size] = halves
    g = rng.integers(0, 2**32, mm.G_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    surf = rng.integers(0, 2**31, mm.SURF_ELEMS, dtype=np.uint64).astype(np.int32)
    return cp.asarray(words), g, surf


class Images:
    """One CUDA array seen as a texture and as a surface (tex, suld, sust mutants)."""

    def __init__(self, cp, surf_words):
        from cupy.cuda import runtime, texture

        ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindSigned)
        self.arr = texture.CUDAarray(ch, mm.SURF_ELEMS, 0, 0, runtime.cudaArraySurfaceLoadStore)
        self.arr.copy_from(surf_words)
        res = texture.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=self.arr)
        tex = texture.TextureDescriptor((runtime.cudaAddressModeClamp,), runtime.cudaFilterModePoint,
                                        runtime.cudaReadModeElementType)
        self.tex = texture.TextureObject(res, tex)
        self.surf = texture.SurfaceObject(res)

    def read(self, np):
        host = np.zeros(mm.SURF_ELEMS, dtype=np.int32)
        self.arr.copy_to(host)
        return host


def run_once(cp, np, fn, threads: int, seed: int):
    """The bytes one launch leaves: output buffer, scratch buffer, surface array."""
    words, g_host, surf = _inputs(cp, np, seed)
    out = cp.zeros(mm.OUT_BYTES // 4, dtype=cp.uint32)
    g = cp.asarray(g_host)
    img = Images(cp, surf)
    fn((1,), (threads,), (words, out, g, np.uint64(img.tex.ptr), np.uint64(img.surf.ptr)))
    cp.cuda.runtime.deviceSynchronize()
    return out.get().tobytes() + g.get().tobytes() + img.read(np).tobytes()


def gpu_outcomes(built: list, planned: dict) -> dict:
    """mutant id -> 'same' | 'differs' | 'nondeterministic' | 'error: …'."""
    import cupy as cp
    import numpy as np

    out = {}
    for cubin, names in built:
        mod = cp.RawModule(path=str(cubin))
        for mid, o, m in names:
            p = planned[mid]
            if not p.mutant.gpu:
                continue
            try:
                fo, fm = mod.get_function(o), mod.get_function(m)
                verdicts = set()
                for seed in SEEDS:
                    a, a2 = run_once(cp, np, fo, p.mutant.threads, seed), run_once(cp, np, fo, p.mutant.threads, seed)
                    if a != a2:
                        verdicts.add("nondeterministic")
                        continue
                    verdicts.add("differs" if run_once(cp, np, fm, p.mutant.threads, seed) != a else "same")
                out[mid] = "differs" if "differs" in verdicts else ("nondeterministic" if "nondeterministic" in verdicts else "same")
            except Exception as exc:      # noqa: BLE001 — one launch's failure is a row, not the end of the table
                out[mid] = f"error: {type(exc).__name__}: {str(exc)[:120]}"
    return out


# --- the table ------------------------------------------------------------------------------------
def rows(planned: list, gpu: dict) -> list:
    out = []
    for p in planned:
        g = gpu.get(p.mutant.id, "cpu only" if not p.mutant.gpu else "not run")
        unsound = (p.verdict == "proved equal" and (g == "differs" or p.mutant.truth != "equal")) or \
            (p.verdict == "proved different" and (g == "same" and p.mutant.truth == "equal"))
        out.append({"id": p.mutant.id, "form": p.mutant.form, "scenario": p.mutant.scenario, "truth": p.mutant.truth,
                    "cpu": p.verdict or "refused", "exit": p.exit, "cpu_seconds": round(p.seconds, 4),
                    "reason": p.reason or p.error, "gpu": g, "unsound": unsound})
    return out


def summary(table: list) -> str:
    c = Counter((r["truth"], r["cpu"], r["gpu"].split(":")[0]) for r in table)
    lines = ["| truth | CPU verdict | GPU outcome | mutants |", "|---|---|---|---|"]
    lines += [f"| {t} | {v} | {g} | {n} |" for (t, v, g), n in sorted(c.items())]
    forms = len({r["form"] for r in table})
    bad = [r for r in table if r["unsound"]]
    gt = [r for r in table if r["truth"] == "different" and r["gpu"] == "same"]
    lines.append(f"\n{len(table)} mutants over {forms} instruction forms; unsound: {len(bad)} "
                 f"({', '.join(r['id'] for r in bad) or 'none'}); truth 'different' but the GPU saw the same "
                 f"bytes: {len(gt)} ({', '.join(r['id'] for r in gt) or 'none'})")
    return "\n".join(lines)


def write(table: list, out_dir: Path, meta: dict) -> None:
    from splice.util import write_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "verify_mutants.json", json.dumps({**meta, "mutants": table}, indent=1) + "\n")
    md = ["| id | form | scenario | truth | CPU | exit | GPU |", "|---|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {r['form']} | {r['scenario']} | {r['truth']} | {r['cpu']} | {r['exit']} | {r['gpu']} |"
           for r in table]
    write_atomic(out_dir / "verify_mutants.md", "\n".join(md) + "\n\n" + summary(table) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="plan, verify and ptxas every module; no GPU")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ptxas processes at once")
    ap.add_argument("--batches", type=int, default=16, help="modules the mutants are spread over")
    ap.add_argument("--out", default=os.environ.get("OUT", str(HERE.parent / "build")))
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        planned = mm.plan_all(work / "plan")
        t1 = time.perf_counter()
        built = ptxas_all(mm.batch_modules(planned, args.batches), work, max(1, args.jobs))
        t2 = time.perf_counter()
        gpu = {} if args.dry_run else gpu_outcomes(built, {p.mutant.id: p for p in planned})
        t3 = time.perf_counter()
    table = rows(planned, gpu)
    meta = {"dry_run": args.dry_run, "seconds": {"plan_and_verify": round(t1 - t0, 2), "ptxas": round(t2 - t1, 2),
                                                  "gpu": round(t3 - t2, 2)}, "seeds": list(SEEDS)}
    write(table, Path(args.out), meta)
    print(f"plan+verify {t1 - t0:.1f} s, ptxas {t2 - t1:.1f} s ({len(built)} modules), gpu {t3 - t2:.1f} s; "
          f"results in {args.out}/verify_mutants.md")
    print(summary(table))
    refused = [p for p in planned if p.error]
    return 1 if any(r["unsound"] for r in table) or refused else 0


if __name__ == "__main__":
    sys.exit(main())
