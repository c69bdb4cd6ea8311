"""The module skeleton read without Lark: the chunked parser's path for the top level.

Once function bodies and numeric initializers are masked out (``parser._mask``), what is left
is a handful of item kinds that NVVM, nvcc and Triton write the same way every time: ``.version``,
``.target``, ``.address_size``, ``.file`` lines, module-level declarations and function headers
(``.visible .entry name(.param …, …) .maxntid …`` and an empty ``{ }``), and ``.section`` heads.
Lark on that skeleton cost a third or more of a small module's cold parse (bfs.ptx: 25 ms of
its function headers' mangled parameter lists).  This reader accepts exactly what the grammar's
``top_chunk`` rule derives for those kinds, with the grammar's own terminal regexes, and builds
the nodes as ``build.ModelBuilder`` does; ``.pragma`` lines, block comments and symbolic
initializers (nvcc's tables of function addresses) are read too.  It is *strict*: anything else
(``.loc`` or ``.alias`` at module level, ZLUDA's ``= ld.b64 %3`` initializers, a keyword where
the rule does not expect it, any error) makes it decline the whole skeleton, and Lark — the
authority on syntax and on every error message — parses it as before.  Tests compare the two
on every corpus module.
"""
from __future__ import annotations

import re

from . import comments
from . import model as m
from .direct import IGNORED, scan
from .tokens import INT_DIGITS, REG_PART
from .printer import canonical_params

_TOKEN = re.compile(
    # whitespace and comments (the grammar's WS, COMMENT and BLOCK_COMMENT, which ends at the
    # first `*/`), taken atomically (a lookahead is never re-entered): a comment must not give
    # back its tail to the token alternatives below
    r"(?=((?:[ \t\f\r\n]+|" + comments.LINE + "|" + comments.BLOCK + r")*))\1(?:"
    r'("[^"\n]*")'                                                                        # 2 STRING
    r"|(-?0[fF][0-9a-fA-F]{8}(?![0-9a-zA-Z_$])|-?0[dD][0-9a-fA-F]{16}(?![0-9a-zA-Z_$]))"   # 3 HEX_FLOAT
    r"|(-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?)"                                            # 4 DEC_FLOAT
    r"|(-?" + INT_DIGITS + r"[uU]?(?![0-9a-zA-Z_$.]))"                # 5 INT
    r"|(%[A-Za-z0-9_$]+" + REG_PART + r")"   # 6 REG
    r"|([A-Za-z_$][A-Za-z0-9_$]*(?:\.[xyzw](?![0-9a-zA-Z_$]))?)"                          # 7 IDENT
    r"|(\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_$]+)*)"                                           # 8 DOTNAME
    r"|([,;:{}\[\]()<>=+]))")                                                               # 9 punctuation
_TYPES = (None, IGNORED, "STRING", "HEX_FLOAT", "DEC_FLOAT", "INT", "REG", "IDENT", "DOTNAME", None)
_NUMBERS = frozenset({"HEX_FLOAT", "DEC_FLOAT", "INT"})
#: the grammar's ``atom``: a register, a name or a number
_ATOMS = _NUMBERS | {"REG", "IDENT"}
#: what may follow the last token: blanks and comments, each character matched one way only
#: (``[ \t]+`` inside ``*`` splits a run of n blanks in 2^n ways when a stray byte follows it)
_TRAILING = re.compile(r"(?:[ \t\f\r\n]|" + comments.LINE_WHOLE + "|" + comments.BLOCK + r")*\Z")

_LINKAGE = frozenset({".visible", ".extern", ".weak", ".common"})
_SPACES = frozenset({".reg", ".shared", ".global", ".const", ".local", ".param", ".tex", ".sreg",
                     ".generic"})
_KINDS = frozenset({".entry", ".func"})
#: the performance directives (the grammar's ``PERF_DIRECTIVE``).  This reader's DOTNAME token
#: is the whole dotted word, so it takes a directive only when the word is one of these exactly;
#: where Lark's terminal would stop inside a longer word (``.abi_preserve8``, ``.maxntid128``),
#: the word is none of them and Lark decides (PTX 9.0's ``.abi_preserve`` /
#: ``.abi_preserve_control`` sent a module's whole skeleton to Lark)
_PERF = frozenset({".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".noreturn",
                   ".explicitcluster", ".reqnctapercluster", ".maxclusterrank", ".blocksareclusters",
                   ".abi_preserve", ".abi_preserve_control"})
#: every dotted keyword of the grammar: one of these where the rule wants a DOTNAME is declined
_KEYWORDS = _LINKAGE | _SPACES | _KINDS | _PERF | frozenset({
    ".version", ".target", ".address_size", ".file", ".loc", ".pragma", ".alias", ".section",
    ".align", ".ptr", ".callprototype", ".branchtargets", ".calltargets", ".abi_preserve",
    ".abi_preserve_control"})
#: the grammar's bare-word keywords (``.loc`` attributes): Lark's lexer may read them as such
_LOC_WORDS = frozenset({"function_name", "inlined_at"})
_ATTR_KEYWORDS = frozenset({".ptr", ".global", ".shared", ".const", ".local"})
_TARGETS = frozenset({".branchtargets", ".calltargets"})


class _Refuse(Exception):
    """Not (certainly) what ``top_chunk`` derives: Lark decides."""


def tokens(text: str, pos: int = 0):
    """(type, text, start, end) of each token from ``pos`` on (punctuation has its own text as
    type), or None where the text holds something this reader does not lex (an unterminated
    block comment, a stray byte)."""
    return scan(text, _TOKEN.match, _TYPES, _trailing_ok, pos)


def _trailing_ok(text: str, pos: int) -> bool:
    return _TRAILING.match(text, pos) is not None


_QUICK_LOC = re.compile(r"\.loc[ \t]+([0-9]{1,40})[ \t]+([0-9]{1,40})[ \t]+([0-9]{1,40})")
_QUICK_LABEL = re.compile(r"(%[A-Za-z0-9_$]+|[A-Za-z_$][A-Za-z0-9_$]*)[ \t]*:")


#: ``.reg .b32 %r<10>;``, ``.shared .align 16 .b8 smem[1024];``, ``.param .b64 param0;``,
#: ``.reg .f32 %f0, %f1, %f2;``, ``.reg.u64 a;``: the declarations every body opens with, as nvcc,
#: NVVM, Triton and hand-written PTX write them (decimal numbers, blanks and tabs between words);
#: any other form is ``body_item``'s
_DECIMAL = r"(?:0|[1-9][0-9]{0,39})"    # `010` is octal to the grammar: ``body_item``'s (parse_number)
_DECLARATOR = r"(?:%[A-Za-z0-9_$]+|[A-Za-z_$][A-Za-z0-9_$]*)(?:<" + _DECIMAL + r">|\[(?:" + _DECIMAL + r")?\])?"
_QUICK_DECL = re.compile(
    r"(\.reg|\.shared|\.local|\.param)"
    r"((?:[ \t]+\.align[ \t]+[0-9]{1,40})?(?:[ \t]*\.(?:[bsuf](?:8|16|32|64)|f16x2|bf16x2|bf16|pred|v2|v4))+)"
    r"[ \t]+(" + _DECLARATOR + r"(?:[ \t]*,[ \t]*" + _DECLARATOR + r")*);")
#: one declarator of a _QUICK_DECL match: name, count (`<N>`), `[`, dimension (`[N]`, `[]`)
_ONE_DECLARATOR = re.compile(r"(%[A-Za-z0-9_$]+|[A-Za-z_$][A-Za-z0-9_$]*)(?:<([0-9]+)>|(\[)([0-9]*)\])?")
_ATTR_WORDS = re.compile(r"\.[a-z0-9]+|[0-9]+")


def quick_item(text: str, span: tuple, line: int):
    """A label (``$L__BB0_3:``), a plain ``.loc 1 2 3`` or a plain declaration by one regex
    match, or None: a 1000-line module from nvcc holds a hundred labels and ``.loc`` lines and
    every body opens with its ``.reg`` lines; tokenizing them was the rest of their cost (a
    small module's declarations are all first of their shape).  (``body_item`` takes the
    other forms.)"""
    if text[0] == ".":
        mt = _QUICK_LOC.fullmatch(text)
        if mt:
            return m.Directive(".loc", mt.groups(), span, line, False)
        mt = _QUICK_DECL.fullmatch(text)
        return _quick_decl(mt, span, line) if mt else None
    mt = _QUICK_LABEL.fullmatch(text)
    return m.Label(mt.group(1), span, line) if mt else None


def _quick_decl(mt, span: tuple, line: int) -> m.Decl:
    space, attrs, names = mt.groups()
    words = _ATTR_WORDS.findall(attrs)   # `.align`, its number and the type words, as ``attrs()`` keeps them
    return m.Decl((), space, tuple(words), tuple(
        m.Declarator(name, int(count) if count else None, ((int(dim) if dim else None),) if bracket else ())
        for name, count, bracket, dim in _ONE_DECLARATOR.findall(names)), span, line)


_QUICK_DATA = re.compile(r"(\.b(?:8|16|32|64))[ \t]+([0-9]{1,40})")


def quick_section(text: str):
    """A DWARF number line (``.b8 1``, ``.b32 179``: most of a section) by one regex match, or
    None (``section_item`` takes the other forms)."""
    mt = _QUICK_DATA.fullmatch(text)
    return m.SectionData(mt.group(1), (mt.group(2),)) if mt else None


def body_item(text: str, span: tuple, line: int):
    """One function-body statement that is a declaration (``.reg .b32 %r<10>;``), a label
    (``$L__BB0_1:``), a ``.loc`` line or a ``.callprototype`` (a tuple of the label and the
    prototype for nvcc's ``prototype_4 : .callprototype …;``), exactly as ``_lark(text,
    "body_items", …)`` gives it, or None.  The shape cache's path for these before their shape is compiled (the direct
    instruction reader takes the instructions): each such shape used to cost a Lark parse."""
    return _whole(text, lambda r: r.body_item(span, line))


def section_item(text: str, span: tuple, line: int):
    """One line of a ``.section`` block — a label, or ``.b32 179`` / ``.b64 $L__func_begin0`` /
    ``.b32 .debug_abbrev`` / ``.b64 sym+4`` (comma lists of those) — exactly as
    ``_lark(text, "section_items", …)`` gives it, or None (strings, ``a-b``, anything else)."""
    return _whole(text, lambda r: r.section_item(span, line))


def _whole(text: str, read):
    """``read(reader)`` over every token of ``text``, or None when the reader refuses or
    leaves tokens over (the caller then asks Lark, which also gives every error message)."""
    toks = tokens(text)
    if not toks or toks[0][2] != 0 or toks[-1][3] != len(text):
        return None
    r = _Reader(text, toks)
    try:
        node = read(r)
    except (_Refuse, IndexError):
        return None
    return node if r.i == len(toks) else None


#: blanks and line comments, each character matched one way only (a comment runs to its line's
#: end): ``(?:[ \t]+|//…)*`` splits a run of blanks in 2^n ways when what follows fails, and a
#: header followed by a page of comments took seconds
_BLANK = r"(?:[ \t\f\r\n]|" + comments.LINE_WHOLE + r")*"
_END = r"(?=[ \t\f\r\n])"
#: the module header as nvcc, NVVM and Triton write it: ``.version``, ``.target`` (a list of
#: names), ``.address_size``, each followed by a blank; any other form is the tokenizer's
_HEADER = re.compile(
    _BLANK + r"(\.version)[ \t]+([0-9]+\.[0-9]+)" + _END
    + _BLANK + r"(\.target)[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*)" + _END
    + r"(?:" + _BLANK + r"(\.address_size)[ \t]+([0-9]{1,40})" + _END + r")?")
_TARGET_WORDS = re.compile(r"[A-Za-z0-9_]+|,")


def _header(text: str):
    """(the header's directives, where it ends), or ([], 0): a small module's skeleton is
    mostly its header, and a regex reads it for less than its nine tokens cost the tokenizer."""
    mt = _HEADER.match(text)
    if mt is None:
        return [], 0
    out = []
    for k in (1, 3, 5):
        if mt.group(k) is None:
            break
        start, end = mt.start(k), mt.end(k + 1)
        args = tuple(_TARGET_WORDS.findall(mt.group(k + 1))) if k == 3 else (mt.group(k + 1),)
        out.append(m.Directive(mt.group(k), args, (start, end), text.count("\n", 0, start) + 1, False))
    return out, mt.end()


def read(text: str):
    """The items of a masked module skeleton exactly as ``_lark(text, "top_chunk", …)`` gives
    them (bodies and sections empty), or None where this reader declines."""
    head, at = _header(text)
    toks = tokens(text, at)
    if toks is None:
        return None
    r = _Reader(text, toks)
    if at:
        r._at, r._line = at, text.count("\n", 0, at) + 1
    try:
        return head + r.items()
    except (_Refuse, IndexError):
        return None


class _Reader:
    __slots__ = ("text", "toks", "i", "_at", "_line")

    def __init__(self, text: str, toks: list):
        self.text = text
        self.toks = toks + [("$END", "", len(text), len(text))]
        self.i = 0
        self._at = 0
        self._line = 1

    # -- small functions ----------------------------------------------------------------------------
    def line(self, pos: int) -> int:
        """Line of ``pos``; positions are asked in increasing order, so the count is running."""
        self._line += self.text.count("\n", self._at, pos)
        self._at = pos
        return self._line

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def peek(self):
        return self.toks[self.i]

    def expect(self, kind: str):
        t = self.next()
        if t[0] != kind:
            raise _Refuse
        return t

    def _int(self) -> int:
        return int(m.parse_number(self.expect("INT")[1]))

    # -- items ------------------------------------------------------------------------------
    def items(self) -> list:
        out = []
        while self.peek()[0] != "$END":
            out.append(self.item())
        return out

    def item(self):
        t = self.peek()
        word = t[1] if t[0] == "DOTNAME" else None
        if word in (".version", ".target", ".address_size", ".file"):
            return self.directive(word)
        if word == ".section":
            return self.section()
        if word == ".pragma":
            first = self.next()
            args = self.pragma_args()
            return m.Directive(word, args, (first[2], self.toks[self.i - 1][3]), self.line(first[2]), True)
        if word in _LINKAGE or word in _SPACES or word in _KINDS:
            return self.decl_or_function()
        raise _Refuse

    def body_item(self, span: tuple, line: int):
        t = self.peek()
        if t[0] in ("IDENT", "REG") and self.toks[1][0] == ":":
            self.i = 2
            word = self.peek()[1]
            if word == ".callprototype" or word in _TARGETS:   # nvcc: `prototype_4 : .callprototype …;`
                label = m.Label(t[1], (span[0] + t[2], span[0] + self.toks[1][3]), line)
                read = self.callprototype if word == ".callprototype" else self.targets
                return label, read(span[0], line)
            return m.Label(t[1], span, line)
        if t[0] != "DOTNAME":
            raise _Refuse
        if t[1] == ".callprototype":
            return self.callprototype(span[0], line)
        if t[1] in _TARGETS:
            return self.targets(span[0], line)
        if t[1] == ".loc":
            self.i = 1
            return m.Directive(".loc", self.loc_args(), span, line, False)
        if t[1] == ".pragma":   # `.pragma "nounroll";` before nvcc's loops
            self.i = 1
            return m.Directive(".pragma", self.pragma_args(), span, line, True)
        if t[1] in _SPACES or t[1] in _LINKAGE:
            item = self.decl_or_function()
            if item.__class__ is not m.Decl:
                raise _Refuse
            return m.Decl(item.linkage, item.space, item.attrs, item.declarators, span, line)
        raise _Refuse

    def callprototype(self, base: int, line: int) -> m.Directive:
        """``.callprototype param_list? IDENT param_list ";"`` (the grammar's rule), the
        parameter lists in their canonical spelling as ``ModelBuilder.callprototype`` writes
        them; ``base``/``line``: where the statement's text starts."""
        first = self.expect("DOTNAME")
        at = self.line(first[2]) + line - 1
        args = []
        if self.peek()[0] == "(":
            args.append(canonical_params(self.params()))
        args.append(self.expect("IDENT")[1])
        args.append(canonical_params(self.params()))
        end = self.expect(";")
        return m.Directive(".callprototype", tuple(args), (base + first[2], base + end[3]), at, True)

    def targets(self, base: int, line: int) -> m.Directive:
        """``(".branchtargets" | ".calltargets") IDENT ("," IDENT)* ";"`` (``targets_list``):
        a ``brx.idx`` jump table or an indirect call's candidates, after its label."""
        first = self.expect("DOTNAME")
        at = self.line(first[2]) + line - 1
        args = []
        for k, word in enumerate(self.separated(lambda: self.expect("IDENT")[1])):
            if word in _LOC_WORDS:   # keywords of the grammar: how Lark lexes them here is Lark's
                raise _Refuse
            args += [",", word] if k else [word]
        end = self.expect(";")
        return m.Directive(first[1], tuple(args), (base + first[2], base + end[3]), at, True)

    def section_item(self, span: tuple, line: int):
        t = self.next()
        if t[0] in ("IDENT", "REG") and self.peek()[0] == ":":
            self.i += 1
            return m.Label(t[1], span, line)
        if t[0] != "DOTNAME" or t[1] in _KEYWORDS:
            raise _Refuse
        return m.SectionData(t[1], tuple(self.separated(self.section_value)))

    def section_value(self):
        t = self.next()
        if t[0] in _NUMBERS:
            return t[1]
        if t[0] == "DOTNAME" and t[1] in _KEYWORDS or t[0] not in ("IDENT", "DOTNAME"):
            raise _Refuse
        if self.peek()[0] == "+":
            self.i += 1
            return m.Offset(m.Sym(t[1]), self.expect("INT")[1])
        return t[1]

    def pragma_args(self) -> tuple:
        """``STRING ("," STRING)* ";"`` after ``.pragma``: the strings and commas (``!pragma``
        keeps every token; the ``;`` ends the directive)."""
        args = [self.expect("STRING")[1]]
        while self.peek()[0] == ",":
            args.append(self.next()[1])
            args.append(self.expect("STRING")[1])
        self.expect(";")
        return tuple(args)

    def loc_args(self) -> tuple:
        """``.loc INT INT INT loc_attr*``, loc_attr = ``, function_name IDENT (+ INT)?`` or
        ``, inlined_at INT INT INT``: every token after ``.loc`` is an argument."""
        args = [self.expect("INT")[1], self.expect("INT")[1], self.expect("INT")[1]]
        while self.peek()[0] == ",":
            args.append(self.next()[1])
            word = self.expect("IDENT")[1]
            args.append(word)
            if word == "function_name":
                args.append(self.expect("IDENT")[1])
                if self.peek()[0] == "+":
                    args.append(self.next()[1])
                    args.append(self.expect("INT")[1])
            elif word == "inlined_at":
                args += [self.expect("INT")[1], self.expect("INT")[1], self.expect("INT")[1]]
            else:
                raise _Refuse
        return tuple(args)

    def directive(self, word: str) -> m.Directive:
        first = self.next()
        line = self.line(first[2])
        args = []
        if word == ".version":
            args.append(self.expect("DEC_FLOAT")[1])
        elif word == ".address_size":
            args.append(self.expect("INT")[1])
        elif word == ".target":
            args.append(self.expect("IDENT")[1])
            while self.peek()[0] == ",":
                args.append(self.next()[1])
                args.append(self.expect("IDENT")[1])
        else:   # .file INT STRING ("," INT)*
            args.append(self.expect("INT")[1])
            args.append(self.expect("STRING")[1])
            while self.peek()[0] == ",":
                args.append(self.next()[1])
                args.append(self.expect("INT")[1])
        last = self.toks[self.i - 1]
        return m.Directive(word, tuple(args), (first[2], last[3]), line, False)

    def section(self) -> m.Section:
        first = self.next()
        line = self.line(first[2])
        name = self.expect("DOTNAME")[1]
        self.expect("{")
        close = self.expect("}")
        return m.Section(name, (), (first[2], close[3]), line)

    def decl_or_function(self):
        first = self.peek()
        line = self.line(first[2])
        linkage = []
        while self.peek()[1] in _LINKAGE and self.peek()[0] == "DOTNAME":
            linkage.append(self.next()[1])
        head = self.next()
        if head[0] != "DOTNAME":
            raise _Refuse
        if head[1] in _KINDS:
            return self.function(first, line, tuple(linkage), head[1])
        if head[1] not in _SPACES:
            raise _Refuse
        attrs = self.attrs()
        decls = self.separated(self.declarator)
        end = self.expect(";")
        return m.Decl(tuple(linkage), head[1], attrs, tuple(decls), (first[2], end[3]), line)

    def attrs(self) -> tuple:
        """``decl_attr*``: ``.align INT``, ``.ptr``, a state space word, or any other DOTNAME."""
        out = []
        while self.peek()[0] == "DOTNAME":
            word = self.next()[1]
            if word == ".align":
                out.append(word)
                out.append(self.expect("INT")[1])
            elif word == ".attribute":    # nvcc's __managed__: one word, as ModelBuilder joins it
                out.append(word + "".join(self.attribute_args()))
            elif word in _KEYWORDS and word not in _ATTR_KEYWORDS:
                raise _Refuse
            else:
                out.append(word)
        return tuple(out)

    def attribute_args(self) -> list:
        """``"(" DOTNAME ("(" INT ("," INT)* ")")? ")"`` after ``.attribute``, its tokens' texts."""
        out = [self.expect("(")[1], self.expect("DOTNAME")[1]]
        if self.peek()[0] == "(":
            out.append(self.next()[1])
            out.append(self.expect("INT")[1])
            while self.peek()[0] == ",":
                out.append(self.next()[1])
                out.append(self.expect("INT")[1])
            out.append(self.expect(")")[1])
        out.append(self.expect(")")[1])
        return out

    def declarator(self) -> m.Declarator:
        t = self.next()
        if t[0] not in ("IDENT", "REG"):
            raise _Refuse
        count = None
        dims: list = []
        init = None
        if self.peek()[0] == "<":
            self.i += 1
            count = self._int()
            self.expect(">")
        while self.peek()[0] == "[":
            self.i += 1
            if self.peek()[0] == "]":
                dims.append(None)
            else:
                dims.append(self._int())
            self.expect("]")
        if self.peek()[0] == "=":
            self.i += 1
            init = self.init()
        return m.Declarator(t[1], count, tuple(dims), init)

    def separated(self, item) -> list:
        """``item ("," item)*``."""
        out = [item()]
        while self.peek()[0] == ",":
            self.i += 1
            out.append(item())
        return out

    def closed_list(self, close: str, item) -> tuple:
        """``[item ("," item)*] close`` (the opening token already taken)."""
        out = self.separated(item) if self.peek()[0] != close else []
        self.expect(close)
        return tuple(out)

    def init(self):
        """``init_list`` (nested) of numbers and symbols, or one of those: ``init_symbol``
        (``x``, ``x+8``) and ``init_generic`` (``generic(x)+8``) as ``ModelBuilder`` joins
        them.  Tables of function or array addresses (``= {_Z2f1, _Z2f2}``) are common in
        nvcc output.  ZLUDA's ``init_op`` (``IDENT DOTNAME…``) is read by :meth:`init_op`; the
        ``.loc`` keywords are Lark's."""
        t = self.next()
        if t[0] in _NUMBERS:
            return t[1]
        if t[0] == "{":
            return self.closed_list("}", self.init)
        if t[0] != "IDENT" or t[1] in _LOC_WORDS:
            raise _Refuse
        text = t[1]
        if self.peek()[0] == "(":
            self.i += 1
            inner = self.expect("IDENT")[1]
            if inner in _LOC_WORDS:
                raise _Refuse
            self.expect(")")
            text = f"{text}({inner})"
        elif self.peek()[0] == "DOTNAME":
            return self.init_op(text)
        if self.peek()[0] == "+":
            self.i += 1
            text += "+" + self.expect("INT")[1]
        return text

    def init_op(self, head: str) -> str:
        """ZLUDA's pass-test IR ``%4 = zluda.constant.b64 1234U``: ``IDENT DOTNAME+ [atom (","
        atom)*]`` (``init_op``), joined as ``ModelBuilder.init_op`` joins it.  The atoms take
        every ``,`` that follows, as the LALR parser shifts them."""
        while self.peek()[0] == "DOTNAME":
            head += self.next()[1]
        if self.peek()[0] not in _ATOMS:
            return head
        atoms = self.separated(self.atom)
        return head + " " + ", ".join(atoms)

    def atom(self) -> str:
        t = self.next()
        if t[0] not in _ATOMS or t[1] in _LOC_WORDS:
            raise _Refuse
        return t[1]

    # -- functions --------------------------------------------------------------------------
    def function(self, first, line: int, linkage: tuple, kind: str) -> m.Function:
        returns = params = None
        if self.peek()[0] == "(":
            returns = self.params()
        t = self.next()
        if t[0] not in ("IDENT", "REG"):
            raise _Refuse
        name = t[1]
        perf = []
        if self.peek()[1] == ".pragma":   # ZLUDA's IR: `.entry %4 .pragma "…" (` (``name_pragma``)
            word = self.next()
            perf.append(m.Directive(word[1], (self.expect("STRING")[1],), (word[2], self.toks[self.i - 1][3]),
                                    self.line(word[2]), False))
        if self.peek()[0] == "(":
            params = self.params()
        while self.peek()[0] == "DOTNAME" and self.peek()[1] in _PERF:
            perf.append(self.perf())
        body = None
        end = self.toks[self.i - 1][3]
        if self.peek()[0] == "{":
            o = self.next()
            close = self.expect("}")
            body = m.Block((), (o[2], close[3]), self.line(o[2]))
            end = close[3]
        elif self.peek()[0] == ";":
            end = self.next()[3]
        return m.Function(kind, linkage, name, returns, params, tuple(perf), body, (first[2], end), line)

    def params(self) -> tuple:
        """``param_list``: ``(`` [param ("," param)*] ``)``, param = space decl_attr* declarator?"""
        self.expect("(")
        return self.closed_list(")", self.param)

    def param(self) -> m.Param:
        t = self.next()
        if t[0] != "DOTNAME" or t[1] not in _SPACES:
            raise _Refuse
        attrs = self.attrs()
        decl = self.declarator() if self.peek()[0] in ("IDENT", "REG") else None
        return m.Param(t[1], attrs, decl)  # type: ignore[arg-type]  # `declarator?`: None as Lark's

    def perf(self) -> m.Directive:
        first = self.next()
        line = self.line(first[2])
        args = []
        if self.peek()[0] == "INT":
            args.append(self.next()[1])
            while self.peek()[0] == ",":
                args.append(self.next()[1])
                args.append(self.expect("INT")[1])
        last = self.toks[self.i - 1]
        return m.Directive(first[1], tuple(args), (first[2], last[3]), line, False)
