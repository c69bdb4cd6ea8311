"""The statement-shape cache: Lark parses each *shape* of statement once.

A kernel of 50 000 statements has a few hundred shapes: ``add.s32 %r12, %r11, 4;`` and
``add.s32 %r7, %r3, 16;`` differ only in digit runs.  The key of a statement is its opcode word
kept verbatim (modifiers like ``.m16n8k32`` carry meaning) and the rest with every digit run
collapsed to ``0``; whitespace and punctuation are kept, so a key fixes the token sequence
up to the spelling of registers, numbers and identifiers.

A plain instruction (``direct.read_plain``: registers, symbols, numbers, simple addresses and
vectors) is read by regex before any key is computed — that costs what a template hit costs —
so templates serve the other shapes.  On a miss, Lark parses the statement (the grammar is the
authority) and the resulting node is compiled into a template: a Python expression that
rebuilds the same node from the new statement's variable tokens.  A node is only templated when
every token carrying a digit is one of those variable tokens and nothing in it was *computed*
from a token (an ``int`` parsed from ``%r<10>``, a joined string); otherwise that shape always
goes to Lark.  Hex-float and binary literals are validated on every hit, because collapsing
digits changes their length.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from . import model as m
from . import top as _top
from .direct import Reader, read_plain
from .operands import LEAVES, leaf_field
from .tokens import INT_DIGITS, REG_PART, TokInt, token_types

#: digit runs (at most 40: a longer number, which no lexer of splice reads, keys a shape of its own)
_DIGIT_RUN = re.compile(r"[0-9]{1,40}")
# \w is ASCII here as in the grammar: a Unicode letter in a name must miss the cache and reach Lark
_REG_RUN = re.compile(r"%[\w$]+" + REG_PART, re.ASCII)
_FREE_DIGITS = re.compile(r"(?<![\w.$])[0-9]{1,40}", re.ASCII)
_DOT_HEAD = re.compile(r"(?:\.[\w$]+[ \t]*|[0-9]+[ \t]+)*", re.ASCII)
_IDENT_RUN = re.compile(r"(?<![\w$.%])[A-Za-z_$][\w$]*(?:\.[xyzw](?![\w$]))?", re.ASCII)


def _shape(tail: str) -> str:
    """Registers -> ``\x03``, identifiers -> ``a``, digit runs -> ``0``: what is left is the
    token structure the grammar sees (punctuation, whitespace, number spelling).  A register's
    mark is a byte PTX text never holds, so a bare ``%`` (no register) keys a shape of its own."""
    if "%" in tail:
        tail = _REG_RUN.sub("\x03", tail)
    return _DIGIT_RUN.sub("0", _IDENT_RUN.sub("a", tail))
_VALS = re.compile(r"%[\w$]+" + REG_PART + r'|-?[0-9][\w.]*'
                   r'|[A-Za-z_$][\w$]*(?:\.[xyzw](?![\w$]))?|"[^"\n]*"', re.ASCII)
#: a number that starts with digits and holds a letter: its spelling decides its token
_NUM_LETTER = re.compile(r"(?<![\w$%.])-?[0-9]+[A-Za-z_$]", re.ASCII)
#: one number token exactly as the grammar's HEX_FLOAT, DEC_FLOAT and INT read it
_NUMBER_TOKEN = re.compile(r"-?0[fF][0-9a-fA-F]{8}|-?0[dD][0-9a-fA-F]{16}|-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                           r"|-?" + INT_DIGITS + r"[uU]?")
_DIGITS = frozenset("0123456789")
_EXACT_ONLY = ("",)  # marker: this shape always goes to Lark (or the direct reader)
_TEMPLATE: Any = type(lambda: None)      # compiled templates are plain functions
#: a shape is read directly (``direct.py``) until its COMPILE_AT-th statement, which compiles a
#: template: compiling, checking and keeping it (~0.15 ms cold) pays off only for shapes that
#: recur; at 3, a 124-line hand-written module compiled six templates for 76 hits and parsed at
#: 50-60k lines/s cold, at 8 at 72-74k, with modules of 1000+ lines unchanged (CPU time, every
#: shared-corpus and bundled module, docs/results/cpu-speed.md)
COMPILE_AT = 8
#: the same for the body items ``top.body_item`` reads (declarations, labels, ``.loc``): their
#: template is compiled from Lark's parse (~0.25 ms, a tenth of a 1000-line module's cold parse),
#: so only shapes that recur this often get one
COMPILE_ITEM_AT = 24
#: how many distinct statement texts the shape cache remembers verbatim (~100 bytes each)
AGAIN_LIMIT = 1 << 16


class _Intern(dict):
    """value -> operand object, created once: operands are immutable values."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def __missing__(self, key):
        obj = self.cls(key)
        self[key] = obj
        return obj


class _Uncacheable(Exception):
    pass


class ShapeCache:
    def __init__(self, lark_fn):
        self._lark = lark_fn
        self._templates: dict = {}
        # statement text -> (template, values) once a template rebuilt it: generated code repeats
        # statements verbatim (thrust.ptx: 43 % of its 700k; Sort.ptx: 67 %), and a repeat
        # needs neither its key nor its value checks again
        self._again: dict = {}
        self.hits = 0       # statements rebuilt by a compiled template
        self.direct = 0     # statements read by direct.Reader (shape not compiled yet)
        self.misses = 0     # statements Lark parsed
        reg, sym, imm = _Intern(m.Reg), _Intern(m.Sym), _Intern(m.Imm)
        self._direct = Reader(False, reg, sym, imm)
        self._direct_tokens = Reader(True, reg, sym, imm)
        self._env = {
            "R": reg, "S": sym, "I": imm,
            "Instruction": m.Instruction, "Label": m.Label, "Guard": m.Guard, "Offset": m.Offset,
            "Not": m.Not, "Pair": m.Pair, "Vec": m.Vec, "Addr": m.Addr, "ParenList": m.ParenList,
            "Directive": m.Directive, "Decl": m.Decl, "Declarator": m.Declarator,
            "_int": lambda t: int(m.parse_number(t)), "SectionData": m.SectionData,
        }

    def stats(self) -> dict:
        return {"shapes": len(self._templates), "hits": self.hits, "direct": self.direct,
                "misses": self.misses}

    # ---------------------------------------------------------------------------------
    def statement(self, source: str, start: int, stop: int, line: int, path: str,
                  rule: str = "body_items"):
        """The model items of ``source[start:stop]`` (one statement, or a label; a line that
        holds several items is handed to Lark as one)."""
        text = source[start:stop]
        if rule == "body_items":
            again = self._again.get(text)
            if again is not None:   # this very text was templated before: no key, no checks
                self.hits += 1
                return (again[0](again[1], (start, stop), line),)
            # a plain instruction costs the regex reader no more than a template hit costs its
            # key and values, and needs nothing compiled: cold, that is most of a module
            node = read_plain(self._direct, text, (start, stop), line)
            if node is not None:
                self.direct += 1
                if len(self._again) < AGAIN_LIMIT:
                    self._again[text] = (_moved, node)
                return (node,)
            node = _top.quick_item(text, (start, stop), line)
            if node is not None:
                self.direct += 1
                return (node,)
        elif rule == "section_items":
            node = _top.quick_section(text)
            if node is not None:
                self.direct += 1
                return (node,)
        key, vs, ve = _key(text)
        if rule != "body_items":
            key = rule + "\x02" + key
        tpl: Any = self._templates.get(key)    # times seen (int) or a compiled template
        if tpl.__class__ is _TEMPLATE:
            vals = _VALS.findall(text)
            if len(vals) == tpl.nvals and (not tpl.numbers or _numbers_ok(vals)):
                self.hits += 1
                if rule == "body_items" and len(self._again) < AGAIN_LIMIT:
                    self._again[text] = (tpl, vals)
                return (tpl(vals, (start, stop), line),)
        if rule == "body_items":
            if tpl is None or tpl.__class__ is int:
                # a shape seen fewer than COMPILE_AT times (COMPILE_ITEM_AT for declarations,
                # labels and .loc, whose compile needs Lark's tokens): read directly
                seen = 0 if tpl is None else tpl
                # an instruction opens with a guard or its opcode, never with a `.`
                node = (self._direct.instruction(text, (start, stop), line, False)
                        if seen < COMPILE_AT and text[0] != "." else None)
                if node is None and seen < COMPILE_ITEM_AT:
                    node = _top.body_item(text, (start, stop), line)
                if node is not None:
                    self._templates[key] = seen + 1
                    self.direct += 1
                    return node if node.__class__ is tuple else (node,)
            elif tpl is _EXACT_ONLY or tpl.__class__ is not int:
                node = self._direct.instruction(text, (start, stop), line, False) or _top.body_item(
                    text, (start, stop), line)
                if node is not None:
                    self.direct += 1
                    return node if node.__class__ is tuple else (node,)
        elif rule == "section_items" and (tpl is None or tpl is _EXACT_ONLY
                                          or tpl.__class__ is int and tpl < COMPILE_ITEM_AT):
            node = _top.section_item(text, (start, stop), line)
            if node is not None:
                if tpl is None or isinstance(tpl, int):
                    self._templates[key] = 1 if tpl is None else tpl + 1
                self.direct += 1
                return (node,)
        return self._learn(text, rule, source, path, start, stop, line, tpl, (vs, ve, key))

    def _learn(self, text, rule, source, path, start, stop, line, tpl, shape):
        """A statement no reader above took: read with tokens (the COMPILE_AT-th of its
        shape) or by Lark, and its shape's template compiled when it has none yet.  ``shape``:
        ``_key``'s (values start, values end, key)."""
        vs, ve, key = shape
        items = None
        if tpl.__class__ is int:   # the COMPILE_AT-th of its shape: compiled from its tokens
            node = self._direct_tokens.instruction(text, (start, stop), line)
            items = (node,) if node is not None else None
        if items is None:
            self.misses += 1
            items = self._lark(text, rule, source, path, start, line)
        if tpl is None or tpl.__class__ is int:
            tpl, rebuilt = self._compile(text, items, start, stop, line, vs, ve, key)
            self._templates[key] = tpl
            if rebuilt is not None:
                return (rebuilt,)
        return tuple(_detokenize(i) for i in items)

    # ---------------------------------------------------------------------------------
    def _compile(self, text, items, start, stop, line, vs, ve, key):
        """(template, the node it rebuilds) or (_EXACT_ONLY, None)."""
        if len(items) != 1:
            return _EXACT_ONLY, None
        node = items[0]
        if getattr(node, "span", (start, stop)) != (start, stop):
            return _EXACT_ONLY, None
        posmap = {}
        vals = []
        for k, mt in enumerate(_VALS.finditer(text)):
            posmap[mt.start()] = (k, mt.group())
            vals.append(mt.group())
        try:
            expr = _codegen(node, posmap, (vs, ve), top=True)
        except _Uncacheable:
            return _EXACT_ONLY, None
        try:
            fn = eval("lambda v, sp, ln: " + expr, dict(self._env))  # noqa: S307 - generated above
        except (SyntaxError, RecursionError):
            # Python's own limits on an expression (200 nested parentheses: operands nested 40
            # deep): such a shape is read as it comes, never templated -- the same model
            return _EXACT_ONLY, None
        fn.nvals = len(vals)
        # a key without a digit run before a letter has no number whose spelling must be checked
        fn.numbers = _NUM_LETTER.search(key) is not None
        # the template must rebuild exactly what Lark built
        rebuilt = fn(vals, (start, stop), line)
        if rebuilt != _detokenize(node) or getattr(rebuilt, "span", None) != getattr(node, "span", None):
            return _EXACT_ONLY, None
        return fn, rebuilt


def _moved(node: m.Instruction, span: tuple, line: int) -> m.Instruction:
    """``node`` as it stands at ``span``/``line`` (a verbatim repeat of a plainly read statement)."""
    return m.Instruction(node.guard, node.opcode, node.modifiers, node.operands, span, line)


_FIRST_WORD = re.compile(r"[^ \t\r\n;]*")
_GUARDED = re.compile(r"@[^ \t\r\n;]*[ \t\r\n]*[^ \t\r\n;]*")


def _key(text: str):
    """(key, verbatim start, verbatim end): the opcode word (after an optional guard) is kept
    verbatim, everything else has its digit runs collapsed."""
    c = text[0]
    if c == "@":
        e = _GUARDED.match(text).end()
        g = _FIRST_WORD.match(text).end()
        return _shape(text[:g]) + "\x01" + text[g:e] + "\x00" + _shape(text[e:]), g, e
    e = _FIRST_WORD.match(text).end()
    if c == ".":
        if text.startswith((".loc ", ".loc\t", ".pragma ", ".pragma\t")):
            # `.loc … , function_name $L…, inlined_at …`: the keywords are letters the grammar
            # reads, so only digit runs are collapsed here (keywords stay in the key)
            return _DIGIT_RUN.sub("0", text), 0, -len(text)
        # declarations: the dotted words carry meaning and stay verbatim; names and numbers
        # (alignment, counts, dimensions) are values
        h = _DOT_HEAD.match(text).end()
        tail = text[h:]
        if "%" in tail:
            tail = _REG_RUN.sub("%", tail)
        head = _FREE_DIGITS.sub("0", text[:h])
        return head + "\x00" + _FREE_DIGITS.sub("0", _IDENT_RUN.sub("a", tail)), 0, h
    if e == len(text) and c != "{":
        if text[-1] == ":":
            return _shape(text), 0, 0
        return text, 0, e
    return text[:e] + "\x00" + _shape(text[e:]), 0, e


def _numbers_ok(vals) -> bool:
    """Every number value that holds a letter (``0x1F``, ``0f3F800000``, ``0b101``, ``12U``) is
    one number token as the grammar reads it.  Collapsing digit runs gives ``10x1F`` the key
    of ``0x1F`` and ``0f3F80000`` (7 digits) that of ``0f3F800000``: Lark rejects those."""
    for v in vals:
        c = v[0]
        if (c in _DIGITS or c == "-" and v[1:2] in _DIGITS) and not v.isdigit() and not _NUMBER_TOKEN.fullmatch(v):
            return False
    return True


# the leaf operands (``splice.ptx.operands.SHAPE``) are interned: one object per spelling
_OPERAND_INTERN = {m.Reg: "R", m.Sym: "S", m.Imm: "I"}
assert set(_OPERAND_INTERN) == set(LEAVES), "a new leaf operand class needs an intern table"


_VARIABLE_TYPES = frozenset({"IDENT", "REG", "INT", "HEX_FLOAT", "DEC_FLOAT", "STRING"})


def _codegen(node, posmap, verbatim, top=False) -> str:
    """``verbatim`` is the (start, end) of the text kept exactly in the key; a negative end
    ``-n`` means: letters kept over the whole text, digit runs collapsed (``.loc`` keys)."""
    if isinstance(node, token_types()):
        letters_kept = verbatim[1] < 0 or (verbatim[0] <= node.start_pos and node.end_pos <= verbatim[1])
        hit = posmap.get(node.start_pos)
        if hit is not None and hit[1] == str(node):
            if node.type in _VARIABLE_TYPES:
                return f"v[{hit[0]}]"
            if not letters_kept:
                raise _Uncacheable  # a keyword whose letters the key collapsed
            if any(ch.isdigit() for ch in node):
                raise _Uncacheable
            return repr(str(node))
        inside = verbatim[0] <= node.start_pos and node.end_pos <= verbatim[1]
        if letters_kept and not any(ch.isdigit() for ch in node):
            return repr(str(node))
        if not inside and any(ch.isalnum() or ch in "$%_" for ch in node):
            raise _Uncacheable  # a word outside the verbatim head must come from the values
        return repr(str(node))
    if isinstance(node, TokInt):
        hit = posmap.get(node.start_pos)
        if hit is None or hit[1] != node.text:
            raise _Uncacheable
        return f"_int(v[{hit[0]}])"
    if node is None or isinstance(node, bool):
        return repr(node)
    if isinstance(node, str):
        raise _Uncacheable  # computed text: cannot be rebuilt from other tokens
    if isinstance(node, (int, float)):
        raise _Uncacheable
    if isinstance(node, tuple):
        return "(" + "".join(_codegen(x, posmap, verbatim) + "," for x in node) + ")"
    cls = type(node)
    if cls in _OPERAND_INTERN:
        value = getattr(node, leaf_field(cls))
        return f"{_OPERAND_INTERN[cls]}[{_codegen(value, posmap, verbatim)}]"
    if not dataclasses.is_dataclass(node):
        raise _Uncacheable
    args = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name == "span":
            if not top:
                raise _Uncacheable
            args.append("sp")
        elif f.name == "line":
            args.append("ln" if top else "0")
        else:
            args.append(_codegen(value, posmap, verbatim))
    return f"{cls.__name__}({', '.join(args)})"


def _detokenize(node):
    """Plain ``str``/``int`` instead of positioned tokens everywhere in a node."""
    if isinstance(node, token_types()):
        return str(node)
    if isinstance(node, TokInt):
        return int(node)
    if isinstance(node, tuple):
        return tuple(_detokenize(x) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            v = getattr(node, f.name)
            nv = _detokenize(v)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node
    return node
