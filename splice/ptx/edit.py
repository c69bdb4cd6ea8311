"""Edits of PTX text through the model: a node replaced, removed, or code put before or after it,
and every other character of the text kept.

The probe's generated modules are made by editing PTX it did not write: the cut of a harness
(every ``ret`` and every branch that leaves the cut sent to one end label, its ``.loc`` lines
dropped), the instrumented module of a debug stage or a profile (a block of code after a
statement, a pointer global after ``.address_size``).  Each edit here names a *node of the
model* -- found by what it is (an ``Instruction`` whose opcode is ``ret``, the ``Directive``
``.address_size``), never by a pattern over the text -- and says what takes its place, in
nodes the printer writes (``printer.canonical_node``) or text built elsewhere.  The rest of the
text is kept byte for byte: an edited module differs from its source only where it was edited,
as ``printer.emit`` keeps an edited model (an edit here also keeps the edited statement's
place: the node's own span is replaced, so a line stays where it was).

A *fragment* is a statement list that is not a module (a cut's text, a splice site): it is
parsed inside a wrapper entry and its nodes' spans are offsets into the fragment's own text.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, replace as new_node
from typing import Any, Callable, Iterable, Optional, Union

from . import model as m
from .parser import parse
from .printer import canonical_node

#: what a fragment of statements is parsed inside (its spans are shifted back by its length)
_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.entry __splice_fragment()\n{\n"
_TAIL = "\n}\n"

Code = Union[str, m.Instruction, m.Label, m.Decl, m.Directive, m.Block, m.Raw]


@dataclass(frozen=True)
class Fragment:
    """The statements of ``text`` (a statement list) as model nodes, with spans into ``text``."""
    text: str
    items: tuple

    def statements(self):
        """Every statement in program order, nested blocks' included (``model.walk``)."""
        return m.walk(self.items)


def fragment(text: str) -> Fragment:
    """``text`` (statements, as a function body holds them) parsed: a PtxSyntaxError names the
    fragment's line."""
    mod = parse(_HEAD + text + _TAIL, "<fragment>")
    body = mod.functions()[0].body
    return Fragment(text, _shifted(body.items, len(_HEAD), _HEAD.count("\n")))


def _shifted(items: tuple, by: int, lines: int) -> tuple:
    out = []
    for it in items:
        span = (it.span[0] - by, it.span[1] - by) if it.span is not None else None
        kw = {"span": span, "line": it.line - lines if it.line else 0}
        if isinstance(it, m.Block):
            kw["items"] = _shifted(it.items, by, lines)
        out.append(new_node(it, **kw))
    return tuple(out)


def module_items(text: str) -> tuple:
    """Module-level items of ``text`` (functions, declarations: a splice's prelude, which has
    no module header), parsed after a header; spans are offsets past that header."""
    return parse(_HEAD.split(".entry")[0] + text, "<fragment>").items


def instructions(text: str, module: bool = False):
    """Every instruction of ``text``: a statement list, or (``module``) module-level items whose
    functions' bodies are walked."""
    if not module:
        return [s for s in fragment(text).statements() if isinstance(s, m.Instruction)]
    out = []
    for it in module_items(text):
        if isinstance(it, m.Function) and it.body is not None:
            out += [s for s in m.walk(it.body.items) if isinstance(s, m.Instruction)]
    return out


@dataclass(frozen=True)
class Edit:
    """What happens at ``node`` (a node with a span into the edited text): ``replace`` takes its
    place (``()`` removes it; ``None`` keeps it), ``before`` goes on lines of its own before
    the node's line, ``after`` on lines of its own after it (after a trailing comment)."""
    node: Any          # a statement or item of the model, with its span
    replace: Optional[tuple] = None
    before: tuple = ()
    after: tuple = ()


def render(code: Code, indent: str = "") -> str:
    """A node as the printer writes it (a ``Raw`` or a ``str``: as given)."""
    if isinstance(code, str):
        return code
    if isinstance(code, m.Raw):
        return code.text
    return canonical_node(code, indent)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


def _indent(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    head = text[start:pos]
    return head[:len(head) - len(head.lstrip(" \t"))]


def apply(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` made (each at its node's span; two edits never overlap)."""
    cuts = []
    for e in edits:
        cuts += _cuts(text, e)
    return _spliced(text, cuts)


def _cuts(text: str, e: Edit) -> list:
    """(start, end, new text) of one edit."""
    s, t = e.node.span
    ind = _indent(text, s)
    out = []
    if e.replace is not None:
        out.append((s, t, "\n".join(render(c, ind) if k == 0 else ind + render(c, ind)
                                     for k, c in enumerate(e.replace))))
    if e.before:
        at = _line_start(text, s)
        out.append((at, at, "".join(_code_line(c, ind) + "\n" for c in e.before)))
    if e.after:
        at = _line_end(text, t)
        out.append((at, at, "".join("\n" + _code_line(c, ind) for c in e.after)))
    return out


def _spliced(text: str, cuts: list) -> str:
    out, pos = [], 0
    for s, t, new in sorted(cuts, key=lambda c: (c[0], c[1])):
        if s < pos:
            raise ValueError(f"overlapping edits at offset {s}")
        out += [text[pos:s], new]
        pos = t
    out.append(text[pos:])
    return "".join(out)


def _code_line(code: Code, indent: str) -> str:
    """Inserted code at ``indent``: a node on a line of its own; text as given (built code
    carries its own layout)."""
    if isinstance(code, (str, m.Raw)):
        return render(code)
    return indent + render(code, indent)


def rewrite(text: str, change: Callable) -> str:
    """The statement list ``text`` with each statement ``s`` for which ``change(s)`` is not
    None replaced by what it returns (a tuple of nodes; ``()`` removes it)."""
    edits = []
    for s in fragment(text).statements():
        new = change(s)
        if new is not None:
            edits.append(Edit(s, replace=tuple(new)))
    return apply(text, edits) if edits else text


def _statement_spans(module: m.Module) -> tuple:
    """(start, end) of every statement of every function body (blocks' own spans excepted:
    code may go between the statements of a block), and the bodies' spans."""
    spans, bodies = [], []
    for f in module.functions():
        if f.body is None or f.body.span is None:
            continue
        bodies.append(f.body.span)
        spans += [s.span for s in m.walk(f.body.items) if s.span is not None]
    return sorted(spans), bodies


def line_edits(module: m.Module, before: dict, after: dict) -> list:
    """Edits putting ``before[n]`` (text) at the start of line ``n`` (1-based) and ``after[n]``
    after its end, each where the model has a statement boundary: inside a function body, with
    no statement running across it.  A line elsewhere (inside a statement written over several
    lines, outside every body) is refused with its number: code there would split a statement."""
    text = module.source
    starts = _line_starts(text, set(before) | set(after))
    spans, bodies = _statement_spans(module)
    firsts = [s[0] for s in spans]
    out = []
    for lines, at_end in ((before, False), (after, True)):
        for n, code in lines.items():
            pos = _line_end(text, starts[n]) if at_end else starts[n]
            k = bisect.bisect_left(firsts, pos) - 1       # the last statement starting before pos
            inside = spans[k] if k >= 0 and spans[k][1] > pos else None
            if inside or not any(b[0] < pos < b[1] for b in bodies):
                where = (f"inside the statement at line {text.count(chr(10), 0, inside[0]) + 1}" if inside
                         else "outside every function body")
                raise ValueError(f"line {n}: {where}: no place for generated code")
            out.append(_At(pos, "".join(("\n" + c.rstrip("\n")) if at_end else c for c in code)))
    return out


def _line_starts(text: str, lines: set) -> dict:
    """{n: the offset of line n's first character} for the 1-based ``lines``."""
    out, pos, n = {}, 0, 1
    for want in sorted(lines):
        if want < 1:
            raise ValueError(f"line {want}: lines are numbered from 1")
        while n < want:
            nl = text.find("\n", pos)
            if nl < 0:
                raise ValueError(f"line {want}: the module has {n} lines")
            pos, n = nl + 1, n + 1
        out[want] = pos
    return out


@dataclass(frozen=True)
class _At:
    """Text put at an offset (a line's start or end)."""
    pos: int
    text: str


def apply_all(text: str, edits: list) -> str:
    """``text`` with node edits (``Edit``) and line insertions (``line_edits``) made together."""
    cuts = []
    for e in edits:
        if isinstance(e, _At):
            cuts.append((e.pos, e.pos, e.text))
        else:
            cuts += _cuts(text, e)
    return _spliced(text, cuts)
