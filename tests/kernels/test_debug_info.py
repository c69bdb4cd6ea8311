"""Kernels with debug information: nvcc -G builds (recipes default to -O0 for them; their DWARF
sections name labels by address, which is no branch into a cut) and line info whose inlined_at
names a location a cut must keep.  Kernels debug_full_G, mma_shapes_misc, and Triton's
triton_attn_causal_sm80, read 2026-11-30."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import model as m

from .bundled import MODERN, cut_of, identity_recipe, plan_of

MISC = MODERN / "mma_shapes_misc.ptx"


def test_debug_module_recipe_defaults_to_O0(tmp_path):
    from splice.cut.recipe import load_recipe

    g = MODERN / "debug_full_G.ptx"
    (tmp_path / "n.ptx").write_text("")
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {g}\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 0
    r.write_text(f"module: {g}\nopt_level: 2\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 2
    r.write_text(f"module: {MISC}\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 3


@pytest.mark.needs("ptxas")
def test_debug_module_identity_cut_assembles(tmp_path):
    """``nvcc -G`` output: an identity cut applies and ptxas takes it (at -O0, the module's own)."""
    from splice.cut.extract import extract
    from splice.cut.validate import validate

    g = MODERN / "debug_full_G.ptx"
    k = Kernel.load(g)
    a, b = 5, 12
    rec = identity_recipe(tmp_path, g, k.name, f"statements: s{a}-s{b}", extract(k, statements=(a, b))["text"])
    p = plan_of(rec)
    assert p.recipe.opt_level == 0
    validate(p)


def test_verify_ignores_labels_named_only_by_debug_sections(tmp_path):
    """``nvcc -G`` labels every line (``$L__tmp7:``) and its ``.section .debug_info`` names them
    by address (``.b64 $L__tmp7``): verify took that for a branch from outside into the cut and
    said "not proven" for every -G cut (the wgmma_consumers_sm90a phases built with -G too)."""
    from splice.verify.compare import verify_plan

    path = MODERN / "debug_full_G.ptx"
    k = Kernel.load(path, "_Z12debug_kernelPKfPfi")
    lab = next(s.n for s in k.stmts if type(s.node) is m.Label and s.node.name == "$L__tmp7")
    assert ".b64 $L__tmp7" in path.read_text()
    p = cut_of(tmp_path, path, "_Z12debug_kernelPKfPfi", lab, lab + 5)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)


def _inlined_at_defined(text: str) -> list:
    """The ``inlined_at F L C`` lines of ``text`` with no ``.loc F L C`` before them."""
    import re

    seen, bad = set(), []
    for ln in text.splitlines():
        mt = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", ln)
        if not mt:
            continue
        at = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", ln)
        if at and at.groups() not in seen:
            bad.append(ln.strip())
        seen.add(mt.groups())
    return bad


def test_a_cut_keeps_the_locations_inlined_at_names(tmp_path):
    """Triton's causal attention: epilogue 2 holds ``.loc 1 350 25`` (the call of the inlined
    ``_attn_block``); natives drop ``.loc``, so every ``inlined_at 1 350 25`` after the cut named a
    location ptxas had not seen ("must be used in a preceding .loc directive"): the identity cut
    failed to assemble.  The site now ends with the cut's ``.loc`` lines that an inlined_at names."""
    src = MODERN / "triton_attn_causal_sm80.ptx"
    assert not _inlined_at_defined(src.read_text())
    native, out = tmp_path / "e2.ptx", tmp_path / "sp.ptx"
    assert main(["extract", str(src), "--epilogue", "2", "-o", str(native)]) == 0
    (tmp_path / "r.yaml").write_text(f"module: {src}\noutput: {out}\ncuts:\n  - epilogue: 2\n    native: {native}\n")
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas", "-o", str(out)]) == 0
    text = out.read_text()
    assert "// splice: the cut's .loc lines an inlined_at names" in text
    assert _inlined_at_defined(text) == []


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_of_an_epilogue_holding_an_inlined_call_site():
    from splice.cut.identity import run_module

    trials = run_module(str(MODERN / "triton_attn_causal_sm80.ptx"), "sm_80", 3, (), epilogues=True)
    assert trials
    assert not [(t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]
