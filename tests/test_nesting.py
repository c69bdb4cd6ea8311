"""Nesting is bounded: braces, or parentheses, deeper than ``parser.MAX_NESTING`` (64) are a user
error at their place, on every path (fast, Lark, a statement alone); anything shallower goes
through every command.  The function body is a level of braces: a vector in it has 63.

The readers, the printer and ``str()`` recurse several frames per level: 2000 parentheses in a
call's operand list (the grammar lets a paren list hold paren lists) and a vector nested 250
deep were ``RecursionError`` tracebacks, the second only in ``canonical``."""
from __future__ import annotations

import pytest

from splice.cli import main
from splice.ptx import direct, parse, parser

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<9>;\n"
TAIL = "\tret;\n}\n"
COMMANDS = ["stats", "index", "canonical", "spec", "notes"]


def _call(depth: int) -> str:
    return HEAD + "\tcall f, " + "(" * depth + "%r1" + ")" * depth + ";\n" + TAIL


def _vector(depth: int) -> str:
    return HEAD + "\tmov.b32 " + "{" * depth + "%r1" + "}" * depth + ", %r2;\n" + TAIL


def _mixed(depth: int) -> str:
    return HEAD + "\tcall f, " + "({" * depth + "%r1" + "})" * depth + ";\n" + TAIL


def _blocks(depth: int) -> str:
    return HEAD + "{\n" * depth + "\tadd.s32 %r1, %r2, 1;\n" + "}\n" * depth + TAIL


def test_the_readers_share_the_limit():
    assert direct.MAX_NESTING is parser.MAX_NESTING and parser.MAX_NESTING == 64


@pytest.mark.parametrize("make, col, what", [(_call, 74, "parentheses"), (_vector, 73, "braces"),
                                             (_mixed, 137, "braces")])
@pytest.mark.parametrize("depth", [65, 250, 2000])
@pytest.mark.parametrize("cmd", COMMANDS)
def test_deep_operands_are_refused_at_their_place(make, col, what, depth, cmd, tmp_path, capsys):
    f = tmp_path / "m.ptx"
    f.write_text(make(depth))
    assert main([cmd, str(f)]) == 2
    err = capsys.readouterr().err
    assert f"m.ptx:7:{col}: {what} nested deeper than 64 levels" in err and "Traceback" not in err


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("make, depth, where", [(_call, 65, (7, 74)), (_call, 64, None), (_vector, 64, (7, 73)),
                                                (_vector, 63, None), (_mixed, 64, (7, 137)), (_mixed, 63, None),
                                                (_blocks, 64, (70, 1)), (_blocks, 63, None)])
def test_fast_and_plain_paths_draw_the_line_at_the_same_place(fast, make, depth, where):
    if where is None:
        assert parse(make(depth), "m.ptx", fast=fast, cache=False) == parse(make(depth), "m.ptx", fast=not fast,
                                                                            cache=False)
        return
    with pytest.raises(parser.PtxSyntaxError) as e:
        parse(make(depth), "m.ptx", fast=fast, cache=False)
    assert (e.value.line, e.value.column) == where


@pytest.mark.parametrize("make, depth", [(_call, 64), (_vector, 63), (_mixed, 63), (_blocks, 63)])
@pytest.mark.parametrize("cmd", COMMANDS)
def test_nesting_up_to_the_limit_goes_through_every_command(make, depth, cmd, tmp_path, capsys):
    f = tmp_path / "m.ptx"
    text = make(depth)
    f.write_text(text)
    assert main([cmd, str(f)]) == 0
    out = capsys.readouterr().out
    if cmd == "canonical":   # the canonical text holds the same statements
        assert parse(out, "c.ptx").functions()[0].body.items == parse(text, "m.ptx").functions()[0].body.items


def test_a_shape_too_deep_for_a_template_is_still_read():
    """The shape cache compiles a template (a Python lambda) at a shape's ``COMPILE_AT``-th
    statement; operands nested 63 deep make an expression past Python's 200 nested
    parentheses (a SyntaxError traceback in a long-running process).  Such a shape is read as
    it comes, each time: the same model as plain Lark's."""
    from splice.ptx.shapes import COMPILE_AT

    stmt = "\tcall f, " + "({" * 63 + "%r1" + "})" * 63 + ";\n"
    text = HEAD + stmt * (COMPILE_AT + 3) + TAIL
    assert parse(text, "m.ptx", cache=False) == parse(text, "m.ptx", fast=False, cache=False)
