"""Regressions from the unseen-kernel sweep (docs/results/unseen-kernels.md): PTX written by
nvcc, Triton, CUTLASS and LLVM that the stand-ins never showed.  Each test names the cause it
pins; the kernels are in tests/data/ptx/modern (manifest.yaml, regen.sh, gen_triton.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.ptx import model as m
from splice.ptx import parse

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
MISC = MODERN / "mma_shapes_misc.ptx"
SCOPED = MODERN / "mbarrier_scoped_labels_sm90.ptx"
INT8 = MODERN / "triton_matmul_int8_sm80.ptx"


def _identity_recipe(tmp_path, module, entry, select, native_text, arch="sm_90"):
    (tmp_path / "n.ptx").write_text(native_text)
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {module}\nentry: '{entry}'\narch: {arch}\noutput: out.ptx\n"
                 f"cuts:\n  - {select}\n    native: n.ptx\n")
    return r


def _plan(recipe):
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    return plan(load_recipe(str(recipe), [recipe.parent]))


# ---- a cut whose last line goes on: inline asm `...; mma ...; }` ---------------------------------

def test_cut_keeps_the_rest_of_its_last_line(tmp_path):
    """nvcc copies inline asm verbatim: the tf32 mma shares its line with the scope's closing
    ``}``.  The site ends in a ``// splice: end cut`` comment, which used to swallow that brace
    (ptxas: "Parsing error near '.entry'")."""
    from splice.cut.extract import extract

    k = Kernel.load(MISC, "tf32_k8")
    ph = k.phases[0]
    line = MISC.read_text().splitlines()[k.stmt(ph.first).line - 1]
    assert line.rstrip().endswith("}"), "the sample no longer has the brace on the mma's line"
    rec = _identity_recipe(tmp_path, MISC, k.name, "phase: 1", extract(k, phase=1)["text"])
    p = _plan(rec)
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


# ---- labels repeated in nested scopes (CUTLASS's mbarrier wait) -----------------------------------

def _branches(k):
    for pos, s in enumerate(k.stmts):
        nd = s.node
        if isinstance(nd, m.Instruction) and nd.opcode == "bra" and nd.operands[0].name in ("DONE", "LAB_WAIT"):
            yield pos, s, nd.operands[0].name


def test_a_branch_goes_to_the_label_of_its_own_scope():
    """Every wait block defines LAB_WAIT:/DONE:; the control flow used to send every branch to
    the last definition, skipping the code between the waits."""
    k = Kernel.load(SCOPED)
    b = k.blocks
    seen = 0
    for pos, s, name in _branches(k):
        want = s.line + 2 if name == "DONE" else s.line - 3     # this scope's DONE: / LAB_WAIT:
        targets = {k.stmts[b.starts[t]].line for t in b.succ[b.block_of[pos]]}
        assert want in targets and all(abs(t - s.line) <= 3 for t in targets), (s.line, name, targets)
        seen += 1
    assert seen >= 20


def test_liveness_across_scoped_waits():
    """The loop body between two waits: what it reads before the first wait and writes after the
    second is in the ABI (it used to miss %r4, read between the waits, and two live-outs)."""
    k = Kernel.load(SCOPED)
    first = next(s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "$L__BB0_5")
    dones = [s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "DONE"]
    abi = k.abi(first + 1, dones[1])
    between = k.stmt(dones[0] + 1).node          # ld.shared.f32 %f13, [%r4]: between the waits
    _d, used = k.defs_uses(between)
    live_in = {r.reg for r in abi.live_in}
    assert set(used) <= live_in | abi.defs
    later = k.stmt(dones[0] + 2).node            # add.f32 %f14, …: read after the cut
    defs, _u = k.defs_uses(later)
    assert set(defs) <= {r.reg for r in abi.live_out}


def test_verify_sees_the_wait_loops(tmp_path):
    """verify flattens nested scopes: a wait's ``bra LAB_WAIT`` is a loop of its own scope, not a
    forward jump to the next scope's label of that name."""
    from splice.cut.extract import extract
    from splice.verify.compare import verify_plan

    k = Kernel.load(SCOPED)
    first = next(s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "$L__BB0_5")
    dones = [s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "DONE"]
    text = extract(k, statements=(first + 1, dones[1]))["text"]
    rec = _identity_recipe(tmp_path, SCOPED, k.name, f"statements: s{first + 1}-s{dones[1]}", text)
    [r] = verify_plan(_plan(rec))
    assert r.verdict == "not proven" and r.reason.startswith("loop"), (r.verdict, r.reason)


# ---- narrow values in wide registers (LLVM's ld.shared.b8 into a .b16) ----------------------------

def test_triton_int8_epilogue_binds(tmp_path):
    """Triton's int8 matmul moves bytes through ``ld.shared.b8 %rs1`` (a ``.b16``): PTX allows a
    data register wider than the type of ld/st/cvt (ISA 5.2.3); binding used to refuse it."""
    from splice.cut.extract import extract

    k = Kernel.load(INT8)
    e = k.epilogues[0]
    text = extract(k, statements=(e.first, e.last))["text"]
    assert any(".b8" in ln and "ld.shared" in ln for ln in text.splitlines())
    rec = _identity_recipe(tmp_path, INT8, k.name, f"statements: s{e.first}-s{e.last}", text, "sm_80")
    assert _plan(rec).cuts


@pytest.mark.parametrize("line, ok", [
    ("ld.shared.b8 %x16, [%a];", True),          # wider data register: allowed
    ("st.shared.b8 [%a], %x32;", True),
    ("cvt.u32.u8 %x32, %x16;", True),
    ("cvt.f32.f16 %f, %x32;", True),             # ptxas 13.0 takes it
    ("ld.shared.b32 %x16, [%a];", False),        # narrower: refused
    ("cvt.f32.bf16 %f, %x32;", False),           # ptxas refuses a .b32 for bf16
    ("cvt.rn.satfinite.e4m3x2.f16x2 %x32, %x32;", False),
])
def test_wider_registers_follow_ptxas(line, ok):
    from splice.cut.binding.abi import _check_types
    from splice.cut.binding.operands import check_operands
    from splice.cut.native import parse_native
    from splice.errors import SpliceError

    nat = parse_native(line + "\n", "n.ptx")
    types = {"%x16": ".b16", "%x32": ".b32", "%f": ".f32", "%a": ".b32"}
    if ok:
        _check_types(nat, types)
        check_operands(nat, types)
        return
    with pytest.raises(SpliceError):
        _check_types(nat, types)
        check_operands(nat, types)


# ---- the module's own target for the SASS views -------------------------------------------------

@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_mix_compiles_for_the_module_target(capsys):
    """An sm_90a module (wgmma) used to be compiled for sm_90 by sass-mix and spec --pressure."""
    from splice.cli import main

    path = MODERN / "wgmma_sm90a.ptx"
    assert main(["sass-mix", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arch"] == "sm_90a"
    assert main(["spec", str(path), "--pressure", "--png", "none", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["entries"][0]["ptxas"]["arch"] == "sm_90a"


def test_module_target_reads_the_target_line():
    from splice.commands.perf import module_target

    assert module_target(".version 8.0\n.target sm_90a\n") == ("sm_90a", 3)
    assert module_target(".version 8.0\n.target sm_80\n") == ("sm_90", 3)
    assert module_target(".version 8.0\n.target sm_90, debug\n") == ("sm_90", 0)
    assert module_target(".target sm_90a\n", "sm_100a") == ("sm_100a", 3)


# ---- one dot, accumulators zeroed between its mma (LLVM) --------------------------------------

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


def test_joined_phases_keep_one_form():
    """b1 m16n8k256 then s4 m8n8k32 with an accumulator initialised between: two phases."""
    k = Kernel.load(MISC, "b1_xor_s4")
    assert [p.instr["shape"] for p in k.phases] == ["m16n8k256", "m8n8k32"]
    s8 = Kernel.load(MISC, "s8_k32").phases
    assert [(len(p.mma), p.shape, p.tiles) for p in s8] == [(2, (16, 16, 32), (1, 2, 1))]


# ---- probe init: a 64-bit parameter read as a value is not an unused pointer ----------------------

def test_probe_init_passes_0_only_for_parameters_never_read():
    """``many_params`` reads a ``.f64`` and a ``.u64`` as values (never dereferenced): they need
    values (``null``, TODO), not the 0 the skeleton gives a parameter nothing reads."""
    import yaml

    from splice.probe.init import skeleton

    path = MODERN / "control_misc.ptx"
    text, _rows = skeleton(path.read_text(), str(path), "many_params")
    params = {p["name"]: p for p in yaml.safe_load(text)["params"]}
    assert params["param_10"]["dtype"] == "f64" and params["param_10"]["value"] is None
    assert params["param_11"]["dtype"] == "u64" and params["param_11"]["value"] is None
    assert params["param_19"]["kind"] == "struct" and params["param_19"]["align"] == 16
    tri = MODERN / "triton_attn_fwd_sm80.ptx"        # Triton's two scratch pointers: never read
    text, _rows = skeleton(tri.read_text(), str(tri), None)
    zero = [p["name"] for p in yaml.safe_load(text)["params"] if p.get("value") == 0]
    assert zero == ["param_10", "param_11"]


# ---- mma in a called .func: said, not silently "0 phases" -------------------------------------

def test_mma_in_a_called_function_is_named(capsys):
    from splice.cli import main

    path = MODERN / "mma_in_func.ptx"
    assert main(["spec", str(path), "--entry", "via_func", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["entries"][0]
    assert info["phases"] == []
    [f] = info["mma_in_calls"]["functions"]
    assert f["func"] == "_Z4tilePfjjjjjj" and f["mma"] == 1 and len(f["called_at"]) >= 2
    assert main(["extract", str(path), "--entry", "via_func", "--phase", "1"]) == 2
    err = capsys.readouterr().err
    assert "0 phases" in err and "mma in .func _Z4tilePfjjjjjj" in err and "entry bodies only" in err
    inl = Kernel.load(path, "inline_mma")         # the same tile inlined: phases, nothing to say
    from splice.analysis.calls import mma_in_calls

    assert inl.phases and mma_in_calls(inl)["functions"] == []


def test_indirect_call_is_named_when_a_phase_is_asked_for(capsys):
    from splice.cli import main

    assert main(["extract", str(MODERN / "control_misc.ptx"), "--entry", "recurse", "--phase", "1"]) == 2
    assert "1 indirect call: its target is unknown to splice" in capsys.readouterr().err


# ---- a module built for debugging (-G): recipes default to -O0 ----------------------------------

def test_debug_module_recipe_defaults_to_O0(tmp_path):
    from splice.cut.recipe import load_recipe

    g = MODERN / "debug_full_G.ptx"
    (tmp_path / "n.ptx").write_text("")
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {g}\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 0
    r.write_text(f"module: {g}\nopt_level: 2\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 2
    r.write_text(f"module: {MISC}\ncuts:\n  - statements: s5-s6\n    native: n.ptx\n")
    assert load_recipe(str(r), []).opt_level == 3


@pytest.mark.needs("ptxas")
def test_debug_module_identity_cut_assembles(tmp_path):
    """``nvcc -G`` output: an identity cut applies and ptxas takes it (at -O0, the module's own)."""
    from splice.cut.extract import extract
    from splice.cut.validate import validate

    g = MODERN / "debug_full_G.ptx"
    k = Kernel.load(g)
    a, b = 5, 12
    rec = _identity_recipe(tmp_path, g, k.name, f"statements: s{a}-s{b}", extract(k, statements=(a, b))["text"])
    p = _plan(rec)
    assert p.recipe.opt_level == 0
    validate(p)


# ---- a brx.idx jump table (.branchtargets) ---------------------------------------------------------

HANDWRITTEN = ROOT / "tests" / "data" / "ptx" / "handwritten"


def test_brx_idx_jump_table_parses_and_its_targets_are_successors():
    from splice.ptx import emit

    path = HANDWRITTEN / "brx_idx.ptx"
    text = path.read_text()
    mod = parse(text, str(path))
    assert emit(mod) == text
    k = Kernel(mod, "brx_table")
    pos = next(i for i, s in enumerate(k.stmts) if isinstance(s.node, m.Instruction) and s.node.opcode == "brx")
    targets = {k.stmts[k.blocks.starts[t]].node.name for t in k.blocks.succ[k.blocks.block_of[pos]]
               if isinstance(k.stmts[k.blocks.starts[t]].node, m.Label)}
    assert {"$L_c0", "$L_c1", "$L_c2", "$L_c3"} <= targets


# ---- the WMMA API (wmma.mma) is a tensor-core form ---------------------------------------------

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
