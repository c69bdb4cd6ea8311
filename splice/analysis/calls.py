"""Tensor-core code an entry reaches through calls.

Phases are found in an entry's own body: an ``mma`` in a ``__noinline__`` device function
(``.func``), called from the entry, is neither a phase nor cuttable.  Rather than report such an
entry as "0 phases" with nothing said, ``mma_in_calls`` names each called function (followed
through the call graph) whose body holds ``mma``/``wgmma``, where the entry calls it, and the
indirect calls whose targets are unknown."""
from __future__ import annotations

import re

from ..ptx import comments
from ..ptx import model as m


_TC = re.compile(r"^[ \t]*(?:@!?%?[\w$]+[ \t]+)?(?:mma|wgmma\.mma_async|wmma\.mma|tcgen05\.mma)\.", re.M)
# tensor-core instructions of an entry's own body that are not phases, and why
UNPHASED = {
    ("tcgen05", ".mma"): "their M/N/K are in a run-time instruction descriptor and their operands and "
                         "accumulators in shared and tensor memory, not in registers",
}
_CALL = re.compile(r"\bcall(?:\.uni)?\s([^;]*);")
_NAME = re.compile(r"[\w$.]+")


def _text(module, fn) -> str:
    """A function's source text without its comments: read from the module text, so a body the
    lazy parse left empty (``splice spec --entry`` parses only the entry's) is still seen; a
    comment such as ``// indirect call with …`` is not a call."""
    if fn.span is None:
        return ""
    text = module.source[fn.span[0]:fn.span[1]]
    return comments.strip(text)      # a block comment keeps its newlines: line anchors hold


def _tensor_core_count(text: str) -> int:
    return len(_TC.findall(text))


def _callees(text: str, funcs: dict, declared: set) -> tuple:
    """({callee name with a body: calls}, number of indirect calls) in a function's text; a call
    of a declared function without a body (``vprintf``, an ``.extern``) is neither."""
    direct: dict = {}
    indirect = 0
    # up to the last `;`: past it no call can end, and each `call` there would be searched to
    # the end of the text again (quadratic in the calls of an unterminated tail)
    for mt in _CALL.finditer(text, 0, text.rfind(";") + 1):
        named = [t for t in _NAME.findall(mt.group(1)) if t in declared]
        if not named:
            indirect += 1
        elif named[0] in funcs:
            direct[named[0]] = direct.get(named[0], 0) + 1
    return direct, indirect


def mma_in_calls(k) -> dict:
    """``{"functions": [{"func", "mma", "called_at": [statement numbers], "via"}], "indirect_calls"}``:
    the functions with tensor-core instructions that the entry reaches through direct calls
    (``via``: the function the entry calls on the way, for a nested one), and how many of the
    entry's calls are indirect (their targets, and any mma there, are unknown)."""
    mod = k.module
    funcs = mod.memo("calls.funcs",
                     lambda md: {f.name: f for f in md.functions() if f.body is not None and not f.is_entry})
    declared = mod.memo("calls.declared", lambda md: {f.name for f in md.functions()})
    direct, indirect = _callees(_text(mod, k.fn), funcs, declared)
    where = {}
    for st in k.stmts:
        node = st.node
        if type(node) is m.Instruction and node.opcode == "call" and st.n is not None:
            for o in node.operands:
                if type(o) is m.Sym and o.name in funcs:
                    where.setdefault(o.name, []).append(st.n)
    out = []
    seen = set()
    todo = [(name, name) for name in direct]
    while todo:
        name, via = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        text = _text(mod, funcs[name])
        n = _tensor_core_count(text)
        if n:
            out.append({"func": name, "mma": n, "called_at": where.get(via, []),
                        "via": None if via == name else via})
        nested, _ind = _callees(text, funcs, declared)
        todo += [(callee, via) for callee in nested]
    return {"functions": out, "indirect_calls": indirect, "not_phases": not_phases(k)}


def not_phases(k) -> list:
    """``[{"opcode", "statements", "why"}]``: tensor-core instructions in the entry's own body
    that the phase analysis does not model (sm_100's ``tcgen05.mma``), so an entry made of
    them is never reported as "0 phases, 0 mma" with nothing said."""
    out = []
    for (op, first), why in UNPHASED.items():
        at = [k.stmts[p].n for p in k.indices_of(op)
              if k.stmts[p].node.modifiers[:1] == (first,) and k.stmts[p].n is not None]
        if at:
            out.append({"opcode": op + first, "statements": at, "why": why})
    return out


def describe(info: dict, indirect: bool = False) -> str:
    """One sentence for reports and errors, '' when there is nothing to say; ``indirect``: say
    so when the entry makes indirect calls (where a phase was asked for and none exists)."""
    parts = []
    for f in info.get("functions", []):
        at = ", ".join(f"s{n}" for n in f["called_at"][:4])
        via = f" through {f['via']}" if f.get("via") else ""
        parts.append(f"{f['mma']} mma in .func {f['func']} (called{via} at {at or '?'})")
    tail = ""
    if indirect and info.get("indirect_calls"):
        n = info["indirect_calls"]
        tail = (f"{n} indirect calls: their targets are unknown to splice" if n > 1
                else "1 indirect call: its target is unknown to splice")
    own = [f"{len(u['statements'])} {u['opcode']} (s{u['statements'][0]}…) are not phases: {u['why']}"
           for u in info.get("not_phases", [])]
    if not parts:
        return "; ".join(own + ([tail] if tail else []))
    return "; ".join(own + ["; ".join(parts) + ": phases are found in entry bodies only, so these "
                            "are not analysed or cuttable (inline the function, e.g. "
                            "__forceinline__, to cut them)"] + ([tail] if tail else []))
