"""Instructions read without Lark: the shape cache's path for a shape it has not compiled yet.

A cold parse of a 1000-line module meets a hundred statement shapes, and handing each to Lark
(lexer, LALR driver, tree, transformer) costs ~0.3 ms: most of the parse.  This reader accepts
exactly the grammar's ``instruction`` rule (``grammars/ptx.lark``)::

    instruction: guard? IDENT modifier* [operand ("," operand)*] ";"

with the grammar's own terminal regexes, tried in the order Lark's contextual lexer tries them
(priority, then the rest), whitespace ignored as ``%ignore WS`` does.  It builds the node the
way ``build.ModelBuilder`` does.  It is *strict*: anything else — a comment, a string, a
label, a directive or declaration, a token the rule does not allow where it stands — returns
None and the caller asks Lark, which stays the authority on what is PTX and on every error
message.  Accepting only what the rule derives, token by token, is what makes its model equal
to Lark's; tests compare the two on every statement of every corpus module.
"""
from __future__ import annotations

import re

from . import model as m
from .tokens import INT_DIGITS, MAX_NESTING, REG_PART, Tok

_TOKEN = re.compile(
    r"[ \t\f\r\n]*(?:"
    r"(%[A-Za-z0-9_$]+" + REG_PART + r")"   # 1 REG
    r"|(-?0[fF][0-9a-fA-F]{8}(?![0-9a-zA-Z_$])|-?0[dD][0-9a-fA-F]{16}(?![0-9a-zA-Z_$]))"   # 2 HEX_FLOAT
    r"|(-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?)"                                            # 3 DEC_FLOAT
    r"|(-?" + INT_DIGITS + r"[uU]?(?![0-9a-zA-Z_$.]))"                # 4 INT
    r"|([A-Za-z_$][A-Za-z0-9_$]*(?:\.[xyzw](?![0-9a-zA-Z_$]))?)"                          # 5 IDENT
    r"|(\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_$]+)*)"                                           # 6 DOTNAME
    r"|([@!,;{}\[\]()+|<>]))")                                                            # 7 punctuation
_TYPES = (None, "REG", "HEX_FLOAT", "DEC_FLOAT", "INT", "IDENT", "DOTNAME", None)
_NUMBER_TYPES = frozenset({"HEX_FLOAT", "DEC_FLOAT", "INT"})


class _Refuse(Exception):
    """Not (certainly) what the instruction rule derives: Lark decides."""


#: a group of a lexer regex that matches what the grammar ignores (whitespace, comments)
IGNORED = "\x00ignored"


def scan(text: str, match, types: tuple, rest_ok, pos: int = 0):
    """The one lexer loop of the readers that bypass Lark (this one and ``top``).  ``match`` is
    a compiled regex whose numbered groups are the grammar's terminals, named by ``types``
    (None: the punctuation's own text is its type; ``IGNORED``: nothing to keep).  Gives
    (type, text, start, end) per token; where no terminal matches, ``rest_ok(text, pos)`` says
    whether the rest is only what the grammar ignores (the tokens so far) or not (None: the
    caller hands the text to Lark).  ``pos``: where to start."""
    out = []
    n = len(text)
    while pos < n:
        mt = match(text, pos)
        k = mt.lastindex if mt is not None else None
        if k is None or types[k] is IGNORED:
            return out if rest_ok(text, pos) else None
        s = mt.group(k)
        out.append((types[k] or s, s, mt.start(k), mt.end()))
        pos = mt.end()
    return out


def _blank_rest(text: str, pos: int) -> bool:
    return not text[pos:].strip(" \t\f\r\n")


def tokens(text: str):
    """(type, text, start, end) of each token of ``text`` (punctuation has its own text as
    type), or None where a character is none of the terminals the rule uses."""
    return scan(text, _TOKEN.match, _TYPES, _blank_rest)


class Reader:
    """Statement text -> an ``Instruction``, or None.  ``keep`` leaves ``tokens.Tok``s (with
    positions in the statement) where ``ModelBuilder(keep_tokens=True)`` leaves Lark tokens, for the
    shape cache's template compiler; otherwise leaves are the interned operands (``reg``,
    ``sym``, ``imm``: value -> object) and ``str``.  Holds no per-statement state, so one reader
    serves any number of threads."""
    __slots__ = ("keep", "reg", "sym", "imm", "mods")

    def __init__(self, keep: bool, reg, sym, imm):
        self.keep = keep
        self.reg, self.sym, self.imm = reg, sym, imm
        self.mods = {}   # ".shared::cta.b32" -> (".shared::cta", ".b32"), shared by equal statements

    def instruction(self, text: str, span: tuple, line: int, plain: bool = True):
        """``plain=False``: the caller tried ``read_plain`` already (the shape cache does)."""
        if plain and not self.keep:
            node = read_plain(self, text, span, line)
            if node is not None:
                return node
        if text.count("(") > MAX_NESTING or text.count("{") > MAX_NESTING:
            return None     # Lark's, after ``parser.check_nesting``: this reader recurses per level
        toks = tokens(text)
        if not toks or toks[0][2] != 0 or toks[-1][0] != ";" or toks[-1][3] != len(text):
            return None
        cursor = _Cursor(self, toks)
        try:
            node = cursor._instruction(span, line)
        except (_Refuse, IndexError):
            return None
        return node if cursor.i == len(toks) else None


class _Cursor:
    """The descent through one statement's tokens."""
    __slots__ = ("toks", "i", "keep", "reg", "sym", "imm")

    def __init__(self, reader: Reader, toks: list):
        self.toks = toks
        self.i = 0
        self.keep = reader.keep
        self.reg, self.sym, self.imm = reader.reg, reader.sym, reader.imm

    def _leaf(self, t):
        return Tok(t[0], t[1], t[2], t[3]) if self.keep else t[1]

    def _next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def _instruction(self, span, line):
        guard = None
        t = self._next()
        if t[0] == "<":
            return self._marker(span, line)
        if t[0] == "@":
            t = self._next()
            negated = t[0] == "!"
            if negated:
                t = self._next()
            if t[0] not in ("REG", "IDENT"):
                raise _Refuse
            guard = m.Guard(self._leaf(t), negated)
            t = self._next()
        if t[0] != "IDENT":
            raise _Refuse
        opcode = self._leaf(t)
        mods = []
        t = self._next()
        while t[0] == "DOTNAME":
            mods.append(self._leaf(t))
            t = self._next()
        operands = []
        if t[0] != ";":
            self.i -= 1
            operands.append(self._operand())
            t = self._next()
            while t[0] == ",":
                operands.append(self._operand())
                t = self._next()
        if t[0] != ";":
            raise _Refuse
        return m.Instruction(guard, opcode, tuple(mods), tuple(operands), span, line)

    def _marker(self, span, line):
        """ZLUDA's pass-test IR ``<Call> %7, %1, %6;`` / ``<Trap>;`` (the grammar's ``marker``:
        ``"<" IDENT ">" [operand ("," operand)*] ";"``), as ``ModelBuilder.marker`` builds it."""
        name = self._next()
        if name[0] != "IDENT" or self._next()[0] != ">":
            raise _Refuse
        operands = []
        if self.toks[self.i][0] != ";":
            operands.append(self._operand())
            while self.toks[self.i][0] == ",":
                self.i += 1
                operands.append(self._operand())
        if self._next()[0] != ";":
            raise _Refuse
        return m.Instruction(None, "<" + name[1] + ">", (), tuple(operands), span, line)

    def _atom(self, t):
        kind = t[0]
        if kind == "REG":
            return m.Reg(self._leaf(t)) if self.keep else self.reg[t[1]]
        if kind == "IDENT":
            return m.Sym(self._leaf(t)) if self.keep else self.sym[t[1]]
        if kind in _NUMBER_TYPES:
            return m.Imm(self._leaf(t)) if self.keep else self.imm[t[1]]
        raise _Refuse

    def _operand(self):
        t = self._next()
        kind = t[0]
        if kind == "!":
            return m.Not(self._atom(self._next()))
        if kind == "{":
            vec = m.Vec(self._list("}", self._operand))
            if self.toks[self.i][0] == "|":
                self.i += 1
                return m.Pair(vec, self._atom(self._next()))
            return vec
        if kind == "[":
            items = self._list("]", self._addr_item)
            if not items:
                raise _Refuse
            return m.Addr(items)
        if kind == "(":
            return m.ParenList(self._list(")", self._operand))
        atom = self._atom(t)
        follow = self.toks[self.i][0]
        if follow == "+":
            return m.Offset(atom, self._int())
        if follow == "|":
            self.i += 1
            return m.Pair(atom, self._atom(self._next()))
        return atom

    def _int(self):
        self.i += 1
        t = self._next()
        if t[0] != "INT":
            raise _Refuse
        return self._leaf(t)

    def _addr_item(self):
        t = self._next()
        if t[0] == "{":
            return m.Vec(self._list("}", self._operand))
        atom = self._atom(t)
        if self.toks[self.i][0] == "+":
            return m.Offset(atom, self._int())
        return atom

    def _list(self, close: str, item) -> tuple:
        """``[item ("," item)*] close`` after the opening bracket."""
        if self.toks[self.i][0] == close:
            self.i += 1
            return ()
        out = [item()]
        t = self._next()
        while t[0] == ",":
            out.append(item())
            t = self._next()
        if t[0] != close:
            raise _Refuse
        return tuple(out)


# ---- the plain forms, by regex ------------------------------------------------------------------
# Most statements are `[@[!]pred] opcode.mods operand, …;` with registers, symbols, numbers,
# `[base]` / `[base+INT]` addresses and `{reg, …}` vectors, single-spaced.  One match for the
# head and one per operand read them at a third of the tokenizer's cost.  The pieces are the
# grammar's terminal regexes (as in ``_TOKEN``); anything else — a `.x` right after the opcode,
# another separator, `!`, `|`, `+` outside brackets, parentheses, other whitespace — returns
# None and the token reader above decides.
_R = r"%[A-Za-z0-9_$]+" + REG_PART
_ID = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[xyzw](?![0-9a-zA-Z_$]))?"
_NUM = (r"-?0[fF][0-9a-fA-F]{8}(?![0-9a-zA-Z_$])|-?0[dD][0-9a-fA-F]{16}(?![0-9a-zA-Z_$])"
        r"|-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|-?" + INT_DIGITS + r"[uU]?(?![0-9a-zA-Z_$.])")
_INT = r"-?" + INT_DIGITS + r"[uU]?(?![0-9a-zA-Z_$.])"
_PLAIN_HEAD = re.compile(r"(?:@(!?)(" + _R + "|" + _ID + r")[ \t]+)?([A-Za-z_$][A-Za-z0-9_$]*)"
                         r"((?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_$]+)*)*)[ \t]*")
_VEC_ITEMS = r"\{[ \t]*((?:" + _R + "|" + _ID + r")(?:[ \t]*,[ \t]*(?:" + _R + "|" + _ID + r"))*)[ \t]*\}"
#: register, number, name, ``[base]`` / ``[base+INT]``, ``{vector}``, and the texture and surface
#: address ``[tex, {coordinates}]`` (``tex``/``suld``/``sust``/``sured``: a tail of tex.2d
#: statements cost the token reader ~30 µs each, a sixth of a small texture module), and a call's
#: ``(ret)`` / ``(a, b)`` / ``()`` lists
_OPERAND_FORMS = ("(?:(" + _R + ")|(" + _NUM + ")|(" + _ID + r")|\[[ \t]*(?:(" + _R + ")|(" + _ID
                  + r"))(?:[ \t]*\+[ \t]*(" + _INT + r"))?[ \t]*\]|" + _VEC_ITEMS
                  + r"|\[[ \t]*(?:(" + _R + ")|(" + _ID + r"))[ \t]*,[ \t]*" + _VEC_ITEMS + r"[ \t]*\]"
                  + r"|(\x28)[ \t]*((?:" + _R + "|" + _ID + r")(?:[ \t]*,[ \t]*(?:" + _R + "|" + _ID
                  + r"))*)?[ \t]*\x29)")
# (the parentheses of a call list are spelled \x28 \x29: _NO_GROUPS turns every `(` into `(?:`)
_NO_GROUPS = _OPERAND_FORMS.replace("(?:", "\x00").replace("(?!", "\x01").replace("(", "(?:") \
    .replace("\x00", "(?:").replace("\x01", "(?!")
#: the whole operand list, checked in one match: each operand followed by its `,` or by the
#: statement's one `;` (``read_plain`` checks there is one, at the end); one copy of the forms, not
#: two (``FORM (, FORM)* ;``): half the program a process's first statements touch
_PLAIN_LIST = re.compile(r"(?:" + _NO_GROUPS + r"[ \t]*[,;][ \t]*)+")
#: then each operand's pieces, in one findall over the checked list
_PLAIN_OPERAND = re.compile(_OPERAND_FORMS + r"[ \t]*[,;][ \t]*")
assert _PLAIN_LIST.groups == 0 and _PLAIN_OPERAND.groups == 12, "an operand form's groups changed"
_VEC_ITEM = re.compile(_R + "|" + _ID)


def _modifiers(mods: str) -> tuple:
    """``.shared::cta.b32`` -> ``(".shared::cta", ".b32")``; ``()`` when the first is an axis the
    opcode's IDENT takes (``foo.x.y``, ``foo.x::a``: the grammar's IDENT ends in ``.x`` unless a
    word character follows)."""
    if mods[1] in "xyzw" and (len(mods) == 2 or mods[2] not in _WORD):
        return ()
    return tuple("." + x for x in mods[1:].split("."))


_WORD = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")


def _names(reg, sym, items: str) -> tuple:
    """The interned registers and names of a checked ``a, %r1, …`` list (a vector, a texture's
    coordinates, a call's parenthesised list)."""
    return tuple(reg[v] if v[0] == "%" else sym[v] for v in _VEC_ITEM.findall(items))


def read_plain(reader: Reader, text: str, span: tuple, line: int):
    """The Instruction of ``text`` when it has only the plain forms, else None."""
    if text[-1:] != ";" or text.count(";") != 1:
        return None
    mt = _PLAIN_HEAD.match(text)
    if mt is None:
        return None
    neg, pred, opcode, mods = mt.groups()
    if mods:
        split = reader.mods.get(mods)
        if split is None:
            split = reader.mods[mods] = _modifiers(mods)
        if not split:
            return None
        mods = split
    else:
        mods = ()
    pos = mt.end()
    ops: list = []
    if text[pos] != ";":
        if _PLAIN_LIST.fullmatch(text, pos) is None:
            return None
        reg, sym, imm = reader.reg, reader.sym, reader.imm
        for (r, num, ident, areg, aident, off, vec, treg, tident, tvec, paren,
             items) in _PLAIN_OPERAND.findall(text, pos):
            if r:
                ops.append(reg[r])
            elif num:
                ops.append(imm[num])
            elif ident:
                ops.append(sym[ident])
            elif vec:
                ops.append(m.Vec(_names(reg, sym, vec)))
            elif paren:
                ops.append(m.ParenList(_names(reg, sym, items)))
            elif tvec:
                ops.append(m.Addr((reg[treg] if treg else sym[tident], m.Vec(_names(reg, sym, tvec)))))
            else:
                base = reg[areg] if areg else sym[aident]
                ops.append(m.Addr((m.Offset(base, off) if off else base,)))
    guard = m.Guard(pred, neg == "!") if pred is not None else None
    return m.Instruction(guard, opcode, mods, tuple(ops), span, line)
