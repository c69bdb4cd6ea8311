"""Epilogue-granularity debug stages (no GPU: planning and instrumentation; ptxas when present)."""
from pathlib import Path

import pytest

from splice.errors import SpliceError
from splice.probe.instrument.epilogue_stages import split_selection

ROOT = Path(__file__).resolve().parents[1]


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
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(ROOT / "tests/data/recipes/dec1_e9_wrong_rounding.yaml"))
    return pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path)


def test_epilogue_cut_is_a_stage_in_program_order(wrong_e9):
    from splice.probe.instrument.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "8-10", spec)
    names = [s.name for s in sp.stages]
    assert names == ["phase 8", "phase 9", "cut 1 (E9 s5068-s5354)", "phase 10"]
    st = sp.stages[2]
    assert st.regs == [r.reg for r in pair.cuts[0].abi.live_out] and len(st.regs) == 68
    assert pair.spliced.splitlines()[st.line_spl - 1].strip() == "// splice: end cut 1"


def test_uncut_epilogues_staged_by_selection(wrong_e9):
    from splice.probe.instrument.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8-E10,E26", spec)
    names = [s.name for s in sp.stages]
    assert names == ["E8", "cut 1 (E9 s5068-s5354)", "E10"]
    assert any("E26: no live-outs" in n for n in sp.notes)
    for s in sp.stages:
        if s.cut is None:      # outside the cut: the same line in both modules
            assert pair.original.splitlines()[s.line_orig - 1] == pair.spliced.splitlines()[s.line_spl - 1]


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_instrumented_epilogue_stages_compile(wrong_e9):
    from splice.probe.instrument.stages import instrument, plan_stages
    from splice.ptx.sass import compile_ptx

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8,E10", spec)
    assert compile_ptx(instrument(pair.spliced, sp, "spl"), "sm_90", 3).cubin


# ---- the epilogue harness (generation and inputs; running it needs a GPU) -------------------

@pytest.fixture(scope="module")
def all_epilogue_cases():
    from splice.analysis import Kernel
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(ROOT / "recipes/enc5_all_epilogues.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    spec = load_spec(pair.spec_path)
    return {c.title.split()[0]: c for c in cases(pair, k, spec, blocks=2)}, spec


def test_epilogue_cases_bind_memory_and_constants(all_epilogue_cases):
    import numpy as np

    from splice.probe.instrument.harness import harness_inputs

    cs, spec = all_epilogue_cases
    assert len(cs) == 57 and all(c.skipped is None and c.bound for c in cs.values())
    e23 = cs["E23"]
    kinds = {r: kd for r, _t, kd in e23.loaded}
    assert kinds["%r10452"] == "const:%d" % 0x40004000          # 2.0 splat, E21's constant
    assert kinds["%r10450"] == "const:%d" % 0x2D302D30
    assert kinds["%r11247"] == "act"                           # P23's D
    (w,) = [(r, f) for r, _t, f in e23.computed]                # W: computed, not random
    assert w[0] == "%rd3" and ("W", 1) in w[1]
    assert "ld.param.u64" in e23.orig_ptx and "[cuda_dldn_engine_swin_enc5_kernel_param_0+" in e23.orig_ptx
    threads = 128 * 2
    x = harness_inputs(e23, threads, seed=3)
    assert x.shape == (len(e23.loaded), threads)               # no weight copy: W is the spec's buffer
    assert (x[0] == 0x40004000).all()
    d = x[1].astype(np.uint32).view(np.float16)
    assert np.isfinite(d).all() and np.abs(d).max() <= 4
    e13 = cs["E13"]
    assert e13.smem_bytes == 16384 and e13.live_out[-1][2] == "smem"
    assert len(e13.live_out) == 44 + 16384 // 4 // 128
    assert "bar.sync 0;" in e13.orig_ptx and ".shared .align 4 .b8 _ZZ" in e13.orig_ptx
    assert harness_inputs(e13, threads).shape == (len(e13.loaded) + 16384 * 2 // 8 // threads, threads)


def test_e61_is_bound_to_the_entry_parameters(all_epilogue_cases):
    """E61 reads the parameter block (&param_0), two 16-bit fields, the texture and surface
    handles, and writes the frame with sust: the harness kernel is declared with the entry's
    own .param list so all of it is the spec's, and the computed live-ins read the fields with
    the kernel's own widths."""
    e61 = all_epilogue_cases[0]["E61"]
    forms = {r: dict(f) for r, _t, f in e61.computed}
    assert forms["%rd757"] == {"&param_0": 1}
    assert forms["%r7"] == {"ctaid.x": 32, "param_0+80": -1}
    assert sorted(kd for _r, _t, kd in e61.loaded) == ["act"] * 4       # P61's D only
    head = e61.orig_ptx[e61.orig_ptx.index(".visible .entry splice_harness("):]
    params = [p.strip() for p in head[head.index("(") + 1:head.index(")")].split(",")]
    assert params == [".param .align 8 .b8 cuda_dldn_engine_swin_enc5_kernel_param_0[144]",
                      ".param .u64 splice_harness_in", ".param .u64 splice_harness_out"]
    assert "ld.param.u16 %sphe_h0, [cuda_dldn_engine_swin_enc5_kernel_param_0+80];" in e61.orig_ptx
    assert "sust.b.2d" in e61.orig_ptx and "sust.b.2d" in e61.spl_ptx


@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("which", ["E13", "E21", "E61"])
def test_epilogue_harness_modules_compile(all_epilogue_cases, which):
    from splice.probe.instrument.harness import ENTRY
    from splice.ptx.sass import compile_ptx

    c = all_epilogue_cases[0][which]
    for text in (c.orig_ptx, c.spl_ptx):
        assert compile_ptx(text, "sm_90", 3).resources[ENTRY].registers


def test_unsupported_epilogue_named():
    from splice.probe.instrument.epilogue_harness import _unsupported

    assert _unsupported("ld.weak.global.ca.v4.u32 {%r1,%r2,%r3,%r4}, [%rd1];\nbar.sync 0;") is None
    assert _unsupported("sust.b.2d.v4.b16.zero [%rd1, {%r1, %r2}], {%rs1,%rs2,%rs3,%rs4};") is None
    assert _unsupported("tex.2d.v4.f16.s32 {%rs1,%rs2,%rs3,%rs4}, [%rd7, {%r1, %r2}];") is None
    assert _unsupported("st.global.u32 [%rd1], %r1;\nld.param.u64 %rd2, [%rd3+88];\nld.u32 %r2, [%rd4];") is None
    assert _unsupported("$L1:\nadd.s32 %r1, %r1, 1;\n@%p1 bra $L1;") is None
    assert _unsupported("@%p1 bra $Lout;") is None          # leaves the cut: to the harness's end
    assert "brx" in _unsupported("brx.idx %r1, $Ltable;")
    assert "atom.global.add.u32" in _unsupported("atom.global.add.u32 %r1, [%rd1], 1;")
    assert "red.global.add.f32" in _unsupported("red.global.add.f32 [%rd1], %f1;")
    assert "st.local.u32" in _unsupported("st.local.u32 [%rd1], %r1;")
    assert _unsupported("cp.async.ca.shared.global [%r1], [%rd1], 16;\ncp.async.wait_group 0;") is None
    assert "cp.async.bulk" in _unsupported("cp.async.bulk.shared::cluster.global [%r1], [%rd1], 16, [%r2];")
    assert _unsupported("wgmma.wait_group.sync.aligned 0;") is None
    assert "wgmma.mma_async" in _unsupported("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1}, %rd1, %rd2, 1;")


def test_stages_cut_around_an_epilogue_cut(wrong_e9):
    from splice.probe.instrument.stages import plan_stages

    pair, k, spec = wrong_e9
    names = [s.name for s in plan_stages(k, pair, "cut", spec).stages]
    assert names == ["phase 8", "phase 9", "cut 1 (E9 s5068-s5354)", "phase 10", "phase 11"]


def test_e11_shuffle_masks_are_exact_not_random():
    """E11 touches no memory, but its shuffle lane masks are live-ins (1, 2): random values
    would make the original shuffle from random lanes; the epilogue case gives them exactly."""
    from splice.analysis import Kernel
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(ROOT / "recipes/enc5_e11.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    (c,) = cases(pair, k, load_spec(pair.spec_path), blocks=1)
    kinds = {r: kd for r, _t, kd in c.loaded}
    assert c.skipped is None and c.smem_bytes == 0
    assert kinds["%r25498"] == "const:1" and kinds["%r25499"] == "const:2"
    assert kinds["%r3717"] == "act" and len(c.live_out) == 74


@pytest.mark.needs("ptxas")
def test_e60_scatter_is_harnessed_against_the_arena(tmp_path):
    """E60 scatters 20 words into the arena (``st.global [param_0+48 + …]``): its extract →
    apply identity is a bound case whose store addresses are all computed (pixel coordinates
    from ctaid/tid and the blockoff fields), so the harness writes the spec's arena."""
    from splice.analysis import Kernel
    from splice.cli import main
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec
    from splice.ptx.sass import compile_ptx

    assert main(["extract", str(ROOT / "corpus/enc5.ptx"), "--epilogue", "60", "-o", str(tmp_path / "e60.ptx")]) == 0
    (tmp_path / "r.yaml").write_text(f"module: {ROOT}/corpus/enc5.ptx\nentry: cuda_dldn_engine_swin_enc5_kernel\n"
                                     "arch: sm_90\ncuts:\n  - epilogue: 60\n    native: e60.ptx\n")
    pair = resolve(str(tmp_path / "r.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    (c,) = cases(pair, k, load_spec(ROOT / "probes/enc5.yaml"), blocks=2)
    assert c.skipped is None and c.bound and c.smem_bytes == 0
    assert {r for r, _t, _f in c.computed} >= {"%rd9", "%r7", "%r8"}      # &param_0, the pixel origin
    assert c.orig_ptx.count("st.global.u32") == 20
    for text in (c.orig_ptx, c.spl_ptx):
        assert compile_ptx(text, "sm_90", 3).resources["splice_harness"].registers


def test_loaded_live_ins_are_read_again_from_the_specs_memory():
    """The qkv wave template loads its own B from W instead of taking the epilogue's loads: the
    harness must give the original's B live-ins the same words (read again from the spec's
    weight image at the load's computed address), not random bits."""
    from splice.analysis import Kernel
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(ROOT / "recipes/enc5_qkv_wave.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    c = cases(pair, k, load_spec(pair.spec_path), blocks=1)[0]
    assert c.skipped is None and len(c.reloaded) == 8
    reg, _t, (space, nbytes, form) = c.reloaded[0]
    assert (space, nbytes) == ("global", 4)
    assert dict(form) == {"W": 1, "laneid": 16, "tid.z": 27648, "": 1344}
    assert "ld.global.b32" in c.orig_ptx and reg not in {r for r, _t, _k in c.loaded}


def test_a_cut_ending_in_ret_still_reaches_the_dump(all_epilogue_cases):
    """E61 is the kernel's last epilogue and ends in ``ret``: in the harness it branches past
    the cut instead, so the shared dump and the live-out stores run on both sides."""
    e61 = all_epilogue_cases[0]["E61"]
    body = e61.orig_ptx[e61.orig_ptx.index("// ---- the cut ----"):]
    assert "bra $__splice_harness_end;" in body and "\n$__splice_harness_end:\n" in body
    assert body.count("\tret;") == 1                    # the harness's own, after the stores


def test_stages_name_the_only_cut_that_writes_memory():
    """E61 has no live-outs (it ends in a surface write): when every register stage agrees and
    the frame differs, the stages name the one cut that writes memory."""
    from splice.probe.instrument.epilogue_stages import memory_divergence, memory_writers
    from splice.probe.run.modules import resolve

    wrong = resolve(str(ROOT / "tests/data/recipes/enc5_e61_wrong_tap.yaml"))
    assert memory_writers(wrong) == [(1, "E61 s10618-s10859")]
    fd = memory_divergence(wrong, ["frame"])
    assert fd["name"] == "memory written by cut 1 (E61 s10618-s10859)" and fd["cut"] == 1
    assert memory_divergence(wrong, []) is None
    every = resolve(str(ROOT / "recipes/enc5_all_epilogues.yaml"))
    assert [t for _i, t in memory_writers(every)] == ["E61 s10618-s10859"]   # shared staging is not "memory"
