"""Regressions from the seventh unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 7"):
a wgmma's B operand (always a shared-memory matrix descriptor) read as register-resident, a
verify explanation that printed the same text for both sides, and the forms the sweep checked
right (a CUTLASS 3.x-style warp-specialized TMA + wgmma pipeline, TMA im2col / 5-D / reduce,
lop3 / prmt-mode integer code, Blackwell cluster launch control, bf16 / u4 / f64 mma K loops).
The kernels are under tests/data/ptx/modern (manifest.yaml, regen.sh); none of these tests needs
a GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.analysis import Kernel

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
WS = MODERN / "ws_pipeline_tma_wgmma_sm90a.ptx"
NEW = ["ws_pipeline_tma_wgmma_sm90a", "tma_modes_sm90a", "int_bitops_lop3", "clc_persistent_sm100a",
       "mma_epilogues_sm90", "triton_int8_dot_bias_relu_sm90a"]


def _kernel(path, entry=None):
    return Kernel.load(path, entry)


# ---- a wgmma's B operand is a shared-memory descriptor ----------------------------------------------

def test_wgmma_b_operand_is_a_shared_descriptor():
    """Every wgmma reads B through a shared-memory matrix descriptor (PTX ISA 9.7.15.5.1): the
    64-bit register is an address, not the B fragment.  The phase table said B "registers" and
    the notes "P1's B operand is register-resident … (e.g. V vs Vᵀ)", for every wgmma kernel."""
    for path in (WS, MODERN / "wgmma_sm90a.ptx", MODERN / "wgmma_odd_n_sm90a.ptx"):
        k = _kernel(path)
        wg = [p for p in k.phases if p.form.startswith("wgmma")]
        assert wg, path
        assert {p.b_source for p in wg} == {"descriptor"}, path


def test_notes_do_not_call_a_wgmma_b_register_resident():
    from splice.analysis.notes import notes_markdown

    text = notes_markdown(_kernel(WS))
    assert "register-resident" not in text
    assert "B from a shared-memory descriptor" in text


def test_mma_sync_b_from_registers_is_unchanged():
    """mma.sync's B fragment is registers (loaded by ld.global here): not a descriptor."""
    k = _kernel(MODERN / "mma_epilogues_sm90.ptx", "_Z14bf16_gemm_reluPKjS0_PjS1_i")
    assert k.phases and all(p.b_source != "descriptor" for p in k.phases)


# ---- verify: an explanation that prints both sides the same ----------------------------------------

BITOPS = MODERN / "int_bitops_lop3.ptx"
BYTE_OPS = "_Z8byte_opsPKjS0_Pjijjj"


def _mutated_verify(tmp_path, old, new):
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan
    from splice.verify.compare import verify_plan
    from .test_unseen_kernels2 import _cut_of

    _cut_of(tmp_path, BITOPS, BYTE_OPS, 22, 47)
    text = (tmp_path / "n.ptx").read_text()
    assert old in text
    (tmp_path / "n.ptx").write_text(text.replace(old, new, 1))
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    return r


def test_verify_names_where_two_masked_operands_part(tmp_path):
    """``mul24.hi`` changed to ``mul24.lo`` deep under a chain of ``lop3`` (an operation that
    may mask a difference): verify said "lop3 operand 1 operand is lop3.b32(lop3(…), mul24(…),
    …) here, lop3.b32(lop3(…), mul24(…), …) in the original" — the same text twice, the
    difference elided.  It now names where the two forms part."""
    r = _mutated_verify(tmp_path, "mul24.hi.u32", "mul24.lo.u32")
    assert r.verdict == "not proven"
    assert "mul24.lo" in r.reason and "mul24.hi" in r.reason, r.reason


def test_verify_names_a_changed_prmt_mode(tmp_path):
    """``prmt.b32.ecl`` changed to ``.ecr``, the first of twelve values folded by lop3s."""
    r = _mutated_verify(tmp_path, "prmt.b32.ecl", "prmt.b32.ecr")
    assert r.verdict == "not proven"
    assert "prmt.ecr" in r.reason and "prmt.ecl" in r.reason, r.reason


# ---- probe init: a TMA tensor map is said to be one --------------------------------------------------

def _skeleton(path, entry=None):
    from splice.probe.init import skeleton

    return skeleton(Path(path).read_text(), str(path), entry)[0]


def test_skeleton_names_tensor_map_params():
    """A ``CUtensorMap`` parameter (its address handed to ``cp.async.bulk.tensor`` through
    ``mov``/``cvta.param``) had ``fields: []`` "no ld.param reads a byte of it": nothing said
    that it is a tensor map the probe cannot build."""
    text = _skeleton(MODERN / "tma_modes_sm90a.ptx")
    assert text.count("a TMA tensor map (its address goes to s") == 5
    text = _skeleton(WS)
    assert text.count("a TMA tensor map") == 3
    # Triton passes the descriptor's 32-bit address (mov.b32 %r, param): the same
    assert _skeleton(MODERN / "triton_matmul_tma_sm90a.ptx").count("a TMA tensor map") == 3


def test_a_struct_read_through_its_address_is_not_a_tensor_map():
    text = _skeleton(MODERN / "int128_params.ptx")
    assert "tensor map" not in text


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
    from .test_unseen_kernels2 import _cut_of

    _cut_of(tmp_path, WS, "_Z17ws_gemm_tma_wgmma14CUtensorMap_stS_S_i", 131, 192)
    text = (tmp_path / "n.ptx").read_text()
    text, n = re.subn(r"p, 1, 1, 0, 0;", "p, 1, 1, 0, 1;", text, count=1)
    assert n == 1
    (tmp_path / "n.ptx").write_text(text)
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    assert r.verdict == "not proven"
    assert "wgmma(…)[0..31]" in r.reason and "wgmma(…)[1]" not in r.reason
    assert "they part at operand 39 of wgmma" in r.reason and ": 1 here, 0 in the original" in r.reason
    assert len(r.reason) < 600, len(r.reason)


# ---- pressure: a wgmma's accumulators are D ----------------------------------------------------------

def test_pressure_counts_wgmma_accumulators_as_d():
    """``spec --pressure`` gave every wgmma phase "D 0 C 0 A 0 B 0" and its 32 f32 accumulators
    as ``temp`` (roles were read for ``mma.*`` only); mma.sync phases had D/A/B."""
    from splice.analysis.pressure import pressure, register_roles

    k = _kernel(WS)
    roles = register_roles(k)
    ph = k.phases[0]
    d = {k._resolve(r, k._scope_of[k.first_pos_of(ph.first)])[0] for r in ph.d_regs}
    assert len(d) == 32 and {roles[x] for x in d} == {"D"}
    peak = next(p for p in pressure(k).peaks if p.region == "phase 1")
    assert peak.by_role.get("D", 0) >= 32, peak.by_role
    # A from registers (round 6's wgmma_odd_n, bf16 n24): A, its accumulators D
    k = _kernel(MODERN / "wgmma_odd_n_sm90a.ptx", "_Z14wg_bf16_rs_n24PKjPK13__nv_bfloat16Pf")
    roles = register_roles(k)
    assert "A" in set(roles.values()) and "D" in set(roles.values())


# ---- forms checked right (pinned) ----------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW)
def test_new_kernels_round_trip(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text


def test_round7_phase_shapes():
    """Per warpgroup / warp and K step, as read against the sources."""
    shapes = [(p.shape, p.tiles) for p in Kernel.load(WS).phases]
    assert shapes == [((64, 64, 64), (1, 1, 4))] * 3       # K loop unrolled x2 + its remainder
    mm = MODERN / "mma_epilogues_sm90.ptx"
    assert {p.shape for p in Kernel.load(mm, "_Z14bf16_gemm_reluPKjS0_PjS1_i").phases} == {(32, 16, 16)}
    assert {p.shape for p in Kernel.load(mm, "_Z17int4_gemm_dequantPKjS0_PfPKfi").phases} == {(16, 8, 64)}
    (ph,) = Kernel.load(mm, "_Z15dmma_alpha_betaPKdS0_Pdddi").phases
    assert ph.shape == (16, 16, 16) and ph.tiles == (1, 2, 1)
    (ph,) = Kernel.load(MODERN / "triton_int8_dot_bias_relu_sm90a.ptx").phases
    assert ph.shape == (128, 64, 64) and ph.tiles == (2, 1, 2)


def test_tma_im2col_offsets_are_live_in():
    """The 4-D im2col load reads %rs3 (set before the range) and %rs4 (set inside it)."""
    from splice.analysis.abi import cut_abi

    k = Kernel.load(MODERN / "tma_modes_sm90a.ptx")
    abi = cut_abi(k, 28, 39)
    regs = [r.reg for r in abi.live_in]
    assert "%rs3" in regs and "%rs4" not in regs and "%rs2" not in regs


def test_notes_say_shared_reads_they_do_not_count():
    """``raw`` is read by the wgmma (through descriptors) and by the TMA store's shared source;
    the notes said "14 stores, 0 loads" (``ld``/``ldmatrix`` and the like only) and nothing
    more: a write-only array, read as written."""
    from splice.analysis.notes import notes_markdown

    line = next(ln for ln in notes_markdown(_kernel(WS)).splitlines() if ln.startswith("* `raw`"))
    assert "0 loads" in line and "not counted" in line
    assert "wgmma" in line and "bulk cop" in line, line
    # an entry with no such reader says nothing more
    mm = notes_markdown(_kernel(MODERN / "mma_epilogues_sm90.ptx", "_Z14bf16_gemm_reluPKjS0_PjS1_i"))
    assert "not counted" not in mm
