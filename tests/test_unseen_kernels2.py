"""Regressions from the second unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 2"):
sparse / f64 / sub-byte / sm_120 block-scaled mma, warp-specialised wgmma consumers, sm_100
tcgen05 (Triton), device-side launches (-rdc), multimem and 128-bit atomics, and hand-written
PTX oddities.  Each test names the cause it pins; the kernels are in tests/data/ptx/modern
(manifest.yaml, regen.sh, gen_triton.py, handwritten_*.ptx)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.ptx import model as m

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
SPARSE = MODERN / "mma_sparse_int_f64.ptx"
SM120 = MODERN / "mma_blockscale_sm120a.ptx"
CONSUMERS = MODERN / "wgmma_consumers_sm90a.ptx"
TCGEN05 = MODERN / "triton_matmul_tcgen05_sm100a.ptx"
TWO_WG = MODERN / "triton_matmul_bf16_2wg_sm90a.ptx"
RDC = MODERN / "devlaunch_rdc.ptx"
MEM = MODERN / "atomics_b128_hints.ptx"
ODD = MODERN / "handwritten_oddities.ptx"


# ---- one tile per phase ------------------------------------------------------------------------

def test_a_change_of_mma_opcode_starts_a_phase():
    """``m16n8k16.f64`` then ``m16n8k8.f64`` on one accumulator used to be one "regular" phase
    16x8x32 (the first tile times two k-steps; the truth is 16+8); four integer forms in a row
    one phase 16x8x256.  Each opcode is its own phase now, with its own true shape."""
    d = Kernel.load(SPARSE, "dmma_k16").phases
    assert [(p.opcode.split(".")[3], p.shape) for p in d] == [("m16n8k16", (16, 8, 16)), ("m16n8k8", (16, 8, 8))]
    ints = Kernel.load(SPARSE, "int_forms").phases
    assert [(p.instr["types"]["a"], p.instr["types"]["b"], p.shape) for p in ints] == [
        ("s4", "s4", (16, 8, 64)), ("b1", "b1", (16, 8, 256)), ("u8", "s8", (16, 8, 32)), ("s8", "u8", (16, 8, 16))]
    assert all(p.regular and not p.notes for p in d + ints)
    # the second phase reads the first one's accumulators: its C comes from registers
    assert set(ints[1].c_regs) == set(ints[0].d_regs)


def test_a_wgmma_group_of_several_forms_has_no_shape():
    """A warpgroup's wgmma group mixing f16 k16 with tf32 k8 (and s8 / e5m2 / sparse) on one
    accumulator is not tile x k-steps: irregular, described, and named as mixed."""
    k = Kernel.load(CONSUMERS)
    mixed = [p for p in k.phases if len({s.node.name for s in p.mma}) > 1]
    assert len(mixed) == len(k.phases) == 6
    assert all(p.shape is None and not p.regular and p.notes[0].startswith("mixed opcodes") for p in mixed)
    last = k.phases[-1]
    assert last.accumulators == 2 and last.extra_regs["meta"] and last.extra_regs["scale_d"]


def test_sparse_mma_reads_its_metadata():
    """mma.sp: A is half the registers of the dense form, the metadata register is an input."""
    k = Kernel.load(SPARSE, "sp_s8")
    [p] = k.phases
    assert p.form == "mma.sp" and p.shape == (16, 8, 64) and not p.notes
    assert p.instr["layout"]["a"] == 4 and p.instr["layout"]["sparse"]
    abi = k.phase_abi(1)
    assert set(p.extra_regs["meta"]) <= {r.reg for r in abi.live_in}


# ---- sm_120 block-scaled mma --------------------------------------------------------------------

def test_kind_forms_are_in_the_table():
    """``.kind::f8f6f4`` keeps e2m1/e3m2 in 8-bit containers (A is 4 registers, not the 2 the
    element width gives), ``.kind::mxf4nvf4`` m16n8k64 packs e2m1; block-scaled forms name their
    scale registers (they used to be "form not in the table" with the scales unnamed)."""
    k = Kernel.load(SM120)
    assert [(p.shape, (p.instr["layout"] or {}).get("a"), p.notes) for p in k.phases] == [
        ((16, 8, 32), 4, []), ((16, 8, 32), 4, []), ((16, 8, 64), 4, [])]
    assert k.phases[0].extra_regs == {}
    for p in k.phases[1:]:
        assert set(p.extra_regs) == {"scale_a", "scale_b"}
        live_in = {r.reg for r in k.phase_abi(p.index).live_in}
        assert set(p.extra_regs["scale_a"] + p.extra_regs["scale_b"]) <= live_in


@pytest.mark.slow
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("path, arch", [(SPARSE, "sm_90"), (SM120, "sm_120a")])
def test_identity_cuts_of_the_new_forms(path, arch):
    """Every phase of the split runs, sparse and block-scaled forms: extract -> apply gives
    ptxas' original SASS."""
    from splice.cut.identity import run_module

    trials = run_module(str(path), arch, 3, (), epilogues=False)
    assert trials
    bad = [(t.entry, t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]
    assert not bad


# ---- tcgen05 (sm_100): said, never "0 phases, 0 mma" ----------------------------------------------

def test_tcgen05_mma_is_named(capsys):
    from splice.cli import main

    assert main(["spec", str(TCGEN05), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]
    assert d["phases"] == []
    [u] = d["mma_in_calls"]["not_phases"]
    assert u["opcode"] == "tcgen05.mma" and len(u["statements"]) == 8
    assert main(["spec", str(TCGEN05), "--phases"]) == 0
    assert "8 tcgen05.mma" in capsys.readouterr().out
    assert main(["extract", str(TCGEN05), "--phase", "1", "-o", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "phase 1 does not exist" in err and "tcgen05.mma" in err and "instruction descriptor" in err


# ---- a comment is not a call ---------------------------------------------------------------------

def test_comments_are_not_calls():
    """``// indirect call with .calltargets`` above a ``{`` was read as a second indirect call."""
    from splice.analysis.calls import mma_in_calls

    k = Kernel.load(ODD, "oddities")
    assert "// indirect call" in ODD.read_text()
    assert mma_in_calls(k)["indirect_calls"] == 1


def test_shadowed_registers_keep_their_scopes():
    """Nested ``{ .reg .b32 %r5; }`` scopes shadow the entry's %r5: the cut after the scopes
    reads the outer %r5 (7), which is live into a cut of the scopes and the add after them."""
    k = Kernel.load(ODD, "oddities")
    seven = next(s.n for s in k.stmts if type(s.node) is m.Instruction
                 and s.node.name == "mov.u32" and getattr(s.node.operands[1], "text", "") == "7")
    after = next(s.n for s in k.stmts if type(s.node) is m.Instruction and s.node.name == "add.s32"
                 and s.node.operands[0].name == "%r8")
    abi = k.abi(seven + 1, after)
    assert {r.reg for r in abi.live_in} == {"%r2", "%r3", "%r4", "%r5"}
    assert [r.reg for r in abi.live_out] == ["%r8"]
    # cut before the add: the outer %r5 is still needed after it, the scoped ones are not
    abi = k.abi(seven, after - 1)
    assert "%r5" in {r.reg for r in abi.live_out}


# ---- relocatable device code: the module views compile it with -c --------------------------------

@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_views_of_relocatable_code(capsys):
    """Dynamic parallelism calls ``cudaLaunchDeviceV2`` (an extern resolved at device link):
    ``sass-mix`` and ``spec --pressure`` used to fail with "Unresolved extern function"."""
    from splice.cli import main

    assert main(["sass-mix", str(RDC), "--entry", "parent", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["registers"] > 0
    assert main(["spec", str(RDC), "--entry", "parent", "--pressure", "--png", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["ptxas"]["registers"] > 0


@pytest.mark.needs("ptxas")
def test_compile_any_adds_c_only_for_unresolved_externs():
    from splice.ptx.sass import PtxasError, compile_any, compile_ptx

    with pytest.raises(PtxasError) as exc:
        compile_ptx(RDC, "sm_90")
    assert "Unresolved extern function" in exc.value.stderr
    assert "-c" in compile_any(RDC, "sm_90").command
    assert "-c" not in compile_any(SPARSE, "sm_90").command
    broken = SPARSE.read_text().replace("mma.sp::ordered_metadata", "mma.sp::nonsense", 1)
    with pytest.raises(PtxasError):      # any other error is still an error
        compile_any(broken, "sm_90")


# ---- a recipe without arch: the module's own target ------------------------------------------------

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
    from splice.cli import main
    from splice.cut.extract import extract

    k = Kernel.load(TWO_WG)
    (tmp_path / "p1.ptx").write_text(extract(k, phase=1)["text"])
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {TWO_WG}\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: p1.ptx\n")
    assert main(["apply", str(r), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ptxas"]["arch"] == "sm_90a"


# ---- probe init: multimem reaches memory --------------------------------------------------------

def test_probe_init_follows_multimem():
    """``multimem.ld_reduce / red / st`` dereference their address: the parameter is an inout
    buffer (it was "read as a value, never dereferenced"), and the skeleton says the probe
    cannot make the multicast object it needs."""
    import yaml

    from splice.probe.init import skeleton

    text, _rows = skeleton(MEM.read_text(), str(MEM), "multimem_ops")
    p0 = yaml.safe_load(text)["params"][0]
    assert (p0["kind"], p0["role"], p0["dtype"]) == ("buffer", "inout", "f32")
    assert "multicast" in text.split("name: param_1")[0]


# ---- a cut holding scopes that shadow its registers ---------------------------------------------

def _cut_of(tmp_path, path, entry, first, last):
    from splice.cut.extract import extract
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    k = Kernel.load(path, entry)
    (tmp_path / "n.ptx").write_text(extract(k, statements=(first, last))["text"])
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {path}\nentry: {entry}\noutput: out.ptx\n"
                 f"cuts:\n  - statements: s{first}-s{last}\n    native: n.ptx\n")
    return plan(load_recipe(str(r), [tmp_path]))


def _scoped_ranges():
    k = Kernel.load(ODD, "oddities")
    seven = next(s.n for s in k.stmts if type(s.node) is m.Instruction
                 and s.node.name == "mov.u32" and getattr(s.node.operands[1], "text", "") == "7")
    after = next(s.n for s in k.stmts if type(s.node) is m.Instruction and s.node.name == "add.s32"
                 and s.node.operands[0].name == "%r8")
    return [(seven, after), (seven + 1, after - 2)]     # the whole scope; inside it


@pytest.mark.parametrize("which", [0, 1])
def test_a_cut_across_shadowing_scopes_keeps_them_apart(tmp_path, which):
    """Extract named registers by name: the scope's %r5 and the nested scope's %r5 (and, with
    the mov before, the entry's %r5) became one register, and apply flattened the nested
    declaration into the same scratch — a spliced module computing something else (verify:
    "not proven"; ptxas: other SASS).  Each now keeps its own register."""
    from splice.verify.compare import verify_plan

    first, last = _scoped_ranges()[which]
    p = _cut_of(tmp_path, ODD, "oddities", first, last)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)
    native = (tmp_path / "n.ptx").read_text()
    assert native.count(".reg .b32 %r5;") == (2 if which == 0 else 1)


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_a_cut_across_shadowing_scopes_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    orig = normalized_sass(compile_ptx(ODD, "sm_90").cubin)
    for first, last in _scoped_ranges():
        p = _cut_of(tmp_path, ODD, "oddities", first, last)
        assert normalized_sass(compile_ptx(p.text, "sm_90").cubin) == orig, (first, last)


def test_native_nested_declarations_shadow_not_merge():
    """A native whose nested scope re-declares a register keeps both (the scratch set is flat:
    the inner one gets a name of its own, its uses inside the scope follow it)."""
    from splice.cut.native import parse_native

    src = ("// splice-native:\n//   scratch: {t0: .b32}\n{\n\tmov.u32 %t0, 7;\n\t{\n\t\t.reg .b32 %t0;\n"
           "\t\tmov.u32 %t0, 1;\n\t\tadd.s32 %out0, %t0, 1;\n\t}\n\tadd.s32 %out1, %t0, 2;\n}\n")
    nat = parse_native(src, "n.ptx")
    assert set(nat.scratch) == {"%t0", "%t0_s1"}
    from splice.ptx.operands import registers

    ins = [st for st in m.walk(nat.body) if isinstance(st, m.Instruction)]
    regs = [[r for o in st.operands for r in registers(o, [], syms=False)] for st in ins]
    assert regs == [["%t0"], ["%t0_s1"], ["%out0", "%t0_s1"], ["%out1", "%t0"]]
    assert [nat.line(st) for st in ins] == [4, 7, 8, 10]       # lines survive the renaming


# ---- registers named like special registers ---------------------------------------------------

SPECIAL = MODERN / "handwritten_special_names.ptx"


def test_registers_that_begin_like_special_registers_are_registers():
    """``%tidx``, ``%pmask``, ``%clock0`` … are declared registers: special registers were
    matched by prefix (``%tid``, ``%pm``, ``%clock``), so def-use dropped them and the cut ABI
    of s5-s10 was empty (live-ins %tidx/%ctaidx and live-outs %smidx/%pmask missed)."""
    from splice.ptx.model import Reg

    assert not any(Reg(n).special for n in ("%tidx", "%pmask", "%clock0", "%envregs", "%laneidx", "%tid_x"))
    assert all(Reg(n).special for n in ("%tid.x", "%clock", "%clock64", "%pm7_64", "%envreg31",
                                        "%lanemask_lt", "%cluster_ctaid.z", "%globaltimer_lo"))
    k = Kernel.load(SPECIAL)
    abi = k.abi(5, 10)
    assert {r.reg for r in abi.live_in} == {"%tidx", "%ctaidx"}
    assert {r.reg for r in abi.live_out} == {"%smidx", "%pmask"}
    assert abi.values["%tidx"] == "tid.x"


def test_verify_reads_pmask_as_a_register(tmp_path):
    """verify treated every name beginning with %pm / %clock as a clock read (a new value at
    each read): a cut reading only %pmask-like registers is proved equal."""
    from splice.verify.compare import verify_plan

    p = _cut_of(tmp_path, SPECIAL, "special_names", 11, 13)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)


# ---- a cut holding a whole loop: its back edge is no exit --------------------------------------

LAYOUT = MODERN / "handwritten_layout_oddities.ptx"


def test_a_whole_loop_cut_does_not_export_its_counter():
    """``mov %r3, 0; LOOP: … add %r3; setp; @%p2 bra.uni LOOP``: the cut from the counter's
    initialisation to the back edge used to list %r3 as a live-out (liveness after the last
    statement followed the back edge into the cut itself); nothing after the loop reads it."""
    k = Kernel.load(LAYOUT)
    loop = next(s.n for s in k.stmts if s.n is not None and "LOOP:" in k.text(s.n))
    init = loop - 1
    back = next(s.n for s in k.stmts if type(s.node) is m.Instruction and s.node.opcode == "bra")
    whole = k.abi(init, back)
    assert [r.reg for r in whole.live_out] == ["%f1"]
    # the label before the cut: the back edge leaves the cut and re-enters it, %r3 flows around
    body = k.abi(loop, back)
    assert {r.reg for r in body.live_out} == {"%f1", "%r3"}
    assert {r.reg for r in body.live_in} == {"%f1", "%f2", "%r3"}


def test_probe_init_types_memory_by_its_integer_atomics():
    """``atom.global.max.s32`` / ``atom.add.u64`` say what the memory holds; a buffer reached
    only through them and .b32 loads was guessed f32 from its index scaling (an int counter
    filled with floats)."""
    import yaml

    from splice.probe.init import skeleton

    path = MODERN / "warp_atomics_preds.ptx"      # atomics(float*, double*, u64*, int*, int*, unsigned*, …)
    text, _rows = skeleton(path.read_text(), str(path), "_Z7atomicsPfPdPyPiS2_PjS2_PKf")
    got = [(p["dtype"], p["role"]) for p in yaml.safe_load(text)["params"]]
    assert got[:6] == [("f32", "inout"), ("f64", "inout"), ("u64", "inout"), ("u32", "inout"),
                       ("s32", "inout"), ("u32", "inout")], got


def test_notes_say_what_the_phase_table_cannot_show():
    """The notes draft of the tcgen05 matmul was titled "the epilogues of phases 1…0", said
    nothing of its 8 tcgen05.mma, and claimed the 128-byte TMA descriptor param_0 is "never
    read" (its address goes to the TMA unit through a cvt, not to an ld.param)."""
    from splice.analysis.notes import notes_markdown

    md = notes_markdown(Kernel.load(TCGEN05))
    assert md.splitlines()[0] == "# `matmul_tma_blackwell` — no phases"
    assert "Not in the table: 8 tcgen05.mma" in md
    unc = md[md.index("## 4. Uncharacterised"):]
    assert "`param_0` (128 bytes) has its address taken" in unc
    assert "`param_0` is declared 128 bytes" not in unc


# ---- sass-mix: every tensor-core opcode is counted -------------------------------------------

@pytest.mark.parametrize("op", ["QGMMA.64x128x32.F32.E4M3.E4M3", "IGMMA.64x32x32.S8.S8", "UTCHMMA",
                                "UTCQMMA.2CTA", "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X", "QMMA.16832.F32",
                                "BMMA.168256.AND.POPC", "DMMA.8x8x4", "HGMMA.64x32x16.F32"])
def test_tensor_core_sass_opcodes_are_one_class(op):
    """fp8/int8 wgmma (QGMMA/IGMMA) and tcgen05 (UTCHMMA/UTCQMMA) fell into "other": the fp8
    CUTLASS ping-pong GEMM showed 0 tensor-core instructions."""
    from splice.ptx.sass_lines import sass_class

    assert sass_class(op) == "HMMA"


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_mix_counts_fp8_and_int8_wgmma(capsys):
    from splice.cli import main

    assert main(["sass-mix", str(CONSUMERS), "--json"]) == 0
    regions = json.loads(capsys.readouterr().out)["regions"]
    assert sum(r.get("HMMA", 0) for r in regions) == 13      # 11 HGMMA + QGMMA + IGMMA


SP120 = MODERN / "handwritten_mma_sp_kind_sm120a.ptx"


def test_sparse_kind_forms_and_their_scales():
    """sm_120 sparse ``.kind::f8f6f4`` m16n8k64 (A 4 and B 4 registers: 8-bit containers) was
    "form not in the table"; a block-scaled sparse mma's scale registers follow its selector."""
    plain = Kernel.load(SP120, "sp120").phases
    scaled = Kernel.load(SP120, "sp120_scaled").phases
    for ph in plain + scaled:
        assert ph.form == "mma.sp" and ph.shape == (16, 8, 64) and not ph.notes
        assert (ph.instr["layout"]["a"], ph.instr["layout"]["b"]) == (4, 4)
    assert set(plain[0].extra_regs) == {"meta"}
    assert set(scaled[0].extra_regs) == {"meta", "scale_a", "scale_b"}


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cuts_of_sparse_kind_forms():
    from splice.cut.identity import run_module

    trials = run_module(str(SP120), "sm_120a", 3, (), epilogues=True)
    assert len({t.entry for t in trials}) == 2
    assert not [(t.entry, t.kind, t.stage, t.reason) for t in trials if not t.identical]


# ---- WMMA sub-byte forms -------------------------------------------------------------------------

WMMA_SUB = MODERN / "wmma_subbyte.ptx"


def test_wmma_sub_byte_forms_are_in_the_table():
    """``wmma.mma…m8n8k32.s32.s4.s4.s32`` and ``…m8n8k128…b1`` (and.popc / xor.popc) were "form
    not in the table"; A and B are one register, C/D two (PTX ISA 9.7.13.3)."""
    from splice.ptx import parse

    mod = parse(WMMA_SUB.read_text(), str(WMMA_SUB))
    seen = {}
    for fn in mod.entries():
        for p in Kernel(mod, fn.name).phases:
            lay = p.instr["layout"]
            seen.setdefault(fn.name, []).append((p.shape, (lay["a"], lay["b"], lay["c"]) if lay else None, p.notes))
    assert seen["wmma_s4"] == seen["wmma_u4"] == [((8, 8, 32), (1, 1, 2), [])]
    assert seen["wmma_b1"] == [((8, 8, 128), (1, 1, 2), [])] * 2         # xor.popc, then and.popc
    assert seen["wmma_bf16"] == [((16, 16, 16), (4, 4, 8), [])]


@pytest.mark.slow
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cuts_of_wmma_sub_byte_forms():
    from splice.cut.identity import run_module

    trials = run_module(str(WMMA_SUB), "sm_90", 3, (), epilogues=True)
    assert len({t.entry for t in trials}) == 5
    assert not [(t.entry, t.kind, t.stage, t.reason) for t in trials if not t.identical]


def test_probe_init_types_an_int_wmma_output():
    import yaml

    from splice.probe.init import skeleton

    text, _rows = skeleton(WMMA_SUB.read_text(), str(WMMA_SUB), "wmma_b1")
    c = yaml.safe_load(text)["params"][2]
    assert (c["dtype"], c["role"]) == ("s32", "output")     # wmma.store.d…s32 (was f32, guessed)


# ---- verify: a label the DWARF names is no second entry -----------------------------------------

def test_verify_ignores_labels_named_only_by_debug_sections(tmp_path):
    """``nvcc -G`` labels every line (``$L__tmp7:``) and its ``.section .debug_info`` names them
    by address (``.b64 $L__tmp7``): verify took that for a branch from outside into the cut and
    said "not proven" for every -G cut (the wgmma_consumers_sm90a phases built with -G too)."""
    from splice.verify.compare import verify_plan

    path = MODERN / "debug_full_G.ptx"
    k = Kernel.load(path, "_Z12debug_kernelPKfPfi")
    lab = next(s.n for s in k.stmts if type(s.node) is m.Label and s.node.name == "$L__tmp7")
    assert ".b64 $L__tmp7" in path.read_text()
    p = _cut_of(tmp_path, path, "_Z12debug_kernelPKfPfi", lab, lab + 5)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)


# ---- brx.idx goes where its .branchtargets list says ------------------------------------------

def test_brx_idx_follows_its_branchtargets():
    """``$tbl: .branchtargets $even, $odd; brx.idx %r15, $tbl;`` went to every label of the
    entry (``$join`` too), so %f2 — written on both listed paths before ``$join`` reads it —
    was live after the brx."""
    k = Kernel.load(ODD, "oddities")
    pos = next(i for i, s in enumerate(k.stmts) if getattr(s.node, "opcode", None) == "brx")
    b = k.blocks
    assert [k.stmts[b.starts[t]].node.name for t in b.succ[b.block_of[pos]]] == ["$even", "$odd"]
    assert not k.liveness.live_after("%f2", pos)
    assert k.liveness.live_after("%r14", pos)
