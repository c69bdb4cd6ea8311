"""Regressions from the fifth unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 5"):
``tcgen05.dealloc`` reading its tensor-memory address, extract refusing a range apply refuses
(a split ``{ }`` scope), ``probe init`` on by-value structs read as values (``__int128``,
``struct {…; int n}``, Triton's fp16/bf16 scalars), packed half atomics, a module's
``.extern .shared`` and ``.blocksareclusters``; and the forms the sweep checked right (PTX 6.x
headers, Volta mma with mixed C/D types, LLVM's old wmma spelling, mma whose D is not its C,
numba's exploded array parameters).  The kernels are under tests/data/ptx/modern
(manifest.yaml, regen.sh, gen_triton.py, gen_numba.py); none of these tests needs Triton, numba,
LLVM or a GPU."""
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
TCGEN = MODERN / "tcgen05_ldsm_b8_sm100a.ptx"
TC_WS = "_Z10tcgen05_wsmmjPj"
DSMEM = MODERN / "dsmem_cluster_sm90.ptx"
REDUCE = "_Z14cluster_reducePKfPf"
I128 = MODERN / "int128_params.ptx"
ARGS = MODERN / "triton_many_args_sm80.ptx"
ATOMS = MODERN / "atomic_ref_orders.ptx"
HALF_ATOMS = "_Z12half_atomicsP6__halfP7__half2P13__nv_bfloat16P14__nv_bfloat162PdPKf"
PTX90 = MODERN / "handwritten_ptx90_directives.ptx"
VOLTA = MODERN / "handwritten_volta_mma_mixed.ptx"
WMMA61 = MODERN / "llvm_wmma_ptx61.ptx"
RARE = MODERN / "mma_shapes_rare.ptx"
FP8 = MODERN / "triton_dot_fp8_imprecise_sm90a.ptx"
NUMBA = MODERN / "numba_saxpy2d_sm80.ptx"


def _skeleton(path, entry=None):
    from splice.probe.init import skeleton

    return skeleton(Path(path).read_text(), str(path), entry)


# ---- tcgen05.dealloc reads its address ---------------------------------------------------------

def test_tcgen05_dealloc_reads_its_tensor_memory_address(tmp_path):
    """``tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128`` frees the columns at %r2: the
    roles table had no tcgen05 row, so operand 0 was a destination and a cut ending before the
    dealloc did not export %r2 (the identity cut of s10-s33 compiled to other SASS)."""
    from splice.analysis.roles import raw_defs_uses

    k = Kernel.load(TCGEN, TC_WS)
    dealloc = next(s.node for s in k.stmts if getattr(s.node, "name", "").startswith("tcgen05.dealloc"))
    assert raw_defs_uses(dealloc) == ([], ["%r2"])
    assert [r.reg for r in k.abi(10, 33).live_out] == ["%r2", "%p3"]
    ld = next(s.node for s in k.stmts if getattr(s.node, "name", "").startswith("tcgen05.ld."))
    assert raw_defs_uses(ld) == (["%r9"], ["%r2"])      # tcgen05.ld still writes its vector


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_before_the_dealloc_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = _cut_of(tmp_path, TCGEN, TC_WS, 10, 33)
    assert normalized_sass(compile_ptx(p.text, "sm_100a").cubin) == \
        normalized_sass(compile_ptx(TCGEN, "sm_100a").cubin)


# ---- extract refuses what apply refuses ----------------------------------------------------------

def test_extract_refuses_a_range_that_splits_a_scope(tmp_path, capsys):
    """s14-s27 of cluster_reduce ends inside the ``{ }`` of cooperative groups' cluster barrier
    asm: extract wrote a native (closing the scope itself) and apply then refused it, "splits a
    { } scope".  extract now says so first, at the range's first line."""
    from splice.cli import main

    k = Kernel.load(DSMEM, REDUCE)
    from splice.cut.extract import extract

    with pytest.raises(SpliceError) as ei:
        extract(k, statements=(14, 27), source_name=str(DSMEM))
    assert "splits a { } scope" in str(ei.value) and ei.value.line == k.stmts[k.first_pos_of(14)].line
    assert main(["extract", str(DSMEM), "--entry", REDUCE, "--statements", "s14-s27",
                 "-o", str(tmp_path / "n.ptx")]) == 2
    assert "dsmem_cluster_sm90.ptx:" in capsys.readouterr().err and not (tmp_path / "n.ptx").exists()
    assert _cut_of(tmp_path, DSMEM, REDUCE, 18, 23).cuts                 # a range of whole blocks


LOOPS = MODERN / "inline_asm_loops.ptx"
ASM_LOOPS = "_Z9asm_loopsPKjPjS0_"


def test_a_range_inside_an_asm_scope_keeps_its_labels_visible(tmp_path):
    """s57-s61 lies inside the fourth inlined ``popc_loop`` asm scope and holds its ``LOOP4:``
    label (``%=`` numbered by nvcc), whose ``bra`` back edge is after the range.  extract
    wrapped the range in a second ``{ }``, apply put that inside the original scope, and ptxas
    said "Unknown symbol" for the back edge.  The native is no longer wrapped."""
    k = Kernel.load(LOOPS, ASM_LOOPS)
    label = k.stmts[k.first_pos_of(59)].node
    assert type(label).__name__ == "Label"
    p = _cut_of(tmp_path, LOOPS, ASM_LOOPS, 57, 61)
    native = (tmp_path / "n.ptx").read_text()
    code = [ln for ln in native.splitlines() if not ln.startswith("//")]
    assert f"{label.name}:" in code and not any(ln.strip() in ("{", "}") for ln in code)
    assert p.text.count(f"{label.name}:") == 1


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_asm_scope_range_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = _cut_of(tmp_path, LOOPS, ASM_LOOPS, 57, 61)
    assert normalized_sass(compile_ptx(p.text, "sm_90").cubin) == normalized_sass(compile_ptx(LOOPS, "sm_90").cubin)


def test_a_range_holding_a_whole_asm_scope_keeps_it():
    """A range over the whole inlined asm block (its ``.reg`` declarations included) keeps the
    block and its declarations in the native, as before."""
    from splice.cut.extract import extract

    k = Kernel.load(LOOPS, ASM_LOOPS)
    text = extract(k, statements=(18, 30), source_name=str(LOOPS))["text"]
    code = [ln.strip() for ln in text.splitlines() if not ln.startswith("//")]
    assert "{" in code and ".reg .pred p;" in code


CONTROL = MODERN / "control_misc.ptx"
RECURSE = "_Z22recurse_print_indirectPiPf"


def test_an_indirect_call_sequence_in_a_native(tmp_path):
    """extract of a range holding an indirect call sequence writes its ``.callprototype`` inside
    the call's ``{ }`` (as nvcc does); apply refused its own extract: "directive .callprototype
    is not allowed in a native phase".  Kept where a nested scope holds it, like the call's
    ``.param`` slots; a prototype label of the native's own is renamed with its call."""
    p = _cut_of(tmp_path, CONTROL, RECURSE, 2, 48)
    assert ".callprototype" in (tmp_path / "n.ptx").read_text()
    assert p.text.count(".callprototype") == CONTROL.read_text().count(".callprototype")
    from splice.cut.native import parse_native

    with pytest.raises(SpliceError, match="directive .callprototype is not allowed"):
        parse_native("proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n", "n.ptx")


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_indirect_call_range_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = _cut_of(tmp_path, CONTROL, RECURSE, 2, 48)
    assert normalized_sass(compile_ptx(p.text, "sm_90").cubin) == normalized_sass(compile_ptx(CONTROL, "sm_90").cubin)


ODD = MODERN / "handwritten_oddities.ptx"


def test_a_range_starting_at_a_scopes_first_instruction_takes_the_scope(tmp_path):
    """s10-s18 of ``oddities`` starts at the first instruction of a scope that shadows ``%r5`` and
    ``%p1`` (its declarations have no statement number) and ends after it.  apply replaced the
    whole scope (``widen_to_blocks``), but extract flattened it and resolved the ABI's ``%r5`` in
    the inner scope: the native wrote the outer ``%r5`` (in3) with the inner one's sums and read
    an unset scratch where the outer one was used (exit 0, verify "not proven", other SASS).
    Now the scope is kept with its declarations and the ABI resolved where the native goes."""
    from splice.verify.compare import verify_plan

    p = _cut_of(tmp_path, ODD, "oddities", 10, 18)
    code = [ln.strip() for ln in (tmp_path / "n.ptx").read_text().splitlines() if not ln.startswith("//")]
    assert code.count(".reg .b32 %r5;") == 2 and ".reg .pred %p1;" in code
    assert code[-3].startswith("add.s32") and code[-3].endswith("%in3;")      # s16 reads the outer %r5
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)


def test_a_call_target_list_stays_with_its_call(tmp_path):
    """``ptarget: .calltargets twice, thrice;`` inside the indirect call's scope is kept by a native
    as ``.callprototype`` is (a range holding it was refused for that directive)."""
    p = _cut_of(tmp_path, ODD, "oddities", 22, 30)
    cut = p.text.split("// splice: cut 1")[1].split("// splice: end cut 1")[0]
    assert ".calltargets twice, thrice;" in cut and ", ptarget;" in cut


# ---- probe init: by-value structs read as values -------------------------------------------------

def test_struct_scalars_are_fields_to_fill_in():
    """``__int128 a`` (``.param .align 16 .b8 a[16]``, read by ``ld.param.v2.u64``) and a struct
    whose ``int n`` the kernel compares with its index were structs with no field (the filled-in
    spec refused "expected a non-empty list"); next to pointer fields such scalars were left out
    and passed as zeros, so ``if (i >= n) return`` made every thread return, comparing nothing."""
    text, rows = _skeleton(I128, "_Z9i128_mathno4WidePKnPn")
    params = yaml.safe_load(text)["params"]
    a, _b, w = params[0], params[1], params[2]
    assert [(f["offset"], f["dtype"], f["value"]) for f in a["fields"]] == [(0, "u64", None), (8, "u64", None)]
    assert [f["offset"] for f in w["fields"]] == [0, 8, 16, 24, 32] and w["fields"][-1]["dtype"] == "u32"
    assert rows[2]["scalars"] == 5 and rows[2]["fields"] == 0


def test_cutlass_params_scalars_are_listed():
    """CUTLASS 2.x's 368-byte ``Params``: the pointers were listed, the problem size (0/4/8), the
    swizzled grid (12/16), the strides, alpha/beta (288/292) and the k-iterations (336) were
    not, so a filled-in skeleton ran a GEMM of size 0."""
    params = yaml.safe_load(_skeleton(MODERN / "cutlass_fp8_gemm_sm89.ptx")[0])["params"]
    scalars = {f["offset"]: f["dtype"] for f in params[0]["fields"] if f["kind"] == "scalar"}
    assert {0: "u32", 4: "u32", 8: "u32", 288: "f32", 292: "f32", 336: "u32"}.items() <= scalars.items()
    assert not set(scalars) & {64, 112, 192, 272}          # the A/B/C/D pointers stay buffers


def test_pointer_fields_keep_their_bytes():
    """A struct of six pointers read by ``ld.param.u64``: pointer fields only (no scalar at the
    same bytes), and the kernel's ``int n`` parameter stays a top-level scalar."""
    text, rows = _skeleton(I128, "_Z9ptr_array4Ptrsi")
    (s, n) = yaml.safe_load(text)["params"]
    assert [f["kind"] for f in s["fields"]] == ["buffer"] * 7 and rows[0]["scalars"] == 0
    assert n["kind"] == "scalar"


def test_filled_struct_scalars_load_and_check(tmp_path):
    """The skeleton with its nulls filled loads and matches the module (struct scalar fields of
    u64/u32 at their offsets are a legal spec)."""
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    text, _ = _skeleton(I128, "_Z9i128_mathno4WidePKnPn")
    text = (text.replace("value: null", "value: 3").replace("grid: null", "grid: [1, 1, 1]")
            .replace("block: null", "block: [32, 1, 1]").replace("shape: null", "shape: [64]"))
    (tmp_path / "s.yaml").write_text(text)
    spec = load_spec(str(tmp_path / "s.yaml"))
    assert len(check(spec, I128.read_text(), str(I128)).params) == 5
    assert [f.value for f in spec.params[2].fields] == [(3,)] * 5


def test_triton_half_scalars_are_typed_by_their_use():
    """Triton passes fp16/bf16 scalars as ``.param .align 2 .b8 p[2]`` read by ``ld.param.b16``;
    the ``cvt.f32.f16`` / ``cvt.f32.bf16`` that reads the value types the field."""
    params = yaml.safe_load(_skeleton(ARGS)[0])["params"]
    assert [f["dtype"] for f in params[8]["fields"]] == ["f16"]
    assert [f["dtype"] for f in params[9]["fields"]] == ["bf16"]
    assert params[10] == {"name": "param_10", "kind": "scalar", "dtype": "f64", "value": None}
    assert sum(p["kind"] == "buffer" for p in params) == 18


# ---- probe init: packed atomics, dynamic shared memory, .blocksareclusters ---------------------

def test_packed_half_atomics_type_their_buffer():
    """``atom.add.noftz.f16x2`` / ``.bf16x2`` gave "u8, guessed (accessed as -)", so the probe
    would fill a half2 array with the integers 0-7 as bytes."""
    params = yaml.safe_load(_skeleton(ATOMS, HALF_ATOMS)[0])["params"]
    assert [p["dtype"] for p in params[:4]] == ["f16", "f16", "bf16", "bf16"]
    assert "accessed as .f16 x2" in _skeleton(ATOMS, HALF_ATOMS)[0]


def test_dynamic_shared_memory_only_for_the_entry_that_names_it():
    """The module declares ``.extern .shared smem[]`` once; cluster_hist uses it, cluster_reduce
    does not: only the first is asked for dynamic bytes."""
    hist = yaml.safe_load(_skeleton(DSMEM, "_Z12cluster_histPKiPiii")[0])
    red_text = _skeleton(DSMEM, REDUCE)[0]
    assert hist["launch"]["shared"]["dynamic"] is None
    assert yaml.safe_load(red_text)["launch"]["shared"]["dynamic"] == 0
    assert "not named by this entry" in red_text


def test_blocks_are_clusters_is_said():
    text, _ = _skeleton(PTX90)
    assert "# NOTE: this entry declares .blocksareclusters" in text and "clusters of 2x1x1 CTAs" in text
    assert yaml.safe_load(text)["launch"]["block"] == [128, 1, 1]


# ---- forms the sweep found right (pinned) ----------------------------------------------------------

@pytest.mark.parametrize("path", [PTX90, VOLTA, WMMA61, NUMBA])
def test_old_and_new_headers_round_trip(path):
    """PTX ISA 6.1 (LLVM, sm_70), 6.4 (by hand) and 9.0 (``.blocksareclusters``,
    ``.abi_preserve``, ``st.bulk``, ``%aggr_smem_size``) modules re-emit byte for byte."""
    from splice.ptx import emit, parse

    text = path.read_text()
    assert emit(parse(text, str(path))) == text


def test_volta_mma_with_mixed_accumulator_types(capsys):
    """m8n8k4 with D f32 from C f16 (8 D, 4 C registers) and f16/f32 forms: one phase each, the
    phase ABI's C is the four .b32 halves, D the eight floats."""
    from splice.cli import main

    k = Kernel.load(VOLTA)
    assert [(p.shape, len(p.mma)) for p in k.phases] == [((8, 8, 4), 1)] * 4
    # the layout table keyed C by D's type: "s21: c has 4 registers, the mma layout 8" (false)
    assert [(p.instr["layout"]["c"], p.instr["layout"]["d"]) for p in k.phases] == [(4, 8), (4, 4), (8, 8), (4, 4)]
    assert not [n for p in k.phases for n in p.notes]
    assert main(["spec", str(VOLTA), "--abi", "phase:1", "--json"]) == 0
    abi = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    assert [r["role"] for r in abi["live_in"]].count("c") == 4
    assert [(r["role"], r["type"]) for r in abi["live_out"]] == [("d", ".f32")] * 8


def test_llvm_old_wmma_spelling():
    """LLVM 14 writes ``wmma.load.a.sync.row.m16n16k16.global.f16`` (no ``.aligned``, layout
    before shape) and an m32n8k16 tile: phases with their true shapes."""
    assert [p.shape for p in Kernel.load(WMMA61, "wmma_loop").phases] == [(16, 16, 16)]
    assert [p.shape for p in Kernel.load(WMMA61, "wmma_m32n8k16").phases] == [(32, 8, 16)]


def test_mma_whose_d_is_not_its_c():
    """tf32 m16n8k4 twice, the second's C the first's D in new registers: a K chain (16×8×8);
    f16 m16n8k8 with a fresh C each k-step: one phase per mma, none claiming a longer K."""
    (ph,) = Kernel.load(RARE, "_Z12tf32_m16n8k4PKfS0_S0_Pf").phases
    assert ph.shape == (16, 8, 8) and ph.tiles == (1, 1, 2)
    hm = Kernel.load(RARE, "_Z14hmma_f16acc_k8PKjS0_S0_Pji").phases
    assert hm and all(len(p.mma) == 1 and p.shape == (16, 8, 8) for p in hm)


def test_fp8_split_accumulation_is_one_k_chain():
    """``max_num_imprecise_acc=32``: each k32 wgmma starts a fresh accumulator that add.f32 folds
    into the running one.  Round 5 left it irregular (no shape); round 6 reads the fold as one
    64×64×128 K chain (tests/test_unseen_kernels6.py)."""
    (ph,) = Kernel.load(FP8).phases
    assert len(ph.mma) == 4 and ph.shape == (64, 64, 128) and ph.regular


def test_numba_array_parameters():
    """numba passes a 2-D array as 9 parameters (meminfo, parent, nitems, itemsize, data, shape
    ×2, strides ×2): only ``data`` is a buffer; the unread ones are 0, shapes/strides TODO."""
    text, rows = _skeleton(NUMBA)
    assert len(rows) == 29 and [r["param"] for r in rows if r["kind"] == "buffer"] == [4, 14, 23]
    assert {rows[i]["kind"] for i in (5, 6, 7, 8)} == {"scalar"}


def test_spec_json_of_the_ptx90_module(capsys):
    from splice.cli import main

    assert main(["spec", str(PTX90), "--json"]) == 0
    (e,) = json.loads(capsys.readouterr().out)["entries"]
    assert e["phases"] == []
