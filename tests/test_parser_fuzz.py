"""Property: on any mutation of real PTX the parser returns a model or a placed
``PtxSyntaxError`` — never another exception, never a silently dropped line — and the fast
chunked path agrees with plain Lark on which it is."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from splice.ptx import PtxSyntaxError, emit, parse
from splice.ptx.model import Block

from .conftest import MODERN, STANDIN, THIRDPARTY

_SEEDS = [p for p in [
    THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_run" / "mma_m16n8k32_s32_s8_s8_s32.ptx",
    THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_run" / "ldmatrix_trans.ptx",
    THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "operands.ptx",
    MODERN / "tex_surf_objects.ptx",
    MODERN / "calls_params_globals.ptx",
    MODERN / "lineinfo_inlined.ptx",
] if p.exists()]
if (STANDIN / "dec1.ptx").exists():
    # a slice of the stand-in layer: its body shapes, not all of its 27k lines
    _lines = (STANDIN / "dec1.ptx").read_text().split("\n")
    _DEC1_HEAD = "\n".join(_lines[:400]) + "\n\tret;\n}\n"
else:
    _DEC1_HEAD = None

_TEXTS = [p.read_text() for p in _SEEDS] + ([_DEC1_HEAD] if _DEC1_HEAD else [])
_PIECES = [";", "{", "}", "[", "]", ",", "%r1", "@%p1 ", ".u32", "0f3F800000", "-", "//", "/*",
           "*/", "\n", " ", ":", "|", "!", "(", ")", "$L__BB0_1:", ".reg .b32 %r<4>;", "\"",
           "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", "{%r1,%r2}", "0x", "<", ">"]


def _outcome(text, fast):
    try:
        mod = parse(text, "fuzz.ptx", fast=fast, cache=False)
        assert emit(mod) == text
        return ("ok", mod)
    except PtxSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        assert exc.render().startswith(f"fuzz.ptx:{exc.line}:{exc.column}: ")
        return ("error", (exc.line, exc.column))


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "dupline"]))
        pos = draw(st.integers(0, max(0, len(text) - 1)))
        if kind == "insert":
            text = text[:pos] + draw(st.sampled_from(_PIECES)) + text[pos:]
        elif kind == "delete":
            n = draw(st.integers(1, 12))
            text = text[:pos] + text[pos + n:]
        elif kind == "replace":
            text = text[:pos] + draw(st.sampled_from(_PIECES)) + text[pos + 1:]
        else:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            text = text[:end] + "\n" + text[start:end] + text[end:]
    return text


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_give_a_model_or_a_placed_error(text):
    fast = _outcome(text, True)
    slow = _outcome(text, False)
    assert fast[0] == slow[0]
    if fast[0] == "ok":
        assert fast[1] == slow[1]
    else:
        assert fast[1] == slow[1]


# ---- every byte, and several statements on one line ----------------------------------------

_TINY = (STANDIN.parent / "tests" / "data" / "recipes" / "tiny.ptx")


def _spans(items):
    out = []
    for it in items:
        out.append((type(it).__name__, it.span, it.line))
        if isinstance(it, Block):
            out += _spans(it.items)
    return out


def _agree(text):
    """Both paths give the same outcome: equal models with equal spans, or the same place."""
    fast = _outcome(text, True)
    slow = _outcome(text, False)
    assert fast[0] == slow[0], (fast[0], slow[0])
    assert fast[1] == slow[1]
    if fast[0] == "ok":
        for f, g in zip(fast[1].functions(), slow[1].functions()):
            if f.body is not None:
                assert _spans(f.body.items) == _spans(g.body.items)
    return fast[0]


@pytest.mark.parametrize("where", ["line start", "before ;", "after ;"])
def test_fast_and_plain_agree_on_every_byte(where):
    """Any one character (the 256 byte values, plus Unicode line and space separators) put
    next to a statement: both paths accept it or both reject it at the same place.  The fast
    path used to strip ``\\x0b``, ``\\x1c``-``\\x1f``, ``\\x85``, ``\\xa0`` … as whitespace, which
    the grammar (and ptxas) do not."""
    src = _TINY.read_text()
    anchor = "\tadd.s64 \t%rd7, %rd4, %rd5;"
    assert anchor in src
    rejected = []
    for c in [chr(b) for b in range(256)] + ["\u2028", "\u2029", "\u3000", "\ufeff"]:
        if where == "line start":
            text = src.replace(anchor, c + anchor)
        elif where == "before ;":
            text = src.replace(anchor, anchor[:-1] + c + ";")
        else:
            text = src.replace(anchor, anchor + c)
        if _agree(text) == "error":
            rejected.append(c)
    assert "\x0b" in rejected and "\xa0" in rejected and " " not in rejected


def _joined(text: str) -> str:
    """Statements of consecutive lines put on one line, as a minifier would."""
    return re.sub(r"([;:])[ \t]*\n(?=[ \t]*[^\s/}{])", r"\1 ", text)


@pytest.mark.parametrize("k", range(len(_TEXTS)))
def test_fast_and_plain_agree_on_multi_statement_lines(k):
    text = _joined(_TEXTS[k])
    assert text.count("\n") < _TEXTS[k].count("\n")
    assert _agree(text) == "ok"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_of_joined_lines_agree(text):
    _agree(_joined(text))


def test_a_bare_percent_does_not_take_a_registers_template():
    """Found by the mutation test: ``%f9`` and a bare ``%`` once shared a shape key, so the
    second statement reused the first one's template with a value missing (IndexError)."""
    body = "\tst.param.f32 \t[param0+88], %f9;\n\tst.param.f32 \t[param0+88], %;f9;\n"
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            "\t.reg .f32 %f<10>;\n\t.param .b32 param0;\n" + body + "\tret;\n}\n")
    assert _outcome(text, True) == _outcome(text, False)
    assert _outcome(text, True)[0] == "error"
