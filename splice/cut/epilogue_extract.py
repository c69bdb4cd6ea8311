"""The header of an extracted native epilogue: what the user needs in front of them to rewrite
the code between two phases by hand — each input's provenance (which phase's D, which load,
which constant), each output's consumers (the next phase's A/B/C, a store, later arithmetic),
the epilogue's classification, the constants it computes with and the memory it touches.

The facts are the notes draft's (``splice.analysis.notes_facts.Facts``), so the header and
``splice notes`` never disagree.
"""
from __future__ import annotations

import re

from ..analysis.notes_facts import Facts, f16_of, offsets_text
from .epilogue import epilogue_facts, literals_behind


def _literal_text(lit: str) -> str:
    from ..ptx.model import Imm

    try:
        v = float(Imm(lit).value)
    except (ValueError, TypeError):
        return lit
    h = f16_of(v)
    return f"{lit} = {v:.9g}" + (f" (f16 0x{h[0]:04X} = {h[1]:.9g})" if h else " (f16: overflow)")


def _input_lines(kernel, F, abi, a, sym_name) -> list:
    rd = F.prov.reaching_def
    vals = getattr(abi, "values", None) or {}
    out = []
    for r in abi.live_in:
        key = F.key(r.reg, a) or r.reg
        lab, n = F.describe_def(rd(key, a))
        where = f"{lab}" + (f" s{n}" if n is not None else "")
        extra = []
        v = vals.get(r.reg)
        if isinstance(v, str) and v not in where and not re.fullmatch(r"[\w.]+ s\d+", v):
            extra.append(f"= {F.V.text(vals[r.reg])}")
        lits = sorted(literals_behind(kernel, r.reg, a))
        if lits:
            extra.append("constant " + ", ".join(lits))
        out.append(f"//     {sym_name(r)[1:]:<6} {r.reg:<10} {r.type:<6} <- {where}"
                   + (f"  [{'; '.join(extra)}]" if extra else ""))
    return out


def _output_lines(F, abi, b, sym_name) -> list:
    out = []
    for r in abi.live_out:
        lab, n = F.first_consumer(r.reg, b)
        cons = lab if n is None else f"{lab} s{n}"
        out.append(f"//     {sym_name(r, True)[1:]:<6} {r.reg:<10} {r.type:<6} -> {cons}")
    return out


def _memory_lines(F, first, last) -> list:
    from ..analysis.provenance import render

    out = []
    for g in F.memory(first, last):
        base = render(g["base"], F.V.w) if g["base"] else "?"
        offs = offsets_text(g["offs"])
        st = g["stmts"]
        out.append(f"//     {g['opcode']} [{base}] {offs} ×{len(st)} (s{st[0]}-s{st[-1]})")
    return out


def epilogue_header(kernel, e, abi, i: int, j: int, sym_name, source_name: str) -> list:
    """Comment lines (``//``) describing epilogue ``e`` cut at statement indices i…j."""
    from ..analysis.vocab import find_profile, vocabulary

    F = Facts(kernel, vocabulary(kernel, find_profile(kernel.name)))
    dldn = F.V.has("dldn-epilogue-names")
    facts = epilogue_facts(kernel, i, j, abi, e)
    first = kernel.stmts[i].n
    what = f"phase {e.index} + epilogue E{e.index}" if first != e.first else f"epilogue E{e.index}"
    source_name = " ".join(str(source_name).splitlines())   # one comment line, whatever the path holds
    head = [f"// splice native {what} extracted from {source_name} s{first}-s{e.last}"
            f" ({facts['statement_count']} statements; after phase {e.index}, before phase "
            f"{e.next_phase if e.next_phase else '-'})",
            f"//   kind: {e.named(dldn)}"]
    for f in e.sections(dldn).values():
        head.append(f"//     {f.name}: {len(f.stmts)} (s{f.first}-s{f.last})")
    if facts["constants"]:
        head.append("//   constants:")
        head += [f"//     {_literal_text(c)}" for c in facts["constants"]]
    mem = facts["memory"]
    head.append("//   memory: " + (", ".join(f"{k} {v}" for k, v in mem.items() if v) or "none"))
    head += _memory_lines(F, first, e.last)
    if mem["barriers"] or mem["shared"]:
        head.append("//   block-level contract: the cut holds shared memory"
                    + (" and barriers (bar.sync): every thread of the CTA must reach each barrier"
                       " the native code keeps, and shared words other waves read must be written"
                       if mem["barriers"] else ": it is read/written by this thread's wave only"))
    head.append(f"//   inputs ({len(abi.live_in)}; provenance):")
    head += _input_lines(kernel, F, abi, i, sym_name)
    head.append(f"//   outputs ({len(abi.live_out)}; first consumer):")
    head += _output_lines(F, abi, j, sym_name)
    return head
