"""Register forms beyond `%r<N>`: vector registers and their elements, video instructions' byte and
half selectors, declared names that begin like special registers (%tidx, %pmask), data registers
wider than their instruction's type, and a timer read.  Kernels handwritten_special_names,
handwritten_isa_rare, video_selectors and a vector kernel written here, read 2026-11-30 and
2026-12-01."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError
from splice.ptx import emit, parse, parse_file

from .bundled import MODERN, VEC, cut_of, write_module

SPECIAL = MODERN / "handwritten_special_names.ptx"
ISA_RARE = MODERN / "handwritten_isa_rare.ptx"
SELECTORS = MODERN / "video_selectors.ptx"


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

    nat = parse_native(line + "\n", "n.ptx")
    types = {"%x16": ".b16", "%x32": ".b32", "%f": ".f32", "%a": ".b32"}
    if ok:
        _check_types(nat, types)
        check_operands(nat, types)
        return
    with pytest.raises(SpliceError):
        _check_types(nat, types)
        check_operands(nat, types)


def test_registers_that_begin_like_special_registers_are_registers():
    """``%tidx``, ``%pmask``, ``%clock0`` … are declared registers: special registers were
    matched by prefix (``%tid``, ``%pm``, ``%clock``), so def-use dropped them and the cut ABI
    of s5-s10 was empty (live-ins %tidx/%ctaidx and live-outs %smidx/%pmask missed)."""
    from splice.ptx.model import Reg

    assert not any(Reg(n).special for n in ("%tidx", "%pmask", "%clock0", "%envregs", "%laneidx", "%tid_x"))
    assert all(Reg(n).special for n in ("%tid.x", "%clock", "%clock64", "%pm7_64", "%envreg31",
                                        "%lanemask_lt", "%cluster_ctaid.z", "%globaltimer_lo"))
    k = Kernel.load(SPECIAL)
    abi = k.abi(5, 10)
    assert {r.reg for r in abi.live_in} == {"%tidx", "%ctaidx"}
    assert {r.reg for r in abi.live_out} == {"%smidx", "%pmask"}
    assert abi.values["%tidx"] == "tid.x"


def test_verify_reads_pmask_as_a_register(tmp_path):
    """verify treated every name beginning with %pm / %clock as a clock read (a new value at
    each read): a cut reading only %pmask-like registers is proved equal."""
    from splice.verify.compare import verify_plan

    p = cut_of(tmp_path, SPECIAL, "special_names", 11, 13)
    [r] = verify_plan(p)
    assert r.verdict == "proved equal", (r.verdict, r.reason)


def test_vector_register_elements_are_the_register(tmp_path):
    """``%v.x`` is an element of the vector register ``%v``: it was no declared name, so def-use
    dropped it (s4-s6 read ``%v`` only through the store; the write of ``%v.y`` was invisible).
    A write of one element keeps the others: ``%v`` is live into s4-s5 and out of it."""
    k = Kernel.load(write_module(tmp_path, VEC))
    assert k.vectors["%v"][0] == ".v4 .f32"
    abi = k.abi(4, 5)
    assert [r.reg for r in abi.live_in] == ["%v"] and [r.reg for r in abi.live_out] == ["%v"]
    assert "%v" in k.abi(4, 4).live_in[0].reg


def test_a_cut_over_a_vector_register_is_refused_not_dropped(tmp_path, capsys):
    """extract + apply of s4-s6 wrote a native whose ``%v.x``/``%v.w`` became unset scratch and
    whose ``mov %v.y`` went to a scratch; apply bound ``%v`` as one ``.f32``; verify said "proved
    equal" and the spliced kernel stored the old vector.  Now both refuse at the first statement
    naming the vector register, with its declaration."""
    p = write_module(tmp_path, VEC)
    assert main(["extract", str(p), "--statements", "s4-s6", "-o", str(tmp_path / "n.ptx")]) == 2
    err = capsys.readouterr().err
    assert "vec.ptx:12" in err and "vector register %v (.reg .v4 .f32, declared at line 6)" in err
    (tmp_path / "n.ptx").write_text("add.f32 %t0, %t1, %t2;\n")
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {p}\nentry: k\noutput: {tmp_path / 'o.ptx'}\ncuts:\n  - statements: s4-s6\n"
                 "    native: n.ptx\n")
    for cmd in ("apply", "verify"):
        assert main([cmd, str(r)]) == 2
        assert "names the vector register %v" in capsys.readouterr().err
    assert not (tmp_path / "o.ptx").exists()
    assert main(["extract", str(p), "--statements", "s1-s2", "-o", str(tmp_path / "m.ptx")]) == 0


def test_the_rare_kernel_phase_cuts_and_its_vector_epilogue():
    """handwritten_isa_rare's phase holds no vector register (identity cut SASS-identical in
    bench/roundtrip_cuts.py); its epilogue writes ``%acc.x``… and is refused with the line."""
    from splice.cut.extract import extract

    k = Kernel.load(ISA_RARE, entry="rare_mma")
    assert extract(k, phase=1, source_name=str(ISA_RARE))["facts"]["mma"] == 3
    with pytest.raises(SpliceError) as ei:
        extract(k, epilogue=1, source_name=str(ISA_RARE))
    assert "vector register %acc" in str(ei.value) and ei.value.line == 90


def test_video_operand_selectors_parse():
    """``vabsdiff… %r1.b0``, ``vmad… %r1.h0``, the SIMD forms' ``%r1.b3210`` / ``%r1.h10`` and a
    ``.mask`` destination ``%r7.b10`` (PTX ISA video instructions; ptxas accepts them) are
    register tokens: splice refused the module at 21:35 (found 2026-12-01)."""
    text = SELECTORS.read_text()
    mod = parse_file(str(SELECTORS))
    assert emit(mod) == text and mod == parse(text, "v.ptx", fast=False, cache=False)
    ops = {i.opcode: [o.name for o in i.operands] for i in mod.functions()[0].body.items
           if getattr(i, "opcode", "").startswith("v")}
    assert ops["vabsdiff"] == ["%r4", "%r1.b0", "%r2.b2", "%r3"] and ops["vsub4"][0] == "%r7.b10"
    assert ops["vadd4"][1:3] == ["%r1.b3210", "%r2.b7654"] and ops["vmax2"][1:3] == ["%r1.h10", "%r2.h32"]


def test_a_selector_reads_its_register_and_a_mask_writes_part_of_it():
    """``%r1.b0`` reads ``%r1``; ``vsub4 %r7.b10, …`` writes two bytes of ``%r7`` and keeps the
    others (a partial write, like a guarded one): the store reads both definitions."""
    k = Kernel.load(SELECTORS)
    defs, uses, guarded = k.du()
    at = {getattr(st.node, "opcode", None): i for i, st in enumerate(k.stmts)}
    assert uses[at["vabsdiff"]] == ("%r1", "%r2", "%r3") and defs[at["vsub4"]] == ("%r7",)
    assert guarded[at["vsub4"]] and not guarded[at["vmax2"]]
    from splice.analysis.reaching import Reaching

    assert Reaching(k).defs("%r7", at["st"]) == (at["vmax2"], at["vsub4"])


@pytest.mark.parametrize("cmd", [["stats"], ["index"], ["spec"], ["notes"], ["canonical"], ["roundtrip"]])
def test_every_command_reads_video_selectors(cmd, capsys):

    assert main(cmd + [str(SELECTORS)]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_cut_over_a_selector_is_refused_at_its_line(tmp_path, capsys):
    """A cut binds whole registers: ``%r1.b0`` in a native would be a byte of a slot."""
    k = Kernel.load(SELECTORS)
    n = next(st.n for st in k.stmts if getattr(st.node, "opcode", None) == "vabsdiff")
    assert main(["extract", str(SELECTORS), "--statements", f"s{n}-s{n}", "-o", str(tmp_path / "n.ptx")]) == 2
    err = capsys.readouterr().err
    assert f"video_selectors.ptx:21: s{n} names %r1.b0, a byte or half of %r1" in err
    assert main(["extract", str(SELECTORS), "--statements", "s1-s4", "-o", str(tmp_path / "n.ptx")]) == 0


def test_verify_of_a_timer_read_says_timer_without_an_address(tmp_path, capsys):
    """The identity cut of ``mov.u64 %rd6, %globaltimer`` (handwritten_isa_rare s8-s10) is not
    provable (each read is a new value); the reason was "('%globaltimer', 139906194452944, 1) is
    read before it is written": an evaluator's id() (different on every run) in a sentence that
    called a timer read an undefined register."""
    import re

    native = tmp_path / "n.ptx"
    assert main(["extract", str(ISA_RARE), "--entry", "rare_mma", "--statements", "s8-s10", "-o", str(native)]) == 0
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {ISA_RARE}\nentry: rare_mma\noutput: {tmp_path / 'o.ptx'}\ncuts:\n"
                 "  - statements: s8-s10\n    native: n.ptx\n")
    capsys.readouterr()
    assert main(["verify", str(r)]) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "%globaltimer is a timer: each read is a new value" in out
    assert "read before it is written" not in out and not re.search(r"\d{9,}", out)
