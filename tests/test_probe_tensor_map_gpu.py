"""GPU: the TMA + wgmma GEMM of corpus/tma probed through its tensor maps (kind: tensor_map,
encoded by libcuda through splice.probe.kinds.tma_encoding).  The kernel computes A x B^T from the maps'
tensors; the correct wgmma phase cut is bit-identical, the wrong one (k-step 1 reading A's
k-slice 0) is caught, C named and the cut named by the debug stages."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu


def _run(recipe, **kw):
    from splice.probe.run.modules import resolve
    from splice.probe.run.session import ProbeOptions, run_probe

    return run_probe(resolve(str(ROOT / recipe)), ProbeOptions(runs=3, warmup=1, **kw)).result


def test_the_maps_carry_the_gemm_operands():
    """The original module alone: C is A x B^T of the tensors behind the maps (f16 products in
    f32: within 1e-2 of a float64 reference), so the maps were encoded as the kernel reads them."""
    from splice.probe.language.document import load_spec
    from splice.probe.language.entry import check
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.run.session import probe_arch

    spec = load_spec(ROOT / "probes/tma_wgmma_gemm_sm90a.yaml")
    text = (ROOT / spec.ptx).read_text()
    decl = check(spec, text, spec.ptx)
    cp = import_cupy()
    built = compile_one("tma", text, probe_arch(spec, device_arch(cp), decl.target))
    dev = Device(spec, cp)
    dev.load("original", built.path)
    out = dev.render("original")
    a = dev.views["A"].get().view(np.float16).reshape(256, 256).astype(np.float64)
    b = dev.views["B"].get().view(np.float16).reshape(256, 256).astype(np.float64)
    c = out["C"].view(np.float32).reshape(256, 256)
    assert np.abs(c - a @ b.T).max() < 1e-2


def test_the_correct_phase_cut_is_identical():
    r = _run("recipes/tma_wgmma_gemm_p1.yaml", stages="cut")
    assert r["ok"] and r["identical"] and r["covered"], r["compare"]
    assert r["stages"]["first_divergence"] is None


def test_the_wrong_phase_cut_is_caught_and_named():
    r = _run("tests/data/recipes/tma_wgmma_gemm_p1_wrong.yaml", stages="cut")
    assert not r["ok"] and not r["identical"]
    c = r["compare"]["outputs"]["C"]
    assert not c["identical"] and c["elements_differ"] > 0 and c["first_index"] is not None
    assert r["stages"]["first_divergence"]["name"] == "cut 1 (phase 1)"
