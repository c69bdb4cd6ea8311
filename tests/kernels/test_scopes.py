"""Nested `{ }` scopes: registers shadowed inside them keep apart through extract, apply and
verify; a range that splits a scope is refused by extract as by apply; a range inside an inline
asm scope keeps its labels visible.  Kernels handwritten_oddities, dsmem_cluster_sm90 (cooperative
groups' cluster barrier asm) and inline_asm_loops, read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError
from splice.ptx import model as m

from .bundled import MODERN, cut_of

ODD = MODERN / "handwritten_oddities.ptx"
DSMEM = MODERN / "dsmem_cluster_sm90.ptx"
REDUCE = "_Z14cluster_reducePKfPf"
LOOPS = MODERN / "inline_asm_loops.ptx"
ASM_LOOPS = "_Z9asm_loopsPKjPjS0_"


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
    p = cut_of(tmp_path, ODD, "oddities", first, last)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)
    native = (tmp_path / "n.ptx").read_text()
    assert native.count(".reg .b32 %r5;") == (2 if which == 0 else 1)


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_a_cut_across_shadowing_scopes_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    orig = normalized_sass(compile_ptx(ODD, "sm_90").cubin)
    for first, last in _scoped_ranges():
        p = cut_of(tmp_path, ODD, "oddities", first, last)
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


def test_extract_refuses_a_range_that_splits_a_scope(tmp_path, capsys):
    """s14-s27 of cluster_reduce ends inside the ``{ }`` of cooperative groups' cluster barrier
    asm: extract wrote a native (closing the scope itself) and apply then refused it, "splits a
    { } scope".  extract now says so first, at the range's first line."""
    k = Kernel.load(DSMEM, REDUCE)
    from splice.cut.extract import extract

    with pytest.raises(SpliceError) as ei:
        extract(k, statements=(14, 27), source_name=str(DSMEM))
    assert "splits a { } scope" in str(ei.value) and ei.value.line == k.stmts[k.first_pos_of(14)].line
    assert main(["extract", str(DSMEM), "--entry", REDUCE, "--statements", "s14-s27",
                 "-o", str(tmp_path / "n.ptx")]) == 2
    assert "dsmem_cluster_sm90.ptx:" in capsys.readouterr().err and not (tmp_path / "n.ptx").exists()
    assert cut_of(tmp_path, DSMEM, REDUCE, 18, 23).cuts                 # a range of whole blocks


def test_a_range_inside_an_asm_scope_keeps_its_labels_visible(tmp_path):
    """s57-s61 lies inside the fourth inlined ``popc_loop`` asm scope and holds its ``LOOP4:``
    label (``%=`` numbered by nvcc), whose ``bra`` back edge is after the range.  extract
    wrapped the range in a second ``{ }``, apply put that inside the original scope, and ptxas
    said "Unknown symbol" for the back edge.  The native is no longer wrapped."""
    k = Kernel.load(LOOPS, ASM_LOOPS)
    label = k.stmts[k.first_pos_of(59)].node
    assert type(label).__name__ == "Label"
    p = cut_of(tmp_path, LOOPS, ASM_LOOPS, 57, 61)
    native = (tmp_path / "n.ptx").read_text()
    code = [ln for ln in native.splitlines() if not ln.startswith("//")]
    assert f"{label.name}:" in code and not any(ln.strip() in ("{", "}") for ln in code)
    assert p.text.count(f"{label.name}:") == 1


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_asm_scope_range_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = cut_of(tmp_path, LOOPS, ASM_LOOPS, 57, 61)
    assert normalized_sass(compile_ptx(p.text, "sm_90").cubin) == normalized_sass(compile_ptx(LOOPS, "sm_90").cubin)


def test_a_range_holding_a_whole_asm_scope_keeps_it():
    """A range over the whole inlined asm block (its ``.reg`` declarations included) keeps the
    block and its declarations in the native, as before."""
    from splice.cut.extract import extract

    k = Kernel.load(LOOPS, ASM_LOOPS)
    text = extract(k, statements=(18, 30), source_name=str(LOOPS))["text"]
    code = [ln.strip() for ln in text.splitlines() if not ln.startswith("//")]
    assert "{" in code and ".reg .pred p;" in code


def test_a_range_starting_at_a_scopes_first_instruction_takes_the_scope(tmp_path):
    """s10-s18 of ``oddities`` starts at the first instruction of a scope that shadows ``%r5`` and
    ``%p1`` (its declarations have no statement number) and ends after it.  apply replaced the
    whole scope (``widen_to_blocks``), but extract flattened it and resolved the ABI's ``%r5`` in
    the inner scope: the native wrote the outer ``%r5`` (in3) with the inner one's sums and read
    an unset scratch where the outer one was used (exit 0, verify "not proven", other SASS).
    Now the scope is kept with its declarations and the ABI resolved where the native goes."""
    from splice.verify.compare import verify_plan

    p = cut_of(tmp_path, ODD, "oddities", 10, 18)
    code = [ln.strip() for ln in (tmp_path / "n.ptx").read_text().splitlines() if not ln.startswith("//")]
    assert code.count(".reg .b32 %r5;") == 2 and ".reg .pred %p1;" in code
    assert code[-3].startswith("add.s32") and code[-3].endswith("%in3;")      # s16 reads the outer %r5
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)
