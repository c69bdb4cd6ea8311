"""Block comments are read as the grammar reads them: as blanks.

The fast path blanks every closed ``/* … */`` (newlines kept) before its readers run, so a
comment inside a statement (``add.f32 %f1, /* step */ %f2;``) no longer sends the whole body to
Lark.  These tests put comments between the tokens of real modules, in every form (tight,
spaced, spanning lines, next to strings and line comments), and check that the fast model
equals Lark's, spans included, that emission gives back every byte, and that such bodies are
read without Lark.  A comment that is never closed is refused at its ``/*``, in linear time."""
from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from splice.ptx import PtxSyntaxError, emit, parse, parser

DATA = Path(__file__).parent / "data" / "ptx"
MODULES = [DATA / "modern" / "handwritten_layout_oddities.ptx", DATA / "modern" / "video_selectors.ptx",
           DATA / "handwritten" / "brx_idx.ptx", DATA / "handwritten" / "epilogue_call_sequence.ptx"]
COMMENTS = ["/*c*/", " /* step */ ", "/**/", "/* a\n b */", "/*\n*/", "/* \"q\" // x */", "/* { } ; */"]
#: a blank run between two tokens on a line with no string and no line comment
_GAP = re.compile(r"(?<=[^\s])[ \t]+(?=[^\s])")


def _commented(text: str, comment: str, every: int) -> str:
    out = []
    for k, line in enumerate(text.split("\n")):
        if '"' in line or "//" in line or "/*" in line or k % every:
            out.append(line)
            continue
        out.append(_GAP.sub(lambda mt: comment, line))
    return "\n".join(out)


def _same(text: str, name: str):
    fast = parse(text, name, cache=False)
    assert emit(fast) == text
    slow = parse(text, name, fast=False, cache=False)
    assert fast == slow
    assert [getattr(i, "span", None) for i in fast.items] == [getattr(i, "span", None) for i in slow.items]
    for a, b in zip(fast.items, slow.items):
        body_a, body_b = getattr(a, "body", None), getattr(b, "body", None)
        if body_a is not None:
            assert [(getattr(i, "span", None), getattr(i, "line", None)) for i in body_a.items] == \
                   [(getattr(i, "span", None), getattr(i, "line", None)) for i in body_b.items]
    return fast


@pytest.mark.parametrize("comment", COMMENTS)
@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_comments_between_tokens_read_as_lark_reads_them(path, comment):
    text = path.read_text()
    for every in (1, 3):
        _same(_commented(text, comment, every), path.name)


def _lark_bodies(monkeypatch) -> list:
    """The texts the parser hands Lark as whole bodies (``body_items`` from a body's brace)."""
    seen = []
    real = parser._lark

    def spy(text, start, *args, **kwargs):
        if start == "body_items":
            seen.append(text)
        return real(text, start, *args, **kwargs)

    monkeypatch.setattr(parser, "_lark", spy)
    return seen


def test_a_comment_inside_a_statement_keeps_its_body_off_lark(monkeypatch):
    text = (DATA / "modern" / "handwritten_layout_oddities.ptx").read_text()
    assert "/* step */" in text
    seen = _lark_bodies(monkeypatch)
    module = _same(text, "oddities")
    assert seen == []      # before: the entry's whole body went to Lark
    add = next(i for f in module.items if getattr(f, "body", None) for i in f.body.items
               if getattr(i, "opcode", None) == "add" and i.modifiers == (".f32",))
    assert [str(o) for o in add.operands] == ["%f1", "%f1", "%f2"]


@pytest.mark.parametrize("text, where", [
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\t.pragma "a/*b";\n\tret;\n}\n', None),
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\tret; // no /* here\n\tret;\n}\n', None),
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\tmov.u32 %r1, /*x*/1;/* */ret;\n}\n', None),
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\tmov.u32 %r1,/*\n\n*/ 1;\n\tret;\n}\n', None),
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\tret;\n}\n/*/\n', (7, 1)),
    ('.version 8.0\n.target sm_90\n.entry k()\n{\n\tret; /* never closed\n}\n', (5, 7)),
])
def test_comment_edges(text, where):
    if where is None:
        _same(text, "edge")
        return
    for fast in (True, False):
        with pytest.raises(PtxSyntaxError) as err:
            parse(text, "edge", fast=fast, cache=False)
        assert (err.value.line, err.value.column) == where


class _Slow(Exception):
    pass


def _raise(*_args):
    raise _Slow


@pytest.mark.parametrize("run", ["/*x", "/*", "/* ", '"/*', "*/", "/*x\n"])
def test_a_comment_never_closed_is_refused_in_linear_time(run):
    """``/*x`` repeated: each ``/*`` opened a search to the end of the text (a megabyte took half
    an hour in the brace scanner before a single statement was read)."""
    text = ".version 8.0\n.target sm_90\n.entry k()\n{\n\tret;\n}\n" + run * 300_000
    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, 20.0)
    try:
        with pytest.raises(PtxSyntaxError) as err:
            parse(text, "hostile", cache=False)
    except _Slow:
        pytest.fail(f"{run!r} * 300000 took over 20 s to refuse")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert err.value.line == 7
