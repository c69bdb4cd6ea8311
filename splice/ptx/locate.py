"""Where an operand is written: spans below the statement level, computed on demand.

Operands are interned values (``Reg('%r12')`` is one object wherever it occurs), so they carry
no span themselves; tools that want to point *into* a statement — an analysis message about the
third operand, an editor highlighting a fragment — ask here.  The statement's own text is split
at top-level commas (brackets, braces and parentheses nest), which is exactly how the grammar's
operand list is written, so the k-th span is the k-th operand of ``Instruction.operands``.
"""
from __future__ import annotations

from . import model as m

_OPEN = {"[": "]", "{": "}", "(": ")"}


def operand_spans(source: str, instr: m.Instruction) -> tuple:
    """((start, end), …) in ``source`` of each operand of ``instr`` (a parsed, unedited
    instruction); empty when it has no operands."""
    if instr.span is None:
        raise ValueError("an edited instruction has no source text")
    start, end = instr.span
    text = source[start:end]
    k = 0
    n = len(text)
    if text.startswith("@"):  # guard
        while k < n and not text[k].isspace():
            k += 1
    while k < n and text[k].isspace():
        k += 1
    while k < n and not text[k].isspace() and text[k] != ";":  # opcode.modifiers
        k += 1
    if not instr.operands:
        return ()
    spans = []
    depth = []
    piece = k
    for i in range(k, n):
        c = text[i]
        if c in _OPEN:
            depth.append(_OPEN[c])
        elif depth and c == depth[-1]:
            depth.pop()
        elif not depth and c in ",;":
            spans.append(_trim(text, piece, i, start))
            piece = i + 1
            if c == ";":
                break
    if len(spans) != len(instr.operands):
        raise ValueError(f"operand split disagrees with the model at offset {start}")
    return tuple(spans)


def _trim(text, a, b, base):
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return (base + a, base + b)
