"""GPU: pointer tables and module globals probed for real (tests/data/ptx/probe/tables.cu, built
with nvcc -ptx; tables_wrong.ptx is a deliberately wrong "splice" of it).

* table_sum sums through a ``const float* const*`` table of 3 inputs and writes through a
  ``float* const*`` table of 3 outputs: probed against itself every output is bit-identical,
  against the wrong module exactly ``dsts_1`` (the second pointed-to output) differs.
* globals_only has no parameter: ``__device__`` g_in and ``__constant__`` c_scale in,
  ``__device__`` g_out out (poisoned, then compared); the wrong module reads the wrong scale.
* lut_count reads a ``__constant__`` table the spec fills, an initialised ``__device__`` table
  kept as the module has it (``fill: module``) and bumps a ``__device__`` counter (compared,
  role inout by default): against itself identical, against the wrong module (counter + 2)
  exactly ``counter`` differs.

Each assertion message prints the probe's own comparison, so a failure says which output
differed and how.  Skipped cleanly without cupy and a device."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests/data/probe"
PTX = ROOT / "tests/data/ptx/probe/tables.ptx"
WRONG = ROOT / "tests/data/ptx/probe/tables_wrong.ptx"
pytestmark = pytest.mark.gpu


def _probe(spec, module, tmp_path, capsys):
    from splice.cli import main

    rc = main(["probe", str(spec), str(module), "--runs", "3", "--report-dir", str(tmp_path), "--json"])
    r = json.loads(capsys.readouterr().out)
    return rc, r, _differing(r)


def _differing(r) -> dict:
    """{output: 'elements_differ/elements, first index'} of the outputs that differ."""
    return {k: f"{v.get('elements_differ')}/{v.get('elements')} differ, first at {v.get('first_index')}"
            for k, v in r["compare"]["outputs"].items() if not v["identical"]}


def test_table_sum_against_itself_is_identical(tmp_path, capsys):
    rc, r, diff = _probe(DATA / "tables_sum.yaml", PTX, tmp_path, capsys)
    assert rc == 0 and r["ok"] and r["identical"] and r["covered"], f"differing outputs: {diff}; {r['frames']}"
    assert set(r["compare"]["outputs"]) == {"out", "dsts_0", "dsts_1", "dsts_2"}, r["compare"]["outputs"].keys()


def test_table_sum_wrong_splice_names_the_pointed_to_output(tmp_path, capsys):
    rc, r, diff = _probe(DATA / "tables_sum.yaml", WRONG, tmp_path, capsys)
    assert rc == 1 and not r["identical"], f"the wrong module was not caught: {r['compare']}"
    assert list(diff) == ["dsts_1"], f"expected only dsts_1 (table entry 1) to differ, got: {diff}"
    c = r["compare"]["outputs"]["dsts_1"]
    assert c["elements_differ"] == 256 and c["max_abs_err"] == pytest.approx(1.0, abs=1e-4), c


def test_table_sum_values(tmp_path):
    """The kernel really followed the table's addresses: its outputs are the sums of the entries."""
    dev, spec = _device(DATA / "tables_sum.yaml", tmp_path)
    out = dev.render("main")
    src = [dev.views[f"src_{i}"].get().view(np.float32)[:256] for i in range(3)]
    want = np.float32(0)
    for k in range(3):          # the kernel's order of fma: (((0 + s0*1) + s1*2) + s2*3)
        want = np.float32(want + src[k] * np.float32(k + 1))
    got = out["out"].view(np.float32)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), f"out: max |diff| {np.abs(got - want).max()}"
    for k in range(3):
        d = out[f"dsts_{k}"].view(np.float32)
        err = np.abs(d - src[k] - got).max()
        assert np.allclose(d, src[k] + got, rtol=1e-6, atol=1e-6), f"dsts_{k}: max |diff| {err}"


def test_lut_count_against_itself_is_identical(tmp_path, capsys):
    rc, r, diff = _probe(DATA / "tables_lut.yaml", PTX, tmp_path, capsys)
    assert rc == 0 and r["ok"] and r["identical"], f"differing outputs: {diff}; {r['frames']}"
    assert set(r["compare"]["outputs"]) == {"out", "counter"}, r["compare"]["outputs"].keys()


def test_lut_count_wrong_splice_names_the_counter(tmp_path, capsys):
    rc, r, diff = _probe(DATA / "tables_lut.yaml", WRONG, tmp_path, capsys)
    assert rc == 1 and not r["identical"], f"the wrong module was not caught: {r['compare']}"
    assert list(diff) == ["counter"], f"expected only the __device__ counter to differ, got: {diff}"


def test_lut_count_globals_set_and_read_back(tmp_path):
    """lut from the spec's fill, gains as the module initialised it, the counter reset to its
    fill (5) before every render: out = lut[idx & 15] * gains[idx & 3], counter = 5 + #(out > 0)."""
    dev, spec = _device(DATA / "tables_lut.yaml", tmp_path)
    for _ in range(2):                      # the second render starts from 5 again, not from the first's count
        out = dev.render("main")
        lut = dev.bound["main"]["lut"][0].get().view(np.float32)
        gains = dev.bound["main"]["gains"][0].get().view(np.float32)
        assert list(gains) == [1.0, 2.0, 0.5, 4.0], f"gains (fill: module): {gains}"
        assert lut.min() < 0 < lut.max(), f"lut (seeded uniform [-1, 1]): {lut}"
        k = dev.views["idx"].get().view(np.int32)[:256] & 15
        want = lut[k] * gains[k & 3]
        got = out["out"].view(np.float32)
        assert np.array_equal(got, want), f"out: {int((got != want).sum())} elements differ"
        count = int(out["counter"].view(np.uint32)[0])
        assert count == 5 + int((want > 0).sum()), f"counter {count}, expected 5 + {int((want > 0).sum())}"


def test_globals_only_against_itself_and_wrong(tmp_path, capsys):
    """An entry without parameters (params: []): g_out, a __device__ array, is the only output."""
    rc, r, diff = _probe(DATA / "tables_globals_only.yaml", PTX, tmp_path / "same", capsys)
    assert rc == 0 and r["identical"] and r["covered"], f"differing outputs: {diff}; {r['frames']}"
    assert list(r["compare"]["outputs"]) == ["g_out"], r["compare"]["outputs"].keys()
    rc, r, diff = _probe(DATA / "tables_globals_only.yaml", WRONG, tmp_path / "wrong", capsys)
    assert rc == 1 and list(diff) == ["g_out"], f"expected only g_out to differ, got: {diff}"


def test_init_skeleton_of_lut_count_runs(tmp_path, capsys):
    """`splice probe init` of lut_count, its nulls filled in, probes the wrong module and names
    the counter (the globals section came from def-use: lut input, gains module, counter inout)."""
    from splice.cli import main

    spec = tmp_path / "init.yaml"
    assert main(["probe", "init", str(PTX), "--entry", "lut_count", "-o", str(spec)]) == 0
    capsys.readouterr()
    shapes = iter(["[256]", "[256]"])
    text = "\n".join(
        "  grid: [4]" if "grid: null" in ln else "  block: [64]" if "block: null" in ln
        else ln.replace("shape: null", f"shape: {next(shapes)}") if "shape: null" in ln
        else ln.replace("value: null", "value: 256") if "value: null" in ln else ln
        for ln in spec.read_text().splitlines()) + "\n"
    spec.write_text(text)
    rc, r, diff = _probe(spec, PTX, tmp_path / "same", capsys)
    assert rc == 0 and r["identical"], f"init skeleton vs itself: {diff}"
    rc, r, diff = _probe(spec, WRONG, tmp_path / "wrong", capsys)
    assert rc == 1 and list(diff) == ["counter"], f"init skeleton vs wrong: {diff}"


def _device(spec_path, tmp_path):
    from splice.probe.language.entry import check
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.language.document import load_spec

    spec = load_spec(spec_path)
    check(spec, PTX.read_text(), str(PTX))
    cp = import_cupy()
    dev = Device(spec, cp)
    dev.load("main", compile_one(spec.entry, PTX.read_text(), device_arch(cp), tmp_path).path)
    return dev, spec
