"""The claims of ``splice notes``: every descriptive sentence of the draft as a fact with its
evidence, for ``--json`` and ``notes --evidence``.

A claim is ``{"template", "text", "fact", "evidence"}``: ``text`` is the phrase the draft
prints (a test checks it is there), ``fact`` the structured fact behind it, ``evidence`` the
statement ranges that prove it, each ``[first sN, last sN, first line, last line]`` (the last
line is where the last statement ends, so an independent reader can read exactly those lines:
``bench/notes_claims_check.py`` does).  Templates (``TEMPLATES``) say what each one asserts.

Claims are built from the same facts the draft renders (``notes_facts.Facts``, the phases, the
epilogues and their sub-sections), never from the rendered text.
"""
from __future__ import annotations

from ..ptx import model as m
from .notes_facts import param_addresses
from .operands import operand_defs, phase_operands
from .spec import param_fields
from .vocab import weight_evidence
from .spec import shared_arrays

#: template -> what a claim of it asserts (docs/analysis-api.md, "Notes claims")
TEMPLATES = {
    "weight-image": "the weight field is only read (no store, reduction or atomic through it) and a "
                    "load reads it with a laneid term (profile words only)",
    "param-read": "each statement is an ld.param of the field (parameter, byte offset)",
    "param-unread": "no ld.param of the parameter reads those bytes",
    "shared-array": "the shared array is declared with that many bytes",
    "phase": "the range holds that many mma statements; a regular phase's accumulators are "
             "m-tiles x n-tiles, each k-steps mma long",
    "operand": "the phase's operand registers are defined by those statements (loads of that "
               "space, mma of that phase, literals)",
    "epilogue-kind": "the epilogue holds, at those statements, an instruction of that kind",
    "section": "the sub-section holds, at those statements, an instruction of each named class; a "
               "class it only feeds is read, later in the epilogue, from a register it defines",
}


class ClaimSet:
    """Claims of one kernel, with the physical lines of each statement's end."""

    def __init__(self, k):
        self.k = k
        self.items: list = []

    def _range(self, a: int, b: int) -> list:
        """[sA, sB, the line of sA's first instruction, the line where sB's last one ends]."""
        k = self.k
        last = k.stmts[k.pos_of(b)]
        span = getattr(last.node, "span", None)
        end = k._lines.line_of(span[1] - 1) if span else last.line
        first = k.stmts[k.first_pos_of(a)].line
        return [a, b, first, max(end, last.line, first)]

    def add(self, template: str, text: str, fact: dict, stmts=(), ranges=()) -> None:
        ev = [self._range(a, b) for a, b in ranges] + [self._range(n, n) for n in stmts]
        self.items.append({"template": template, "text": text, "fact": fact, "evidence": ev})


def notes_claims(k, F) -> list:
    """Every claim of the draft ``notes_markdown(k)`` renders with ``F`` (same vocabulary)."""
    C = ClaimSet(k)
    _weight(k, F, C)
    _params(k, F, C)
    _shared(k, C)
    _phases(k, F, C)
    _epilogues(k, F, C)
    return C.items


def _weight(k, F, C) -> None:
    if not F.V.weight:
        return
    _ok, why = weight_evidence(k)
    lane = [a.n for a in F.prov.accesses if a.kind == "ld" and a.addr
            and any(x == "W" and v == 1 for x, v in a.addr) and any("laneid" in x for x, _v in a.addr)]
    C.add("weight-image", f"`W` denotes the weight image, the parameter field `{F.V.weight_field}`",
          {"field": F.V.weight_field, "why": why}, stmts=lane[:1])


def _params(k, F, C) -> None:
    for f in param_fields(k, {}):
        C.add("param-read", f"`{f['param']}+{f['offset']}` | {f['bytes']}",
              {"param": f["param"], "offset": f["offset"], "bytes": f["bytes"]},
              stmts=f["statements"])
    taken = {F.prov.param_short.get(p, p) for p in param_addresses(k)}
    for short, size, gaps in F.params_unread():
        if gaps and size and short not in taken:
            rng = ", ".join(f"[{a}, {b})" for a, b in gaps)
            C.add("param-unread", f"`{short}` is declared {size} bytes; no `ld.param` reads bytes {rng}",
                  {"param": short, "size": size, "gaps": [list(g) for g in gaps]})


def _shared(k, C) -> None:
    for nm, s in shared_arrays(k).items():
        C.add("shared-array", f"`{nm}` ({s['bytes']} bytes)", {"array": nm, "bytes": s["bytes"]})


def _phases(k, F, C) -> None:
    for p in k.phases:
        fact = {"phase": p.index, "mma": len(p.mma), "form": p.form, "regular": p.regular,
                "tiles": list(p.tiles) if p.regular else None,
                "shape": list(p.shape) if p.shape else None}
        C.add("phase", f"| {p.index} | s{p.first}–s{p.last} |" if p.first != p.last
              else f"| {p.index} | s{p.first} |", fact, ranges=[(p.first, p.last)])
        if F.V.weight:
            continue
        for role, txt in phase_operands(k, p).items():
            defs = operand_defs(k, p, role)
            C.add("operand", f"{role} {txt}", {"phase": p.index, "role": role, "text": txt,
                                               "sources": {str(n): lab for n, lab in defs.items()}},
                  stmts=sorted(defs))


def _epilogues(k, F, C) -> None:
    dldn = F.V.has("dldn-epilogue-names")
    seen: set = set()
    for e in F.epis:
        for kind, f in e.sections(dldn).items():
            label = kind if dldn else _kind_text(e, kind)
            C.add("epilogue-kind", label, {"epilogue": e.index, "kind": kind, "dldn": dldn,
                                            "special": list(e.special)}, stmts=f.stmts)
        sig = (e.count, tuple(sorted(e.histogram.items())))
        if sig in seen:          # the draft details the first epilogue of each shape
            continue
        seen.add(sig)
        runs = F.subsections(e)
        for r in runs:
            C.add("section", f"{r['name']}, s{r['first']}–s{r['last']}" if r["first"] != r["last"]
                  else f"{r['name']}, s{r['first']}",
                  {"epilogue": e.index, "name": r["name"], "first": r["first"], "last": r["last"],
                   "anchors": {c: v for c, v in r["anchors"].items()},
                   "epilogue_last": e.last, "dldn": dldn},
                  ranges=[(r["first"], r["last"])])


def _kind_text(e, kind: str) -> str:
    return f"special functions ({', '.join(e.special)})" if kind == "special functions" else kind


def evidence_markdown(claims: list) -> str:
    """``notes --evidence``: one row per claim, its template and statement ranges."""
    out = ["", "## 5. Evidence", "",
           f"{len(claims)} claims, each with the statements that prove it (`splice index --range "
           "sA-sB`); templates in docs/analysis-api.md.", "",
           "| # | template | claim | statements | lines |", "|---|---|---|---|---|"]
    for i, c in enumerate(claims, 1):
        ev = c["evidence"]
        st = ", ".join(f"s{a}" if a == b else f"s{a}–s{b}" for a, b, _x, _y in ev[:8])
        ln = ", ".join(f"L{x}" if x == y else f"L{x}–L{y}" for _a, _b, x, y in ev[:8])
        more = f" (+{len(ev) - 8})" if len(ev) > 8 else ""
        text = c["text"].replace("|", "\\|")
        out.append(f"| C{i} | {c['template']} | {text} | {st or '–'}{more} | {ln or '–'}{more} |")
    return "\n".join(out) + "\n"


def _is_instr(node) -> bool:
    return type(node) is m.Instruction
