"""wgmma (Hopper warpgroup MMA) kernels: a group's forms, its K loop (unrolled, rolled, with control
flow inside the fence..commit group), N of 8 to 256, A from registers, B always a shared-memory
descriptor, scale-d 0 and the split accumulation Triton writes for fp8 (`max_num_imprecise_acc`),
its accumulators in the register-pressure roles and verify's account of a changed operand.
Kernels from nvcc (wgmma_consumers_sm90a, wgmma_odd_n_sm90a, ws_pipeline_tma_wgmma_sm90a) and
Triton (triton_dot_fp8_imprecise*_sm90a), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main

from .bundled import MODERN, cut_of

CONSUMERS = MODERN / "wgmma_consumers_sm90a.ptx"
FP8 = MODERN / "triton_dot_fp8_imprecise_sm90a.ptx"
WG = MODERN / "wgmma_odd_n_sm90a.ptx"
F16ACC = "_Z12wg_f16acc_n8PK6__halfS1_Pji"
ROLLED = "_Z19wg_f16acc_n8_rolledPK6__halfS1_Pji"
FP8_32 = MODERN / "triton_dot_fp8_imprecise_sm90a.ptx"
FP8_64 = MODERN / "triton_dot_fp8_imprecise64_sm90a.ptx"
WS_TMA = MODERN / "ws_pipeline_tma_wgmma_sm90a.ptx"


def test_a_wgmma_group_of_several_forms_has_no_shape():
    """A warpgroup's wgmma group mixing f16 k16 with tf32 k8 (and s8 / e5m2 / sparse) on one
    accumulator is not tile x k-steps: irregular, described, and named as mixed."""
    k = Kernel.load(CONSUMERS)
    mixed = [p for p in k.phases if len({s.node.name for s in p.mma}) > 1]
    assert len(mixed) == len(k.phases) == 6
    assert all(p.shape is None and not p.regular and p.notes[0].startswith("mixed opcodes") for p in mixed)
    last = k.phases[-1]
    assert last.accumulators == 2 and last.extra_regs["meta"] and last.extra_regs["scale_d"]


@pytest.mark.needs("ptxas", "nvdisasm")
def test_sass_mix_counts_fp8_and_int8_wgmma(capsys):

    assert main(["sass-mix", str(CONSUMERS), "--json"]) == 0
    regions = json.loads(capsys.readouterr().out)["regions"]
    assert sum(r.get("HMMA", 0) for r in regions) == 13      # 11 HGMMA + QGMMA + IGMMA


def test_fp8_split_accumulation_is_one_k_chain():
    """``max_num_imprecise_acc=32``: each k32 wgmma starts a fresh accumulator that add.f32 folds
    into the running one.  First read (2026-12-01) as irregular (no shape); the fold is now read as
    one 64×64×128 K chain (test_split_accumulation_is_one_k_chain below)."""
    (ph,) = Kernel.load(FP8).phases
    assert len(ph.mma) == 4 and ph.shape == (64, 64, 128) and ph.regular


def test_a_k_loop_inside_a_wgmma_group_is_no_shape():
    """nvcc unrolls ``for k < ksteps`` by four inside one fence..commit group, plus a remainder
    loop: five wgmma in two loops.  The phase was "regular 64×8×80" — a K made of the
    statement count, while the real K is 16·ksteps (run-time)."""
    (ph,) = Kernel.load(WG, F16ACC).phases
    assert ph.shape is None and not ph.regular and len(ph.mma) == 5
    assert any("control flow inside the group" in n for n in ph.notes)


def test_a_rolled_k_loop_inside_a_wgmma_group_is_its_loop():
    """One wgmma in a loop that lies between the group's fence and commit: the phase's loop was
    the fence's (none), so the phase "ran once"; it is the loop around the wgmma."""
    (ph,) = Kernel.load(WG, ROLLED).phases
    assert ph.shape == (64, 8, 16) and ph.loop is not None and ph.executions is None


def test_wgmma_forms_of_other_n():
    """n8 f16-accumulator, n24 bf16 with A from registers, n64 s8×u8, n8 tf32: true shapes."""
    shapes = {e: [p.shape for p in Kernel.load(WG, e).phases] for e in
              ("_Z14wg_bf16_rs_n24PKjPK13__nv_bfloat16Pf", "_Z11wg_s8u8_n64PKaPKhPi", "_Z10wg_tf32_n8PKfS0_Pf")}
    assert list(shapes.values()) == [[(64, 24, 64)], [(64, 64, 64)], [(64, 8, 32)]]
    (ph,) = Kernel.load(WG, "_Z14wg_bf16_rs_n24PKjPK13__nv_bfloat16Pf").phases
    assert ph.instr["a_in_registers"] and len(ph.d_regs) == 12


@pytest.mark.parametrize("path, pieces", [(FP8_32, 4), (FP8_64, 2)])
def test_split_accumulation_is_one_k_chain(path, pieces):
    """``max_num_imprecise_acc``: each piece starts a fresh accumulator (scale-d 0) and add.f32
    folds it into the running sum.  The phase was "irregular, 4 accumulators", no shape; it is
    one 64×64×128 K chain whose C and D are the running sum."""
    (ph,) = Kernel.load(path).phases
    assert ph.shape == (64, 64, 128) and ph.tiles == (1, 1, 4) and ph.regular
    assert any(f"split accumulation: {pieces} pieces" in n for n in ph.notes)
    assert ph.c_regs == ph.d_regs and len(ph.c_regs) == 32          # the sum, carried by the loop
    pieces_d = {x.name for s in ph.mma for x in s.node.operands[0].items}
    assert not set(ph.c_regs) & pieces_d


def test_a_wgmma_with_scale_d_zero_reads_no_accumulator():
    """``scale-d`` 0 computes D = A·B: its D registers are no input.  The roles table read them
    (``RW0``), so the split-accumulation phase's ABI took the four pieces' 128 D registers as
    live-ins it never reads (165 inputs; 37 now: the running sum, descriptors and the rest)."""
    from splice.analysis.roles import raw_defs_uses

    k = Kernel.load(FP8_32)
    ph = k.phases[0]
    pieces_d = {x.name for s in ph.mma for x in s.node.operands[0].items}
    abi = k.abi(ph.first, ph.last)
    assert not pieces_d & {r.reg for r in abi.live_in} and len(abi.live_in) == 37
    defs, uses = raw_defs_uses(ph.mma[0].node)
    assert set(defs) == {x.name for x in ph.mma[0].node.operands[0].items} and not set(defs) & set(uses)
    rolled = Kernel.load(WG, ROLLED).phases[0].mma[0].node       # scale-d a predicate: reads D
    assert set(raw_defs_uses(rolled)[0]) <= set(raw_defs_uses(rolled)[1])


def test_the_split_accumulation_phase_still_proves(tmp_path):
    """With the pieces' D no input any more, verify must not read the old D of a scale-d-0
    wgmma either (the native's scratch would be 'undefined' against the original's inputs)."""
    from splice.cut.extract import extract
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan
    from splice.verify.compare import verify_plan

    (tmp_path / "n.ptx").write_text(extract(Kernel.load(FP8_32), phase=1)["text"])
    (tmp_path / "r.yaml").write_text(f"module: {FP8_32}\nentry: dot_fp8_imprecise\noutput: o.ptx\n"
                                     "cuts:\n  - phase: 1\n    native: n.ptx\n")
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    assert r.verdict == "proved equal", r.reason


def test_split_accumulation_of_two_m_tiles_is_two_k_chains():
    """BLOCK_M 128 on one warpgroup: two m64 tiles, each folding its fresh k32 pieces into its
    own running sum.  The phase was "irregular, 4 accumulators"; it is 128×64×64, tiles 2×1×2."""
    (ph,) = Kernel.load(MODERN / "triton_dot_fp8_imprecise_m128_sm90a.ptx").phases
    assert ph.shape == (128, 64, 64) and ph.tiles == (2, 1, 2) and ph.regular
    assert any("2 running sums" in n for n in ph.notes) and len(ph.c_regs) == 64


def test_wgmma_b_operand_is_a_shared_descriptor():
    """Every wgmma reads B through a shared-memory matrix descriptor (PTX ISA 9.7.15.5.1): the
    64-bit register is an address, not the B fragment.  The phase table said B "registers" and
    the notes "P1's B operand is register-resident … (e.g. V vs Vᵀ)", for every wgmma kernel."""
    for path in (WS_TMA, MODERN / "wgmma_sm90a.ptx", MODERN / "wgmma_odd_n_sm90a.ptx"):
        k = Kernel.load(path)
        wg = [p for p in k.phases if p.form.startswith("wgmma")]
        assert wg, path
        assert {p.b_source for p in wg} == {"descriptor"}, path


def test_notes_do_not_call_a_wgmma_b_register_resident():
    from splice.analysis.notes import notes_markdown

    text = notes_markdown(Kernel.load(WS_TMA))
    assert "register-resident" not in text
    assert "B shared memory through a wgmma descriptor" in text     # operands by def-use


@pytest.mark.slow
def test_verify_names_a_flipped_wgmma_transpose_briefly(tmp_path):
    """The first wgmma of the consumer's K step with its B transposed (imm-trans-b 0 -> 1):
    the reason printed each of the 32 D elements of both sides, ``wgmma(…)[0], … wgmma(…)[31]``
    twice per output (36 KB for one cut), alike on both sides.  Now the run is one
    ``wgmma(…)[0..31]`` and the reason names the operand where the forms part."""
    import re

    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan
    from splice.verify.compare import verify_plan

    cut_of(tmp_path, WS_TMA, "_Z17ws_gemm_tma_wgmma14CUtensorMap_stS_S_i", 131, 192)
    text = (tmp_path / "n.ptx").read_text()
    text, n = re.subn(r"p, 1, 1, 0, 0;", "p, 1, 1, 0, 1;", text, count=1)
    assert n == 1
    (tmp_path / "n.ptx").write_text(text)
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    assert r.verdict == "not proven"
    assert "wgmma(…)[0..31]" in r.reason and "wgmma(…)[1]" not in r.reason
    assert "they part at operand 39 of wgmma" in r.reason and ": 1 here, 0 in the original" in r.reason
    assert len(r.reason) < 600, len(r.reason)


def test_pressure_counts_wgmma_accumulators_as_d():
    """``spec --pressure`` gave every wgmma phase "D 0 C 0 A 0 B 0" and its 32 f32 accumulators
    as ``temp`` (roles were read for ``mma.*`` only); mma.sync phases had D/A/B."""
    from splice.analysis.pressure import pressure, register_roles

    k = Kernel.load(WS_TMA)
    roles = register_roles(k)
    ph = k.phases[0]
    d = {k._resolve(r, k._scope_of[k.first_pos_of(ph.first)])[0] for r in ph.d_regs}
    assert len(d) == 32 and {roles[x] for x in d} == {"D"}
    peak = next(p for p in pressure(k).peaks if p.region == "phase 1")
    assert peak.by_role.get("D", 0) >= 32, peak.by_role
    # A from registers (wgmma_odd_n's bf16 n24): A, its accumulators D
    k = Kernel.load(MODERN / "wgmma_odd_n_sm90a.ptx", "_Z14wg_bf16_rs_n24PKjPK13__nv_bfloat16Pf")
    roles = register_roles(k)
    assert "A" in set(roles.values()) and "D" in set(roles.values())


def test_phase_shapes_of_the_warp_specialised_pipeline():
    """Per warpgroup and K step, as read against the source."""
    shapes = [(p.shape, p.tiles) for p in Kernel.load(WS_TMA).phases]
    assert shapes == [((64, 64, 64), (1, 1, 4))] * 3       # K loop unrolled x2 + its remainder


ROUND_TRIP = ["wgmma_odd_n_sm90a"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
