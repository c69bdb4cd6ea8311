"""The soundness bed's own machinery (bench/mutants_layout.py, bench/verify_mutants.py): the
static check of every address a mutant kernel forms, the worker processes that keep one
faulting or hanging kernel from costing any other mutant its GPU check, and the table and exit
status that say so.  No GPU: the workers here are stand-ins with the real protocol."""
from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module(name)


mm, ma, ml, vm = (_bench(n) for n in ("mutants_memory", "mutants_async", "mutants_layout", "verify_mutants"))


def _problems(*cut: str, threads: int = 32) -> list:
    mut = mm.Mutant(id="t", form="f", scenario="s", truth="equal", cut=cut, edits=(), threads=threads,
                    prologue=ma.PROLOGUE)
    return ml.check(mm.kernel(mut), threads)


# --- the layout check -----------------------------------------------------------------------------
def test_the_faulting_form_of_2026_12_02_is_caught():
    """The v2 store / v4 load off smem+4T that faulted on the H200: lane 1's addresses are 12 and 4."""
    problems = _problems("st.shared.v2.u32 [%rd11+8], {%r10, %r11};",
                         "ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%rd11];")
    assert len(problems) == 2
    assert "thread 1 address smem+12 is not a multiple of 8" in problems[0]
    assert "thread 1 address smem+4 is not a multiple of 16" in problems[1]
    assert _problems("st.shared.v2.u32 [%rd12+8], {%r10, %r11};",
                     "ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%rd12];") == []


@pytest.mark.parametrize("cut, why", [
    (("st.global.v4.u32 [%rd14], {%r10, %r11, %r12, %r13};",), "not a multiple of 16"),
    (("st.shared.u64 [%rd10+68], %rd1;",), "not a multiple of 8"),
    (("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%rd11];",), "not a multiple of 16"),
    (("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd10+8], {%r10};",), "not a multiple of 16"),
    (("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}, "
      "[%rd10+16], 16;",), "not a multiple of 32"),
    (("wmma.load.c.sync.aligned.row.m16n16k16.shared.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd10], 12;",),
     "stride 12×4 bytes"),
    (("cp.async.cg.shared.global [%rd11], [%rd17], 16;",), "not a multiple of 16"),
    (("cp.async.ca.shared.global [%rd18], [%rd14], 8;",), "not a multiple of 8"),
    (("cp.async.bulk.global.shared::cta.bulk_group [%rd17+1024], [%rd12], 8;",), "not a multiple of 16"),
    (("cp.async.bulk.global.shared::cta.bulk_group [%rd14], [%rd12], 16;",), "not a multiple of 16"),
    (("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd24, {%r42}], [%rd12];",), "not a multiple of 128"),
    (("mbarrier.arrive.shared.b64 %rd30, [%rd10+3076];",), "not a multiple of 8"),
    (("ld.shared.u32 %r20, [%rd10+4096];",), "outside smem"),
    (("ld.local.u32 %r20, [%rd15+64];",), "outside lbuf"),
    (("ld.shared.u32 %r20, [%rd3];",), "through .shared"),
    (("ld.global.u64 %rd39, [%rd3];", "ld.global.u32 %r20, [%rd39];"), "not fixed by the bed's layout"),
    (("tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r20}, [%r10];",), "no alignment rule"),
    (("add.u32 %r36, %r2, 2;", "suld.b.1d.b32.trap {%r20}, [%rd5, {%r36}];"), "coordinate %r36"),
    (("add.u32 %r36, %r1, 256;", "tex.1d.v4.s32.s32 {%r20, %r21, %r22, %r23}, [%rd4, {%r36}];"), "coordinate %r36"),
])
def test_each_rule_refuses_what_it_must(cut, why):
    problems = _problems(*cut)
    assert len(problems) == 1 and why in problems[0], problems


def test_the_rules_accept_the_aligned_forms():
    assert _problems("ld.global.v4.u32 {%r20, %r21, %r22, %r23}, [%rd17];", "st.shared.u64 [%rd18], %rd1;",
                     "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r20, %r21, %r22, %r23}, [%rd12];",
                     "cp.async.cg.shared.global [%rd12], [%rd17], 16;",
                     "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd24, {%r42}], [%rd22];",
                     "atom.global.cas.b32 %r21, [%rd14], %r37, %r10;",
                     "suld.b.1d.b32.trap {%r20}, [%rd5, {%r2}];") == []


def test_a_warpgroup_has_128_threads_of_addresses():
    """Thread 127 of a wgmma kernel stores at smem+508: inside; one more word would not be."""
    assert _problems("st.shared.u32 [%rd11], %r10;", threads=128) == []
    assert "thread 127" in _problems("st.shared.u32 [%rd11+3588], %r10;", threads=128)[0]


# --- the workers ----------------------------------------------------------------------------------------
FAKE_WORKER = textwrap.dedent('''
    import json, os, signal, sys, time
    job = json.load(open(sys.argv[1]))
    for m in job["mutants"]:
        what = m["o"]
        if what == "fault":
            print(json.dumps({"id": m["id"], "error": "CUDARuntimeError: cudaErrorMisalignedAddress", "fault": True}),
                  flush=True)
            os._exit(3)
        if what == "hang":
            time.sleep(60)
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if what == "python":
            print(json.dumps({"id": m["id"], "error": "ImportError: no cuda-bindings", "fault": False}), flush=True)
            continue
        print(json.dumps({"id": m["id"], "gpu": what}), flush=True)
''')


def _muts(*kinds: str) -> list:
    return [{"id": f"m{i:03d}", "o": k, "m": "", "threads": 32, "tmap": False} for i, k in enumerate(kinds)]


@pytest.mark.slow
def test_a_fault_a_hang_and_a_crash_cost_no_other_mutant_its_outcome(tmp_path):
    """Real worker processes with the bench's protocol: the mutant after a fault, a hung kernel and
    a crash still runs (in a fresh worker); each culprit, retried alone, is an error naming why."""
    fake = tmp_path / "worker.py"
    fake.write_text(FAKE_WORKER)
    runner = vm.Runner(tmp_path, [sys.executable, str(fake)], first_s=5, each_s=1.5)
    muts = _muts("same", "fault", "differs", "hang", "same", "crash", "python", "nondeterministic")
    results, notes = vm.run_batch("unused.cubin", muts, runner)
    assert results == {"m000": "same", "m001": "error: CUDARuntimeError: cudaErrorMisalignedAddress", "m002": "differs",
                       "m003": "error: no answer in time (a hung kernel?): the worker was killed", "m004": "same",
                       "m005": results["m005"], "m006": "error: ImportError: no cuda-bindings",
                       "m007": "nondeterministic"}
    assert results["m005"].startswith("error: the worker ended (exit -11)")
    assert len(notes) == 3


def test_a_mutant_that_faults_only_in_company_keeps_its_outcome():
    """A fault blamed on a mutant that runs cleanly alone (the fault was not its own): its outcome
    stands, and the note says so."""
    calls = []

    def runner(cubin, mutants):
        calls.append([m["id"] for m in mutants])
        lines = []
        for m in mutants:
            if m["o"] == "flaky" and len(mutants) > 1:
                return lines + [{"id": m["id"], "error": "CUDADriverError: launch failed", "fault": True}], 3, "", ""
            lines.append({"id": m["id"], "gpu": "same"})
        return lines, 0, "", ""

    results, notes = vm.run_batch("b.cubin", _muts("same", "flaky", "same"), runner)
    assert results == {"m000": "same", "m001": "same", "m002": "same"}
    assert calls == [["m000", "m001", "m002"], ["m002"], ["m001"]]
    assert "in company only" in notes[0]


# --- the table and the exit status -------------------------------------------------------------------
def _planned(mid, truth, verdict, gpu=True):
    mut = mm.Mutant(id=mid, form="st.shared", scenario="s", truth=truth, cut=(), edits=(), gpu=gpu)
    return mm.Planned(mut, "", verdict=verdict)


def test_an_equal_proof_without_a_gpu_outcome_fails_the_run():
    ps = [_planned("m001", "equal", "proved equal"), _planned("m002", "different", "not proven"),
          _planned("m003", "racy", "not proven", gpu=False)]
    table = vm.rows(ps, {"m001": "error: CUDARuntimeError: cudaErrorMisalignedAddress", "m002": "same"}, {})
    bad = vm.failures(table, dry_run=False)
    assert bad == ["proved equal by the CPU without a GPU outcome: 1 (m001)",
                   "no GPU outcome (error or not run): 1 (m001)"]
    text = vm.summary(table, dry_run=False)
    assert "errors (expected 0): 1 (m001)" in text
    assert "truth 'different' but the GPU saw the same bytes: 1 (m002)" in text
    assert "| equal | proved equal | error | 1 |" in text and text.splitlines()[-1].startswith("FAILED")
    assert vm.failures(vm.rows(ps, {"m001": "same", "m002": "differs"}, {}), dry_run=False) == []


def test_a_mutant_the_layout_check_refuses_is_not_launched():
    ps = [_planned("m001", "equal", "proved equal")]
    table = vm.rows(ps, {"m001": "same"}, {"m001": ["original line 9: ld.shared.v4.u32 [%rd11]: thread 1 …"]})
    assert table[0]["gpu"].startswith("error: layout: original line 9")
    assert vm.failures(table, dry_run=True) == ["refused by the layout check: 1 (m001)"]


def test_the_worker_reports_a_cuda_error_as_a_fault(tmp_path, monkeypatch, capsys):
    """The real worker function, with cupy stood in: a CUDA error class ends the process (exit 3)
    after its line; any other exception is that mutant's error and the next one runs."""
    class CUDARuntimeError(Exception):
        pass

    class FakeCupy:
        class RawModule:
            def __init__(self, path):
                self.path = path

    outcomes = {"m000": ValueError("no tensor map"), "m001": "same", "m002": CUDARuntimeError("misaligned address")}

    def compare(cp, np, mod, mut, seeds):
        out = outcomes[mut["id"]]
        if isinstance(out, Exception):
            raise out
        return out

    monkeypatch.setitem(sys.modules, "cupy", FakeCupy)
    monkeypatch.setattr(vm, "compare", compare)
    monkeypatch.setattr(vm.os, "_exit", lambda code: (_ for _ in ()).throw(SystemExit(code)))
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"cubin": "x.cubin", "seeds": [1], "mutants": _muts("a", "b", "c", "d")}))
    with pytest.raises(SystemExit) as ended:
        vm.worker(str(job))
    lines = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert ended.value.code == 3
    assert [ln["id"] for ln in lines] == ["m000", "m001", "m002"]
    assert lines[0]["fault"] is False and lines[1]["gpu"] == "same" and lines[2]["fault"] is True
