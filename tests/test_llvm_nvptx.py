"""LLVM's own NVPTX back end (llc, not nvcc or Triton): labels without ``$``, ``%hh`` half-pair
registers, ``// %bb.N:`` block comments.  The whole path -- round trip, spec, extract, apply,
verify -- on a K loop of one m16n8k16 mma per iteration with a scale + ReLU + store epilogue
(tests/data/ptx/thirdparty/llvm/README.md says how it was generated)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from splice.cli import main
from splice.ptx import emit, parse_file


LLVM = Path(__file__).parent / "data" / "ptx" / "thirdparty" / "llvm" / "llvm_mma_sm80.ptx"


def test_round_trip_is_lossless():
    assert emit(parse_file(LLVM, cache=False)) == LLVM.read_text()


def test_spec_finds_the_loop_phase_and_its_epilogue(capsys):
    assert main(["spec", str(LLVM), "--json"]) == 0
    (e,) = json.loads(capsys.readouterr().out)["entries"]
    (p,) = e["phases"]
    assert (p["shape"], p["opcode"]) == ([16, 8, 16], "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert p["a_regs"] == ["%hh1", "%hh2", "%hh3", "%hh4"] and p["b_regs"] == ["%hh5", "%hh6"]
    assert p["c_regs"] == p["d_regs"] == ["%f19", "%f20", "%f21", "%f22"]
    assert p["epilogue"] == [p["last"] + 1, e["statements"]]


@pytest.mark.parametrize("flags", [pytest.param([], marks=pytest.mark.needs("ptxas"), id="ptxas"),
                                   pytest.param(["--no-ptxas"], id="no-ptxas")])
def test_extracted_phase_applies_and_is_proved_equal(flags, tmp_path, capsys):
    """The phase extracted as a native file, put back by a recipe: ptxas takes the spliced
    module (when present) and verify proves the cut equal to the code it replaces."""
    module = tmp_path / LLVM.name
    shutil.copy(LLVM, module)
    native = tmp_path / "p1.ptx"
    assert main(["extract", str(module), "--phase", "1", "-o", str(native)]) == 0
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"description: identity\nmodule: {module}\nentry: llvm_gemm_epi\narch: sm_80\n"
                      "cuts:\n  - phase: 1\n    native: p1.ptx\n    abi: inline\n")
    capsys.readouterr()
    assert main(["apply", str(recipe), "-o", str(tmp_path / "out.ptx"), *flags]) == 0
    assert "mma.sync.aligned.m16n8k16" in (tmp_path / "out.ptx").read_text()
    capsys.readouterr()
    assert main(["verify", str(recipe), "--json"]) == 0
    verdicts = [c["verdict"] for c in json.loads(capsys.readouterr().out)["cuts"]]
    assert verdicts == ["proved equal"]


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_canonical_print_compiles_to_the_same_sass(capsys):
    assert main(["roundtrip", str(LLVM), "--sass", "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["sass_identical"] is True
