"""PTX comments: one lexer for every reader that skips them, derived from the grammar's own
terminals (``COMMENT``: ``//`` to the line's end; ``BLOCK_COMMENT``: ``/*`` to the first ``*/``).

The grammar spells a block comment lazily (``/\\*(.|\\n)*?\\*/``): Lark matches it once, at a
token boundary.  The readers here search a whole text, where a lazy group backtracks (a
``/* a */ b */`` stretched, an unclosed ``/*`` re-searched from each of its characters), so the
delimiters are taken from the grammar's terminal and the body is spelled the linear way: each
character matched one way only (``[^*]`` or a ``*`` not followed by ``/``).  ``TO_END`` variants
let a comment never closed run to the end of the text, matched once: the grammar refuses such a
text at its ``/*`` anyway, and a reader must not search for the close again from every
character.  Every pattern built here is checked by ``tests/test_regex_linear.py``.
"""
from __future__ import annotations

import re

from .grammar_text import terminal


def _block_delimiters(regex: str) -> tuple:
    """(opener, closer) of a lazily spelled block terminal ``OPEN(.|\\n)*?CLOSE``."""
    mt = re.fullmatch(r"(?P<open>(?:\\.|[^\\(])+)\(\.\|\\n\)\*\?(?P<close>(?:\\.|[^\\(])+)", regex)
    if mt is None:
        raise ValueError(f"the grammar's BLOCK_COMMENT is no lazy OPEN(.|\\n)*?CLOSE: {regex}")
    unescape = lambda s: re.sub(r"\\(.)", r"\1", s)   # noqa: E731
    return unescape(mt.group("open")), unescape(mt.group("close"))


def _line_opener(regex: str) -> str:
    """The opener of a line terminal ``OPEN[^\\n]*``."""
    mt = re.fullmatch(r"(?P<open>(?:\\.|[^\\\[])+)\[\^\\n\]\*", regex)
    if mt is None:
        raise ValueError(f"the grammar's COMMENT is no OPEN[^\\n]*: {regex}")
    return re.sub(r"\\(.)", r"\1", mt.group("open"))


OPEN, CLOSE = _block_delimiters(terminal("BLOCK_COMMENT"))
LINE_OPEN = _line_opener(terminal("COMMENT"))

_BODY = f"(?:[^{re.escape(CLOSE[0])}]|{re.escape(CLOSE[0])}(?!{re.escape(CLOSE[1:])}))*"
#: a line comment, to its line's end
LINE = re.escape(LINE_OPEN) + r"[^\n]*"
#: a line comment that must run to its line's end (inside a repeated group: no shorter match)
LINE_WHOLE = LINE + r"(?![^\n])"
#: a block comment, closed
BLOCK = re.escape(OPEN) + _BODY + re.escape(CLOSE)
#: a block comment, or one never closed running to the end of the text
BLOCK_TO_END = re.escape(OPEN) + _BODY + r"(?:" + re.escape(CLOSE) + r"|\Z)"
#: any comment (a block never closed runs to the end)
ANY = LINE + "|" + BLOCK_TO_END

_ANY = re.compile(ANY)
_ANY_BYTES = re.compile(ANY.encode())


def strip(text: str, keep_newlines: bool = True) -> str:
    """``text`` without its comments: each replaced by its newlines (line anchors and line
    numbers hold) or, with ``keep_newlines=False``, by nothing."""
    if LINE_OPEN[0] not in text and OPEN[0] not in text:
        return text
    if keep_newlines:
        return _ANY.sub(lambda mt: "\n" * mt.group(0).count("\n"), text)
    return _ANY.sub("", text)


def strip_bytes(raw: bytes) -> bytes:
    """``raw`` (a module's bytes, not decoded) with each comment replaced by a space."""
    return _ANY_BYTES.sub(b" ", raw)
