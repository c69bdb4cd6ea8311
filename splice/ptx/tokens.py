"""The token values a parse hands the shape cache's template compiler, without loading Lark.

The compiler (``shapes._codegen``) needs every variable leaf of a statement's model to say where
it came from: its text, grammar terminal, and position.  Lark's ``Token`` says so for what Lark
parsed; the direct reader (``direct.Reader(keep=True)``) reads most statements without Lark and
hands out :class:`Tok` instead, the same three facts on a ``str``, so that a module whose
statements never reach the grammar never imports or builds it (~70 ms of a process' start).
"""
from __future__ import annotations

import sys

#: braces in braces, parentheses in parentheses: real PTX nests a handful, and the analyses, the
#: printer and str() recurse several frames per level (at 250, a vector in a vector … was a
#: RecursionError in ``canonical``).  ``parser.check_nesting`` refuses deeper; the direct reader
#: leaves a statement with more opening brackets to Lark's path, which checks
MAX_NESTING = 64
#: the grammar's ``INT`` digits (``grammars/ptx.lark``), for the readers that bypass Lark: at most
#: 40 decimal or octal, 32 hexadecimal or 128 binary digits (PTX's are 64-bit; Python converts no
#: decimal over 4300 digits)
INT_DIGITS = r"(?:0[xX][0-9a-fA-F]{1,32}|0[bB][01]{1,128}|[0-9]{1,40})"
#: what may follow a ``REG``'s name (the grammar's ``REG``): a vector element (``.x`` … ``.w``,
#: ``.r`` … ``.a``) or a video instruction's byte / half-word selector (``.b0`` … ``.b7654``,
#: ``.h0`` … ``.h32``)
REG_PART = r"(?:\.(?:[xyzwrgba]|b[0-7]{1,4}|h[0-7]{1,2})(?![0-9a-zA-Z_$]))?"


class Tok(str):
    """A token's text, with its terminal name (``type``) and ``start_pos``/``end_pos`` in the
    statement: the fields of ``lark.Token`` the template compiler reads."""
    type: str
    start_pos: int
    end_pos: int

    def __new__(cls, type_: str, value: str, start_pos: int, end_pos: int):
        obj = super().__new__(cls, value)
        obj.type = type_
        obj.start_pos = start_pos
        obj.end_pos = end_pos
        return obj


class TokInt(int):
    """An ``int`` read from one token, remembering where: lets the shape cache rebuild
    ``%r<10>``-style counts from another statement's tokens."""
    start_pos: int
    text: str

    def __new__(cls, value, start_pos, text):
        obj = super().__new__(cls, value)
        obj.start_pos = start_pos
        obj.text = text
        return obj


def token_types() -> tuple:
    """The classes of a positioned token leaf: :class:`Tok`, and Lark's ``Token`` once Lark is
    loaded (before that no leaf can be one)."""
    lark = sys.modules.get("lark")
    return (Tok, lark.Token) if lark is not None else (Tok,)
