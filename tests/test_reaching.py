"""Reaching definitions over blocks (splice.analysis.reaching): every definition of a register
that may reach a use, where Provenance.reaching_def can name none."""
from __future__ import annotations

from pathlib import Path

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import parse

MODULE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<4>;
	ld.param.u32 %r1, [n];
	mov.u32 %r2, 0;
	mov.u32 %r3, 7;
	setp.eq.u32 %p1, %r1, 3;
	@%p1 mov.u32 %r3, 9;
LOOP:
	add.s32 %r4, %r2, %r3;
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p2, %r2, %r1;
	@%p2 bra LOOP;
	setp.eq.u32 %p3, %r1, 5;
	@%p3 bra ELSE;
	mov.u32 %r5, 1;
	bra.uni JOIN;
ELSE:
	mov.u32 %r5, 2;
JOIN:
	ld.param.u64 %rd1, [out];
	st.global.u32 [%rd1], %r5;
	st.global.u32 [%rd1+4], %r4;
	ret;
}
"""


def _kernel():
    return Kernel(parse(MODULE, "k.ptx"), "k")


def _at(k, text: str) -> int:
    """The position of the statement whose source text holds ``text``."""
    src = k.module.source
    return next(p for p, st in enumerate(k.stmts)
                if getattr(st.node, "span", None) and text in src[st.node.span[0]:st.node.span[1]])


def test_every_definition_that_may_reach_a_use():
    from splice.analysis.reaching import Reaching

    k = _kernel()
    r = Reaching(k)
    key = {k.display(x): x for ds in k.du()[0] for x in ds}
    loop_add = _at(k, "add.s32 %r4, %r2, %r3")
    inc = _at(k, "add.s32 %r2, %r2, 1")
    init = _at(k, "mov.u32 %r2, 0")
    assert r.defs(key["%r2"], loop_add) == (init, inc), "the loop's counter: before the loop and its own increment"
    seven, nine = _at(k, "mov.u32 %r3, 7"), _at(k, "@%p1 mov.u32 %r3, 9")
    assert r.defs(key["%r3"], loop_add) == (seven, nine), "a guarded definition joins, it does not replace"
    one, two = _at(k, "mov.u32 %r5, 1"), _at(k, "mov.u32 %r5, 2")
    store = _at(k, "st.global.u32 [%rd1], %r5")
    assert r.defs(key["%r5"], store) == (one, two), "two paths join"
    assert r.defs(key["%r5"], two) == (), "before its definitions only the incoming value reaches"
    assert r.defs(key["%r2"], inc + 1) == (inc,), "after an unguarded definition in the block, that one alone"


def test_one_statement_defining_two_registers():
    """``ld.param.v2.u32 {%a, %b}`` (and an mma's D pair) defines two registers at one
    position: each has its own bit (the second took the first's, and the first was 'never
    defined' at every later use)."""
    from splice.analysis.reaching import Reaching

    src = MODULE.replace("ld.param.u32 %r1, [n];", "ld.param.v2.u32 {%r1, %r6}, [n];").replace(
        "st.global.u32 [%rd1+4], %r4;",
        "st.global.u32 [%rd1+4], %r4;\n\tst.global.u32 [%rd1+8], %r6;\n\tst.global.u32 [%rd1+12], %r1;")
    k = Kernel(parse(src, "k.ptx"), "k")
    key = {k.display(x): x for ds in k.du()[0] for x in ds}
    r = Reaching(k)
    ld = _at(k, "ld.param.v2.u32")
    assert r.defs(key["%r1"], _at(k, "setp.eq.u32 %p1, %r1, 3")) == (ld,)     # in its block
    assert r.defs(key["%r1"], _at(k, "[%rd1+12], %r1")) == (ld,)              # blocks later
    assert r.defs(key["%r6"], _at(k, "[%rd1+8], %r6")) == (ld,)


def test_notes_follow_a_loop_carried_constant_into_the_mma():
    """LLVM's accumulator (``mov.f32 %f15, 0f00000000`` before the loop, the mma reading and
    writing %f15 in it): the constants table names its consumers, the mma's C operand."""
    import io
    from contextlib import redirect_stdout

    f = Path(__file__).parent / "data" / "ptx" / "modern" / "llvm_mma_loop.ptx"
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["notes", str(f)]) == 0
    row = next(line for line in out.getvalue().splitlines() if line.startswith("| `0f00000000`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[6] == "P1" and cells[7] == "mma C×4", row


def test_a_single_definition_in_a_loop_reaches_its_own_use_through_the_back_edge():
    """``add %r2, %r2, 1`` is %r2's only definition inside the loop, but the loop's first
    statement reads %r2 from the increment of the trip before (and from ``mov`` on the first)."""
    from splice.analysis.reaching import Reaching

    k = _kernel()
    key = {k.display(x): x for ds in k.du()[0] for x in ds}
    r = Reaching(k)
    inc = _at(k, "add.s32 %r2, %r2, 1")
    assert inc in r.defs(key["%r2"], inc), "the increment reads its own previous value"
    ld = _at(k, "ld.param.u64 %rd1, [out]")
    assert r.defs(key["%rd1"], ld) == (), "read nowhere before its one definition"
    assert r.defs(key["%r4"], _at(k, "st.global.u32 [%rd1+4], %r4")) == (_at(k, "add.s32 %r4, %r2, %r3"),)


def test_the_solve_is_bounded(tmp_path, monkeypatch, capsys):
    """Each block keeps a set of bits as wide as the kernel's definitions: memory is blocks x
    definitions (40k blocks that each redefine two registers took 1.6 GB in ``notes``).  Past
    ``MAX_BITS`` the command is exit 2 naming the kernel and both numbers."""
    from splice.analysis import reaching
    from splice.cli import main

    n = 300
    body = "".join(f"L{i}:\n\tadd.s32 %r1, %r1, 1;\n\tsetp.lt.s32 %p1, %r1, {i};\n\t@%p1 bra L{i + 1};\n"
                   for i in range(n))
    f = tmp_path / "chain.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                 "\t.reg .b32 %r<3>;\n\t.reg .pred %p<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [p];\n"
                 f"\tmov.b32 %r1, 0;\n{body}L{n}:\n\tst.global.b32 [%rd1], %r1;\n\tret;\n}}\n")
    assert main(["notes", str(f)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(reaching, "MAX_BITS", 1000)
    assert main(["notes", str(f)]) == 2
    err = capsys.readouterr().err
    assert "chain.ptx" in err and "blocks x" in err and "splice's limit" in err and "Traceback" not in err
