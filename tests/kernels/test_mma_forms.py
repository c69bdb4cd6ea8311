"""mma.sync, mma.sp and wmma kernels: every form of the PTX ISA's warp-level matrix multiply
(f16/bf16/tf32/f64/fp8, integer and sub-byte, sparse with its metadata, sm_120's block-scaled
`.kind::` forms, Volta's mixed C/D types) is a phase of its true tile, cut and spliced back to the
original SASS.  Kernels from nvcc (mma_shapes_misc, mma_sparse_int_f64, wmma_gemm, wmma_subbyte,
mma_interleave_sm89, mma_epilogues_sm90) and by hand (handwritten_*), read 2026-11-30 and
2026-12-01 from tests/data/ptx/modern (manifest.yaml, regen.sh)."""
from __future__ import annotations

import json

import pytest
import yaml

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import parse

from .bundled import MODERN, identity_recipe, plan_of

MISC = MODERN / "mma_shapes_misc.ptx"
SPARSE = MODERN / "mma_sparse_int_f64.ptx"
SM120 = MODERN / "mma_blockscale_sm120a.ptx"
SP120 = MODERN / "handwritten_mma_sp_kind_sm120a.ptx"
WMMA_SUB = MODERN / "wmma_subbyte.ptx"
ISA_RARE = MODERN / "handwritten_isa_rare.ptx"
VOLTA = MODERN / "handwritten_volta_mma_mixed.ptx"
MMA_RARE = MODERN / "mma_shapes_rare.ptx"


def test_cut_keeps_the_rest_of_its_last_line(tmp_path):
    """nvcc copies inline asm verbatim: the tf32 mma shares its line with the scope's closing
    ``}``.  The site ends in a ``// splice: end cut`` comment, which used to swallow that brace
    (ptxas: "Parsing error near '.entry'")."""
    from splice.cut.extract import extract

    k = Kernel.load(MISC, "tf32_k8")
    ph = k.phases[0]
    line = MISC.read_text().splitlines()[k.stmt(ph.first).line - 1]
    assert line.rstrip().endswith("}"), "the sample no longer has the brace on the mma's line"
    rec = identity_recipe(tmp_path, MISC, k.name, "phase: 1", extract(k, phase=1)["text"])
    p = plan_of(rec)
    body = p.text[p.text.index(".entry " + k.name):]
    body = body[:body.index("\n.visible .entry", 1)] if "\n.visible .entry" in body[1:] else body
    opened = sum(ln.count("{") - ln.count("}") for ln in body.splitlines() if not ln.lstrip().startswith("//"))
    assert opened == 0
    assert any(ln.strip() == "}" for ln in p.text[p.text.index("// splice: end cut 1"):].splitlines()[1:2])
    parse(p.text, "spliced.ptx")     # the whole module still parses (the next .entry included)


@pytest.mark.slow
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_every_mma_form_of_the_sample_round_trips_through_a_cut():
    from splice.cut.identity import run_module

    trials = run_module(str(MISC), "sm_90", 3, (), epilogues=False)
    assert len({t.entry for t in trials}) == 5
    bad = [(t.entry, t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]
    assert not bad


def test_phase_shapes_follow_the_instruction():
    mod = parse(MISC.read_text(), str(MISC))
    got = {}
    for fn in mod.entries():
        for p in Kernel(mod, fn.name).phases:
            got.setdefault(fn.name, set()).add((p.instr["shape"], p.instr["types"]["a"], p.tile))
    shapes = {s for v in got.values() for s in v}
    assert shapes == {("m16n8k8", "tf32", (16, 8, 8)), ("m16n8k32", "s8", (16, 8, 32)),   # tile of the opcode
                      ("m8n8k4", "f16", (8, 8, 4)), ("m8n8k4", "f64", (8, 8, 4)),
                      ("m16n8k256", "b1", (16, 8, 256)), ("m8n8k32", "s4", (8, 8, 32))}


def test_joined_phases_keep_one_form():
    """b1 m16n8k256 then s4 m8n8k32 with an accumulator initialised between: two phases."""
    k = Kernel.load(MISC, "b1_xor_s4")
    assert [p.instr["shape"] for p in k.phases] == ["m16n8k256", "m8n8k32"]
    s8 = Kernel.load(MISC, "s8_k32").phases
    assert [(len(p.mma), p.shape, p.tiles) for p in s8] == [(2, (16, 16, 32), (1, 2, 1))]


@pytest.mark.parametrize("key, regs", [
    # (form, shape, A type, C/D type) -> A, B, C, D registers per thread (PTX ISA 9.7.13.3)
    (("wmma", "m16n16k16", "f16", "f32"), (8, 8, 8, 8)),     # f16: eight .f16x2, any shape
    (("wmma", "m16n16k16", "f16", "f16"), (8, 8, 4, 4)),
    (("wmma", "m32n8k16", "f16", "f32"), (8, 8, 8, 8)),
    (("wmma", "m16n16k16", "bf16", "f32"), (4, 4, 8, 8)),
    (("wmma", "m32n8k16", "bf16", "f32"), (8, 2, 8, 8)),
    (("wmma", "m16n16k8", "tf32", "f32"), (4, 4, 8, 8)),
    (("wmma", "m16n16k16", "s8", "s32"), (2, 2, 8, 8)),
    (("wmma", "m8n8k4", "f64", "f64"), (1, 1, 2, 2)),
])
def test_wmma_layouts_follow_the_isa(key, regs):
    from splice.analysis import mma_forms as mf

    lay = mf.LAYOUTS[key]
    assert (lay.a, lay.b, lay.c, lay.d) == regs


def test_wmma_mma_are_phases():
    """nvcc's WMMA code used to be "0 phases" with nothing said."""
    path = MODERN / "wmma_gemm.ptx"
    for entry, shape, a in (("wmma_f16", (16, 16, 16), "f16"), ("wmma_tf32", (16, 16, 8), "tf32")):
        k = Kernel.load(path, entry)
        assert k.phases and all(p.form == "wmma" and p.shape == shape and not p.notes for p in k.phases)
        assert {p.instr["types"]["a"] for p in k.phases} == {a}
        abi = k.phase_abi(1)
        lay = k.phases[0].instr["layout"]
        roles = [r.role for r in abi.live_in]
        assert roles.count("a") == lay["a"] and roles.count("b") == lay["b"]


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


def test_sparse_mma_reads_its_metadata():
    """mma.sp: A is half the registers of the dense form, the metadata register is an input."""
    k = Kernel.load(SPARSE, "sp_s8")
    [p] = k.phases
    assert p.form == "mma.sp" and p.shape == (16, 8, 64) and not p.notes
    assert p.instr["layout"]["a"] == 4 and p.instr["layout"]["sparse"]
    abi = k.phase_abi(1)
    assert set(p.extra_regs["meta"]) <= {r.reg for r in abi.live_in}


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


@pytest.mark.parametrize("op", ["QGMMA.64x128x32.F32.E4M3.E4M3", "IGMMA.64x32x32.S8.S8", "UTCHMMA",
                                "UTCQMMA.2CTA", "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X", "QMMA.16832.F32",
                                "BMMA.168256.AND.POPC", "DMMA.8x8x4", "HGMMA.64x32x16.F32"])
def test_tensor_core_sass_opcodes_are_one_class(op):
    """fp8/int8 wgmma (QGMMA/IGMMA) and tcgen05 (UTCHMMA/UTCQMMA) fell into "other": the fp8
    CUTLASS ping-pong GEMM showed 0 tensor-core instructions."""
    from splice.ptx.sass_lines import sass_class

    assert sass_class(op) == "HMMA"


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


def test_wmma_sub_byte_forms_are_in_the_table():
    """``wmma.mma…m8n8k32.s32.s4.s4.s32`` and ``…m8n8k128…b1`` (and.popc / xor.popc) were "form
    not in the table"; A and B are one register, C/D two (PTX ISA 9.7.13.3)."""
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

    from splice.probe.language.init import skeleton

    text, _rows = skeleton(WMMA_SUB.read_text(), str(WMMA_SUB), "wmma_b1")
    c = yaml.safe_load(text)["params"][2]
    assert (c["dtype"], c["role"]) == ("s32", "output")     # wmma.store.d…s32 (was f32, guessed)


def test_a_guarded_mma_gives_the_phase_no_shape():
    """``@!%p1 mma…`` runs only where the guard holds: the phase was "regular 16×8×48" (three
    k-steps), claiming a product the lanes may not make.  Now irregular, the guard named."""
    ph = Kernel.load(ISA_RARE, entry="rare_mma").phases[0]
    assert len(ph.mma) == 3 and ph.shape is None and not ph.regular
    assert any("guarded by @!%p1" in n for n in ph.notes)


def test_spec_json_of_the_guarded_phase(capsys):

    assert main(["spec", str(ISA_RARE), "--entry", "rare_mma", "--json"]) == 0
    ph = json.loads(capsys.readouterr().out)["entries"][0]["phases"][0]
    assert ph["shape"] is None and ph["tiles"] is None   # no grid: accumulators × products


def test_volta_mma_with_mixed_accumulator_types(capsys):
    """m8n8k4 with D f32 from C f16 (8 D, 4 C registers) and f16/f32 forms: one phase each, the
    phase ABI's C is the four .b32 halves, D the eight floats."""
    k = Kernel.load(VOLTA)
    assert [(p.shape, len(p.mma)) for p in k.phases] == [((8, 8, 4), 1)] * 4
    # the layout table keyed C by D's type: "s21: c has 4 registers, the mma layout 8" (false)
    assert [(p.instr["layout"]["c"], p.instr["layout"]["d"]) for p in k.phases] == [(4, 8), (4, 4), (8, 8), (4, 4)]
    assert not [n for p in k.phases for n in p.notes]
    assert main(["spec", str(VOLTA), "--abi", "phase:1", "--json"]) == 0
    abi = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    assert [r["role"] for r in abi["live_in"]].count("c") == 4
    assert [(r["role"], r["type"]) for r in abi["live_out"]] == [("d", ".f32")] * 8


def test_mma_whose_d_is_not_its_c():
    """tf32 m16n8k4 twice, the second's C the first's D in new registers: a K chain (16×8×8);
    f16 m16n8k8 with a fresh C each k-step: one phase per mma, none claiming a longer K."""
    (ph,) = Kernel.load(MMA_RARE, "_Z12tf32_m16n8k4PKfS0_S0_Pf").phases
    assert ph.shape == (16, 8, 8) and ph.tiles == (1, 1, 2)
    hm = Kernel.load(MMA_RARE, "_Z14hmma_f16acc_k8PKjS0_S0_Pji").phases
    assert hm and all(len(p.mma) == 1 and p.shape == (16, 8, 8) for p in hm)


def test_fresh_pieces_without_a_fold_stay_apart():
    """Two mma into two accumulators summed only at the end (no running sum): not a K chain."""
    ping = [p for p in Kernel.load(MODERN / "mma_interleave_sm89.ptx", "_Z12pingpong_accPKjS0_Pfi").phases]
    assert ping and all(p.shape is None and p.accumulators == 2 for p in ping)


def test_mma_sync_b_from_registers_is_unchanged():
    """mma.sync's B fragment is registers (loaded by ld.global here): not a descriptor."""
    k = Kernel.load(MODERN / "mma_epilogues_sm90.ptx", "_Z14bf16_gemm_reluPKjS0_PjS1_i")
    assert k.phases and all(p.b_source != "descriptor" for p in k.phases)


def test_phase_shapes_of_mma_epilogue_kernels():
    """Per warp and K step, as read against the sources."""
    mm = MODERN / "mma_epilogues_sm90.ptx"
    assert {p.shape for p in Kernel.load(mm, "_Z14bf16_gemm_reluPKjS0_PjS1_i").phases} == {(32, 16, 16)}
    assert {p.shape for p in Kernel.load(mm, "_Z17int4_gemm_dequantPKjS0_PfPKfi").phases} == {(16, 8, 64)}
    (ph,) = Kernel.load(mm, "_Z15dmma_alpha_betaPKdS0_Pdddi").phases
    assert ph.shape == (16, 16, 16) and ph.tiles == (1, 2, 1)


ROUND_TRIP = ["mma_interleave_sm89", "mma_epilogues_sm90"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
