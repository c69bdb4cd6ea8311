"""The timing proof's recipes (recipes/timing/): the identity splice compiles to the original's
machine code, the chain variants keep their chain, and the natives are what make_natives.py writes."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMING = ROOT / "recipes/timing"


def _spliced(recipe: str) -> str:
    from splice.cut.pipeline import run_apply

    plan, *_ = run_apply(str(TIMING / recipe), None, ptxas=False)
    return plan.text


def test_the_natives_are_what_make_natives_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_natives", TIMING / "make_natives.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = mod.main(tmp_path)
    assert names == sorted(p.name for p in (TIMING / "native").iterdir())
    for n in names:
        assert (tmp_path / n).read_text() == (TIMING / "native" / n).read_text(), n


def test_every_timing_recipe_applies():
    for r in sorted(TIMING.glob("*.yaml")):
        text = _spliced(r.name)
        assert ".entry" in text, r.name


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_identity_splice_is_sass_identical():
    """The Triton K-loop phase extracted and applied unchanged: the same SASS (normalised, with
    ptxas' resource lines) and the same .text bytes for sm_90, the H200's arch."""
    from splice.ptx.sass import compile_ptx, elf_sections, sass_equal

    orig = (ROOT / "corpus/triton/matmul_sm80.ptx").read_text()
    spl = _spliced("triton_matmul_p1_identity.yaml")
    assert spl != orig                                       # a real splice: the text differs
    same, why = sass_equal(orig, spl, "sm_90")
    assert same, why
    a, b = (elf_sections(compile_ptx(t, "sm_90", 3).cubin) for t in (orig, spl))
    assert a[".text.matmul_kernel"] == b[".text.matmul_kernel"] and len(a[".text.matmul_kernel"]) > 4000


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_chain_variant_keeps_its_chain_in_the_k_loop():
    from splice.ptx.sass import compile_ptx, disassemble

    def imad(text):
        sass = disassemble(compile_ptx(text, "sm_90", 3).cubin)
        return len(re.findall(r"\bIMAD ", sass)), len(re.findall(r"\bSTG\.E\b", sass))

    o_imad, o_stg = imad((ROOT / "corpus/triton/matmul_sm80.ptx").read_text())
    s_imad, s_stg = imad(_spliced("triton_matmul_p1_chain64.yaml"))
    assert s_imad - o_imad >= 60 and s_stg == o_stg + 1       # 64 links (a few fold), the dead store


def test_elf_sections_refuses_what_is_not_a_cubin():
    from splice.ptx.sass import elf_sections

    with pytest.raises(ValueError):
        elf_sections(b"not an elf file at all")
