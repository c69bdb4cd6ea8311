"""GPU: the probe on kernels that are not the stand-ins -- a cluster kernel with 64 KiB of
dynamic shared memory and three kinds of .param, an R32F texture -> surface kernel, the corpus
GEMM and the Triton matmul with a correct and a deliberately wrong recipe, and a `probe init`
skeleton that runs once its sizes are filled in.  Skipped cleanly without cupy and a device."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tests/data/ptx/probe/launch_kit.ptx"
pytestmark = pytest.mark.gpu


def _device(spec_dict, tmp_path, entry):
    from splice.probe.language.entry import check, cluster_dims
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.language.document import parse_spec

    spec = parse_spec({"name": entry, "ptx": str(KIT), "entry": entry, **spec_dict}, str(tmp_path / "s.yaml"))
    decl = check(spec, KIT.read_text(), str(KIT))
    cp = import_cupy()
    dev = Device(spec, cp, cluster=cluster_dims(spec, decl))
    dev.load("main", compile_one(entry, KIT.read_text(), device_arch(cp), tmp_path).path)
    return spec, dev


def test_cluster_dynamic_shared_and_struct(tmp_path):
    spec, dev = _device({
        "launch": {"grid": [4], "block": [128], "shared": {"dynamic": 65536}},
        "params": [{"name": "out", "kind": "buffer", "dtype": "u32", "shape": [4, 128], "role": "output"},
                   {"name": "n", "kind": "scalar", "dtype": "u32", "value": 5},
                   {"name": "cfg", "kind": "struct", "size": 16, "align": 8, "fields": [
                       {"name": "a", "offset": 0, "kind": "scalar", "dtype": "u32", "value": 3},
                       {"name": "b", "offset": 8, "kind": "scalar", "dtype": "u32", "value": 7}]}]},
        tmp_path, "kit_cluster")
    assert dev.cluster == (2, 1, 1)
    out = dev.render("main")["out"].view(np.uint32).reshape(4, 128)
    blk, tid = np.meshgrid(np.arange(4), np.arange(128), indexing="ij")
    assert np.array_equal(out, ((blk % 2) << 24) + tid + 5 + 21)


def test_launch_sequence_and_default_stream(tmp_path):
    """Two launches per frame (the second overwrites the first's output), on the NULL stream."""
    spec, dev = _device({
        "launch": {"grid": [2], "block": [32], "shared": {"dynamic": 65536}, "stream": "default",
                   "sequence": [{"n": 100}, {"n": 5}]},
        "params": [{"name": "out", "kind": "buffer", "dtype": "u32", "shape": [2, 32], "role": "output"},
                   {"name": "n", "kind": "scalar", "dtype": "u32", "value": 0},
                   {"name": "cfg", "kind": "struct", "size": 16, "fields": [
                       {"name": "a", "offset": 0, "kind": "scalar", "dtype": "u32", "value": 1}]}]},
        tmp_path, "kit_cluster")
    out = dev.render("main")["out"].view(np.uint32).reshape(2, 32)
    assert len(dev.args) == 2 and np.array_equal(out, (np.arange(2)[:, None] << 24) + np.arange(32) + 5)


def test_r32f_texture_to_surface(tmp_path):
    spec, dev = _device({
        "launch": {"grid": [4], "block": [64]},
        "params": [{"name": "t", "kind": "texture", "width": 64, "height": 4, "format": "r32f",
                    "fill": {"rule": "arange", "start": 0.5, "step": 0.25}},
                   {"name": "s", "kind": "surface", "width": 64, "height": 4, "format": "r32f"}]},
        tmp_path, "tex_scale")
    got = dev.render("main")["s"]
    assert got.dtype == np.float32 and got.shape == (4, 64)
    assert np.array_equal(got, 2 * (0.5 + 0.25 * np.arange(256, dtype=np.float32)).reshape(4, 64))


def _probe(args, capsys):
    from splice.cli import main

    rc = main(["probe", *args, "--runs", "5", "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("recipe", ["recipes/gemm_f16f32_p1.yaml", "recipes/triton_matmul_p1.yaml"])
def test_correct_recipe_bit_identical(recipe, tmp_path, capsys):
    rc, r = _probe([str(ROOT / recipe), "--report-dir", str(tmp_path), "--harness"], capsys)
    assert rc == 0 and r["ok"] and r["identical"] and r["covered"], r["compare"]
    assert r["build_arch"].startswith("sm_9") and r["arch"] == "sm_80"
    assert r["harness"]["rows"][0]["equal"]
    assert r["timing"]["ratio"] > 0 and r["roofline"]["original"]["work"]["flops_source"] == "declared"


@pytest.mark.parametrize("recipe, out", [("tests/data/recipes/gemm_f16f32_p1_wrong.yaml", "C"),
                                         ("tests/data/recipes/triton_matmul_p1_wrong.yaml", "c")])
def test_wrong_recipe_caught(recipe, out, tmp_path, capsys):
    rc, r = _probe([str(ROOT / recipe), "--report-dir", str(tmp_path), "--stages", "all", "--harness"], capsys)
    assert rc == 1 and not r["ok"] and not r["identical"]
    c = r["compare"]["outputs"][out]
    assert c["elements_differ"] > 0 and c["first_index"] is not None and c["max_abs_err"] > 0
    assert Path(c["heatmap"]).read_bytes()[:4] == b"\x89PNG"
    assert r["harness"]["first_divergence"]["phase"] == 1
    assert r["stages"]["first_divergence"]["name"].startswith("cut 1")


def test_sm80_ptx_against_sm90_ptx(tmp_path, capsys):
    rc, r = _probe([str(ROOT / "probes/gemm_sm80.yaml"), str(ROOT / "corpus/gemm/gemm_sm90.ptx"),
                    "--report-dir", str(tmp_path)], capsys)
    assert r["covered"] and r["frames"]["original"]["deterministic"]
    assert rc == (0 if r["identical"] else 1)


def test_probe_init_skeleton_runs_after_sizes(tmp_path, capsys):
    from splice.cli import main

    ptx = ROOT / "corpus/triton/matmul_sm80.ptx"
    spec = tmp_path / "init.yaml"
    assert main(["probe", "init", str(ptx), "-o", str(spec)]) == 0
    capsys.readouterr()
    vals = iter([512, 512, 512, 512, 1, 512, 1, 512, 1])
    text = "\n".join(
        "  grid: [256]" if "grid: null" in ln else "    dynamic: 4096" if "dynamic: null" in ln
        else "  shape: [512, 512]" if "shape: null" in ln
        else ln.replace("value: null", f"value: {next(vals)}") if "value: null" in ln else ln
        for ln in spec.read_text().splitlines()) + "\n"
    spec.write_text(text)
    rc, r = _probe([str(spec), str(ptx), "--report-dir", str(tmp_path / "rep")], capsys)
    assert rc == 0 and r["ok"] and r["covered"]
