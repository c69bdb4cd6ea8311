"""The statement index of the user's notes: ``sNNNN`` (statement) and ``LNNNNN`` (physical line).

The notes' numbers come from a line-based linearisation, reproduced here rule for rule so that
every ``sNNNN``/``LNNNNN`` a user has written down means the same statement in splice:

1. The entry's lines run from the line holding ``.entry NAME(`` to the line where the running
   count of ``{`` minus ``}`` returns to 0.
2. Per line: strip it; skip it if empty, starting with ``//``, ``.`` or ``{.``; strip leading
   ``{``/``}`` characters unless the next character is ``%``; strip trailing ``}`` while the
   text before it ends with ``;``; skip if now empty or starting with ``.``.
3. A line ``$LABEL:`` is its own statement; otherwise the text is appended to a buffer (joined
   with a space) and a statement is emitted each time the buffer ends with ``;``.
4. Numbering is 1-based per entry; a statement's line is its first physical line (1-based).

A consequence worth knowing: the ``)`` closing the parameter list is not skipped, so statement
1 starts on that line and its text begins with ``) ``.  That is what the notes cite (enc5's
``s1, L1018``), so it is kept.

Each statement also records its last physical line; ``attach`` pairs a model node with the
statement whose lines hold the end of the node.  The rules are applied literally, so a
trailing ``// comment`` after a ``;`` makes the buffer end in comment text and merges that
line with the next one into one statement (NVVM and NVIDIA PTX never write such comments; the
notes' tool behaved the same way); both nodes then carry that statement's number.
"""
from __future__ import annotations

import bisect
import re
from array import array
from dataclasses import dataclass
from typing import NamedTuple, Optional

from . import model as m

_LABEL = re.compile(r"^[$%\w.]+:$")


@dataclass(frozen=True, slots=True)
class IndexedStatement:
    n: int            # sNNNN
    line: int         # LNNNNN: first physical line
    last_line: int    # physical line holding the terminating ';' (or the label)
    text: str

    @property
    def sid(self) -> str:
        return f"s{self.n}"


class SourceLines:
    """One module text's line starts and ``.entry NAME(`` lines, found in one pass.

    Indexing every entry of a module must not re-scan the whole file per entry (that made
    ``splice spec`` quadratic in the number of entries), so the scans are done once here and
    shared by :func:`entry_line_range`, :func:`statement_index` and ``Kernel``."""

    # whitespace within one line only: rule 1 matches line by line
    _ENTRY_OPEN = re.compile(r"\.entry[^\S\n]+([^\s(]+)[^\S\n]*\(")

    def __init__(self, source: str):
        self.source = source
        self.starts = line_starts(source)   # 8 bytes a line, not a list of ints
        self._entry_line: Optional[dict] = None     # name -> 0-based line of its first `.entry NAME(`

    def line_of(self, offset: int) -> int:
        """1-based line holding ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def line(self, i: int) -> str:
        """Physical line ``i`` (0-based), without its newline."""
        starts = self.starts
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(self.source)
        return self.source[starts[i]:end]

    def lines(self, first: int, last: int) -> list:
        """Physical lines ``first``..``last`` (1-based, inclusive)."""
        starts = self.starts
        end = starts[last] - 1 if last < len(starts) else len(self.source)
        return self.source[starts[first - 1]:end].split("\n")

    def entry_open_line(self, entry: str):
        """0-based line of the first ``.entry NAME(`` (rule 1's first pattern), or None."""
        if self._entry_line is None:
            found = {}
            for mt in self._ENTRY_OPEN.finditer(self.source):
                found.setdefault(mt.group(1), mt.start())
            self._entry_line = {name: self.line_of(pos) - 1 for name, pos in found.items()}
        return self._entry_line.get(entry)


def _entry_start(sl: SourceLines, entry: str) -> int:
    """0-based first line of ``entry`` per rule 1: ``.entry NAME(`` as the notes write it; old
    compilers put the ``(`` on the next line or write no parameter list, so the name followed by
    a non-name character also counts, then a ``.func`` of that name (a full scan, rare)."""
    start = sl.entry_open_line(entry)
    if start is not None:
        return start
    pats = [re.compile(r"\.entry\s+" + re.escape(entry) + r"\s*\("),
            re.compile(r"\.entry\s+" + re.escape(entry) + r"(?![\w$])")]
    lines = sl.source.split("\n")
    for pat in pats:
        for i, line in enumerate(lines):
            if pat.search(line):
                return i
    # the name after a `.func` of its line (searched from the first `.func`: ``\.func\b.*?NAME``
    # tried again from each `.func` of a long line, quadratic in it)
    func, name = re.compile(r"\.func\b"), re.compile(r"(?<![\w$%])" + re.escape(entry) + r"(?![\w$])")
    for i, line in enumerate(lines):
        mt = func.search(line)
        if mt is not None and name.search(line, mt.end()):
            return i
    raise KeyError(f"no entry {entry!r}")


_BRACE = re.compile(r"[{}]")


def entry_line_range(source: str, entry: str, lines: Optional[SourceLines] = None) -> tuple:
    """(first, last) 1-based physical lines of ``entry``'s text, per rule 1.  ``lines`` is the
    module's :class:`SourceLines` when the caller indexes several entries of one text.

    The running count only changes on lines holding a brace, so only those are visited (the
    braces found by one regex from the entry's first line): the cost follows the entry's
    braces, not its lines, and never the rest of the file."""
    sl = lines if lines is not None else SourceLines(source)
    start = _entry_start(sl, entry)
    starts, n = sl.starts, len(sl.starts)
    depth = 0
    seen_open = False
    ln = start                                       # 0-based line of the braces being counted
    line_end = starts[ln + 1] if ln + 1 < n else len(sl.source) + 1   # first offset past it
    for mt in _BRACE.finditer(sl.source, starts[start]):
        off = mt.start()
        if off >= line_end:                          # the count at the end of line ``ln``
            if seen_open and depth == 0:
                return start + 1, ln + 1
            ln = sl.line_of(off) - 1
            line_end = starts[ln + 1] if ln + 1 < n else len(sl.source) + 1
        if mt.group() == "{":
            depth += 1
            seen_open = True
        else:
            depth -= 1
    if seen_open and depth == 0:
        return start + 1, ln + 1
    return start + 1, n


def _scan(sl: SourceLines, first: int, last: int, with_text: bool):
    """Rules 2-3 over physical lines ``first``..``last``: yields (first line, last line, text)
    per statement; ``text`` is None unless ``with_text`` (numbering a big entry needs the
    lines alone, and joining every statement's text was a third of the cost)."""
    buf = []
    buf_line = 0
    label = _LABEL.match
    for ln, raw in enumerate(sl.lines(first, last), first):
        s = raw.strip()
        if not s:
            continue
        c = s[0]
        if s[-1] == ";" and not buf and c not in "./{}":
            yield ln, ln, s       # the common line, one whole statement: what the rules give
            continue
        if c == "." or c == "/" and s.startswith("//") or c == "{" and s.startswith("{."):
            continue
        if c == "{" or c == "}":
            while s and s[0] in "{}" and not s[1:2] == "%":
                s = s[1:].lstrip()
        if s.endswith("}"):
            while s.endswith("}") and s[:-1].rstrip().endswith(";"):
                s = s[:-1].rstrip()
        if not s or s[0] == ".":
            continue
        if not buf and s[-1] == ":" and label(s):
            yield ln, ln, s
            continue
        if not buf:
            buf_line = ln
        buf.append(s)
        if s[-1] == ";":
            yield buf_line, ln, (" ".join(buf) if with_text else None)
            buf = []


def statement_index(source: str, entry: str, lines: Optional[SourceLines] = None) -> list:
    """The numbered statements of ``entry`` in ``source`` (PTX text); see ``entry_line_range``
    for ``lines``.  Only the entry's own lines are read."""
    sl = lines if lines is not None else SourceLines(source)
    first, last = entry_line_range(source, entry, sl)
    return [IndexedStatement(n, a, b, text)
            for n, (a, b, text) in enumerate(_scan(sl, first, last, True), 1)]


def statement_ends(source: str, entry: str, lines: Optional[SourceLines] = None) -> dict:
    """{last physical line: sNNNN} of ``entry``'s statements: what pairs a model node with its
    number (the node's last line), without building each statement's text."""
    sl = lines if lines is not None else SourceLines(source)
    first, last = entry_line_range(source, entry, sl)
    return {b: n for n, (_a, b, _t) in enumerate(_scan(sl, first, last, False), 1)}


def statement_spans(source: str, entry: str, lines: Optional[SourceLines] = None) -> list:
    """(first line, last line) of each of ``entry``'s statements, in order (``sNNNN`` is the
    index + 1): what pairs a node that ends inside a statement, not on its last line, with it —
    a label the rules fold into the statement after it (``$L__BB0_2:  // %loop``), or the
    labels before a multi-line ``.branchtargets`` list, which make up a statement of their own."""
    sl = lines if lines is not None else SourceLines(source)
    first, last = entry_line_range(source, entry, sl)
    return [(a, b) for a, b, _t in _scan(sl, first, last, False)]


class Stmt(NamedTuple):
    """A model statement with its place in the notes' index (``n`` is None for nodes the
    index skips, such as declarations and ``.loc``).  Immutable; a named tuple because a big
    module has one per statement (a third of the cost of a frozen dataclass to make)."""
    n: Optional[int]
    line: int
    node: object
    depth: int        # nesting depth of { } scopes inside the body (0 = body level)


def line_starts(source: str) -> array:
    """Offsets of the first character of every line (for O(log n) offset -> line), 8 bytes a
    line from the start: built as a list first, they took 36 bytes a line at the peak (a module
    of 50M empty lines: 2.4 GB to print its stats, where its text is 50 MB)."""
    starts = array("q", (0,))
    find = source.find
    pos = find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def attach(module: m.Module, entry: str) -> list:
    """Every statement node of ``entry``'s body in program order, paired with its ``sNNNN``."""
    fn = module.function(entry)
    if fn.body is None:
        return []
    sl = SourceLines(module.source)
    index = statement_index(module.source, entry, sl)
    by_line = {}  # every physical line a statement covers -> that statement
    for st in index:
        for ln in range(st.line, st.last_line + 1):
            by_line.setdefault(ln, st)
    out = []

    def end_line(node) -> int:
        return sl.line_of(node.span[1] - 1)

    def visit(items, depth):
        for it in items:
            if isinstance(it, m.Block):
                visit(it.items, depth + 1)
                continue
            n = None
            if isinstance(it, (m.Instruction, m.Label)) and it.span is not None:
                st = by_line.get(end_line(it))
                if st is not None:
                    n = st.n
            out.append(Stmt(n, it.line, it, depth))

    visit(fn.body.items, 0)
    return out
