"""Control flow the stand-ins never showed: brx.idx jump tables (.branchtargets) in the control-flow
graph, in an extracted native, in verify's reasons; a cut holding a whole loop.  Kernels
handwritten_oddities, handwritten_layout_oddities and handwritten/brx_idx, read 2026-11-30 and
2026-12-01."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError
from splice.ptx import emit, parse
from splice.ptx import model as m

from .bundled import HANDWRITTEN, MODERN, ROOT, cut_of, sass_same

ODD = MODERN / "handwritten_oddities.ptx"
LAYOUT = MODERN / "handwritten_layout_oddities.ptx"
BRX = ROOT / "tests/data/ptx/handwritten/brx_idx.ptx"


def test_brx_idx_jump_table_parses_and_its_targets_are_successors():

    path = HANDWRITTEN / "brx_idx.ptx"
    text = path.read_text()
    mod = parse(text, str(path))
    assert emit(mod) == text
    k = Kernel(mod, "brx_table")
    pos = next(i for i, s in enumerate(k.stmts) if isinstance(s.node, m.Instruction) and s.node.opcode == "brx")
    targets = {k.stmts[k.blocks.starts[t]].node.name for t in k.blocks.succ[k.blocks.block_of[pos]]
               if isinstance(k.stmts[k.blocks.starts[t]].node, m.Label)}
    assert {"$L_c0", "$L_c1", "$L_c2", "$L_c3"} <= targets


def test_a_whole_loop_cut_does_not_export_its_counter():
    """``mov %r3, 0; LOOP: … add %r3; setp; @%p2 bra.uni LOOP``: the cut from the counter's
    initialisation to the back edge used to list %r3 as a live-out (liveness after the last
    statement followed the back edge into the cut itself); nothing after the loop reads it."""
    k = Kernel.load(LAYOUT)
    loop = next(s.n for s in k.stmts if s.n is not None and "LOOP:" in k.text(s.n))
    init = loop - 1
    back = next(s.n for s in k.stmts if type(s.node) is m.Instruction and s.node.opcode == "bra")
    whole = k.abi(init, back)
    assert [r.reg for r in whole.live_out] == ["%f1"]
    # the label before the cut: the back edge leaves the cut and re-enters it, %r3 flows around
    body = k.abi(loop, back)
    assert {r.reg for r in body.live_out} == {"%f1", "%r3"}
    assert {r.reg for r in body.live_in} == {"%f1", "%f2", "%r3"}


def test_brx_idx_follows_its_branchtargets():
    """``$tbl: .branchtargets $even, $odd; brx.idx %r15, $tbl;`` went to every label of the
    entry (``$join`` too), so %f2 — written on both listed paths before ``$join`` reads it —
    was live after the brx."""
    k = Kernel.load(ODD, "oddities")
    pos = next(i for i, s in enumerate(k.stmts) if getattr(s.node, "opcode", None) == "brx")
    b = k.blocks
    assert [k.stmts[b.starts[t]].node.name for t in b.succ[b.block_of[pos]]] == ["$even", "$odd"]
    assert not k.liveness.live_after("%f2", pos)
    assert k.liveness.live_after("%r14", pos)


def test_an_extracted_jump_table_applies(tmp_path):
    """extract of s32-s40 of ``oddities`` writes the ``$tbl: .branchtargets $even, $odd;`` table
    inside a nested scope (as it writes a ``.callprototype``); apply refused its own native:
    "directive .branchtargets is not allowed in a native phase"."""
    p = cut_of(tmp_path, ODD, "oddities", 32, 40)
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
    p = cut_of(tmp_path, ODD, "oddities", 32, 40)
    assert sass_same(p.text, ODD, "sm_90")


def test_verify_names_the_jump_table(tmp_path):
    """verify of a range holding ``brx.idx`` said "branch to None, outside the statements"."""
    from splice.verify.compare import verify_plan

    [r] = verify_plan(cut_of(tmp_path, ODD, "oddities", 32, 40))
    assert r.verdict == "not proven" and "brx.idx" in r.reason and "None" not in r.reason


def test_a_jump_table_outside_a_scope_says_where_it_may_go():
    from splice.cut.native import parse_native

    with pytest.raises(SpliceError, match=r"\.branchtargets is not allowed in a native phase outside a \{ \} scope"):
        parse_native("$t: .branchtargets $a;\nbrx.idx %in0, $t;\n$a:\n", "n.ptx")


@pytest.mark.parametrize("abi", ["inline", "call", "call-shared"])
def test_extracts_native_of_a_top_level_jump_table_is_one_apply_takes(tmp_path, capsys, abi):
    """regression: a range holding ``$L_tbl: .branchtargets …; brx.idx`` at the function's top
    level (LLVM's dense switch: brx_idx.ptx s9-s22) was extracted bare, and apply refused
    extract's own native: ".branchtargets is not allowed in a native phase outside a { } scope
    (… as extract does)".  extract now writes the range inside a { } scope."""
    import shutil

    shutil.copy(BRX, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--statements", "s9-s22", "-o", str(tmp_path / "n.ptx")]) == 0
    body = (tmp_path / "n.ptx").read_text().split("//   scratch: {}\n", 1)[1]
    assert body.startswith("{\n$L_tbl:\n\t.branchtargets $L_c0, $L_c1, $L_c2, $L_c3;\n") and body.endswith("}\n")
    threads = "    threads: 32\n" if abi == "call-shared" else ""
    (tmp_path / "r.yaml").write_text("module: m.ptx\nentry: brx_table\noutput: o.ptx\ncuts:\n"
                                     f"  - statements: s9-s22\n    native: n.ptx\n    abi: {abi}\n{threads}")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0, capsys.readouterr().err
    assert "brx.idx" in (tmp_path / "o.ptx").read_text()


def test_extract_of_statements_without_a_jump_table_is_not_wrapped(tmp_path):
    import shutil

    shutil.copy(BRX, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--statements", "s11-s13", "-o", str(tmp_path / "n.ptx")]) == 0
    assert (tmp_path / "n.ptx").read_text().split("//   scratch: {}\n", 1)[1].startswith("$L_c0:\n")
