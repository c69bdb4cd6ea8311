"""GPU: the bundled CUTLASS 3.x TMA GEMM probed with its filled spec -- CUTLASS's own tensor-map
arguments encoded by libcuda (tma_encoding), the Params struct as CUTLASS builds it.  D is A B^T of the
maps' tensors (B is stored N x K), and the module probed against itself is identical."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "probes/cutlass_tma_gemm_sm90a.yaml"
PTX = ROOT / "corpus/cutlass/cutlass_tma_gemm_sm90a.ptx"
pytestmark = pytest.mark.gpu


def test_cutlass_computes_the_gemm_of_the_maps_tensors():
    from splice.probe.language.document import load_spec
    from splice.probe.language.entry import check
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.run.session import probe_arch

    spec = load_spec(SPEC)
    text = PTX.read_text()
    decl = check(spec, text, str(PTX))
    cp = import_cupy()
    built = compile_one("cutlass", text, probe_arch(spec, device_arch(cp), decl.target))
    dev = Device(spec, cp)
    dev.load("original", built.path)
    out = dev.render("original")
    a = dev.views["A"].get().view(np.float16).reshape(512, 512).astype(np.float64)
    b = dev.views["B"].get().view(np.float16).reshape(512, 512).astype(np.float64)
    d = out["D"].view(np.float32).reshape(512, 512)
    assert np.abs(d - a @ b.T).max() < 2e-2


def test_the_spec_probes_the_module_against_itself():
    from splice.probe.run.modules import resolve
    from splice.probe.run.session import ProbeOptions, run_probe

    r = run_probe(resolve(str(SPEC), str(PTX)), ProbeOptions(runs=3, warmup=1)).result
    assert r["ok"] and r["identical"], r["compare"]
    assert r["compare"]["outputs"]["D"]["identical"]
