"""Integer literals are bounded: at most 40 decimal (or octal), 32 hexadecimal or 128 binary
digits, far beyond PTX's 64 bits.  A longer one is a user error at its place on every path.

Python refuses to convert a decimal of over 4300 digits (``int()`` raises ``ValueError``), so a
module with ``.reg .b32 %r<999…>`` or ``[%rd1+999…]`` of 5000 digits was a traceback in every
command (the parser's readers, then the analyses' address arithmetic)."""
from __future__ import annotations

import pytest

from splice.cli import main
from splice.ptx import parse, parser

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
BODY = ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n"
TAIL = "\tret;\n}\n"

LONG = {"decimal": "9" * 41, "octal": "0" + "7" * 41, "hex": "0x" + "f" * 33, "binary": "0b" + "1" * 129,
        "huge": "9" * 5000, "negative": "-" + "9" * 41, "unsigned": "9" * 41 + "U"}
EDGE = {"decimal": "9" * 40, "hex": "0x" + "f" * 32, "binary": "0b" + "1" * 128, "unsigned": "9" * 40 + "U"}
PLACES = {
    "immediate": lambda n: HEAD + BODY + f"\tmov.b32 %r1, {n};\n" + TAIL,
    "offset": lambda n: HEAD + BODY + f"\tld.global.b32 %r1, [%rd1+{n}];\n" + TAIL,
    "count": lambda n: HEAD + BODY + f"\t.reg .b32 %q<{n}>;\n" + TAIL,
    "dimension": lambda n: HEAD + f".global .b8 g[{n}];\n" + BODY + TAIL,
    "initializer": lambda n: HEAD + ".global .u64 g[2] = {" + ", ".join([n] * 2) + "};\n" + BODY + TAIL,
    "loc": lambda n: HEAD + BODY + f"\t.loc 1 {n} 0\n" + TAIL,
    "address_size": lambda n: f".version 8.0\n.target sm_90\n.address_size {n}\n" + BODY + TAIL,
    "repeated": lambda n: HEAD + BODY + "\tmov.b32 %r1, 5;\n" * 12 + f"\tmov.b32 %r1, {n};\n" + TAIL,
}


def _where(text: str, literal: str):
    at = text.index(literal)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(LONG))
def test_a_long_literal_is_refused_at_its_place(kind, place, fast):
    if place in ("count", "dimension", "loc", "address_size") and kind not in ("decimal", "huge", "octal"):
        pytest.skip("the grammar takes only plain integers there")
    lit = LONG[kind]
    text = PLACES[place](lit)
    with pytest.raises(parser.PtxSyntaxError) as e:
        parse(text, "m.ptx", fast=fast, cache=False)
    assert (e.value.line, e.value.column) == _where(text, lit)
    assert "integer literal of" in e.value.message and "at most 40" in e.value.message


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(EDGE))
def test_the_longest_literal_read_parses_on_both_paths(kind, place):
    if place in ("count", "dimension", "loc", "address_size") and kind != "decimal":
        pytest.skip("the grammar takes only plain integers there")
    text = PLACES[place](EDGE[kind])
    assert parse(text, "m.ptx", cache=False) == parse(text, "m.ptx", fast=False, cache=False)


@pytest.mark.parametrize("cmd", ["stats", "index", "canonical", "spec", "notes", "probe init"])
def test_every_command_says_so(cmd, tmp_path, capsys):
    f = tmp_path / "m.ptx"
    text = PLACES["offset"](LONG["huge"])
    f.write_text(text)
    assert main([*cmd.split(), str(f)]) == 2
    err = capsys.readouterr().err
    line, col = _where(text, LONG["huge"])
    assert f"m.ptx:{line}:{col}: an integer literal of 5000 digits" in err and "Traceback" not in err


# ---- digit runs in names, modifiers and options -------------------------------------------------

D = "1" * 5000
NAMES = {
    "register": HEAD + f".visible .entry k(.param .u64 p)\n{{\n\t.reg .b32 %r{D};\n\t.reg .b64 %rd<3>;\n"
                f"\tld.param.u64 %rd1, [p];\n\tmov.b32 %r{D}, 1;\n\tadd.s32 %r{D}, %r{D}, 2;\n"
                f"\tst.global.b32 [%rd1], %r{D};\n\tret;\n}}\n",
    "mangled": HEAD + f".visible .entry _Z{D}k(.param .u64 p)\n{{\n\tret;\n}}\n.visible .func _Z{D}f()\n{{\n\tret;\n}}\n",
    "mma shape": HEAD + ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<20>;\n"
                 f"\tmma.sync.aligned.m{D}n8k32.row.col.f32.e4m3.e4m3.f32 {{%r1,%r2,%r3,%r4}}, {{%r5,%r6,%r7,%r8}}, "
                 "{%r9,%r10}, {%r1,%r2,%r3,%r4};\n\tret;\n}\n",
    "type": HEAD + f".visible .entry k(.param .u64 p)\n{{\n\t.reg .b{D} %q;\n\t.reg .b64 %rd<3>;\n"
            f"\tld.param.u64 %rd1, [p];\n\tld.global.b{D} %q, [%rd1];\n\tst.global.b{D} [%rd1+4], %q;\n\tret;\n}}\n",
    "target": f".version 8.0\n.target sm_{D}\n.address_size 64\n.visible .entry k()\n{{\n\tret;\n}}\n",
}


@pytest.mark.parametrize("cmd", ["index", "spec", "notes", "canonical", "stats", "spec --abi s1-s3",
                                 "spec --pressure --no-ptxas --png none", "probe init"])
@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_5000_digit_run_in_a_name_is_no_traceback(name, cmd, tmp_path, capsys):
    """Register numbers, mangled-name lengths, ``.mMnNkK`` shapes, ``.bN`` widths and
    ``sm_N`` are read with int(): a run of 5000 digits (a valid identifier) was a ValueError
    in ``spec`` (mma shape), ``spec --abi`` and ``--pressure`` (register order).  Such a run
    is no number: the name is kept as text."""
    f = tmp_path / "m.ptx"
    f.write_text(NAMES[name])
    rc = main([*cmd.split(), str(f)])
    out, err = capsys.readouterr()
    assert rc in (0, 2) and "Traceback" not in err, err[-400:]
    if rc == 2:
        assert "m.ptx" in err


@pytest.mark.parametrize("opt", [f"--abi s1-s{D}", f"--abi phase:{D}", f"--abi {D}"])
def test_a_5000_digit_option_is_a_usage_error(opt, capsys):
    from pathlib import Path

    tiny = Path(__file__).parent / "data" / "ptx" / "modern" / "fp8_mma_sm89.ptx"
    assert main(["spec", *opt.split(), str(tiny)]) == 2
    assert "bad --abi" in capsys.readouterr().err
