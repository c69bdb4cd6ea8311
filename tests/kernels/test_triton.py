"""Triton's kernels: its epilogues binding narrow values in wide registers, a dot's accumulators
zeroed between its mma, its phases tiles of their opcode, int64 strides and fp16/bf16 scalars
typed in the probe skeleton, persistent, grouped and int8 GEMMs.  Made by
tests/data/ptx/modern/gen_triton.py (Triton is not needed to run these tests), read 2026-11-30
and 2026-12-01."""
from __future__ import annotations

import pytest
import yaml

from splice.analysis import Kernel
from splice.ptx import model as m

from .bundled import MODERN, identity_recipe, plan_of, skeleton

INT8 = MODERN / "triton_matmul_int8_sm80.ptx"
ARGS = MODERN / "triton_many_args_sm80.ptx"


def test_triton_int8_epilogue_binds(tmp_path):
    """Triton's int8 matmul moves bytes through ``ld.shared.b8 %rs1`` (a ``.b16``): PTX allows a
    data register wider than the type of ld/st/cvt (ISA 5.2.3); binding used to refuse it."""
    from splice.cut.extract import extract

    k = Kernel.load(INT8)
    e = k.epilogues[0]
    text = extract(k, statements=(e.first, e.last))["text"]
    assert any(".b8" in ln and "ld.shared" in ln for ln in text.splitlines())
    rec = identity_recipe(tmp_path, INT8, k.name, f"statements: s{e.first}-s{e.last}", text, "sm_80")
    assert plan_of(rec).cuts


def test_accumulator_initialisation_does_not_split_a_phase():
    """Triton's QK^T zeroes each accumulator right before its first mma; the phase is the whole
    16x32x32 dot (1x4x2 m16n8k16), not runs of one mma and an irregular rest."""
    k = Kernel.load(MODERN / "triton_attn_fwd_sm80.ptx")
    assert [(len(p.mma), p.shape, p.regular) for p in k.phases] == [(8, (16, 32, 32), True)] * 2
    qk = k.phases[0]
    between = [s for s in k.stmts if qk.first < (s.n or 0) < qk.last
               and isinstance(s.node, m.Instruction) and not s.node.opcode == "mma"]
    assert between and all(s.node.opcode == "mov" for s in between)
    abi = k.phase_abi(1)
    inits = {k.defs_uses(s.node)[0][0] for s in between}
    assert not inits & {r.reg for r in abi.live_in}          # written inside, not inputs
    assert inits <= {r.reg for r in abi.live_out}


@pytest.mark.parametrize("name, shapes", [
    ("triton_dot_fp64_sm80.ptx", {"m8n8k4"}),
    ("triton_dot_tf32x3_sm80.ptx", {"m16n8k8"}),
    ("triton_attn_bwd_sm80.ptx", {"m16n8k16"}),
    ("triton_attn_causal_sm80.ptx", {"m16n8k16"}),
])
def test_triton_phases_are_tiles_of_their_opcode(name, shapes):
    """Each phase's tile is its mma's shape and a regular phase's M/N/K is tile x tiles."""
    k = Kernel.load(MODERN / name)
    assert k.phases
    for p in k.phases:
        assert p.instr["shape"] in shapes
        if p.regular:
            assert tuple(p.shape) == tuple(t * n for t, n in zip(p.tile, p.tiles))


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("name", ["triton_dot_fp64_sm80.ptx", "triton_dot_tf32x3_sm80.ptx"])
def test_identity_cuts_of_fp64_and_tf32x3_dots(name):
    """Every phase and epilogue: extract -> apply gives ptxas' original SASS."""
    from splice.cut.identity import run_module

    trials = run_module(str(MODERN / name), "sm_80", 3, (), epilogues=True)
    assert trials
    assert not [(t.entry, t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]


def test_triton_int64_strides_are_scalars_not_buffers():
    """Triton with int64 indexing multiplies its ``i64`` strides into offsets
    (``mul.lo.s64 %rd, %rd_stride, %rd_row``) and adds them to the pointers: the strides were
    "buffers" of f16 (6 buffers for a kernel with 3 pointers), so a spec filled from the skeleton
    passes device pointers as strides."""
    from splice.probe.language.init import skeleton

    path = MODERN / "triton_dot_1warp_i64_sm80.ptx"
    _text, rows = skeleton(path.read_text(), str(path))
    assert [r["param"] for r in rows if r["kind"] == "buffer"] == [0, 1, 2]
    assert [r["kind"] for r in rows[6:9]] == ["scalar"] * 3          # stride_am, stride_bk, stride_cm


def test_triton_half_scalars_are_typed_by_their_use():
    """Triton passes fp16/bf16 scalars as ``.param .align 2 .b8 p[2]`` read by ``ld.param.b16``;
    the ``cvt.f32.f16`` / ``cvt.f32.bf16`` that reads the value types the field."""
    params = yaml.safe_load(skeleton(ARGS)[0])["params"]
    assert [f["dtype"] for f in params[8]["fields"]] == ["f16"]
    assert [f["dtype"] for f in params[9]["fields"]] == ["bf16"]
    assert params[10] == {"name": "param_10", "kind": "scalar", "dtype": "f64", "value": None}
    assert sum(p["kind"] == "buffer" for p in params) == 18


def test_triton_persistent_and_grouped_phases():
    (ph,) = Kernel.load(MODERN / "triton_persistent_fp8_sm90a.ptx").phases
    assert ph.shape == (128, 64, 64) and ph.tiles == (2, 1, 2)
    (ph,) = Kernel.load(MODERN / "triton_grouped_ptr_array_sm80.ptx").phases
    assert ph.shape == (32, 32, 32)


def test_grouped_pointer_tables_are_tables():
    """(With the probe's pointer tables, docs/probe-spec.md: each is ``kind: table``, its count left to the user and its
    entries typed and roled by what goes through the loaded pointers.)"""
    params = yaml.safe_load(skeleton(MODERN / "triton_grouped_ptr_array_sm80.ptx")[0])["params"]
    assert [p["kind"] for p in params[:3]] == ["table"] * 3
    assert [p["count"] for p in params[:3]] == [None] * 3
    assert [p["each"]["role"] for p in params[:3]] == ["input", "input", "output"]


def test_phase_shapes_of_the_int8_dot():
    """Per warpgroup and K step, as read against the source."""
    (ph,) = Kernel.load(MODERN / "triton_int8_dot_bias_relu_sm90a.ptx").phases
    assert ph.shape == (128, 64, 64) and ph.tiles == (2, 1, 2)


ROUND_TRIP = [
    "triton_persistent_fp8_sm90a",
    "triton_dot_fp8_imprecise64_sm90a",
    "triton_grouped_ptr_array_sm80",
    "triton_welford_rmsnorm_sm90a",
    "triton_dot_fp8_imprecise_m128_sm90a",
    "triton_int8_dot_bias_relu_sm90a",
]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
