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

import re
from dataclasses import dataclass
from typing import Optional

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


def entry_line_range(source: str, entry: str) -> tuple:
    """(first, last) 1-based physical lines of ``entry``'s text, per rule 1."""
    lines = source.split("\n")
    # `.entry NAME(` as the notes write it; old compilers put the `(` on the next line or
    # write no parameter list, so the name followed by a non-name character also counts
    pats = [re.compile(r"\.entry\s+" + re.escape(entry) + r"\s*\("),
            re.compile(r"\.entry\s+" + re.escape(entry) + r"(?![\w$])"),
            re.compile(r"\.func\b.*?(?<![\w$%])" + re.escape(entry) + r"(?![\w$])")]
    start = None
    for pat in pats:
        for i, line in enumerate(lines):
            if pat.search(line):
                start = i
                break
        if start is not None:
            break
    if start is None:
        raise KeyError(f"no entry {entry!r}")
    depth = 0
    seen_open = False
    for j in range(start, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if "{" in lines[j]:
            seen_open = True
        if seen_open and depth == 0:
            return start + 1, j + 1
    return start + 1, len(lines)


def statement_index(source: str, entry: str) -> list:
    """The numbered statements of ``entry`` in ``source`` (PTX text)."""
    first, last = entry_line_range(source, entry)
    lines = source.split("\n")
    out = []
    buf = []
    buf_line = 0
    for ln in range(first, last + 1):
        s = lines[ln - 1].strip()
        if not s or s.startswith("//") or s.startswith(".") or s.startswith("{."):
            continue
        while s and s[0] in "{}" and not s[1:2] == "%":
            s = s[1:].lstrip()
        while s.endswith("}") and s[:-1].rstrip().endswith(";"):
            s = s[:-1].rstrip()
        if not s or s.startswith("."):
            continue
        if _LABEL.match(s) and not buf:
            out.append(IndexedStatement(len(out) + 1, ln, ln, s))
            continue
        if not buf:
            buf_line = ln
        buf.append(s)
        if s.endswith(";"):
            out.append(IndexedStatement(len(out) + 1, buf_line, ln, " ".join(buf)))
            buf = []
    return out


@dataclass(frozen=True, slots=True)
class Stmt:
    """A model statement with its place in the notes' index (``n`` is None for nodes the
    index skips, such as declarations and ``.loc``)."""
    n: Optional[int]
    line: int
    node: object
    depth: int        # nesting depth of { } scopes inside the body (0 = body level)


def line_starts(source: str) -> list:
    """Offsets of the first character of every line (for O(log n) offset -> line)."""
    starts = [0]
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
    index = statement_index(module.source, entry)
    by_line = {}  # every physical line a statement covers -> that statement
    for st in index:
        for ln in range(st.line, st.last_line + 1):
            by_line.setdefault(ln, st)
    out = []
    import bisect

    starts = line_starts(module.source)

    def end_line(node) -> int:
        return bisect.bisect_right(starts, node.span[1] - 1)

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
