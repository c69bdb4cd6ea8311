"""The one comment lexer (splice/ptx/comments.py): derived from the grammar's terminals, used by
every reader that skips comments, and skipping exactly what the grammar ignores."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from splice.ptx import comments, parse
from splice.ptx.grammar_text import terminal

ROOT = Path(__file__).resolve().parents[1]


def test_the_delimiters_are_the_grammars():
    assert terminal("COMMENT") == r"//[^\n]*" and terminal("BLOCK_COMMENT") == r"/\*(.|\n)*?\*/"
    assert (comments.LINE_OPEN, comments.OPEN, comments.CLOSE) == ("//", "/*", "*/")


@pytest.mark.parametrize("text, kept, bare", [
    ("a /* x\ny */ b", "a \n b", "a  b"),
    ("a // c /* not a block\nb", "a \nb", "a \nb"),
    ("a /* // still the block */ b // c", "a  b ", "a  b "),
    ("a /* a */ b */ c", "a  b */ c", "a  b */ c"),          # the first */ closes it
    ("x /* never closed\n y", "x \n", "x "),                 # to the end, once
    ("no comment at all", "no comment at all", "no comment at all"),
])
def test_strip(text, kept, bare):
    assert comments.strip(text) == kept
    assert comments.strip(text, keep_newlines=False) == bare
    assert comments.strip_bytes(text.encode()).count(b"/*") <= text.count("*/") or "never" in text


def test_the_readers_see_the_statements_the_grammar_sees():
    src = (".version 8.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 p) // call f;\n{ /* call g; */\n"
           "\t.reg .b32 %r<2>; // bar.sync 0;\n\tadd.s32 %r1, %r1, /* 1 */ 2;\n\tret;\n}\n")
    mod = parse(src, "c.ptx", cache=False)
    names = [getattr(s, "name", None) for s in mod.functions()[0].body.items]
    assert "add.s32" in names and "call" not in " ".join(n or "" for n in names)


#: a comment regex spelled by hand: ``//[^\n]*`` or a ``/\*`` opener, in a pattern literal
_HAND = re.compile(r"""r?b?["'][^"'\n]*(?://\[\^\\n\]|/\\\*)""")


def test_no_other_module_spells_a_comment_regex():
    """Every site that skips comments takes them from splice.ptx.comments (the seven regexes
    of the probe's harness, the recipe's module search, the call table, the parser's brace and
    nesting scans, the skeleton reader and the printer were one each)."""
    found = []
    for p in sorted((ROOT / "splice").rglob("*.py")):
        if p.name in ("comments.py", "grammar_text.py") or p.name.startswith("sass"):
            continue                # sass*.py read cuobjdump's /*0040*/ address columns, not PTX
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if _HAND.search(line) and not line.lstrip().startswith("#"):
                found.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
