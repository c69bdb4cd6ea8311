"""Two printers (pycparser's generator idea, one ``_canon_<Node>`` per class):

- ``emit(module)`` is lossless: a node that still has its ``span`` is written as the exact
  source text, and the text *between* spanned siblings (whitespace, comments) is kept, so an
  unmodified module re-emits byte-identical and an edited one changes only where it was edited.
- ``canonical(module)`` prints from the model alone, with one spelling per construct; ptxas
  must accept it and produce the same SASS as for the original text.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from . import comments
from . import model as m

# --------------------------------------------------------------------------------------------
# lossless
# --------------------------------------------------------------------------------------------


def emit(module: m.Module) -> str:
    return _emit_seq(module.source, 0, len(module.source), module.items, "")


def _indent_before(source: str, pos: int) -> str:
    """The whitespace between the start of ``pos``'s line and ``pos``, or "" when code comes
    first.  Scanned backwards and stopped at the first character that is not whitespace: a
    slice of the whole line per child made one long line (many statements, a minified module)
    quadratic."""
    i = pos
    while i > 0 and source[i - 1] != "\n" and source[i - 1].isspace():
        i -= 1
    return source[i:pos] if i == 0 or source[i - 1] == "\n" else ""


def _emit_seq(source, start, end, children, indent_hint):
    """Children between ``start`` and ``end``.  The text between two kept (spanned) children
    is copied — whitespace and comments — minus the code of children an edit removed; new
    children go on lines of their own after the previous child's line (its trailing comment
    stays with it), indented like their neighbours."""
    out = []
    pos = start
    indent = indent_hint
    pending = []
    for c in children:
        if c.span is None:
            pending.append(c)
            continue
        out.append(_join_gap(source[pos:c.span[0]], pending, indent))
        pending = []
        indent = _indent_before(source, c.span[0]) or indent
        out.append(emit_node(source, c))
        pos = c.span[1]
    out.append(_join_gap(source[pos:end], pending, indent))
    return "".join(out)


#: layout and comments only, each character matched one way only (a line comment runs to its
#: line's end, a block comment to its first ``*/``): the lazy ``/\*.*?\*/`` could stretch over
#: ``/* a */ b */`` and, like ``//…`` split anywhere, backtracked in 2^n ways on a failing gap
_TRIVIA = re.compile(r"(?:[ \t\r\n]|" + comments.LINE_WHOLE + "|" + comments.BLOCK + r")*")


def _strip_code(gap: str) -> str:
    """``gap`` without the text of removed statements (comments and layout are kept)."""
    if _TRIVIA.fullmatch(gap):
        return gap
    lines = gap.split("\n")
    kept = []
    for k, line in enumerate(lines):
        c = line.find("//")
        code = line if c < 0 else line[:c]
        if code.strip():
            if c >= 0:
                kept.append(line[:len(line) - len(line.lstrip())] + line[c:])
            elif k == len(lines) - 1:
                kept.append(line[:len(line) - len(line.lstrip())])
            continue
        kept.append(line)
    return "\n".join(kept)


def _join_gap(gap: str, pending, indent: str) -> str:
    clean = _strip_code(gap)
    if not pending:
        return clean
    new = "".join(indent + _render_new(p, indent) + "\n" for p in pending)
    nl = clean.find("\n")
    if nl < 0:
        return clean + "\n" + new + indent
    return clean[:nl + 1] + new + clean[nl + 1:]


def _render_new(node, indent):
    if isinstance(node, m.Raw):
        return node.text
    text = canonical_node(node, indent)
    return text


def emit_node(source, node):
    if isinstance(node, m.Block):
        s, e = node.span
        # the braces belong to the block's own text: children are emitted between them
        return "{" + _emit_seq(source, s + 1, e - 1, node.items, _indent_before(source, s) + "\t") + "}"
    if isinstance(node, m.Function) and node.body is not None and node.body.span is not None:
        s, e = node.span
        bs, be = node.body.span
        return source[s:bs] + emit_node(source, node.body) + source[be:e]
    return source[node.span[0]:node.span[1]]


# --------------------------------------------------------------------------------------------
# canonical
# --------------------------------------------------------------------------------------------


def canonical(module: m.Module) -> str:
    out = []
    for item in module.items:
        out.append(canonical_node(item, ""))
    return "\n".join(out) + "\n"


def canonical_node(node, indent: str = "") -> str:
    fn = _CANON.get(type(node))
    if fn is None:
        raise TypeError(f"no canonical form for {type(node).__name__}")
    return fn(node, indent)


def operand_text(op) -> str:
    return str(op)


def _canon_instruction(i: m.Instruction, indent):
    head = (str(i.guard) + " " if i.guard else "") + i.opcode + "".join(i.modifiers)
    if i.opcode.startswith("<"):
        head = i.opcode
    if i.operands:
        return head + " " + ", ".join(operand_text(o) for o in i.operands) + ";"
    return head + ";"


def _canon_label(l: m.Label, indent):
    return l.name + ":"


def _init_text(init) -> str:
    if isinstance(init, tuple):
        return "{" + ", ".join(_init_text(x) for x in init) + "}"
    return str(init)


def canonical_declarator(d: m.Declarator) -> str:
    text = d.name
    if d.count is not None:
        text += f"<{d.count}>"
    for dim in d.dims:
        text += "[]" if dim is None else f"[{dim}]"
    if d.init is not None:
        text += " = " + _init_text(d.init)
    return text


def _canon_decl(d: m.Decl, indent):
    parts = list(d.linkage) + [d.space] + list(d.attrs)
    return " ".join(parts) + " " + ", ".join(canonical_declarator(x) for x in d.declarators) + ";"


def _args_text(args) -> str:
    out = ""
    for a in args:
        if a == ",":
            out += ","
        elif a == "+" or (out.endswith("+")):
            out += a
        else:
            out += (" " if out else "") + a
    return out


def _canon_directive(d: m.Directive, indent):
    if d.name == ".callprototype":
        return ".callprototype " + " ".join(d.args) + ";"
    text = d.name
    if d.args:
        text += " " + _args_text(d.args)
    return text + (";" if d.terminated else "")


def _canon_block(b: m.Block, indent):
    inner = indent + "\t"
    lines = ["{"]
    for it in b.items:
        lines.append(inner + canonical_node(it, inner))
    lines.append(indent + "}")
    return "\n".join(lines)


def _canon_raw(r: m.Raw, indent):
    return r.text


def canonical_param(p: m.Param) -> str:
    text = " ".join([p.space] + list(p.attrs))
    if p.declarator is not None:
        text += " " + canonical_declarator(p.declarator)
    return text


def canonical_params(params) -> str:
    return "(" + ", ".join(canonical_param(p) for p in params) + ")"


def _canon_function(f: m.Function, indent):
    parts = list(f.linkage) + [f.kind]
    if f.returns is not None:
        parts.append(canonical_params(f.returns))
    parts.append(f.name)
    # ZLUDA's IR writes `.entry %4 .pragma "…" (params)`: an unterminated .pragma before params
    early = [d for d in f.directives if d.name == ".pragma" and not d.terminated]
    parts.extend(_canon_directive(d, indent) for d in early)
    head = " ".join(parts)
    if f.params is not None:
        head += canonical_params(f.params)
    for d in f.directives:
        if d not in early:
            head += "\n" + _canon_directive(d, indent)
    if f.body is None:
        return head + ";"
    return head + "\n" + _canon_block(f.body, "")


def _canon_section(s: m.Section, indent):
    lines = [f".section {s.name}", "{"]
    for it in s.items:
        if isinstance(it, m.Label):
            lines.append(it.name + ":")
        else:
            lines.append(it.type + " " + ", ".join(str(v) for v in it.values))
    lines.append("}")
    return "\n".join(lines)


_CANON: dict[type, Callable[[Any, str], str]] = {
    m.Instruction: _canon_instruction,
    m.Label: _canon_label,
    m.Decl: _canon_decl,
    m.Directive: _canon_directive,
    m.Block: _canon_block,
    m.Raw: _canon_raw,
    m.Function: _canon_function,
    m.Section: _canon_section,
}
