"""The soundness bed of ``splice verify`` on the GPU: every memory mutant of
``bench/mutants_memory.py`` run as a real kernel next to its original, outputs compared bit for
bit, against the CPU verdict.

For each mutant: the CPU verdict (``splice verify`` of the spliced cut, as ``splice apply`` runs
it), the ground truth by construction, and the GPU outcome: the original run twice (A/A: a
kernel whose own outputs change run to run is *nondeterministic*, its mutant's comparison
meaningless) and the mutant once per seed, the output buffer, the scratch global buffer and the
surface array compared bit for bit.  A mutant is **unsound** when the GPU shows its outputs
differ and the CPU proved it equal; the last lines printed are the summary table, whose
``unsound`` and ``errors`` counts must be 0.

Before anything runs, every address each kernel forms is checked against the PTX ISA's
alignment rules and the bed's buffers (``bench/mutants_layout.py``); a mutant that fails is not
launched.  The modules are built in batches (every mutant's original and spliced kernel,
renamed, in one module per batch), compiled by ptxas in parallel, and each batch runs in its own
worker process: a kernel that faults (a misaligned address kills its CUDA context) or hangs
ends only its worker; the batch's remaining mutants go on in a fresh one, and the faulting
mutant is retried alone — if it faults alone its row is ``error`` with the fault.

Exit status 0 only when no mutant is unsound, none was refused by extract/apply or by the
layout check, and (on the GPU) every launched mutant has an outcome — above all every mutant the
CPU proved equal.

Usage (from the repository root; lark from the carried wheels on the H200):
    PYTHONPATH=/tmp/site:. python bench/verify_mutants.py            # H200: CPU + GPU, < 1 min
    python bench/verify_mutants.py --dry-run                          # no GPU: plan, verify, layout, ptxas
Results: $OUT/verify_mutants.json and $OUT/verify_mutants.md (OUT defaults to build/).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import selectors
import signal
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

import mutants_async as ma  # noqa: E402
import mutants_layout as ml  # noqa: E402
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


# --- the GPU side: one worker process per batch -----------------------------------------------
def _inputs(np, seed: int) -> tuple:
    """(input words, scratch global words, surface words) for one seed, on the host; the words
    that fill the wgmma operand region are small f16 pairs (no NaN/Inf masking a difference)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, mm.IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    halves = rng.uniform(-2, 2, 4096 // 2).astype(np.float16).view(np.uint32)
    words[8192 // 4:8192 // 4 + halves.size] = halves
    g = rng.integers(0, 2**32, mm.G_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    surf = rng.integers(0, 2**31, mm.SURF_ELEMS, dtype=np.uint64).astype(np.int32)
    return words, g, surf


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


def run_once(cp, np, fn, mut: dict, seed: int) -> bytes:
    """The bytes one launch leaves: output buffer, scratch buffer, surface array.  A mutant of
    the asynchronous proxy gets the tensor map over this launch's scratch buffer in its input."""
    words, g_host, surf = _inputs(np, seed)
    g = cp.asarray(g_host)
    if mut["tmap"]:
        tmap = np.frombuffer(ma.encode_tensor_map(int(g.data.ptr)), dtype=np.uint32)
        words[ma.TMAP_OFFSET // 4:ma.TMAP_OFFSET // 4 + tmap.size] = tmap
    d_words = cp.asarray(words)
    out = cp.zeros(mm.OUT_BYTES // 4, dtype=cp.uint32)
    img = Images(cp, surf)
    fn((1,), (mut["threads"],), (d_words, out, g, np.uint64(img.tex.ptr), np.uint64(img.surf.ptr)))
    cp.cuda.runtime.deviceSynchronize()
    return out.get().tobytes() + g.get().tobytes() + img.read(np).tobytes()


def compare(cp, np, mod, mut: dict, seeds) -> str:
    """'same' | 'differs' | 'nondeterministic' for one mutant: A/A of the original, then the
    mutant, per seed."""
    fo, fm = mod.get_function(mut["o"]), mod.get_function(mut["m"])
    verdicts = set()
    for seed in seeds:
        a, a2 = run_once(cp, np, fo, mut, seed), run_once(cp, np, fo, mut, seed)
        if a != a2:
            verdicts.add("nondeterministic")
            continue
        verdicts.add("differs" if run_once(cp, np, fm, mut, seed) != a else "same")
    return "differs" if "differs" in verdicts else ("nondeterministic" if "nondeterministic" in verdicts else "same")


def worker(job_path: str) -> int:
    """The worker process: one JSON line per mutant on stdout.  A CUDA error leaves the context
    unusable: the line says ``fault`` and the process ends at once (exit 3), so that no later
    mutant runs in the dead context; any other failure is that mutant's error, and the rest go on."""
    import cupy as cp
    import numpy as np

    job = json.loads(Path(job_path).read_text())
    mod = cp.RawModule(path=job["cubin"])
    for mut in job["mutants"]:
        try:
            line = {"id": mut["id"], "gpu": compare(cp, np, mod, mut, job["seeds"])}
        except Exception as exc:      # noqa: BLE001 — a launch's failure is this mutant's row
            line = {"id": mut["id"], "error": f"{type(exc).__name__}: {exc}"[:300],
                    "fault": type(exc).__name__.startswith("CUDA")}
        print(json.dumps(line), flush=True)
        if line.get("fault"):
            os._exit(3)               # no cleanup in a dead context (its unloads raise again)
    return 0


class Runner:
    """Starts one worker process for a list of mutants and reads its lines, killing it when a
    line is late (a hung kernel: a wait that never completes): ``first_s`` for the start (cupy,
    the context, the module), ``each_s`` per mutant after that."""

    def __init__(self, workdir: Path, command: list, first_s: float = 90.0, each_s: float = 30.0):
        self.workdir, self.command, self.first_s, self.each_s = workdir, command, first_s, each_s
        self._n = itertools.count()

    def __call__(self, cubin: str, mutants: list) -> tuple:
        """(lines, return code, 'timed out' or '', the end of stderr)."""
        n = next(self._n)
        job = self.workdir / f"job{n:04d}.json"
        job.write_text(json.dumps({"cubin": cubin, "seeds": list(SEEDS), "mutants": mutants}))
        with open(self.workdir / f"job{n:04d}.stderr", "w+") as err:
            proc = subprocess.Popen([*self.command, str(job)], stdout=subprocess.PIPE, stderr=err,
                                    start_new_session=True)
            lines, late = self._read(proc)
            if late:
                os.killpg(proc.pid, signal.SIGKILL)     # the worker and only it: its own session
            rc = proc.wait()
            err.seek(0)
            tail = err.read()[-1500:]
        return lines, rc, "timed out" if late else "", tail

    def _read(self, proc) -> tuple:
        lines, buf = [], b""
        deadline = time.monotonic() + self.first_s
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return lines, True
                if not sel.select(left):
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    return lines, False
                *done, buf = (buf + chunk).split(b"\n")
                for d in done:
                    try:
                        line = json.loads(d) if d.startswith(b"{") else None
                    except ValueError:
                        line = None           # not the protocol's: a library's own output
                    if isinstance(line, dict) and "id" in line:
                        lines.append(line)
                        deadline = time.monotonic() + self.each_s


def _why(lines: list, culprit: str, rc: int, late: str, tail: str) -> str:
    mine = [ln for ln in lines if ln["id"] == culprit]
    if mine:
        return mine[0]["error"]
    if late:
        return "no answer in time (a hung kernel?): the worker was killed"
    return f"the worker ended (exit {rc}) during this mutant: {tail.strip().splitlines()[-1] if tail.strip() else ''}"


def run_batch(cubin: str, mutants: list, runner) -> tuple:
    """Every mutant of one batch, isolated: ({id: outcome}, notes).  A fault or a hang ends the
    worker; the mutants after the culprit go on in a fresh worker, and the culprit is retried
    alone: its row is its outcome if it runs alone, else ``error: <the fault>``."""
    results: dict = {}
    suspects, notes = [], []
    todo = list(mutants)
    while todo:
        lines, rc, late, tail = runner(cubin, todo)
        for ln in lines:
            if not ln.get("fault"):
                results[ln["id"]] = ln["gpu"] if "gpu" in ln else f"error: {ln['error']}"
        k = next((i for i, m in enumerate(todo) if m["id"] not in results), None)
        if k is None:
            break
        culprit = todo[k]
        suspects.append((culprit, _why(lines, culprit["id"], rc, late, tail)))
        todo = todo[k + 1:]
    for culprit, why in suspects:
        lines, rc, late, tail = runner(cubin, [culprit])
        alone = [ln for ln in lines if ln["id"] == culprit["id"] and "gpu" in ln]
        if alone:
            results[culprit["id"]] = alone[0]["gpu"]
            notes.append(f"{culprit['id']}: {why} — in company only; alone it ran: {alone[0]['gpu']}")
        else:
            results[culprit["id"]] = f"error: {_why(lines, culprit['id'], rc, late, tail)}"
            notes.append(f"{culprit['id']}: {results[culprit['id']]}")
    return results, notes


def gpu_outcomes(built: list, planned: dict, workers: int = 4, runner=None) -> tuple:
    """({mutant id: 'same' | 'differs' | 'nondeterministic' | 'error: …'}, notes) of the mutants of
    ``planned`` (id -> Planned) that the GPU can run: the batches in parallel worker processes
    (``runner``: a ``Runner``; the default starts this script with ``--worker``)."""
    if runner is None and built:
        workdir = Path(built[0][0]).parent / "workers"
        workdir.mkdir(exist_ok=True)
        runner = Runner(workdir, [sys.executable, str(Path(__file__).resolve()), "--worker"])
    jobs = []
    for cubin, names in built:
        muts = [{"id": mid, "o": o, "m": m, "threads": planned[mid].mutant.threads, "tmap": planned[mid].mutant.tmap}
                for mid, o, m in names if mid in planned and planned[mid].mutant.gpu]
        if muts:
            jobs.append((str(cubin), muts))
    out: dict = {}
    notes: list = []
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for res, nts in pool.map(lambda j: run_batch(j[0], j[1], runner), jobs):
            out.update(res)
            notes += nts
    return out, notes


# --- the table ------------------------------------------------------------------------------------
OUTCOMES = ("same", "differs", "nondeterministic")


def rows(planned: list, gpu: dict, layout: dict) -> list:
    """One row per mutant; a mutant the layout check refused is never launched: its GPU outcome
    is that error."""
    out = []
    for p in planned:
        if not p.mutant.gpu:
            g = "cpu only"
        elif layout.get(p.mutant.id):
            g = f"error: layout: {layout[p.mutant.id][0]}"
        else:
            g = gpu.get(p.mutant.id, "not run")
        unsound = (p.verdict == "proved equal" and (g == "differs" or p.mutant.truth != "equal")) or \
            (p.verdict == "proved different" and (g == "same" and p.mutant.truth == "equal"))
        out.append({"id": p.mutant.id, "form": p.mutant.form, "scenario": p.mutant.scenario, "truth": p.mutant.truth,
                    "cpu": p.verdict or "refused", "exit": p.exit, "cpu_seconds": round(p.seconds, 4),
                    "reason": p.reason or p.error, "gpu": g, "unsound": unsound})
    return out


def _ids(rs: list) -> str:
    return f"{len(rs)} ({', '.join(r['id'] for r in rs) or 'none'})"


def failures(table: list, dry_run: bool) -> list:
    """What makes the run fail: unsound verdicts, mutants refused (by extract/apply or by the
    layout check), and on the GPU every launchable mutant without an outcome."""
    out = []
    for what, rs in (("unsound", [r for r in table if r["unsound"]]),
                     ("refused by extract/apply", [r for r in table if r["cpu"] == "refused"]),
                     ("refused by the layout check", [r for r in table if r["gpu"].startswith("error: layout")])):
        if rs:
            out.append(f"{what}: {_ids(rs)}")
    if not dry_run:
        lack = [r for r in table if r["gpu"] != "cpu only" and r["gpu"] not in OUTCOMES]
        equal = [r for r in lack if r["cpu"] == "proved equal"]
        if equal:
            out.append(f"proved equal by the CPU without a GPU outcome: {_ids(equal)}")
        if lack:
            out.append(f"no GPU outcome (error or not run): {_ids(lack)}")
    return out


def summary(table: list, dry_run: bool) -> str:
    c = Counter((r["truth"], r["cpu"], r["gpu"].split(":")[0]) for r in table)
    lines = ["| truth | CPU verdict | GPU outcome | mutants |", "|---|---|---|---|"]
    lines += [f"| {t} | {v} | {g} | {n} |" for (t, v, g), n in sorted(c.items())]
    forms = len({r["form"] for r in table})
    cpu_only = [r for r in table if r["gpu"] == "cpu only"]
    errors = [r for r in table if r["gpu"].startswith("error")]
    same = [r for r in table if r["truth"] == "different" and r["gpu"] == "same"]
    lines += ["", f"{len(table)} mutants over {forms} instruction forms; {len(table) - len(cpu_only)} for the GPU, "
              f"CPU only {_ids(cpu_only)}: multimem needs a multicast object",
              f"unsound: {_ids([r for r in table if r['unsound']])}",
              f"errors (expected 0): {_ids(errors)}",
              f"truth 'different' but the GPU saw the same bytes: {_ids(same)}"]
    bad = failures(table, dry_run)
    lines.append("FAILED: " + "; ".join(bad) if bad else "OK" + (" (dry run: no GPU outcomes)" if dry_run else ""))
    return "\n".join(lines)


def write(table: list, out_dir: Path, meta: dict) -> None:
    from splice.util import write_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "verify_mutants.json", json.dumps({**meta, "mutants": table}, indent=1) + "\n")
    md = ["| id | form | scenario | truth | CPU | exit | GPU |", "|---|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {r['form']} | {r['scenario']} | {r['truth']} | {r['cpu']} | {r['exit']} | {r['gpu']} |"
           for r in table]
    notes = [f"- {n}" for n in meta["worker_notes"]] or ["- none"]
    write_atomic(out_dir / "verify_mutants.md", "\n".join(md) + "\n\nWorkers ended by a fault or a hang, and the "
                 "retries alone:\n\n" + "\n".join(notes) + "\n\n" + summary(table, meta["dry_run"]) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true",
                    help="plan, verify, check the layout and ptxas every module; no GPU")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ptxas processes at once")
    ap.add_argument("--batches", type=int, default=16, help="modules the mutants are spread over")
    ap.add_argument("--workers", type=int, default=4, help="GPU worker processes at once")
    ap.add_argument("--out", default=os.environ.get("OUT", str(HERE.parent / "build")))
    ap.add_argument("--worker", metavar="JOB", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        planned = mm.plan_all(work / "plan")
        t1 = time.perf_counter()
        layout = {p.mutant.id: ml.check_planned(p) for p in planned if not p.error}
        built = ptxas_all(mm.batch_modules(planned, args.batches), work, max(1, args.jobs))
        t2 = time.perf_counter()
        launch = {p.mutant.id: p for p in planned if not p.error and not layout[p.mutant.id]}
        gpu, notes = ({}, []) if args.dry_run else gpu_outcomes(built, launch, args.workers)
        t3 = time.perf_counter()
    table = rows(planned, gpu, layout)
    seconds = {"plan_and_verify": round(t1 - t0, 2), "layout_and_ptxas": round(t2 - t1, 2), "gpu": round(t3 - t2, 2)}
    meta = {"dry_run": args.dry_run, "seconds": seconds, "seeds": list(SEEDS), "workers": args.workers,
            "layout_problems": {k: v for k, v in layout.items() if v}, "worker_notes": notes}
    write(table, Path(args.out), meta)
    print(f"plan+verify {t1 - t0:.1f} s, layout+ptxas {t2 - t1:.1f} s ({len(built)} modules), gpu {t3 - t2:.1f} s "
          f"({args.workers} workers); results in {args.out}/verify_mutants.md")
    for mid, problems in meta["layout_problems"].items():
        print(f"layout: {mid}: " + "; ".join(problems[:3]))
    for n in notes:
        print(f"worker: {n}")
    print(summary(table, args.dry_run))
    return 1 if failures(table, args.dry_run) else 0


if __name__ == "__main__":
    sys.exit(main())
