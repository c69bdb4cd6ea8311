"""GPU: `splice probe` end to end (needs cupy + a CUDA device; skipped cleanly without).

The proof runs live in bench/probe_h200.py and docs/results/probe-h200.md; these are the same
checks, shorter: the inline recipe is byte-identical with all stages equal and the harness
equal; the wrong recipe is caught by the frame, the stages (cut 1 = phase 8 first) and the
harness (4 of 48 live-outs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu


def _run(recipe, tmp_path, **kw):
    from splice.probe.modules import resolve
    from splice.probe.session import ProbeOptions, run_probe

    opt = ProbeOptions(runs=5, warmup=1, report_dir=tmp_path, **kw)
    return run_probe(resolve(str(ROOT / recipe)), opt).result


def test_inline_recipe_identical(tmp_path):
    r = _run("recipes/enc5_p8.yaml", tmp_path, stages="cut", harness=True, graph=True)
    assert r["ok"] and r["identical"] and r["covered"]
    assert r["frames"]["original"]["sha256"][0] == r["frames"]["spliced"]["sha256"][0]
    assert r["stages"]["first_divergence"] is None
    assert all(r["stages"]["instrumented_frames_equal_plain"].values())
    assert r["harness"]["rows"][0]["equal"]
    tm = r["timing"]
    assert tm["method"]["launch"] == "graph" and tm["control"]["events"]["runs"] == tm["rounds"]
    assert tm["ratio"] < 1.05 and tm["verdict"] in ("faster", "slower", "indistinguishable", "withheld")


def test_wrong_recipe_caught(tmp_path):
    from splice.commands.probe import write_maps
    from splice.probe.modules import resolve
    from splice.probe.session import ProbeOptions, run_probe

    run = run_probe(resolve(str(ROOT / "tests/data/recipes/enc5_p8_wrong.yaml")),
                    ProbeOptions(runs=5, warmup=1, stages="all", harness=True))
    r = run.result
    assert not r["ok"] and not r["identical"]
    assert r["compare"]["pixels_differ"] > 0 and r["compare"]["first_xy"] is not None
    assert Path(write_maps(run.maps, tmp_path, "enc5")["frame"]).exists()
    assert r["stages"]["first_divergence"]["name"] == "cut 1 (phase 8)"
    h = r["harness"]["first_divergence"]
    assert h["phase"] == 8 and r["harness"]["rows"][0]["live_outs_differ"] == 4


def test_cli_json(tmp_path, capsys):
    from splice.cli import main

    rc = main(["probe", str(ROOT / "recipes/dec1_p8.yaml"), "--runs", "5", "--json",
               "--report-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"] and out["timing"]["original"]["events"]["runs"] == 5
    assert (tmp_path / "probe.json").exists()


def test_bound_harness_e61_equal_and_writes_the_frame(tmp_path):
    """E61 in the bound harness: the entry's parameters are the spec's, the texture is sampled
    and the frame surface written; both sides write the same pixels."""
    r = _run("recipes/enc5_e61.yaml", tmp_path, harness=True)
    (row,) = r["harness"]["rows"]
    assert row["equal"] and row["memory"]["frame"]["bytes_written"] > 0
    assert row["memory"]["frame"]["identical"]


def test_bound_harness_catches_a_wrong_texture_tap(tmp_path):
    r = _run("tests/data/recipes/enc5_e61_wrong_tap.yaml", tmp_path, stages="cut", harness=True)
    (row,) = r["harness"]["rows"]
    assert row["equal"] is False and row["first"]["output"] == "frame"
    assert r["stages"]["first_divergence"]["name"] == "memory written by cut 1 (E61 s10618-s10859)"


def test_bound_harness_compares_the_arena_e60_writes(tmp_path):
    r = _run("tests/data/recipes/enc5_e60_identity.yaml", tmp_path, harness=True)
    (row,) = r["harness"]["rows"]
    assert row["equal"] and row["memory"]["arena"]["bytes_written"] > 0


def test_bound_harness_on_the_gemm_epilogue(tmp_path):
    """An unseen-kernel shape: the corpus GEMM's E1 (loop back edge + C stores), replayed index
    arithmetic; identity equal with C written, the swapped-columns mutant caught on c."""
    ok = _run("tests/data/recipes/gemm_e1_identity.yaml", tmp_path, harness=True)
    (row,) = ok["harness"]["rows"]
    assert row["equal"] and row["memory"]["C"]["bytes_written"] > 0
    bad = _run("tests/data/recipes/gemm_e1_wrong_swap.yaml", tmp_path, harness=True)
    (row,) = bad["harness"]["rows"]
    assert row["equal"] is False and row["first"]["output"] == "C"


def test_bound_harness_runs_every_launch_of_a_sequence(tmp_path):
    """A frame of two launches (K = 512, then K = 1024 over the same C): the bound harness runs
    the GEMM's E1 once per launch with that launch's arguments; identity equal on both, the
    swapped-columns mutant caught."""
    from dataclasses import replace

    from splice.probe.modules import resolve
    from splice.probe.session import ProbeOptions, run_probe

    spec = tmp_path / "gemm_seq.yaml"
    spec.write_text((ROOT / "probes/gemm_sm80.yaml").read_text()
                    .replace("ptx: corpus/", f"ptx: {ROOT}/corpus/")
                    .replace("  block: [128]\n", "  block: [128]\n  sequence: [{K: 512}, {K: 1024}]\n"))
    opt = ProbeOptions(runs=3, warmup=1, report_dir=tmp_path, harness=True)
    for recipe, equal in (("tests/data/recipes/gemm_e1_identity.yaml", True),
                          ("tests/data/recipes/gemm_e1_wrong_swap.yaml", False)):
        r = run_probe(replace(resolve(str(ROOT / recipe)), spec_path=spec), opt).result
        (row,) = r["harness"]["rows"]
        assert row["launches"] == 2 and row["equal"] is equal, row
        if equal:
            assert row["memory"]["C"]["bytes_written"] > 0
        else:
            assert row["first"]["output"] == "C"
