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
