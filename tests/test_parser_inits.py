"""The numeric-initializer fast path (parser._numeric_inits): a module-level ``= {numbers}``
list is read without Lark, and the model is exactly plain Lark's, spans included; anything
the fast path does not take still parses (or fails) exactly as with plain Lark."""
from __future__ import annotations

import pytest

from splice.ptx import PtxSyntaxError, emit, parse
from splice.ptx import parser as P

from .test_parser import _spans

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
BODY = ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tld.global.u32 %r1, [x];\n\tret;\n}\n"
MANY = ", ".join(str((i * 37) % 256) for i in range(300))


def _same(text):
    fast = parse(text, "t.ptx", fast=True, cache=False)
    slow = parse(text, "t.ptx", fast=False, cache=False)
    assert fast == slow
    assert _spans(fast.items, []) == _spans(slow.items, [])
    assert emit(fast) == text
    return fast


@pytest.mark.parametrize("init", [
    "{" + MANY + "}",
    "{\n\t" + MANY.replace(", 1", ",\n\t1") + "\n}",                     # over several lines
    "{" + ", ".join(["0f3F800000", "-0fBF800000", "0d3FF0000000000000", "1.5", "-2.25e-3", "0x1F",
                     "0XffU", "-7", "0b101", "12u"] * 20) + "}",
    "{" + ", ".join("{" + MANY[:40] + "}" for _ in range(8)) + ", {}}",   # nested, an empty list
])
def test_fast_path_taken_and_equal(init):
    text = HEAD + f".global .align 4 .b8 x[300] = {init};\n" + BODY
    assert P._numeric_inits(text, P._function_bodies(text))          # the fast path applies
    mod = _same(text)
    decl = mod.items[3]
    assert decl.declarators[-1].init and isinstance(decl.declarators[-1].init, tuple)


@pytest.mark.parametrize("init", [
    "{" + MANY + ", sym}",                                   # a symbol: Lark's
    "{" + MANY + " // comment\n}",                           # a comment inside
    "{" + MANY + "}, y[2] = {1, 2}",                         # several declarators after the list
    "{1, 2}",                                                # short: not worth it
])
def test_other_initializers_left_to_lark(init):
    text = HEAD + f".global .align 4 .b8 x[300] = {init};\n" + BODY
    assert not P._numeric_inits(text, P._function_bodies(text))
    _same(text)


def test_several_lists_and_one_in_a_comment():
    text = HEAD + \
        f".global .b8 a[300] = {{{MANY}}};\n.const .align 8 .b8 b[300] = {{{MANY}}};\n" \
        f"// .global .b8 c[300] = {{{MANY}}}\n" + BODY
    assert len(P._numeric_inits(text, P._function_bodies(text))) == 2
    _same(text)


@pytest.mark.parametrize("bad", ["{" + MANY + ",}", "{" + MANY + ", , 1}", "{" + MANY + " 1}",
                                 "{" + MANY + ", 1e5}", "{{" + MANY + "}", "{" + MANY + ", 0f3F80}"])
def test_malformed_lists_fail_exactly_as_lark(bad):
    text = HEAD + f".global .b8 x[300] = {bad};\n" + BODY
    assert not P._numeric_inits(text, P._function_bodies(text))
    errs = []
    for fast in (True, False):
        with pytest.raises(PtxSyntaxError) as ei:
            parse(text, "t.ptx", fast=fast, cache=False)
        errs.append((ei.value.line, ei.value.column, str(ei.value)))
    assert errs[0] == errs[1]
