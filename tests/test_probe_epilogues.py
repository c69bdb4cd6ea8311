"""Epilogue-granularity debug stages (no GPU: planning and instrumentation; ptxas when present)."""
import shutil
from pathlib import Path

import pytest

from splice.errors import SpliceError
from splice.probe.epilogue_stages import split_selection

ROOT = Path(__file__).resolve().parents[1]
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")


def test_split_selection():
    assert split_selection("all") == ("all", None)
    assert split_selection("8-10,E9") == ("8-10", {9})
    assert split_selection("E21-E23,e25") == ("", {21, 22, 23, 25})
    assert split_selection("epilogues,61") == ("61", "all")
    with pytest.raises(SpliceError, match="empty epilogue range"):
        split_selection("E9-E3")


@pytest.fixture(scope="module")
def wrong_e9():
    from splice.analysis import Kernel
    from splice.probe.modules import resolve
    from splice.probe.spec import load_spec

    pair = resolve(str(ROOT / "tests/data/recipes/dec1_e9_wrong_rounding.yaml"))
    return pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path)


def test_epilogue_cut_is_a_stage_in_program_order(wrong_e9):
    from splice.probe.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "8-10", spec)
    names = [s.name for s in sp.stages]
    assert names == ["phase 8", "phase 9", "cut 1 (E9 s5068-s5354)", "phase 10"]
    st = sp.stages[2]
    assert st.regs == [r.reg for r in pair.cuts[0].abi.live_out] and len(st.regs) == 68
    assert pair.spliced.splitlines()[st.line_spl - 1].strip() == "// splice: end cut 1"


def test_uncut_epilogues_staged_by_selection(wrong_e9):
    from splice.probe.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8-E10,E26", spec)
    names = [s.name for s in sp.stages]
    assert names == ["E8", "cut 1 (E9 s5068-s5354)", "E10"]
    assert any("E26: no live-outs" in n for n in sp.notes)
    for s in sp.stages:
        if s.cut is None:      # outside the cut: the same line in both modules
            assert pair.original.splitlines()[s.line_orig - 1] == pair.spliced.splitlines()[s.line_spl - 1]


@needs_ptxas
def test_instrumented_epilogue_stages_compile(wrong_e9):
    from splice.probe.stages import instrument, plan_stages
    from splice.ptx.sass import compile_ptx

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8,E10", spec)
    assert compile_ptx(instrument(pair.spliced, sp, "spl"), "sm_90", 3).cubin


# ---- the epilogue harness (generation and inputs; running it needs a GPU) -------------------

@pytest.fixture(scope="module")
def all_epilogue_cases():
    from splice.analysis import Kernel
    from splice.probe.harness import cases
    from splice.probe.modules import resolve
    from splice.probe.spec import load_spec

    pair = resolve(str(ROOT / "recipes/enc5_all_epilogues.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    spec = load_spec(pair.spec_path)
    return {c.title.split()[0]: c for c in cases(pair, k, spec, blocks=2)}, spec


def test_epilogue_cases_bind_memory_and_constants(all_epilogue_cases):
    import numpy as np

    from splice.probe.harness import harness_inputs
    from splice.probe.inputs import weight_image

    cs, spec = all_epilogue_cases
    assert len(cs) == 57 and "sust" in cs["E61"].skipped
    assert all(c.skipped is None for n, c in cs.items() if n != "E61")
    e23 = cs["E23"]
    kinds = {r: kd for r, _t, kd in e23.loaded}
    assert kinds["%r10452"] == "const:%d" % 0x40004000          # 2.0 splat, E21's constant
    assert kinds["%r10450"] == "const:%d" % 0x2D302D30
    assert kinds["%r11247"] == "act"                           # P23's D
    assert [r for r, _t, _f in e23.computed] == ["%rd3"]       # W: computed, not random
    threads = 128 * 2
    x = harness_inputs(e23, threads, seed=3)
    n = len(e23.loaded)
    assert (x[0] == 0x40004000).all()
    w = weight_image(spec.field("weights"), spec.seed)
    assert x[n:].reshape(-1).view(np.uint8)[:len(w)].tobytes() == w.tobytes()
    d = x[1].astype(np.uint32).view(np.float16)
    assert np.isfinite(d).all() and np.abs(d).max() <= 4
    e13 = cs["E13"]
    assert e13.smem_bytes == 16384 and e13.live_out[-1][2] == "smem"
    assert len(e13.live_out) == 44 + 16384 // 4 // 128
    assert "bar.sync 0;" in e13.orig_ptx and ".shared .align 4 .b8 _ZZ" in e13.orig_ptx


@needs_ptxas
@pytest.mark.parametrize("which", ["E13", "E21"])
def test_epilogue_harness_modules_compile(all_epilogue_cases, which):
    from splice.probe.harness import ENTRY
    from splice.ptx.sass import compile_ptx

    c = all_epilogue_cases[0][which]
    for text in (c.orig_ptx, c.spl_ptx):
        assert compile_ptx(text, "sm_90", 3).resources[ENTRY].registers


def test_unsupported_epilogue_named():
    from splice.probe.epilogue_harness import _unsupported

    assert _unsupported("ld.weak.global.ca.v4.u32 {%r1,%r2,%r3,%r4}, [%rd1];\nbar.sync 0;") is None
    assert "sust" in _unsupported("sust.b.2d.v4.b16.zero [%rd1, {%r1, %r2}], {%rs1,%rs2,%rs3,%rs4};")
    assert _unsupported("$L1:\nadd.s32 %r1, %r1, 1;\n@%p1 bra $L1;") is None
    assert "bra" in _unsupported("@%p1 bra $Lout;")


def test_stages_cut_around_an_epilogue_cut(wrong_e9):
    from splice.probe.stages import plan_stages

    pair, k, spec = wrong_e9
    names = [s.name for s in plan_stages(k, pair, "cut", spec).stages]
    assert names == ["phase 8", "phase 9", "cut 1 (E9 s5068-s5354)", "phase 10", "phase 11"]


def test_e11_shuffle_masks_are_exact_not_random():
    """E11 touches no memory, but its shuffle lane masks are live-ins (1, 2): random values
    would make the original shuffle from random lanes; the epilogue case gives them exactly."""
    from splice.analysis import Kernel
    from splice.probe.harness import cases
    from splice.probe.modules import resolve
    from splice.probe.spec import load_spec

    pair = resolve(str(ROOT / "recipes/enc5_e11.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    (c,) = cases(pair, k, load_spec(pair.spec_path), blocks=1)
    kinds = {r: kd for r, _t, kd in c.loaded}
    assert c.skipped is None and c.smem_bytes == 0
    assert kinds["%r25498"] == "const:1" and kinds["%r25499"] == "const:2"
    assert kinds["%r3717"] == "act" and len(c.live_out) == 74
