"""Tensor-core forms, wgmma groups, loops, irregular groups, in-place accumulators, entry names.

The kernels are real compiler output (tests/data/ptx/modern: Triton, CUTLASS DSL, nvcc) and
hand-written ones in the LLVM-NVPTX style (tests/data/ptx/tensor_core, README there)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.analysis import mma_forms as mf
from splice.errors import SpliceError
from splice.ptx import parse_file

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
TC = ROOT / "tests" / "data" / "ptx" / "tensor_core"


# ---- the form table ----------------------------------------------------------------------------

@pytest.mark.parametrize("key, regs", [
    # (form, shape, A type, C/D type) -> A, B, C, D registers per thread (PTX ISA 9.7.14 / 9.7.15)
    (("mma", "m16n8k16", "f16", "f32"), (4, 2, 4, 4)),
    (("mma", "m16n8k16", "f16", "f16"), (4, 2, 2, 2)),
    (("mma", "m16n8k8", "bf16", "f32"), (2, 1, 4, 4)),
    (("mma", "m8n8k4", "f16", "f32"), (2, 2, 8, 8)),       # quad pairs
    (("mma", "m8n8k4", "f64", "f64"), (1, 1, 2, 2)),
    (("mma", "m16n8k8", "tf32", "f32"), (4, 2, 4, 4)),
    (("mma", "m16n8k4", "tf32", "f32"), (2, 1, 4, 4)),
    (("mma", "m16n8k32", "s8", "s32"), (4, 2, 4, 4)),
    (("mma", "m8n8k32", "s4", "s32"), (1, 1, 2, 2)),
    (("mma", "m16n8k256", "b1", "s32"), (4, 2, 4, 4)),
    (("mma", "m16n8k32", "e4m3", "f16"), (4, 2, 2, 2)),
    (("mma.sp", "m16n8k32", "f16", "f32"), (4, 4, 4, 4)),
    (("wgmma", "m64n128k16", "f16", "f32"), (4, 8, 64, 64)),
    (("wgmma", "m64n64k32", "e4m3", "f32"), (4, 4, 32, 32)),
])
def test_layouts_follow_the_isa(key, regs):
    lay = mf.LAYOUTS[key]
    assert (lay.a, lay.b, lay.c, lay.d) == regs


def test_every_instruction_of_the_corpora_agrees_with_its_layout():
    seen = 0
    for f in sorted(MODERN.glob("*.ptx")) + sorted(TC.glob("*.ptx")):
        mod = parse_file(str(f))
        for fn in mod.entries():
            if fn.body is None:
                continue
            for p in Kernel(mod, fn.name).phases:
                assert p.instr["layout"] is not None, (f.name, p.opcode)
                assert not [n for n in p.notes if "layout" in n or "table" in n], (f.name, p.notes)
                seen += 1
    assert seen >= 20


def test_zoo_forms_and_sparse_metadata():
    k = Kernel.load(TC / "mma_forms_zoo.ptx")
    forms = [(p.form, p.instr["shape"], p.instr["types"]["a"]) for p in k.phases]
    assert forms == [("mma", "m8n8k4", "f64"), ("mma", "m16n8k8", "tf32"), ("mma", "m16n8k32", "s8"),
                     ("mma", "m16n8k256", "b1"), ("mma", "m8n8k4", "f16"), ("mma", "m16n8k16", "bf16"),
                     ("mma.sp", "m16n8k32", "f16")]
    assert k.phases[2].instr["satfinite"]
    sp = k.phases[6]
    assert sp.extra_regs == {"meta": ["%r0"]} and sp.instr["immediates"] == {"sel": "0x0"}
    abi = k.phase_abi(7)
    assert [(r.role, r.reg) for r in abi.live_in if r.role == "meta"] == [("meta", "%r0")]


# ---- wgmma groups ------------------------------------------------------------------------------

def test_triton_wgmma_group_is_a_phase_with_its_abi():
    k = Kernel.load(MODERN / "triton_matmul_wgmma_sm90a.ptx")
    (p,) = k.phases
    assert p.form == "wgmma" and len(p.mma) == 4 and p.shape == (64, 128, 64) and p.regular
    assert p.group == {"fence": 368, "commit": 397, "wait": 467}
    assert p.extra_regs == {"scale_d": ["%p14"]}
    assert p.instr["immediates"] == {"imm_scale_a": "1", "imm_scale_b": "1", "imm_trans_a": "0",
                                     "imm_trans_b": "1"}
    abi = k.phase_abi(1)
    acc_in = [r.reg for r in abi.live_in if r.role == "acc"]
    acc_out = [r.reg for r in abi.live_out if r.role == "acc"]
    assert acc_in == acc_out == [f"%r{i}" for i in range(272, 336)]
    assert not [r for r in abi.live_out if r.role == "d"]


def test_wgmma_loop_without_static_count_is_per_iteration(capsys):
    from splice.cli import main

    k = Kernel.load(MODERN / "triton_matmul_wgmma_sm90a.ptx")
    lp = k.phases[0].loop
    assert lp["trip_count"] is None and "not a constant" in lp["trip"] and lp["executions"] is None
    assert main(["spec", str(MODERN / "triton_matmul_wgmma_sm90a.ptx"), "--phases"]) == 0
    out = capsys.readouterr().out
    assert "4 per iteration" in out and "wgmma m64n128k16" in out


def test_spec_abi_on_wgmma_phase(capsys):
    from splice.cli import main

    assert main(["spec", str(MODERN / "triton_matmul_wgmma_sm90a.ptx"), "--abi", "phase:1", "--json"]) == 0
    abi = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    roles = {r["role"] for r in abi["live_in"]}
    assert "acc" in roles and len([r for r in abi["live_out"] if r["role"] == "acc"]) == 64


# ---- loops and trip counts -------------------------------------------------------------------------

def test_counted_loop_trip_count_and_executions():
    k = Kernel.load(TC / "mma_k_loop.ptx", "mma_k_loop")
    p = k.phases[0]
    assert p.loop["trip_count"] == 8 and p.executions == 8 and p.loop["depth"] == 1
    n = Kernel.load(TC / "mma_k_loop.ptx", "mma_k_nested")
    q = n.phases[0]
    assert q.loop["trip_count"] == 8 and q.loop["depth"] == 2 and q.executions == 32
    outer = [lp for lp in n.loops if lp.depth == 1]
    assert [lp.trip_count for lp in outer] == [4]


def test_loop_counts_in_spec_json(capsys):
    from splice.cli import main

    assert main(["spec", str(TC / "mma_k_loop.ptx"), "--json"]) == 0
    ents = json.loads(capsys.readouterr().out)["entries"]
    assert [(e["mma_total"], e["mma_executed"]) for e in ents] == [(1, 8), (1, 32)]
    assert ents[0]["phases"][0]["mma_executed"] == 8


# ---- irregular groups ---------------------------------------------------------------------------------

def test_irregular_group_is_reported_as_what_it_is(capsys):
    from splice.cli import main

    k = Kernel.load(TC / "mma_irregular.ptx")
    (p,) = k.phases
    assert not p.regular and p.shape is None
    assert p.accumulators == 6 and p.products == {1: 5, 2: 1} and p.distinct == (2, 4)
    assert main(["spec", str(TC / "mma_irregular.ptx"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]["phases"][0]
    assert d["regular"] is False and d["shape"] is None and d["products"] == {"1": 5, "2": 1}
    assert main(["spec", str(TC / "mma_irregular.ptx"), "--phases"]) == 0
    out = capsys.readouterr().out
    assert "irregular: 6 acc" in out and "48×" not in out


def test_regular_phases_stay_regular():
    k = Kernel.load(MODERN / "cutlass_dsl_gemm_tma_wgmma_sm90a.ptx")
    (p,) = k.phases
    assert p.regular and p.shape == (128, 128, 64) and p.tiles == (2, 1, 4)


# ---- in-place accumulators: extract applies unchanged ---------------------------------------------

def test_extract_names_in_place_accumulators_and_applies(tmp_path):
    from splice.cut.extract import extract
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    src = MODERN / "triton_matmul_wgmma_sm90a.ptx"
    k = Kernel.load(src)
    r = extract(k, phase=1, source_name=str(src))
    assert "%acc0" in r["text"] and "%c0" not in r["text"] and "%d0" not in r["text"]
    outs = {x["symbol"] for x in r["live_out"]}
    assert outs == {f"%acc{i}" for i in range(64)} and outs <= {x["symbol"] for x in r["live_in"]}
    (tmp_path / "p1.ptx").write_text(r["text"])
    (tmp_path / "r.yaml").write_text(f"module: {src}\narch: sm_90a\ncuts:\n  - phase: 1\n    native: p1.ptx\n")
    p = plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path]), k)
    rows = p.cuts[0].binding.table
    assert sum(1 for x in rows if x["dir"] == "inout") == 64


def test_statement_cut_with_a_loop_counter_applies(tmp_path):
    from splice.cut.extract import extract
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    src = TC / "mma_k_loop.ptx"
    k = Kernel.load(src, "mma_k_loop")
    r = extract(k, statements=(20, 23), source_name=str(src))     # mma .. add.s32 %r10
    assert "%io0" in r["text"]
    (tmp_path / "n.ptx").write_text(r["text"])
    (tmp_path / "r.yaml").write_text(f"module: {src}\nentry: mma_k_loop\ncuts:\n"
                                     "  - statements: s20-s23\n    native: n.ptx\n")
    plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path]), k)


# ---- entry names -------------------------------------------------------------------------------------

def test_entry_by_substring_demangled_and_ambiguous():
    mod = parse_file(str(MODERN / "wgmma_sm90a.ptx"))
    assert Kernel(mod, "rs_bf16").name == "_Z13wgmma_rs_bf16PKjPK13__nv_bfloat16Pf"
    assert Kernel(mod, "wgmma_gemm_f16").name == "_Z14wgmma_gemm_f16PK6__halfS1_Pfi"
    with pytest.raises(SpliceError) as e:
        Kernel(mod, "wgmma")
    assert "matches 2 entries" in e.value.message and "_Z13wgmma_rs_bf16" in e.value.detail
    with pytest.raises(SpliceError):
        Kernel(mod, "nothing_like_it")


def test_builtin_demangler_and_short_names():
    from splice.analysis.entries import _builtin, short

    assert _builtin("_Z14wgmma_gemm_f16PK6__halfS1_Pfi") == "wgmma_gemm_f16(…)"
    assert _builtin("_ZN4cute6kernelEv") == "cute::kernel(…)"
    long = "kernel_" + "x" * 200
    assert len(short(long)) <= 60 and "…" in short(long)


# ---- vocabulary by evidence ------------------------------------------------------------------------

def test_standins_use_the_profile_and_keep_W():
    import yaml

    from splice.analysis.spec import build_spec

    k = Kernel.load(ROOT / "corpus" / "enc5.ptx")
    d = build_spec(k, epilogues=False)
    assert d["weight_proven"] and d["profile"].endswith("dldn-swin.yaml")
    want = yaml.safe_load((ROOT / "corpus" / "enc5.expect.yaml").read_text())["param_offsets"]
    got = {f["name"]: f["offset"] for f in d["params"] if f["name"]}
    assert {n: got[n] for n in want if n in got} == {n: o for n, o in want.items() if n in got}
    assert got["weights"] == 40 and got["plane_arena"] == 48


def test_unproven_weight_field_is_neutral(capsys):
    from splice.analysis.vocab import weight_evidence
    from splice.cli import main

    k = Kernel.load(TC / "mma_forms_zoo.ptx")
    ok, why = weight_evidence(k)
    assert not ok and "written" in why
    assert main(["spec", str(TC / "mma_forms_zoo.ptx"), "--phases"]) == 0
    out = capsys.readouterr().out
    assert "weight image" not in out and "weight bytes" not in out and "B bytes (param_0+0)" in out


def test_store_vocabulary(tmp_path):
    from splice.analysis.vocab import (GLOBAL_STORE, LOCAL_STORE, SCATTER, Profile, store_kinds,
                                       vocabulary)

    src = (TC / "mma_irregular.ptx").read_text()
    k = Kernel.load(TC / "mma_irregular.ptx")
    assert set(store_kinds(k).values()) == {GLOBAL_STORE}     # neutral without a profile
    asks = vocabulary(k, Profile("p.yaml", ("*",), {}, ("plane-arena-scatter",)))
    assert set(store_kinds(k, asks).values()) == {SCATTER}     # param_2 is only written, lane-strided
    # read-modify-write of C (beta*C): the same buffer is loaded first -> a plain global store
    rmw = src.replace("\tld.global.v4.u32 \t{%r8, %r9, %r10, %r11}, [%rd9];",
                      "\tld.global.v4.u32 \t{%r8, %r9, %r10, %r11}, [%rd10];")
    rmw = rmw.replace("\tst.global.v4.f32 \t[%rd10+0]", "\tst.local.v4.f32 \t[%rd10+0]")
    (tmp_path / "rmw.ptx").write_text(rmw)
    k2 = Kernel.load(tmp_path / "rmw.ptx")
    kinds = set(store_kinds(k2, vocabulary(k2, Profile("p.yaml", ("*",), {}, ("plane-arena-scatter",)))).values())
    assert kinds == {GLOBAL_STORE, LOCAL_STORE}


def test_profile_option_and_bad_profile(tmp_path, capsys):
    from splice.cli import main

    prof = tmp_path / "p.yaml"
    prof.write_text("entries: ['mma_*']\nfields:\n  param_2+0: out\n")
    assert main(["spec", str(TC / "mma_irregular.ptx"), "--json", "--profile", str(prof)]) == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]
    assert {f["name"] for f in d["params"]} >= {"out"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("fields: [1, 2\n")
    assert main(["spec", str(TC / "mma_irregular.ptx"), "--profile", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err


def test_notes_describe_irregular_groups():
    from splice.analysis.notes import notes_markdown

    text = notes_markdown(Kernel.load(TC / "mma_irregular.ptx"))
    assert "irregular: 6 acc, products 5×1 + 1×2" in text


def test_triton_sm80_matmul_k_loop():
    k = Kernel.load(TC / "triton_matmul_mma_k256_sm80.ptx")
    (p,) = k.phases
    assert p.form == "mma" and len(p.mma) == 16 and p.regular and p.tiles == (2, 4, 2)
    assert p.loop["trip_count"] == 8 and p.executions == 8
    assert "%rd25 = 0; %rd25 += 64" in p.loop["trip"]
    r = Kernel.load(TC / "triton_matmul_mma_sm80.ptx").phases[0]
    assert r.loop["trip_count"] is None and "does not start from a constant" in r.loop["trip"]
    abi = Kernel.load(TC / "triton_matmul_mma_sm80.ptx").phase_abi(1)
    assert len([x for x in abi.live_out if x.role == "acc"]) == 32


LOOPS = """.version 8.7
.target sm_90
.address_size 64
.visible .entry loops(.param .u64 p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  mov.u32 %r1, 0;
$L_top:
  setp.ge.s32 %p1, %r1, 10;
  @%p1 bra $L_exit;
  add.s32 %r1, %r1, 1;
  bra.uni $L_top;
$L_exit:
  mov.u32 %r2, 0;
$L_neg:
  add.s32 %r2, %r2, 1;
  setp.ge.s32 %p2, %r2, 5;
  @!%p2 bra $L_neg;
  mov.u32 %r3, 20;
$L_down:
  setp.gt.u32 %p3, %r3, 4;
  add.s32 %r3, %r3, -4;
  @%p3 bra $L_down;
  ret;
}
"""


def test_loop_forms():
    from splice.ptx import parse

    k = Kernel(parse(LOOPS))
    got = [(lp.trip_count, lp.why.split(":")[0]) for lp in k.loops]
    assert got[0] == (None, "unknown")                   # top-tested: the back edge is unconditional
    assert "top-tested" in k.loops[0].why
    assert got[1][0] == 5                                # @!p: runs until the test holds
    assert got[2][0] == 5                                # test before the step: 20,16,12,8,4


def test_values_live_at_a_back_edge_out_of_the_cut_are_live_outs():
    """The epilogue s23-s34 of mma_k_nested holds the loops' latches: their back edges leave the
    cut for headers before it, so the counters and pointers it steps are live-outs (in place)."""
    k = Kernel.load(TC / "mma_k_loop.ptx", "mma_k_nested")
    abi = k.abi(23, 34)
    io = {r.reg for r in abi.live_out if r.role == "io"}
    assert io == {"%rd8", "%rd10", "%r10", "%r11"}
    assert {r.reg for r in abi.live_in if r.role == "io"} == io
