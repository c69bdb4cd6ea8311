"""Kernels built for an arch-specific target (sm_90a, sm_100a): the SASS views and a recipe without
`arch:` compile for the module's own .target.  Kernels wgmma_sm90a, triton_matmul_bf16_2wg_sm90a,
triton_matmul_tcgen05_sm100a, read 2026-11-30."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main

from .bundled import MODERN

SPARSE = MODERN / "mma_sparse_int_f64.ptx"
TCGEN05 = MODERN / "triton_matmul_tcgen05_sm100a.ptx"
TWO_WG = MODERN / "triton_matmul_bf16_2wg_sm90a.ptx"


@pytest.mark.needs("ptxas", "nvdisasm")
def test_sass_mix_compiles_for_the_module_target(capsys):
    """An sm_90a module (wgmma) used to be compiled for sm_90 by sass-mix and spec --pressure."""
    path = MODERN / "wgmma_sm90a.ptx"
    assert main(["sass-mix", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arch"] == "sm_90a"
    assert main(["spec", str(path), "--pressure", "--png", "none", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["entries"][0]["ptxas"]["arch"] == "sm_90a"


def test_module_target_reads_the_target_line():
    from splice.commands.perf import module_target

    assert module_target(".version 8.0\n.target sm_90a\n") == ("sm_90a", 3)
    assert module_target(".version 8.0\n.target sm_80\n") == ("sm_90", 3)
    assert module_target(".version 8.0\n.target sm_90, debug\n") == ("sm_90", 0)
    assert module_target(".target sm_90a\n", "sm_100a") == ("sm_100a", 3)


@pytest.mark.parametrize("module, want", [(TWO_WG, "sm_90a"), (TCGEN05, "sm_100a"),
                                          (MODERN / "triton_matmul_int8_sm80.ptx", "sm_90"),
                                          (SPARSE, "sm_90")])
def test_recipe_arch_defaults_to_the_module_target(tmp_path, module, want):
    """A recipe on an sm_90a Triton matmul without ``arch:`` was compiled for sm_90: "ptxas
    rejects the original module" (``.target sm_90a`` cannot be compiled for sm_90)."""
    from splice.cut.recipe import load_recipe

    r = tmp_path / "r.yaml"
    r.write_text(f"module: {module}\ncuts:\n  - statements: s1-s2\n    native: n.ptx\n")
    (tmp_path / "n.ptx").write_text("")
    assert load_recipe(str(r)).arch == want
    r.write_text(f"module: {module}\narch: sm_100a\ncuts:\n  - statements: s1-s2\n    native: n.ptx\n")
    assert load_recipe(str(r)).arch == "sm_100a"


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_recipe_on_an_sm90a_module_without_arch(tmp_path, capsys):
    from splice.cut.extract import extract

    k = Kernel.load(TWO_WG)
    (tmp_path / "p1.ptx").write_text(extract(k, phase=1)["text"])
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {TWO_WG}\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: p1.ptx\n")
    assert main(["apply", str(r), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ptxas"]["arch"] == "sm_90a"
