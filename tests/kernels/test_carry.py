"""The carry flag (add.cc / addc / mad.lo.cc chains of extended-precision arithmetic): a cut that
splits a chain, or that the carry flows through, is refused; the whole chain cuts and proves;
verify sees a native that clobbers the carry.  Kernels carry_chain_misc (nvcc) and
handwritten/carry_past_addc, read 2026-12-01."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError

from .bundled import MODERN, ROOT, cut_of

CARRY = MODERN / "carry_chain_misc.ptx"
ADD256 = "_Z6add256PKjS0_Pj"
MUL64 = "_Z8mul64x64PKmS0_Pm"
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
CARRY_PAST_ADDC = ROOT / "tests/data/ptx/handwritten/carry_past_addc.ptx"


def test_spec_abi_names_the_carry_flag(capsys):
    """s34-s36 of add256 are three ``addc.cc`` in the middle of an eight-word carry chain: the
    ABI listed six registers in and three out and nothing of the carry in from s33 and out to
    s37."""
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

    [r] = verify_plan(cut_of(tmp_path, CARRY, ADD256, 31, 38))
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

    cut_of(tmp_path, CARRY, ADD256, 31, 38)
    lines = (tmp_path / "n.ptx").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("addc.cc"))
    lines.insert(at + 1, "add.cc.u32 %tx, %in0, %in0;")
    text = "\n".join(lines) + "\n"
    text = text.replace("//   scratch: {}", "//   scratch: {tx: .b32}")
    assert "tx: .b32" in text
    (tmp_path / "n.ptx").write_text(text)
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    assert r.verdict != "proved equal"


def test_a_cut_the_carry_flows_through_is_refused(tmp_path, capsys):
    """s5-s6 (mul, xor) lie between ``add.cc`` and ``addc`` and touch no carry: a native there
    that used ``add.cc`` itself would change the sum after it, and verify compares registers
    only.  Refused like a split chain; ``spec --abi`` says the carry flows through."""
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


@pytest.mark.parametrize("abi", ["inline", "call"])
def test_a_cut_the_carry_flows_through_past_a_plain_addc_is_refused(tmp_path, capsys, abi):
    """regression: ``add.cc`` s4; ``addc`` s5 (reads the carry, leaves it set); ``mov`` s6;
    ``addc`` s7 reads the carry s4 set.  The "through" check took the nearest carry statement
    before the range (s5), saw no ``.cc`` on it and let a cut of s6 be spliced: under
    ``abi: call`` a call sat between s4 and s7 (exit 0), and a native setting the carry would
    have fed s7.  ``spec --abi s7`` named s5, which sets nothing, as the writer."""
    import shutil

    shutil.copy(CARRY_PAST_ADDC, tmp_path / "c.ptx")
    (tmp_path / "n.ptx").write_text("// splice-native:\n//   params: {}\n//   scratch: {}\nmov.u32 %out0, 5;\n")
    (tmp_path / "r.yaml").write_text("module: c.ptx\nentry: carry_skip\noutput: o.ptx\ncuts:\n"
                                     f"  - statements: s6-s6\n    native: n.ptx\n    abi: {abi}\n")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert "c.ptx:19: s7 (addc.u32) (after the range) reads the carry flag that s4 (add.cc.u32) sets before it" in err
    assert "carry chain s4-s7" in err and not (tmp_path / "o.ptx").exists()
    assert main(["extract", str(tmp_path / "c.ptx"), "--statements", "s6-s6", "-o", str(tmp_path / "x.ptx")]) == 2
    assert "carry chain s4-s7" in capsys.readouterr().err
    assert main(["spec", str(tmp_path / "c.ptx"), "--abi", "s7-s7"]) == 0
    assert "s7 (addc.u32) reads the carry s4 (add.cc.u32) sets" in capsys.readouterr().out


def test_a_cut_of_the_whole_chain_past_a_plain_addc_still_splices(tmp_path, capsys):
    import shutil

    shutil.copy(CARRY_PAST_ADDC, tmp_path / "c.ptx")
    assert main(["extract", str(tmp_path / "c.ptx"), "--statements", "s4-s7", "-o", str(tmp_path / "n.ptx")]) == 0
    (tmp_path / "r.yaml").write_text("module: c.ptx\nentry: carry_skip\noutput: o.ptx\ncuts:\n"
                                     "  - statements: s4-s7\n    native: n.ptx\n    abi: call\n")
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0


ROUND_TRIP = ["carry_chain_misc"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
