"""Regressions from the third unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 3"):
nvcc's ``__managed__`` variables, Triton's warp-specialised persistent matmul (a statement made
of labels and a multi-line ``.branchtargets`` list), guarded loads in a cut, old nvcc's statements
of several instructions, module-scope texture references, and the new producers' forms (LLVM's
mma intrinsics, Triton's fp64 / tf32x3 dots, a 128-parameter kernel).  Each test names the cause
it pins; the kernels are checked in under tests/data/ptx (manifest.yaml, regen.sh, gen_triton.py)
and none of these tests needs Triton, CUTLASS or LLVM installed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.ptx import attach, emit, parse, parse_file
from splice.ptx import model as m

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
MANAGED = MODERN / "managed_virtual_heap.ptx"
WS = MODERN / "triton_matmul_ws_persistent_sm100a.ptx"
SOFTMAX = MODERN / "triton_softmax_sm90a.ptx"
TEXREF = MODERN / "handwritten_texref_inits.ptx"
LLVM_MMA = MODERN / "llvm_mma_loop.ptx"
PARAMS = MODERN / "many_params.ptx"
OCELOT = (ROOT / "tests" / "data" / "ptx" / "thirdparty" / "gpuocelot" / "ocelot" / "ocelot" / "executive"
          / "test" / "kernels.ptx")
ROUND3 = ["managed_virtual_heap.ptx", "many_params.ptx", "handwritten_texref_inits.ptx", "llvm_mma_loop.ptx",
          "triton_attn_causal_sm80.ptx", "triton_attn_bwd_sm80.ptx", "triton_dot_fp64_sm80.ptx",
          "triton_dot_tf32x3_sm80.ptx", "triton_assert_argmax_asm_sm90a.ptx", "triton_matmul_ws_persistent_sm100a.ptx"]


# ---- nvcc's __managed__: .attribute(.managed) ------------------------------------------------------

def test_managed_variables_parse_and_round_trip():
    """``.global .attribute(.managed) .align 4 .u32 m_counter;`` was a parse error ("expected
    ')' … got '('") at line 80, so every command refused the module."""
    text = MANAGED.read_text()
    mod = parse(text, str(MANAGED))
    assert emit(mod) == text
    decls = {d.declarators[0].name: d for d in mod.items if type(d) is m.Decl}
    assert decls["m_counter"].attrs[0] == ".attribute(.managed)" and decls["m_counter"].type == ".u32"
    assert decls["m_table"].type == ".b8" and decls["m_table"].align == 4
    src = (".version 8.0\n.target sm_90\n.address_size 64\n"
           ".global .attribute(.unified(19,95)) .f32 u[4];\n")
    assert parse(src).items[-1].attrs[0] == ".attribute(.unified(19,95))"


def test_canonical_form_of_a_managed_variable_reparses(capsys):
    from splice.cli import main

    assert main(["canonical", str(MANAGED)]) == 0
    out = capsys.readouterr().out
    assert ".global .attribute(.managed) .align 4 .u32 m_counter;" in out
    assert parse(out).items == parse_file(str(MANAGED)).items


# ---- a statement made of labels and a multi-line .branchtargets list ------------------------------

def test_labels_before_a_branchtargets_list_carry_statement_1():
    """Triton's warp-specialised kernel opens with ``$L__func_begin0:``, ``JTI0_0:`` and a
    ``.branchtargets`` list over four lines: the notes' rules make them statement s1, which no
    node carried (nodes were numbered by the statement ending on their last line only), so
    ``spec --abi s1-s5`` and ``sass-mix`` of the module said "no statement s1"."""
    k = Kernel.load(WS)
    first = k.stmt(1)
    assert type(first.node) is m.Label and first.node.name in ("$L__func_begin0", "JTI0_0")
    assert k.text(1).startswith(") $L__func_begin0: JTI0_0: $L__BB0_")
    abi = k.abi(1, 5)
    assert {r.reg for r in abi.live_out} >= {"%r28", "%r29"}      # the two ld.param of s2-s3


@pytest.mark.parametrize("name", ROUND3 + ["triton_softmax_sm90a.ptx", "triton_matmul_tma_sm90a.ptx"])
def test_kernel_numbering_is_attach(name):
    """``Kernel`` numbers nodes as ``attach`` does (the statement whose lines hold the node's end),
    and every statement of the index is carried by a node."""
    mod = parse_file(str(MODERN / name))
    for fn in mod.entries():
        if fn.body is None:
            continue
        k = Kernel(mod, fn.name)
        assert [s.n for s in k.stmts] == [s.n for s in attach(mod, fn.name)]
        assert set(range(1, k.last_number + 1)) <= {s.n for s in k.stmts}


# ---- a guarded definition keeps the old value: it is an input of the cut ---------------------------

def test_a_guarded_load_in_a_cut_reads_the_old_value():
    """``mov.u32 %r7, %r2; @%p6 ld.global.b32 {%r7}, …``: a cut of the load (s43-s47) left %r7
    out of its live-ins (it was only "written" there), but when %p6 is false %r7 keeps the
    value from before the cut; the extracted native named it an output only."""
    k = Kernel.load(SOFTMAX)
    assert k.text(43).startswith("@%p6 ld.global.b32 { %r7 }")
    abi = k.abi(43, 47)
    ins = {r.reg: (r.role, r.index) for r in abi.live_in}
    assert ins["%r7"] == ("io", 0) and "%r7" in {r.reg for r in abi.live_out}
    assert "%r8" not in ins and "%r9" not in ins        # written unguarded first inside the cut


def test_a_guarded_def_nobody_reads_is_no_input():
    """The same rule is liveness' business: an ``@%p atom`` result never read is no input."""
    k = Kernel.load(MODERN / "triton_attn_bwd_sm80.ptx")
    atoms = [s for s in k.stmts if getattr(s.node, "opcode", None) == "atom" and s.node.guard is not None]
    assert len(atoms) == 8
    n = atoms[0].n
    dest = atoms[0].node.operands[0].name
    assert dest not in {r.reg for r in k.abi(n, n).live_in}


def test_extract_names_the_guarded_register_in_and_out(tmp_path, capsys):
    from splice.cli import main

    out = tmp_path / "n.ptx"
    assert main(["extract", str(SOFTMAX), "--statements", "s43-s47", "-o", str(out)]) == 0
    head = out.read_text()
    assert "io0=%r7" in head and "@%in0 ld.global.b32 {%io0}" in head


# ---- a statement of several instructions is cut whole ---------------------------------------------

def test_a_range_starts_at_the_first_instruction_of_its_statement(tmp_path):
    """Old nvcc writes ``mov.f32 %f3, 0f7f800000; // ((1.0F)/(0.0F))``: the comment joins the
    next line (``setp.eq.f32 %p1, %f2, %f3;``) into statement s5.  A range s5-… started at its
    last node, so the cut held the setp alone and reported %f3 — written by s5 itself — as a
    live-in."""
    if not OCELOT.exists():
        pytest.skip("gpuocelot kernels.ptx not in this checkout")
    k = Kernel.load(OCELOT, "_Z17k_sequenceLoopingPfi")
    abi = k.abi(5, 5)
    assert [r.reg for r in abi.live_in] == ["%f2"] and "%f3" in abi.defs
    from splice.cli import main

    out = tmp_path / "n.ptx"
    assert main(["extract", str(OCELOT), "--entry", "_Z17k_sequenceLoopingPfi", "--statements", "s5-s5",
                 "-o", str(out)]) == 0
    body = [ln for ln in out.read_text().splitlines() if ln and not ln.startswith("//")]
    assert [ln.split()[0] for ln in body if not ln.startswith(".")] == ["mov.f32", "setp.eq.f32"]


# ---- probe init: module-scope texture references ----------------------------------------------------

def test_probe_init_says_module_texture_references_are_not_bound():
    from splice.probe.init import module_image_refs, skeleton

    text, rows = skeleton(TEXREF.read_text(), str(TEXREF))
    assert "# NOTE: this entry reads module-scope texture/surface references (tex_a, surf_a)" in text
    assert [r["name"] for r in rows if r["kind"] == "buffer"] == ["out_param"]
    objects = MODERN / "tex_surf_objects.ptx"           # texture objects are parameters: no note
    k = Kernel.load(objects)
    assert module_image_refs(k) == []
    assert "module-scope texture" not in skeleton(objects.read_text(), str(objects))[0]


# ---- the new producers' forms ---------------------------------------------------------------------

def test_llvm_mma_intrinsic_loop():
    """LLVM 14's ``llvm.nvvm.mma.m16n8k16`` in a loop: f16x2 fragments in ``.b32 %hh`` registers,
    accumulators carried by phis (``%f15``-``%f18`` are both C and D)."""
    k = Kernel.load(LLVM_MMA, "mma_loop")
    [p] = k.phases
    assert p.shape == (16, 8, 16) and p.regular
    abi = k.phase_abi(1)
    assert [r.reg for r in abi.live_in if r.role in ("a", "b")] == [f"%hh{i}" for i in range(1, 7)]
    assert [r.reg for r in abi.live_out] == ["%f15", "%f16", "%f17", "%f18"]
    assert all(r.role.startswith("acc") for r in abi.live_out)


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


def test_probe_init_of_128_parameters():
    """128 parameters: bools never read are passed as 0, the read ones are TODO; structs by value
    keep their sizes and alignments (3/1, 12/4, 32/16)."""
    import yaml

    from splice.probe.init import skeleton

    text, _rows = skeleton(PARAMS.read_text(), str(PARAMS))
    params = yaml.safe_load(text)["params"]
    assert len(params) == 128
    by = {p["name"]: p for p in params}
    assert by["param_0"]["role"] == "output" and by["param_0"]["dtype"] == "f32"
    sizes = [(by[f"param_{i}"]["size"], by[f"param_{i}"]["align"]) for i in (113, 115, 117)]
    assert sizes == [(3, 1), (12, 4), (32, 16)]
    read_bools = [i for i in range(118, 126) if by[f"param_{i}"]["value"] is None]
    assert read_bools == [118, 121, 125]                      # t0, t3, t7
    assert by["param_126"]["kind"] == "struct"                # the __grid_constant__ S32


def test_spec_json_of_the_managed_module(capsys):
    """Virtual calls through a vtable (an indirect call) and assert/malloc/printf calls: spec
    answers for every entry, in JSON."""
    from splice.cli import main

    assert main(["spec", str(MANAGED), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert len(info["entries"]) == 3 and all(e["phases"] == [] for e in info["entries"])


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("name", ["llvm_mma_loop.ptx", "triton_dot_fp64_sm80.ptx", "triton_dot_tf32x3_sm80.ptx"])
def test_identity_cuts_of_round3_kernels(name):
    """Every phase and epilogue: extract -> apply gives ptxas' original SASS."""
    from splice.cut.identity import run_module

    trials = run_module(str(MODERN / name), "sm_80", 3, (), epilogues=True)
    assert trials
    assert not [(t.entry, t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]


# ---- what nothing can compile: said, not guessed ------------------------------------------------

REFUSED = ROOT / "tests" / "data" / "ptx" / "refused"


def test_probe_init_refuses_32_bit_addressing(tmp_path, capsys):
    """``.address_size 32``: the skeleton wrote the pointer parameter as a u32 scalar (0 buffers);
    no probe can run the module, so probe init refuses at the directive."""
    from splice.cli import main

    out = tmp_path / "s.yaml"
    assert main(["probe", "init", str(REFUSED / "address_size_32.ptx"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "address_size_32.ptx:5" in err and "32-bit addressing" in err and "--machine 32" in err
    assert not out.exists()


@pytest.mark.parametrize("name", ["address_size_32.ptx", "old_sm13_map_f64.ptx"])
def test_old_modules_round_trip_and_analyse(name):
    text = (REFUSED / name).read_text()
    assert emit(parse(text)) == text
    k = Kernel.load(REFUSED / name)
    assert k.last_number >= 3 and [s for s in k.stmts if getattr(s.node, "opcode", "") in ("ret", "exit")]


def test_old_module_cut_abi_and_texture_note():
    """open64-style statements joined by a ``// 0`` comment: s14 is ``mov.f32 %f2, 0; tex.1d …``
    and a cut through it reads %r3 (the tex coordinates) and exports %f2; the skeleton names the
    ``.tex .u32`` reference."""
    from splice.probe.init import skeleton

    path = REFUSED / "old_sm13_map_f64.ptx"
    k = Kernel.load(path)
    abi = k.abi(14, 16)
    assert [r.reg for r in abi.live_in] == ["%r3", "%f1"]
    assert {"%f2", "%f8"} <= {r.reg for r in abi.live_out}
    assert "module-scope texture/surface references (tex_in)" in skeleton(path.read_text(), str(path))[0]


@pytest.mark.needs("ptxas")
def test_roundtrip_sass_says_why_ptxas_refuses(capsys):
    from splice.cli import main

    assert main(["roundtrip", str(REFUSED / "old_sm13_map_f64.ptx"), "--sass", "--json"]) == 0
    out = capsys.readouterr().out
    assert "map_f64_to_f32 is not supported" in out


# ---- a cut drops .loc: an inlined_at after it still finds its location ------------------------------

def _inlined_at_defined(text: str) -> list:
    """The ``inlined_at F L C`` lines of ``text`` with no ``.loc F L C`` before them."""
    import re

    seen, bad = set(), []
    for ln in text.splitlines():
        mt = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", ln)
        if not mt:
            continue
        at = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", ln)
        if at and at.groups() not in seen:
            bad.append(ln.strip())
        seen.add(mt.groups())
    return bad


def test_a_cut_keeps_the_locations_inlined_at_names(tmp_path):
    """Triton's causal attention: epilogue 2 holds ``.loc 1 350 25`` (the call of the inlined
    ``_attn_block``); natives drop ``.loc``, so every ``inlined_at 1 350 25`` after the cut named a
    location ptxas had not seen ("must be used in a preceding .loc directive"): the identity cut
    failed to assemble.  The site now ends with the cut's ``.loc`` lines that an inlined_at names."""
    from splice.cli import main

    src = MODERN / "triton_attn_causal_sm80.ptx"
    assert not _inlined_at_defined(src.read_text())
    native, out = tmp_path / "e2.ptx", tmp_path / "sp.ptx"
    assert main(["extract", str(src), "--epilogue", "2", "-o", str(native)]) == 0
    (tmp_path / "r.yaml").write_text(f"module: {src}\noutput: {out}\ncuts:\n  - epilogue: 2\n    native: {native}\n")
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas", "-o", str(out)]) == 0
    text = out.read_text()
    assert "// splice: the cut's .loc lines an inlined_at names" in text
    assert _inlined_at_defined(text) == []


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_of_an_epilogue_holding_an_inlined_call_site():
    from splice.cut.identity import run_module

    trials = run_module(str(MODERN / "triton_attn_causal_sm80.ptx"), "sm_80", 3, (), epilogues=True)
    assert trials
    assert not [(t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]


# ---- a call sequence inside a cut ------------------------------------------------------------------

CALLSEQ = ROOT / "tests" / "data" / "ptx" / "handwritten" / "epilogue_call_sequence.ptx"


def test_a_native_keeps_a_call_sequences_param_declarations(tmp_path, capsys):
    """An epilogue holding ``{ .param .b64 param0; …; call.uni (retval0), vprintf, …; }``
    (CUTLASS's tail with ``__assertfail``): apply refused the extracted native, "only .reg
    declarations are allowed in a native phase, not .param".  Inside a nested scope they are a
    call's argument slots and stay; at a native's top level they are still refused."""
    from splice.cli import main

    native, out = tmp_path / "e1.ptx", tmp_path / "sp.ptx"
    assert main(["extract", str(CALLSEQ), "--epilogue", "1", "-o", str(native)]) == 0
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"module: {CALLSEQ}\noutput: {out}\ncuts:\n  - epilogue: 1\n    native: {native}\n")
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 0
    text = out.read_text()
    assert ".param .b64 param0;" in text and "call.uni (retval0), vprintf, (param0, param1);" in text
    capsys.readouterr()
    lines = native.read_text().splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("add.f32"))
    native.write_text("\n".join(lines[:top] + [".param .b64 stray;"] + lines[top:]) + "\n")
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 2
    assert "not .param (outside a { } call sequence)" in capsys.readouterr().err


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_of_an_epilogue_with_a_call():
    from splice.cut.identity import run_module

    trials = run_module(str(CALLSEQ), "sm_90", 3, (), epilogues=True)
    assert [(t.kind, t.identical) for t in trials] == [("phase", True), ("epilogue", True)]
