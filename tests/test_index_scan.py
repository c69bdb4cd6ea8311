"""The one-scan-per-module statement index (SourceLines) gives exactly what the notes' rules
give applied line by line to the whole file for each entry (the reference below is the rule
text of splice/ptx/index.py written the direct, quadratic way)."""
from __future__ import annotations

import re

import pytest

from splice.ptx.index import SourceLines, entry_line_range, statement_index

from .conftest import bundled_files

_LABEL = re.compile(r"^[$%\w.]+:$")


def _reference_range(source, entry):
    lines = source.split("\n")
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
        raise KeyError(entry)
    depth = 0
    seen = False
    for j in range(start, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        seen = seen or "{" in lines[j]
        if seen and depth == 0:
            return start + 1, j + 1
    return start + 1, len(lines)


def _reference_index(source, entry):
    first, last = _reference_range(source, entry)
    lines = source.split("\n")
    out, buf, buf_line = [], [], 0
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
            out.append((len(out) + 1, ln, ln, s))
            continue
        if not buf:
            buf_line = ln
        buf.append(s)
        if s.endswith(";"):
            out.append((len(out) + 1, buf_line, ln, " ".join(buf)))
            buf = []
    return out


def _check(source):
    names = sorted(set(re.findall(r"\.entry\s+([\w$%.]+)", source)))
    sl = SourceLines(source)
    for name in names:
        try:
            want = _reference_index(source, name)
        except KeyError:
            with pytest.raises(KeyError):
                statement_index(source, name, sl)
            continue
        got = [(s.n, s.line, s.last_line, s.text) for s in statement_index(source, name, sl)]
        assert got == want, name
        assert entry_line_range(source, name) == _reference_range(source, name)
    return len(names)


@pytest.mark.parametrize("path", bundled_files(), ids=lambda p: p.name)
def test_same_index_as_the_line_rules(path):
    _check(path.read_text(encoding="utf-8", errors="surrogateescape"))


BODY = "{\n\t.reg .b32 %r<4>;\n\tmov.b32 %r1, 1;\n$L1:\n\tret;\n}\n"


@pytest.mark.parametrize("text", [
    # the name on the next line: rule 1's first pattern must not match across the newline
    ".entry\nk(\n)\n" + BODY + ".entry k2()\n" + BODY,
    # a comment naming the entry before it counts, as in the line rules
    "// .entry k( is below\n.entry k()\n" + BODY,
    # no parameter list, a prefix-sharing name, an entry inside a long module
    ".entry kk\n" + BODY + ".entry k\n" + BODY + ".entry k_x ( )\n" + BODY * 300,
    # braces in a comment and a body that never closes
    ".entry k()\n{ // {{\n\tret;\n}\n}\n}\n.entry z()\n{\n\tret;\n",
])
def test_tricky_headers(text):
    assert _check(text) >= 1
