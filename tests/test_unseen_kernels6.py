"""Regressions from the sixth unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 6"):
a ``brx.idx`` jump table in an extracted native, wgmma groups holding control flow, fp8 split
accumulation read as one K chain, the carry flag (``add.cc``/``addc``) across a cut's edges,
struct fields read byte by byte, numba's exploded array arguments named; and the forms the
sweep checked right (wgmma with N 8/24/64, an f16 accumulator, A from registers, int8 and tf32;
Triton's persistent fp8 and grouped GEMMs; ``.ptr`` kernel parameters in four state spaces).
The kernels are under tests/data/ptx/modern (manifest.yaml, regen.sh, gen_triton.py); none of
these tests needs Triton, LLVM or a GPU."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from splice.analysis import Kernel
from splice.errors import SpliceError
from .test_unseen_kernels2 import _cut_of

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
ODD = MODERN / "handwritten_oddities.ptx"
WG = MODERN / "wgmma_odd_n_sm90a.ptx"
F16ACC = "_Z12wg_f16acc_n8PK6__halfS1_Pji"
ROLLED = "_Z19wg_f16acc_n8_rolledPK6__halfS1_Pji"
FP8_32 = MODERN / "triton_dot_fp8_imprecise_sm90a.ptx"
FP8_64 = MODERN / "triton_dot_fp8_imprecise64_sm90a.ptx"
CARRY = MODERN / "carry_chain_misc.ptx"
ADD256 = "_Z6add256PKjS0_Pj"
MUL64 = "_Z8mul64x64PKmS0_Pm"
PTRS = MODERN / "handwritten_ptr_params.ptx"
PACKED = MODERN / "llvm_packed_byval.ptx"
NUMBA = MODERN / "numba_saxpy2d_sm80.ptx"
NEW = ["wgmma_odd_n_sm90a", "bulk_dsmem_mbarrier_sm90", "carry_chain_misc", "handwritten_ptr_params",
       "llvm_packed_byval", "mma_interleave_sm89", "triton_persistent_fp8_sm90a",
       "triton_dot_fp8_imprecise64_sm90a", "triton_grouped_ptr_array_sm80", "triton_welford_rmsnorm_sm90a",
       "triton_dot_fp8_imprecise_m128_sm90a"]


def _skeleton(path, entry=None):
    from splice.probe.init import skeleton

    return skeleton(Path(path).read_text(), str(path), entry)


def _sass_same(module_text_or_path, original, arch):
    from splice.ptx.sass import compile_ptx, normalized_sass

    return normalized_sass(compile_ptx(module_text_or_path, arch).cubin) == \
        normalized_sass(compile_ptx(original, arch).cubin)


# ---- a brx.idx jump table in a native ------------------------------------------------------------

def test_an_extracted_jump_table_applies(tmp_path):
    """extract of s32-s40 of ``oddities`` writes the ``$tbl: .branchtargets $even, $odd;`` table
    inside a nested scope (as it writes a ``.callprototype``); apply refused its own native:
    "directive .branchtargets is not allowed in a native phase"."""
    p = _cut_of(tmp_path, ODD, "oddities", 32, 40)
    cut = p.text.split("// splice: cut 1")[1].split("// splice: end cut 1")[0]
    assert ".branchtargets $even, $odd;" in cut and "brx.idx" in cut


def test_a_jump_table_names_the_natives_renamed_labels(tmp_path):
    """A native's own labels get the cut's names: the table must list the new names, or ptxas
    finds no ``$ev2`` (the table would name labels that no longer exist)."""
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    (tmp_path / "n.ptx").write_text(
        "// splice-native:\n//   scratch: {t0: .b32}\n"
        "and.b32 %t0, %in0, 1;\n{\n$tb2:\n.branchtargets $ev2, $od2;\nbrx.idx %t0, $tb2;\n}\n"
        "$ev2:\nmov.f32 %out0, 0f3F800000;\nbra.uni $jn2;\n$od2:\nmov.f32 %out0, 0fBF800000;\n$jn2:\n")
    (tmp_path / "r.yaml").write_text(f"module: {ODD}\nentry: oddities\noutput: out.ptx\n"
                                     "cuts:\n  - statements: s32-s40\n    native: n.ptx\n")
    text = plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])).text
    assert ".branchtargets $Lsplice1n_ev2, $Lsplice1n_od2;" in text or \
        ".branchtargets $Lsplice1_ev2, $Lsplice1_od2;" in text
    assert "$ev2" not in text.replace("_ev2", "")


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_jump_table_cut_gives_the_original_sass(tmp_path):
    p = _cut_of(tmp_path, ODD, "oddities", 32, 40)
    assert _sass_same(p.text, ODD, "sm_90")


def test_verify_names_the_jump_table(tmp_path):
    """verify of a range holding ``brx.idx`` said "branch to None, outside the statements"."""
    from splice.verify.compare import verify_plan

    [r] = verify_plan(_cut_of(tmp_path, ODD, "oddities", 32, 40))
    assert r.verdict == "not proven" and "brx.idx" in r.reason and "None" not in r.reason


# ---- wgmma groups holding control flow -------------------------------------------------------------

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


# ---- fp8 split accumulation --------------------------------------------------------------------------

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


def test_fresh_pieces_without_a_fold_stay_apart():
    """Two mma into two accumulators summed only at the end (no running sum): not a K chain."""
    ping = [p for p in Kernel.load(MODERN / "mma_interleave_sm89.ptx", "_Z12pingpong_accPKjS0_Pfi").phases]
    assert ping and all(p.shape is None and p.accumulators == 2 for p in ping)


# ---- the carry flag ------------------------------------------------------------------------------------

def test_spec_abi_names_the_carry_flag(capsys):
    """s34-s36 of add256 are three ``addc.cc`` in the middle of an eight-word carry chain: the
    ABI listed six registers in and three out and nothing of the carry in from s33 and out to
    s37."""
    from splice.cli import main

    assert main(["spec", str(CARRY), "--entry", ADD256, "--abi", "s34-s36", "--json"]) == 0
    abi = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    assert len(abi["carry"]) == 2 and "s33" in abi["carry"][0] and "s37" in abi["carry"][1]
    assert main(["spec", str(CARRY), "--entry", ADD256, "--abi", "s31-s38", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["abi"]["carry"] == []


@pytest.mark.parametrize("first, last", [(34, 36), (31, 33), (20, 31)])
def test_a_cut_that_splits_a_carry_chain_is_refused(tmp_path, first, last):
    """extract wrote a native for s34-s36 and apply spliced it (exit 0): a native cannot
    receive or leave the carry flag, so any other code there computes other sums."""
    k = Kernel.load(CARRY, ADD256)
    from splice.cut.extract import extract

    with pytest.raises(SpliceError, match=r"carry flag.*carry chain s31-s38") as ei:
        extract(k, statements=(first, last), source_name=str(CARRY))
    assert ei.value.line is not None
    (tmp_path / "n.ptx").write_text("// splice-native:\n//   params: {}\n")
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    (tmp_path / "r.yaml").write_text(f"module: {CARRY}\nentry: {ADD256}\noutput: out.ptx\n"
                                     f"cuts:\n  - statements: s{first}-s{last}\n    native: n.ptx\n")
    with pytest.raises(SpliceError, match="carry flag"):
        plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path]))


def test_the_whole_carry_chain_cuts_and_proves(tmp_path):
    from splice.verify.compare import verify_plan

    [r] = verify_plan(_cut_of(tmp_path, CARRY, ADD256, 31, 38))
    assert r.verdict == "proved equal", r.reason


def test_mad_carry_chains_are_chains():
    """``mad.lo.cc`` / ``madc.hi`` / ``madc.hi.cc`` / ``addc`` of the 64×64 multiply: a cut
    inside is refused, naming the whole chain."""
    from splice.cut.extract import extract

    k = Kernel.load(CARRY, MUL64)
    first = next(s.n for s in k.stmts if ".cc" in getattr(s.node, "modifiers", ()))
    with pytest.raises(SpliceError, match=r"reads the carry flag"):
        extract(k, statements=(first + 1, first + 2), source_name=str(CARRY))


def test_verify_sees_a_native_that_clobbers_the_carry(tmp_path):
    """An ``add.cc`` slipped into the chain changes every carry after it; verify said "proved
    equal" (``addc`` was an operation of its registers only)."""
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan
    from splice.verify.compare import verify_plan

    _cut_of(tmp_path, CARRY, ADD256, 31, 38)
    lines = (tmp_path / "n.ptx").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("addc.cc"))
    lines.insert(at + 1, "add.cc.u32 %tx, %in0, %in0;")
    text = "\n".join(lines) + "\n"
    text = text.replace("//   scratch: {}", "//   scratch: {tx: .b32}")
    assert "tx: .b32" in text
    (tmp_path / "n.ptx").write_text(text)
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    assert r.verdict != "proved equal"


# ---- probe init: bytes put together, numba's arrays -------------------------------------------------

def test_bytes_put_together_are_one_field():
    """``blob+8..11`` read by four ``ld.param.u8`` and shl/or into one int (cvt.rn.f32.s32):
    four u8 fields; now one s32 at offset 8 (aligned, so a spec field can hold it)."""
    params = yaml.safe_load(_skeleton(PTRS, "ptr_params")[0])["params"]
    blob = next(p for p in params if p["name"] == "blob")
    assert [(f["offset"], f["dtype"]) for f in blob["fields"]] == [(0, "f64"), (8, "s32"), (12, "u8")]


def test_bytes_of_an_unaligned_value_say_which_value():
    """LLVM's packed struct: an int at byte 1, a short at 5, a float at 7, a double at 11.  A spec
    field must be aligned to its size, so the bytes stay, each saying what it is part of."""
    text, _ = _skeleton(PACKED, "packed_fields")
    assert "byte 0 of the s32 at bytes 1-4" in text and "byte 3 of the f32 at bytes 7-10" in text
    assert "byte 0 of the f64 at bytes 11-18" in text
    blob = yaml.safe_load(text)["params"][0]
    assert len(blob["fields"]) == 19


def test_numba_parameters_name_their_array():
    """numba's shapes and strides were ``null`` scalars "read as a value": now each names its
    argument and member (from the mangled argument types)."""
    text, _ = _skeleton(NUMBA)
    assert "# param_5: array argument 1 (Array(float32, 2, 'A')): shape[0]" in text
    assert "# param_26: array argument 4 (Array(float32, 2, 'A')): strides[0], in bytes" in text
    assert "# param_9: scalar argument 2 (float32)" in text and "# param_28: scalar argument 5 (int32)" in text
    assert "its shape is param_5, param_6" in text
    yaml.safe_load(text)


def test_numba_arguments_that_cannot_be_read_are_said():
    from splice.probe.numba_args import describe

    name = "_ZN8__main__6kernelB2v1E5ArrayIfLi2E1A7mutable7alignedEi"
    labels, why = describe(name, 10)
    assert why is None and labels[9] == "scalar argument 2 (int32)"
    assert describe(name, 11) == ({}, "numba's argument types make 10 parameters, the entry has 11")
    assert describe("_ZN8__main__6kernelB2v1E6RecordIxE", 1)[1].startswith(
        "numba's mangled argument types could not be read")


def test_ptr_parameters_by_state_space():
    """``.ptr .shared`` / ``.const`` / ``.local`` parameters are addresses in the kernel's own
    memory (named, not filled), ``.ptr .global`` and generic ones buffers."""
    params = {p["name"]: p for p in yaml.safe_load(_skeleton(PTRS, "ptr_params")[0])["params"]}
    assert params["out"]["kind"] == "buffer" and params["gen"]["kind"] == "buffer"
    assert all(params[n]["kind"] == "scalar" for n in ("sh", "cst", "loc"))


# ---- forms checked right (pinned) ----------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW)
def test_new_kernels_round_trip(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text


def test_triton_persistent_and_grouped_phases():
    (ph,) = Kernel.load(MODERN / "triton_persistent_fp8_sm90a.ptx").phases
    assert ph.shape == (128, 64, 64) and ph.tiles == (2, 1, 2)
    (ph,) = Kernel.load(MODERN / "triton_grouped_ptr_array_sm80.ptx").phases
    assert ph.shape == (32, 32, 32)


def test_grouped_pointer_tables_are_tables():
    """(With hp7's pointer tables: each is ``kind: table``, its count left to the user and its
    entries typed and roled by what goes through the loaded pointers.)"""
    params = yaml.safe_load(_skeleton(MODERN / "triton_grouped_ptr_array_sm80.ptx")[0])["params"]
    assert [p["kind"] for p in params[:3]] == ["table"] * 3
    assert [p["count"] for p in params[:3]] == [None] * 3
    assert [p["each"]["role"] for p in params[:3]] == ["input", "input", "output"]


def test_a_variable_touched_only_in_a_called_function_is_named():
    """``hits`` (a ``.common .global`` counter, no initialiser) is bumped only inside ``helper``,
    which both entries call: neither skeleton said the entry writes a module-scope variable
    the probe does not compare."""
    path = MODERN / "handwritten_linkage_multi.ptx"
    for entry in ("first", "second"):
        text, _ = _skeleton(path, entry)
        (hits,) = [g for g in yaml.safe_load(text)["globals"] if g["name"] == "hits"]
        assert hits["role"] == "inout"            # listed, so compared (hp7's globals:)
        assert "- name: hits" in text and "named only in a function the entry calls" in text


def test_mutual_recursion_and_linkage_modules_round_trip():
    from splice.ptx import emit, parse

    for name in ("mutual_recursion_local", "handwritten_linkage_multi"):
        path = MODERN / f"{name}.ptx"
        assert emit(parse(path.read_text(), str(path))) == path.read_text()


# ---- filled skeletons: they load here, they run on the GPU -----------------------------------------

SPECS = [("probes/numba_saxpy2d_sm80.yaml", NUMBA), ("probes/llvm_packed_byval.yaml", PACKED)]


@pytest.mark.parametrize("spec, module", SPECS)
def test_filled_round6_skeletons_load_and_match(spec, module):
    """numba's skeleton filled from its argument labels; LLVM's packed struct with its byte
    fields filled little-endian: both are legal specs of their modules."""
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    s = load_spec(str(ROOT / spec))
    assert check(s, module.read_text(), str(module)).params


@pytest.mark.gpu
@pytest.mark.parametrize("spec, module", SPECS)
def test_filled_round6_skeletons_run(tmp_path, capsys, spec, module):
    from splice.cli import main

    rc = main(["probe", str(ROOT / spec), str(module), "--json", "--report-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"], out


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


CARRY_THROUGH = """.version 8.0
.target sm_90
.address_size 64
.visible .entry through(.param .u64 p)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [p];
	ld.global.u32 %r1, [%rd1];
	ld.global.u32 %r2, [%rd1+4];
	add.cc.u32 %r3, %r1, %r2;
	mul.lo.u32 %r4, %r1, 3;
	xor.b32 %r5, %r4, %r2;
	addc.u32 %r6, %r5, %r1;
	st.global.u32 [%rd1+8], %r6;
	ret;
}
"""


def test_a_cut_the_carry_flows_through_is_refused(tmp_path, capsys):
    """s5-s6 (mul, xor) lie between ``add.cc`` and ``addc`` and touch no carry: a native there
    that used ``add.cc`` itself would change the sum after it, and verify compares registers
    only.  Refused like a split chain; ``spec --abi`` says the carry flows through."""
    from splice.cli import main
    from splice.cut.extract import extract

    path = tmp_path / "t.ptx"
    path.write_text(CARRY_THROUGH)
    with pytest.raises(SpliceError, match=r"s7 \(addc.u32\) \(after the range\) reads the carry flag that s4"):
        extract(Kernel.load(path), statements=(5, 6), source_name=str(path))
    assert main(["spec", str(path), "--abi", "s5-s6", "--json"]) == 0
    (line,) = json.loads(capsys.readouterr().out)["entries"][0]["abi"]["carry"]
    assert "through the whole range" in line
    assert extract(Kernel.load(path), statements=(4, 7), source_name=str(path))["text"]


def test_a_carry_set_before_a_plain_addc_still_flows_out(tmp_path):
    """``add.cc`` then ``addc`` (no ``.cc``: it reads the carry and leaves it) in the range, and
    another ``addc`` after it: the carry still flows out of the range.  Only the range's last
    carry statement was looked at, a reader, so nothing was said."""
    from splice.cut.extract import extract

    path = tmp_path / "t.ptx"
    path.write_text(CARRY_THROUGH.replace("\tmul.lo.u32 %r4, %r1, 3;\n", "\taddc.u32 %r4, %r1, 3;\n"))
    with pytest.raises(SpliceError, match=r"s7 \(addc.u32\) \(after the range\) reads the carry flag that s4"):
        extract(Kernel.load(path), statements=(4, 6), source_name=str(path))


def test_numba_3d_arrays_and_a_tuple_are_named():
    """A 3-D readonly C array, an int64 and a ``UniTuple(float64, 2)`` (two parameters): the
    tuple made the whole entry unreadable before tuples were read."""
    text, rows = _skeleton(MODERN / "numba_3d_tuple_sm80.ptx")
    assert len(rows) == 25
    assert "# param_4: array argument 1 (Array(float64, 3, 'C')): data (its shape is param_5, param_6, param_7;" in text
    assert "# param_22: scalar argument 3 (int64)" in text
    assert "# param_24: tuple argument 4, member 1 (float64)" in text


def test_numba_names_with_huge_numbers_are_refused_not_expanded():
    """A name is text: a 5000-digit length, a tuple of 10^8 members or an Array of 10^9
    dimensions is "could not be read", neither a ValueError from int() nor a list of 10^8 labels."""
    from splice.probe.numba_args import describe

    for name in ("_ZN" + "9" * 5000 + "xE", "_ZN8__main__1kE8UniTupleIfLi99999999EE",
                 "_ZN8__main__1kE5ArrayIfLi999999999E1C7mutable7alignedE"):
        labels, why = describe(name, 3)
        assert labels == {} and why.startswith("numba's mangled argument types could not be read")


def test_a_jump_table_outside_a_scope_says_where_it_may_go():
    from splice.cut.native import parse_native

    with pytest.raises(SpliceError, match=r"\.branchtargets is not allowed in a native phase outside a \{ \} scope"):
        parse_native("$t: .branchtargets $a;\nbrx.idx %in0, $t;\n$a:\n", "n.ptx")
