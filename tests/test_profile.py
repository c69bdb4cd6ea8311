"""Per-phase profile: boundaries, instrumented PTX (ptxas accepts it, frame code untouched),
the analysis of a stamp buffer; ncu output parsing; GPU end to end (gpu marker)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import pytest

from splice.analysis import Kernel
from splice.probe.instrument.ncu import parse_raw_csv, summarise
from splice.probe.instrument.profile import END, PTR, analyse, instrument, plan_profile
from splice.ptx import parse

ROOT = Path(__file__).resolve().parents[1]
SPEC = SimpleNamespace(block=(32, 1, 4), grid=(3, 2, 1), path="probe.yaml")


def _src():
    from tests.test_phases import SRC

    return SRC


def test_boundaries_in_statement_order():
    k = Kernel(parse(_src()))
    p = plan_profile(k, SPEC)
    assert [b.name for b in p.boundaries] == ["prologue", "phase 1", "E1", "phase 2", "E2", END]
    assert [b.index for b in p.boundaries] == [0, 1, 2, 3, 4, 5]
    assert p.n == 6 and p.warps == 4 * 6 and p.bytes == 24 * 6 * 8
    lines = [b.line for b in p.boundaries]
    assert lines == sorted(lines)


def test_instrument_keeps_the_module_text():
    src = _src()
    k = Kernel(parse(src))
    p = plan_profile(k, SPEC)
    out = instrument(src, p)
    assert f".global .align 8 .u64 {PTR};" in out
    assert out.count("%clock64") == len(p.boundaries)
    # removing the inserted blocks gives the module back, byte for byte
    kept = []
    skip = False
    for ln in out.splitlines(keepends=True):
        if "splice profile: boundary" in ln:
            skip = True
        if not skip and PTR not in ln and "splice probe: profile" not in ln:
            kept.append(ln)
        if skip and ln.strip() == "}":
            skip = False
    assert "".join(kept).replace("\n\n", "\n") == src.replace("\n\n", "\n")
    k2 = Kernel(parse(out))
    assert [len(ph.mma) for ph in k2.phases] == [len(ph.mma) for ph in k.phases]


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_instrumented_enc5_assembles():
    from splice.ptx.sass import compile_ptx

    k = Kernel.load(ROOT / "corpus" / "enc5.ptx")
    spec = SimpleNamespace(block=(32, 1, 4), grid=(120, 270, 1), path="enc5.yaml")
    p = plan_profile(k, spec)
    assert len(p.regions) == 1 + 61 + 61 and p.n == 124
    c = compile_ptx(instrument(k.module.source, p), "sm_90")
    assert c.resources[k.name].registers <= 255


def test_analyse_synthetic_stamps():
    k = Kernel(parse(_src()))
    p = plan_profile(k, SPEC)
    rng = np.random.default_rng(1)
    cyc = np.array([100, 400, 50, 300, 150])               # per region
    t = np.zeros((p.warps, p.n), dtype=np.uint64)
    start = rng.integers(1000, 5000, p.warps)
    t[:, 0] = start
    for r in range(5):
        t[:, r + 1] = t[:, r] + cyc[r] + rng.integers(0, 3, p.warps)
    t[3, 2] = 0                                              # warp 3 never stamped E1
    d = analyse(p, t.reshape(-1))
    med = [r["median_cycles"] for r in d["regions"]]
    assert med == pytest.approx([100, 400, 50, 300, 150], abs=3)
    assert d["regions"][2]["warps"] == p.warps - 1         # E1 not stamped by warp 3
    assert d["regions"][1]["warps"] == p.warps             # its phase 1 runs to phase 2
    assert d["agrees"] and d["parts_vs_whole"] < 0.02
    assert d["top"][:2] == ["phase 1", "phase 2"]
    assert sum(r["share"] for r in d["regions"]) == pytest.approx(1.0)


RAW = '''"ID","Kernel Name","launch__registers_per_thread","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warp_latency_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warp_latency_issue_stalled_math_pipe_throttle_per_issue_active.ratio","sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active","l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"
"","","register/thread","%","ratio","ratio","%","request"
"0","k","255","12.46","2.65","0.31","27.6","37,843,200"
'''


def test_ncu_raw_csv():
    raw = parse_raw_csv("==PROF== Connected\n" + RAW)
    s = summarise(raw)
    assert s["summary"]["registers per thread"] == 255
    assert s["summary"]["achieved occupancy %"] == pytest.approx(12.46)
    assert s["summary"]["local load requests"] == 37843200
    assert s["stalls"] == {"long_scoreboard": 2.65, "math_pipe_throttle": 0.31}
    assert s["pipes"] == {"tensor_op_hmma": 27.6}
    with pytest.raises(ValueError):
        parse_raw_csv("==PROF== nothing profiled\n")


def test_ncu_absent_is_a_message(monkeypatch):
    from splice.probe.instrument import ncu

    monkeypatch.setattr(ncu, "find_ncu", lambda: None)
    assert "not on PATH" in ncu.run(None, {})["error"]


@pytest.mark.gpu
def test_probe_profile_gpu(tmp_path, capsys):
    """``splice probe --profile``: every warp's stamps complete and agreeing, the frame rendered
    with the stamps equal to the plain one, and the chart written by the command (the run
    returns the data; rendering is the command's, so the test goes through the CLI)."""
    from splice.cli import main

    rc = main(["probe", str(ROOT / "recipes/enc5_p8.yaml"), "--runs", "10", "--warmup", "1", "--profile",
               "--report-dir", str(tmp_path), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert rc == 0, r.get("error")
    pr = r["profile"]["original"]
    assert pr["warps_complete"] == pr["warps"] and pr["agrees"]
    assert pr["frame_equal_plain"] and Path(pr["png"]).exists()


# ------------------------------------------------ profile.run on the fake device of the probe tests

def test_profile_run_on_a_fake_device(tmp_path):
    """The host side of --profile end to end on test_probe_device's fake cupy: the buffer pointer
    reaches the module's global, the stamps come back per warp, the instrumented frame is
    compared with the plain one, and the plain and stamped modules are timed with the A/A control."""
    import ctypes

    from splice.probe.run.device import Device, digest
    from splice.probe.instrument.profile import Boundary, Profiling, ProfilePlan, run
    from splice.report.plot_profile import profile_chart
    from splice.probe.language.document import load_spec
    from tests.test_probe_device import FakeCupy, _small_gemm, gemm_kernel

    class ProfCupy(FakeCupy):
        uint64 = np.uint64

        def __init__(self, behaviours):
            super().__init__(behaviours)
            self.globals = []
            self.cuda.runtime.memcpy = lambda dst, src, n, kind: ctypes.memmove(dst, src, n)
            self.cuda.runtime.memcpyHostToDevice = 1

        def RawModule(self, path):
            m = super().RawModule(path)
            g = np.zeros(1, np.uint64)
            self.globals.append(g)
            m.get_global = lambda name: SimpleNamespace(ptr=g.ctypes.data)
            return m

        def asnumpy(self, a):
            return a.a.copy()

    spec = load_spec(_small_gemm(tmp_path))            # grid 2x2, block 128: 16 warps
    bounds = [Boundary(0, "prologue", 1, False, 1, 9), Boundary(1, "phase 1", 10, False, 10, 12),
              Boundary(2, "E1", 13, False, 13, 20), Boundary(3, END, 21, False)]
    plan = ProfilePlan("k", bounds, warps_per_block=4, blocks=4)
    cycles = [100, 700, 200]

    def stamped(slot):
        def k(kp):
            gemm_kernel()(kp)
            ptr = int(cp.globals[slot][0])
            t = np.ctypeslib.as_array((ctypes.c_uint64 * (plan.warps * plan.n)).from_address(ptr))
            t = t.reshape(plan.warps, plan.n)
            t[:, 0] = 1000 + np.arange(plan.warps)
            for r, c in enumerate(cycles):
                t[:, r + 1] = t[:, r] + c
        return k

    cp = ProfCupy([gemm_kernel(), gemm_kernel(), stamped(2), stamped(3), gemm_kernel()])   # + the A/A control
    dev = Device(spec, cp)
    dev.load("original", "o.cubin")
    dev.load("spliced", "s.cubin")
    plain = {n: digest(dev.render(n)) for n in ("original", "spliced")}
    built = {f"profile:{s}": SimpleNamespace(path=f"p{s}.cubin", resources={}) for s in ("original", "spliced")}
    built["original"] = SimpleNamespace(path="o.cubin", resources={})     # the control loads it again
    res = run(Profiling({"original": plan, "spliced": plan}, []), dev, built, "k", 3, 1, plain)
    for side in ("original", "spliced"):
        d = res[side]
        assert [r["median_cycles"] for r in d["regions"]] == cycles
        assert d["whole_median_cycles"] == sum(cycles) and d["agrees"]
        assert d["frame_equal_plain"] and d["warps_complete"] == 16
        assert d["overhead"] == pytest.approx(0.0) and d["overhead_interval"] == pytest.approx([0.0, 0.0])
        assert d["top"][0] == "phase 1"
        assert profile_chart(d, side).startswith(b"\x89PNG\r\n")       # the command writes it
    assert res["timing"]["rounds"] == 3 and "control" in dev.modules
