"""PTX text -> model, with the Lark grammar in grammars/ptx.lark as the only authority on syntax.

Two paths, one language:

- ``parse(text, fast=False)`` hands the whole file to Lark (LALR, contextual lexer) and
  transforms the tree.  Simple and slow (tens of thousands of lines per second).
- ``parse(text)`` (the default) is *chunked*: function bodies are masked out of the module
  text (same length, newlines kept, so positions survive), the skeleton is read by the strict
  skeleton reader (``top.py``; Lark where it declines), and each body is cut into statements
  line by line.  Each statement is looked up by its *shape* — the
  text with digit runs collapsed — in a cache of templates built from Lark's own parse of the
  first statement of that shape (``shapes.py``).  Anything the line cutter is not sure about
  (a ``/*`` comment, a brace it cannot place) goes to Lark whole.  Tests check that both
  paths give equal models, spans included, over every corpus file.

Errors are ``PtxSyntaxError`` with file:line:col, the line and a caret.
"""
from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from functools import lru_cache
from typing import Optional

from . import model as m
from . import top as _top
from .errors import PtxSyntaxError, line_col, source_line
from .shapes import ShapeCache
from . import comments
from .grammar_text import grammar_text
from .tokens import INT_DIGITS, MAX_NESTING
import dataclasses
from ..util import read_text
from .cache import grammar_cache
from bisect import bisect_right
from pathlib import Path
from ..util import encode, encoding_advice
import hashlib


@lru_cache(maxsize=1)
def lark_parser():
    """The LALR parser, built (and ``lark`` imported) the first time a statement needs it.

    Most modules never get there -- the skeleton reader, the direct reader and the shape cache
    read them (on the shared corpus, 15 files of 300 have a statement for Lark) -- and building
    it costs ~70 ms (import, grammar from Lark's cache), a third of a small command's start-up.
    Each parser state's lexer is compiled by Lark on the first token it lexes there;
    :func:`build_grammar` compiles them all.  (lark-cython was tried: its tokens are not
    ``str`` subclasses, which the span bookkeeping relies on, and with the shape cache Lark
    sees few statements anyway.)"""
    from lark import Lark  # heavy: lark is imported, and the grammar built, only when a statement needs it


    return Lark(grammar_text(), parser="lalr", lexer="contextual",
                start=["module", "top_chunk", "body_items", "section_items"], propagate_positions=True,
                maybe_placeholders=False, cache=grammar_cache())


def build_grammar():
    """:func:`lark_parser` with every parser state's lexer compiled now (~25 ms of
    ``re.compile``), for a process about to parse much PTX through Lark, and for a benchmark's
    untimed set-up: otherwise each state's regex union is compiled on the first token lexed
    in it, inside a parse."""
    lark = lark_parser()
    _build_scanners(lark)
    return lark


def _build_scanners(lark) -> None:
    """Lark's own attributes are read defensively: a Lark without them just keeps compiling
    lazily."""
    lexer = getattr(getattr(lark, "parser", None), "lexer", None)
    for state_lexer in {id(x): x for x in getattr(lexer, "lexers", {}).values()}.values():
        getattr(state_lexer, "scanner", None)


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------

def _describe_expected(exc) -> str:
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    names = sorted(_pretty_terminal(e) for e in expected)
    if not names:
        return "unexpected input"
    if len(names) > 8:
        names = names[:8] + ["…"]
    return "expected " + ", ".join(names)


_TERMINAL_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "IDENT": "identifier",
    "REG": "register", "INT": "integer", "DOTNAME": "'.modifier'", "STRING": "string",
    "HEX_FLOAT": "float literal", "DEC_FLOAT": "number", "PLUS": "'+'", "VBAR": "'|'",
    "EQUAL": "'='", "LESSTHAN": "'<'", "MORETHAN": "'>'", "AT": "'@'", "BANG": "'!'",
}


def _pretty_terminal(name: str) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        pattern = lark_parser().get_terminal(name).pattern
        if pattern.type == "str":
            return repr(pattern.value)
    except Exception:  # noqa: BLE001
        pass
    return name


#: a number longer than the grammar's INT reads (it bounds its digits: Python refuses to convert
#: a decimal of over 4300 digits, and a number no 64-bit register holds is no PTX a kernel runs)
_LONG_INT = re.compile(r"-?0[xX]([0-9a-fA-F]{33,})|-?0[bB]([01]{129,})|-?([0-9]{41,})")


def _syntax_error(exc, source: str, path: str, base_pos: int, text_len: int) -> PtxSyntaxError:
    """Lark's ``UnexpectedInput`` -> the error splice reports, at file coordinates."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken  # lark: only on its errors

    if isinstance(exc, UnexpectedEOF):
        pos = base_pos + text_len
        msg = "unexpected end of input, " + _describe_expected(exc)
    else:
        pos = (getattr(exc, "pos_in_stream", None) or 0) + base_pos
        if isinstance(exc, UnexpectedToken):
            tok = exc.token
            got = "end of input" if tok.type == "$END" else repr(str(tok))
            if tok.type == "$END":
                pos = base_pos + text_len
            msg = f"{_describe_expected(exc)}, got {got}"
        elif isinstance(exc, UnexpectedCharacters):
            msg = f"unexpected character {source[pos]!r}" if pos < len(source) else "unexpected character"
            allowed = getattr(exc, "allowed", None)
            if allowed:
                msg += "; " + _describe_expected(exc)
        else:
            msg = str(exc).splitlines()[0]
        long = _LONG_INT.match(source, pos)
        if long:
            msg = (f"an integer literal of {len(long.group(long.lastindex or 0))} digits: splice reads at most 40 "
                   "decimal, 32 hexadecimal or 128 binary digits (PTX integers are 64-bit)")
    line, col = line_col(source, pos)
    if line == 1:   # a UTF-16 file fails on its first character: say why
        msg += encoding_advice(encode(source[:64]))
    return PtxSyntaxError(path, line, col, msg, source_line(source, line))


def _lark(text: str, start: str, source: str, path: str, base_pos: int, keep_tokens=False,
          base_line: Optional[int] = None):
    from lark.exceptions import UnexpectedInput, VisitError  # lark: loaded only by a parse that needs it


    if text.count("(") > MAX_NESTING or text.count("{") > MAX_NESTING:
        check_nesting(source, path, text, base_pos)
    try:
        tree = lark_parser().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, source, path, base_pos, len(text)) from None
    if base_line is None:
        base_line = source.count("\n", 0, base_pos) + 1
    from .build import ModelBuilder  # lark: build.py is Lark's transformer, loaded with it
    builder = ModelBuilder(base_pos, base_line, keep_tokens)
    try:
        return builder.transform(tree)
    except VisitError as exc:  # re-raise the real error, never the wrapper
        raise exc.orig_exc from None


# --------------------------------------------------------------------------------------------
# module skeleton: find function bodies
# --------------------------------------------------------------------------------------------

#: a block comment that is never closed runs to the end of the text (``comments.BLOCK_TO_END``):
#: matched as one, not looked for again from each of its ``/*`` (``/*x`` repeated 8000 times took a
#: second, a megabyte of it half an hour); the grammar refuses the text at its first ``/*`` anyway
_BRACES = re.compile(comments.ANY + r'|"[^"\n]*"|[{}]')
#: what the grammar ignores or reads whole, in the order its lexer meets them
_COMMENTS = re.compile(comments.ANY + r'|"[^"\n]*"')


#: what nests: braces (blocks, vectors, initializers) and parentheses (call operand lists,
#: which the grammar lets nest: ``call f, ((((%r1))));``)
_NESTS = re.compile(comments.ANY + r'|"[^"\n]*"|[{}()]')


def _nesting_error(source: str, path: str, pos: int) -> PtxSyntaxError:
    line, col = line_col(source, pos)
    what = "parentheses" if source[pos] == "(" else "braces"
    return PtxSyntaxError(path, line, col, f"{what} nested deeper than {MAX_NESTING} levels "
                          "(splice's limit)", source_line(source, line))


def check_nesting(source: str, path: str, text: Optional[str] = None, base_pos: int = 0) -> None:
    """Refuse braces, or parentheses, nested deeper than ``MAX_NESTING`` before Lark builds (and
    everything after it walks) a tree that deep: the readers and the model's walks recurse per
    level (2000 parentheses in a call were a RecursionError).  Each kind is counted on its own,
    so that a statement read alone (parentheses never span statements) is judged as the whole
    module is.  ``text``: a piece of ``source`` that starts at ``base_pos`` (the whole source
    by default)."""
    depth = {"{": 0, "(": 0}
    opener = {"}": "{", ")": "("}
    for mt in _NESTS.finditer(source if text is None else text):
        tok = mt.group()
        if tok in depth:
            depth[tok] += 1
            if depth[tok] > MAX_NESTING:
                raise _nesting_error(source, path, base_pos + mt.start())
        elif tok in opener:
            depth[opener[tok]] -= 1


def _function_bodies(source: str, path: str = "<string>"):
    """(open, close, kind) of every depth-0 brace pair that is a function body (``body``) or
    a ``.section`` block (``section``); initializers (``= {``) stay with their declaration."""
    bodies = []
    depth = 0
    open_at = -1
    kind = None
    for mt in _BRACES.finditer(source):
        tok = mt.group()
        if tok == "{":
            if depth == 0:
                open_at = mt.start()
                kind = _brace_kind(source, open_at)
            depth += 1
            if depth > MAX_NESTING:
                raise _nesting_error(source, path, mt.start())
        elif tok == "}":
            depth -= 1
            if depth == 0 and kind in ("body", "section"):
                bodies.append((open_at, mt.start(), kind))
            if depth < 0:
                return None  # unbalanced: let Lark report it
    return bodies if depth == 0 else None


_SECTION_HEAD = re.compile(r'\.section\s+\.[\w$.]+\s*$', re.ASCII)


def _brace_kind(source: str, pos: int) -> str:
    k = pos - 1
    while k >= 0 and source[k] in " \t\r\n":
        k -= 1
    if k >= 0 and source[k] in "=,{":
        return "init"
    line_start = source.rfind("\n", 0, k + 1) + 1
    if _SECTION_HEAD.search(source[line_start:k + 1]):
        return "section"
    return "body"


def _mask(source: str, bodies) -> str:
    parts = []
    pos = 0
    for open_at, close_at, _kind in bodies:
        parts.append(source[pos:open_at + 1])
        # Lark skips the interior as whitespace: only its length (positions after it) and its
        # newline count (lines after it) matter, not where its newlines sit
        newlines = source.count("\n", open_at + 1, close_at)
        parts.append(" " * (close_at - open_at - 1 - newlines) + "\n" * newlines)
        pos = close_at
    parts.append(source[pos:])
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# numeric initializers: `.global .b8 table[217000] = {1, 2, …};` without Lark
# --------------------------------------------------------------------------------------------

_INIT_OPEN = re.compile(r"=\s*\{")
#: one numeric literal exactly as the grammar's number terminals read it (HEX_FLOAT, DEC_FLOAT, INT)
_NUMBER = re.compile(r"-?0[fF][0-9a-fA-F]{8}|-?0[dD][0-9a-fA-F]{16}|-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                     r"|-?" + INT_DIGITS + r"[uU]?")
#: (blanks are what ``finditer`` steps over: a leading ``\s*`` ran over a run of trailing blanks
#: again from each of them, quadratic)
_INIT_TOKEN = re.compile(r"([{},])|([^\s{},]+)")
_INIT_MIN_CHARS = 64     # shorter lists cost Lark nothing worth a second path


def _numeric_inits(source: str, bodies) -> list:
    """(open, close, value) of every module-level initializer that is a brace list of numbers
    running to its declaration's ``;``.  The skeleton hands Lark these braces empty and the
    value is put back into the model (``_put_inits``): a list of 200k numbers costs Lark seconds
    and a split here milliseconds.  Anything else (symbols, comments, several declarators
    after the list, a malformed list) is left to Lark."""
    opens = [o for o, _c, _k in bodies or ()]
    out = []
    for mt in _INIT_OPEN.finditer(source):
        o = mt.end() - 1
        k = bisect_right(opens, o) - 1
        if k >= 0 and o < bodies[k][1]:
            continue  # inside a function body: the statement path handles it
        line_start = source.rfind("\n", 0, o) + 1
        if "//" in source[line_start:o] or "/*" in source[line_start:o]:
            continue  # in a comment, or too unusual to be worth it
        semi = source.find(";", o)
        if semi < 0:
            break
        close = source.rfind("}", o, semi)
        if close - o < _INIT_MIN_CHARS or source[close + 1:semi].strip():
            continue
        value = _number_list(source[o + 1:close])
        if value is not None:
            out.append((o, close, value))
    return out


def _number_list(inner: str):
    """The init tree (tuples of number texts) of a brace list's interior, or None when it is not
    exactly what ``init_list`` of numbers accepts."""
    if "{" not in inner and "}" not in inner:
        items = [x.strip() for x in inner.split(",")]
        full = _NUMBER.fullmatch
        return tuple(items) if all(full(x) for x in items) else None
    stack = [[]]
    expect_item = True      # after `{` or `,`
    for mt in _INIT_TOKEN.finditer(inner):
        punct, atom = mt.group(1), mt.group(2)
        if atom is not None:
            if not expect_item or not _NUMBER.fullmatch(atom):
                return None
            stack[-1].append(atom)
            expect_item = False
        elif punct == "{":
            if not expect_item:
                return None
            stack.append([])
        elif punct == "}":
            if len(stack) == 1 or (expect_item and stack[-1]):
                return None
            done = tuple(stack.pop())
            stack[-1].append(done)
            expect_item = False
        else:
            if expect_item:
                return None
            expect_item = True
    if len(stack) != 1 or expect_item:
        return None
    return tuple(stack[0])


def _mask_inits(masked: str, inits) -> str:
    parts = []
    pos = 0
    for o, c, _v in inits:
        parts.append(masked[pos:o + 1])
        parts.append("\n".join(" " * len(x) for x in masked[o + 1:c].split("\n")))
        pos = c
    parts.append(masked[pos:])
    return "".join(parts)


def _put_inits(items: list, inits) -> bool:
    """Give the declarations whose initializer was masked their values (always the last
    declarator: the list runs to the ``;``).  False when a masked list is not where a
    declaration's last initializer is (the caller then parses with plain Lark)."""
    spans = [(it.span[0], k) for k, it in enumerate(items)
             if isinstance(it, m.Decl) and it.span is not None]
    starts = [a for a, _ in spans]
    for o, c, value in inits:
        i = bisect_right(starts, o) - 1
        d = items[spans[i][1]] if i >= 0 else None
        if d is None or not d.span[0] < o < c < d.span[1] or not d.declarators or d.declarators[-1].init != ():
            return False
        last = dataclasses.replace(d.declarators[-1], init=value)
        items[spans[i][1]] = dataclasses.replace(d, declarators=d.declarators[:-1] + (last,))
    return True


# --------------------------------------------------------------------------------------------
# function bodies, line by line
# --------------------------------------------------------------------------------------------

class _Fallback(Exception):
    """The line cutter met something it does not handle; Lark parses the whole body."""


class _BodyParser:
    def __init__(self, source: str, path: str, shapes: ShapeCache):
        self.source = source
        self.path = path
        self.shapes = shapes

    def parse_body(self, open_at: int, close_at: int, open_line: int) -> m.Block:
        try:
            return self._cut(open_at, close_at, open_line)
        except _Fallback:
            text = self.source[open_at:close_at + 1]
            items = _lark(text[1:-1], "body_items", self.source, self.path, open_at + 1,
                          base_line=open_line)
            return m.Block(tuple(items), (open_at, close_at + 1), open_line)

    def parse_section(self, open_at: int, close_at: int, open_line: int) -> tuple:
        """The items of a ``.section`` block: one label or data line per line; ``open_line``:
        the line of its ``{`` (counted by the caller from the section's own line: counting from
        the file's start for each section was quadratic in a module of many sections)."""
        source = self.source
        items = []
        line_no = open_line
        pos = open_at + 1
        while pos < close_at:
            nl = source.find("\n", pos, close_at)
            if nl < 0:
                nl = close_at
            raw = source[pos:nl]
            s = raw.strip(_WS)
            if s and not s.startswith("//"):
                if "/*" in s or '"' in s:
                    return tuple(_lark(source[open_at + 1:close_at], "section_items", source,
                                       self.path, open_at + 1))
                cut = s.find("//")   # DWARF lines carry `// DW_AT_…` notes: not part of the item
                if cut >= 0:
                    s = s[:cut].rstrip(_WS)
                lead = pos + (len(raw) - len(raw.lstrip(_WS)))
                items.extend(self.shapes.statement(source, lead, lead + len(s), line_no,
                                                   self.path, "section_items"))
            pos = nl + 1
            line_no += 1
        return tuple(items)

    def _cut(self, open_at: int, close_at: int, open_line: int) -> m.Block:
        source = self.source
        statement = self.shapes.statement
        path = self.path
        sc = _Scopes(open_at, open_line)
        pos = open_at + 1
        line_no = open_line
        for raw in source[pos:close_at].split("\n"):
            nl = pos + len(raw)
            s = raw.strip(_WS)
            if not s or s[0] == "/" and s.startswith("//"):
                pos = nl + 1
                line_no += 1
                continue
            c0 = s[0]
            # the common cases, handled here as _piece would handle them, minus its generality
            if "/" not in s and (s.find(";") == s.rfind(";") or s == "}"):
                if sc.pending < 0 and s[-1] == ";" and c0 not in "{}" and (
                        ":" not in s or _LABEL_HEAD.match(s) is None):
                    # one whole statement on its own line (a label before it: _piece's)
                    lead = pos + raw.find(c0)
                    sc.stack[-1].extend(statement(source, lead, lead + len(s), line_no, path))
                    pos = nl + 1
                    line_no += 1
                    continue
                if (sc.pending < 0 and ";" not in s and "{" not in s and "}" not in s
                        and (s[-1] == ":" and s.count(":") == 1 or s.startswith((".loc", ".file")))):
                    # a label or a `.loc` line on its own, as _piece would take it (two labels: _piece's)
                    lead = pos + raw.find(c0)
                    sc.stack[-1].extend(statement(source, lead, lead + len(s), line_no, path))
                    pos = nl + 1
                    line_no += 1
                    continue
                if self._scope_line(sc, s, pos + raw.find(c0), line_no):
                    pos = nl + 1
                    line_no += 1
                    continue
            if "/*" in s:
                # the parse blanked every closed comment: what is left is in a string or never closed
                raise _Fallback
            cut = s.find("//")
            if cut >= 0:
                if '"' in s[:cut]:
                    raise _Fallback
                s = s[:cut].rstrip(_WS)
            lead = pos + (len(raw) - len(raw.lstrip(_WS)))
            if s.count(";") > 1 and '"' not in s:
                # several statements on one line (a minified module may hold its whole body on
                # one): each is cut and looked up on its own, as if it had a line to itself
                for off, seg in _statements_of(s):
                    self._piece(sc, seg, lead + off, line_no)
            else:
                self._piece(sc, s, lead, line_no)
            pos = nl + 1
            line_no += 1
        if sc.pending >= 0 or len(sc.stack) != 1:
            raise _Fallback
        return m.Block(tuple(sc.stack[0]), (open_at, close_at + 1), sc.opens[0][1])

    def _scope_line(self, sc: "_Scopes", s: str, lead: int, line_no: int) -> bool:
        """The lines NVVM writes around inline asm and multi-line statements, when ``s`` holds
        at most one ``;`` and no comment: ``{stmt;``, ``stmt;}``, ``{ stmt;}``, ``}``, and the
        continuation lines of a statement (``{%r1, %r2},``, ``{%r3, %r4};``).  False when the
        line is none of these (``_piece`` takes it)."""
        if sc.pending >= 0:
            if s[-1] == ";":
                sc.stack[-1].extend(self.shapes.statement(self.source, sc.pending, lead + len(s),
                                                          sc.pending_line, self.path))
                sc.pending = -1
                return True
            # a statement cannot hold a block: a line that opens with `{` inside one is a
            # vector or initializer (`{d0, d1, d2, d3},`, hand-written PTX names registers
            # without `%`); only a leading `}` is left to Lark
            return s[0] != "}"
        if s == "}":
            sc.close(lead + 1)
            return True
        k = 0
        if s[0] == "{":
            k = len(s) - len(s[1:].lstrip(_WS))
        e = len(s)
        if s[-1] == "}":
            e = len(s[:-1].rstrip(_WS))
        text = s[k:e]
        if not text or text[0] in "{}" or text[-1] != ";" or ":" in text:
            return False
        if k:
            sc.open(lead, line_no)
        sc.stack[-1].extend(self.shapes.statement(self.source, lead + k, lead + e, line_no, self.path))
        if e < len(s):
            sc.close(lead + len(s))
        return True

    def _piece(self, sc: "_Scopes", s: str, lead: int, line_no: int) -> None:
        """One line, or one statement of a line that holds several: scope braces, a statement
        (or its first or last part, when it spans lines), or a label."""
        source = self.source
        stop = lead + len(s)
        if sc.pending >= 0:
            if s.endswith(";"):
                sc.stack[-1].extend(self.shapes.statement(source, sc.pending, stop, sc.pending_line, self.path))
                sc.pending = -1
            elif s[0] == "}":
                raise _Fallback
            return
        # scope braces before the statement ({ or } at the start of a line) ...
        k = 0
        while k < len(s) and s[k] in "{}":
            if s[k] == "{":
                sc.open(lead + k, line_no)
            else:
                sc.close(lead + k + 1)
            k += 1
            while k < len(s) and s[k] in _WS:
                k += 1
        # ... and after it (NVVM's `{ cvt.f32.f16 %f1, %rs1;}`)
        e = len(s)
        closes = []
        while e > k and s[e - 1] == "}":
            body = s[k:e - 1].rstrip(_WS)
            if not body.endswith(";"):
                break
            closes.append(lead + e)
            e = k + len(body)
        text = s[k:e]
        if text:
            if "{" in text and text[0] in "{}":
                raise _Fallback
            t0 = lead + k
            lab = (_LABEL_HEAD.match(text) if text.endswith(";") or text.endswith(":") and text.count(":") > 1
                   else None)
            if lab and lab.end() < len(text):
                # `$L__BB0_3: shl.b32 …;`, `A: B:` -- the label and the rest each hit the cache
                sc.stack[-1].extend(self.shapes.statement(source, t0, t0 + lab.end(), line_no, self.path))
                rest = text[lab.end():]
                self._piece(sc, rest.lstrip(_WS), t0 + lab.end() + len(rest) - len(rest.lstrip(_WS)), line_no)
            elif text.endswith(";") or text.endswith(":") or text.startswith((".loc", ".file")):
                if text.count(";") > 1:
                    sc.stack[-1].extend(_lark(text, "body_items", source, self.path, t0, base_line=line_no))
                else:
                    sc.stack[-1].extend(self.shapes.statement(source, t0, lead + e, line_no, self.path))
            elif closes:
                raise _Fallback
            else:
                sc.pending = t0
                sc.pending_line = line_no
        for c in reversed(closes):
            sc.close(c)


_LABEL_HEAD = re.compile(r"(?:%[A-Za-z0-9_$]+|[A-Za-z_$][A-Za-z0-9_$]*)[ \t\f\r]*:(?!:)", re.ASCII)
_WS = " \t\f\r"   # what the grammar ignores on a line (common.WS); str.strip() also eats \x0b, \x85 …


def _statements_of(s: str):
    """(offset, text) of each ``;``-terminated piece of a line (the last may be unterminated),
    surrounding whitespace dropped.  Only called on lines with no comment and no string."""
    k = 0
    n = len(s)
    while k < n:
        j = s.find(";", k)
        j = n - 1 if j < 0 else j
        seg = s[k:j + 1]
        body = seg.strip(_WS)
        if body:
            yield k + (len(seg) - len(seg.lstrip(_WS))), body
        k = j + 1


class _Scopes:
    """The line cutter's state in one body: the items of each open block, where each block
    opened, and the start of a statement that spans lines (``pending``)."""
    __slots__ = ("stack", "opens", "pending", "pending_line")

    def __init__(self, open_at: int, open_line: int):
        self.stack = [[]]
        self.opens = [(open_at, open_line)]
        self.pending = -1
        self.pending_line = 0

    def open(self, at: int, line: int) -> None:
        self.stack.append([])
        self.opens.append((at, line))

    def close(self, end: int) -> None:
        if len(self.stack) == 1:
            raise _Fallback
        items = self.stack.pop()
        o, o_line = self.opens.pop()
        self.stack[-1].append(m.Block(tuple(items), (o, end), o_line))


# --------------------------------------------------------------------------------------------
# entry points
# --------------------------------------------------------------------------------------------

_MEMO: dict = {}
_MEMO_LIMIT = 16


def parse(text: str, path: str = "<string>", fast: bool = True, cache: bool = True) -> m.Module:
    """Parse PTX text into a ``Module``.  ``cache`` memoises by content hash within the
    process (a model is immutable, so handing out the same object is safe)."""
    key = None
    if cache:
        key = (hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), path, fast)
        hit = _MEMO.get(key)
        if hit is not None:
            return hit
    # the collector paused as ``_gc_paused`` does, written out: a context manager's four calls
    # are a tenth of a small module's cold parse
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        module = _parse_fast(text, path) if fast else _parse_slow(text, path)
    finally:
        if was_on:
            if len(text) >= PROMOTE_AT:
                _promote_young()
            gc.enable()
    if key is not None:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = module
    return module


def parse_file(path, fast: bool = True, cache: bool = True) -> m.Module:


    p = Path(path)
    try:
        text = read_text(p)   # every byte kept: CRLF and non-UTF-8 bytes survive the round trip
    except UnicodeDecodeError as exc:  # pragma: no cover - surrogateescape never raises
        raise PtxSyntaxError(str(p), 1, 1, f"cannot decode: {exc}") from None
    return parse(text, str(p), fast=fast, cache=cache)


def _parse_slow(text: str, path: str) -> m.Module:
    check_nesting(text, path)
    items = _lark(text, "module", text, path, 0)
    return m.Module(tuple(items), text, path)


_SHAPES = ShapeCache(lambda text, start, source, path, base, line: _lark(
    text, start, source, path, base, keep_tokens=True, base_line=line))


def parse_entry(text: str, path: str, choose, callees: bool = False) -> m.Module:
    """A module in which only the body of the entry ``choose`` picks is parsed: the skeleton
    (every declaration, every function's signature) is parsed as usual, then
    ``choose(entry names)`` names the one entry whose body is cut into statements; every other
    function keeps the skeleton's empty body (its span still covers the source).  For analysing
    one entry of a module of hundreds (``splice spec --entry``): the cost is the skeleton plus
    that entry, not the whole file.  With ``callees`` the bodies of the functions it calls,
    however deep, are parsed too (what a def-use that follows calls reads).  The result is for
    analysis only — it is not memoised and is never emitted (its other bodies are empty)."""
    with _gc_paused(len(text) >= PROMOTE_AT):
        return _parse_fast(text, path, choose, callees)


#: the text size (~1000 lines) from which a parse promotes its model past the young generation
#: (see ``_promote_young``): below it the young pass the promotion saves (< 0.5 ms) costs less
#: than asking whether promoting is safe -- ``gc.get_freeze_count`` walks every frozen object,
#: ~0.8 ms in a ``roundtrip --jobs`` worker forked with a frozen heap, and asking for each of
#: 300 small files cost the workers a fifth of their time
PROMOTE_AT = 32 * 1024


@contextmanager
def _gc_paused(promote: bool = True):
    """The cyclic garbage collector off while a model is built.  A parse allocates millions of
    small nodes that live as long as the model and form no cycles; with the collector on, every
    700 allocations trigger a pass that re-scans the growing young heap and, ever more often,
    the whole model (thrust.ptx: a third of the parse).  Restored on the way out, errors
    included; a caller that had it off keeps it off.  ``promote``: hand a big model to the oldest
    generation on the way out (``_promote_young``)."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            if promote:
                _promote_young()
            gc.enable()


def _promote_young() -> None:
    """Move what the parse allocated to the oldest generation without scanning it.

    With the collector off, allocations still count: the first allocation after ``enable``
    would run a young-generation pass over every node of the new model (~30 ms on enc5, a
    tenth of its parse) only to promote them all.  ``freeze`` + ``unfreeze`` splices every
    generation into the oldest one in O(1) and resets the young count; the nodes stay
    collectable.  Skipped when the caller froze objects of its own (``unfreeze`` would give
    those back too)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _parse_fast(text: str, path: str, choose=None, callees: bool = False) -> m.Module:
    source = text
    if "/*" in text:
        text = _blank_block_comments(text)
    bodies = _function_bodies(text, path)
    if bodies is None:
        return _parse_slow(source, path)
    masked = _mask(text, bodies) if bodies else text
    inits = _numeric_inits(text, bodies)
    if inits:
        masked = _mask_inits(masked, inits)
    try:
        items = _top.read(masked)
        if items is None:   # something the skeleton reader declines: Lark reads it
            items = list(_lark(masked, "top_chunk", text if masked is text else masked, path, 0))
    except PtxSyntaxError:
        # a body may hold an earlier error than the skeleton's: plain Lark finds the first
        return _parse_slow(source, path)
    if inits and not _put_inits(items, inits):
        return _parse_slow(source, path)
    if bodies:
        keep = None
        if choose is not None:
            keep = {choose([it.name for it in items if isinstance(it, m.Function) and it.is_entry
                            and it.body is not None])}
            if callees:
                keep = _callee_closure(text, items, keep)
        try:
            _parse_bodies(text, path, bodies, items, keep)
        except PtxSyntaxError:
            # one statement seen alone can fail at its own end where the file fails at the
            # next token: plain Lark gives the error exactly as the whole file has it
            return _parse_slow(source, path)
    return m.Module(tuple(items), source, path)


#: the target of a direct call: ``call f, …`` or ``call (ret), f, …`` (``.uni`` or not)
_CALLED = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^()]*\)\s*,\s*)?([A-Za-z_$][\w$]*)")


def _callee_closure(text: str, items, keep: set) -> set:
    """``keep`` and every function with a body that its functions call directly, however deep:
    read from each function's own text (comments skipped), before any body is parsed."""
    funcs = {it.name: it for it in items if isinstance(it, m.Function) and it.body is not None
             and it.span is not None}
    todo, out = list(keep), set(keep)
    while todo:
        fn = funcs.get(todo.pop())
        if fn is None:
            continue
        start, end = fn.span or (0, 0)
        for name in _CALLED.findall(comments.strip(text[start:end])):
            if name in funcs and name not in out:
                out.add(name)
                todo.append(name)
    return out


def _blank_block_comments(text: str) -> str:
    """``text`` with each block comment turned into blanks, its newlines kept: the grammar
    ignores a comment as it ignores blanks, so every reader then sees the statements Lark sees,
    at the same offsets and lines, and a comment inside a statement (``add.f32 %f1, /* step */
    %f2;``) no longer sends its whole body to Lark.  Strings and line comments are skipped as
    the lexer skips them; a comment never closed leaves the text as it is (the grammar refuses
    it, and the caller's fallback reports where).  Only what is read changes: the module keeps
    the original text."""
    parts = []
    at = 0
    for mt in _COMMENTS.finditer(text):
        start, end = mt.span()
        if text[start] != "/" or text[start + 1] != "*":
            continue
        if not text.endswith("*/", 0, end) or end - start < 4:
            return text
        parts.append(text[at:start])
        parts.append(_BLANK_LINES.sub(" ", text[start:end]))
        at = end
    parts.append(text[at:])
    return "".join(parts)


_BLANK_LINES = re.compile(r"[^\n]")


def body_reader(text: str, path: str):
    """(open, close, line) -> Block: the per-body step of :func:`parse` over ``text`` (its
    comments blanked as ``parse`` blanks them), for a caller that parses bodies apart (the
    chunked ``roundtrip``); the blocks' spans are offsets into ``text``."""
    reading = _blank_block_comments(text) if "/*" in text else text
    return _BodyParser(reading, path, _SHAPES).parse_body


def _parse_bodies(text, path, bodies, items, keep=None):
    """Replace the skeleton's empty bodies and sections in ``items`` by their parsed items
    (with ``keep``, only the bodies of the functions it names)."""
    body_parser = _BodyParser(text, path, _SHAPES)
    by_open = {o: (o, c) for o, c, _kind in bodies}
    for k, it in enumerate(items):
        if isinstance(it, m.Function) and it.body is not None and it.body.span is not None:
            if keep is not None and it.name not in keep:
                continue
            o, c = by_open[it.body.span[0]]
            block = body_parser.parse_body(o, c, it.body.line)
            items[k] = m.Function(it.kind, it.linkage, it.name, it.returns, it.params,
                                  it.directives, block, it.span, it.line)
        elif isinstance(it, m.Section) and it.span is not None:
            o, c = by_open[text.index("{", it.span[0])]
            open_line = it.line + text.count("\n", it.span[0], o)
            items[k] = m.Section(it.name, body_parser.parse_section(o, c, open_line),
                                 it.span, it.line)


def shape_stats() -> dict:
    return _SHAPES.stats()
