"""GPU: the timing method on a real device (needs cupy + a CUDA device; skipped cleanly without).
Short versions of bench/timing_h200.py's checks: an identity splice of the ~23 us Triton matmul is
indistinguishable from the original warm and cold, the 64-link chain variant is slower, the device
state is read, and the probe CLI writes the timing keys and PNG."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu


def _probe(recipe, tmp_path, **timing):
    from splice.probe.modules import resolve
    from splice.probe.session import ProbeOptions, run_probe
    from splice.probe.timing import TimingOptions

    opt = ProbeOptions(runs=300, warmup=3, report_dir=tmp_path, roofline=False,
                       timing=TimingOptions(budget_s=6.0, **timing))
    return run_probe(resolve(str(ROOT / recipe)), opt).result


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_an_identity_splice_of_a_short_kernel_is_indistinguishable(tmp_path, cache):
    r = _probe("recipes/timing/triton_matmul_p1_identity.yaml", tmp_path, cache=cache)
    tm = r["timing"]
    assert r["identical"] and tm["method"]["cache"] == cache and tm["method"]["batch"] > 10
    assert abs(tm["ratio"] - 1.0) < 0.01 and tm["interval"][0] <= 1.0 <= tm["interval"][1]
    assert tm["verdict"] in ("indistinguishable", "withheld")
    assert tm["control_frame_equal"] is True and tm["late_kept"] == 0


def test_a_redundant_dependent_chain_is_slower(tmp_path):
    r = _probe("recipes/timing/triton_matmul_p1_chain64.yaml", tmp_path)
    assert r["identical"] and r["timing"]["verdict"] in ("slower", "withheld")
    assert r["timing"]["interval"][0] > 1.0


def test_the_device_state_is_read_when_pynvml_is_there(tmp_path):
    pytest.importorskip("pynvml")
    r = _probe("recipes/timing/triton_matmul_p1_identity.yaml", tmp_path)
    d = r["timing"]["device"]
    assert d["state"] == "known" and d["before"]["sm_clock_mhz"] and d["polls"] == r["timing"]["rounds"]


def test_cli_json_keys_and_png(tmp_path, capsys):
    from splice.cli import main

    rc = main(["probe", str(ROOT / "recipes/timing/triton_matmul_p1_identity.yaml"), "--time-budget", "4",
               "--json", "--report-dir", str(tmp_path)])
    tm = json.loads(capsys.readouterr().out)["timing"]
    assert rc == 0
    for k in ("ratio", "interval", "verdict", "aa", "ratios", "method", "rounds", "stopped", "device", "orders",
              "original", "control", "spliced", "png"):
        assert k in tm, k
    assert Path(tm["png"]).read_bytes()[:4] == b"\x89PNG"
