"""Debug stages at epilogue granularity: an epilogue's live-outs as a stage, so the first
diverging *epilogue* is named (a wrong native E9 shows up as ``cut 1 (E9 …)``, not as the
phase 10 D it corrupts).

Two kinds of stage are added to the phase stages of ``splice.probe.stages.plan_stages``:

* every cut that is not a phase (``epilogue:``/``epilogues:``/``statements:`` cuts) — its
  live-outs, after the cut in both modules (the spliced module: after the call site), whatever
  the selection says, because a cut is what is being debugged;
* with ``--stages epilogues`` or ``--stages E9,E21-E23`` (mixable with phase numbers:
  ``--stages 8-10,E9``): each selected epilogue outside every cut, its live-outs after its last
  statement in both modules.

Registers are the original's names: an inline cut binds the native code to the same registers,
and text outside the cuts is byte-identical, so one name serves both modules.
"""
from __future__ import annotations

import re
from typing import Optional

from ...errors import SpliceError
from ...analysis.roles import is_shared, written_spaces
from .harness_code import memory_ops

_TOKEN = re.compile(r"^e(\d{1,40})(?:\s*-\s*e?(\d{1,40}))?$", re.I)


def split_selection(sel: Optional[str], most: Optional[int] = None) -> tuple:
    """('8-10,E9' -> ('8-10', {9})); ('epilogues' -> ('', 'all')); phase-only selections pass
    through with ``None``.  ``most``: the kernel's last epilogue; a range past it is refused
    before it is expanded (``E1-E99999999999`` would be a set of 10^11 numbers)."""
    if not sel:
        return sel, None
    rest, epis = [], set()
    every = False
    for part in str(sel).split(","):
        p = part.strip()
        if p.lower() in ("epilogues", "epilogue", "e*"):
            every = True
            continue
        mt = _TOKEN.match(p)
        if mt:
            lo = int(mt.group(1))
            hi = int(mt.group(2) or lo)
            if hi < lo:
                raise SpliceError(f"--stages: empty epilogue range {p!r}")
            if most is not None and hi > most:     # before the range is expanded into a set
                raise SpliceError(f"--stages: epilogue E{hi} does not exist (the kernel's last is E{most})")
            epis.update(range(lo, hi + 1))
            continue
        rest.append(p)
    if not every and not epis:
        return sel, None
    return ",".join(rest), ("all" if every else epis)


def phases_around_cuts(kernel, cuts) -> set:
    """For ``--stages cut``: the phases just before and after each cut that covers no phase
    (an epilogue E<n> is between phases n and n+1)."""
    out = set()
    for c in cuts:
        if any(p.first <= c.last and p.last >= c.first for p in kernel.phases):
            continue
        before = [p.index for p in kernel.phases if p.last < c.first]
        after = [p.index for p in kernel.phases if p.first > c.last]
        out.update(before[-1:] + after[:1])
    return out


def epilogue_stages(kernel, pair, epis, seen_cuts: set, stage_cls, end_line, out_line,
                    notes: list) -> list:
    """Stages for non-phase cuts and for the selected epilogues (``epis``: a set, 'all' or
    None).  ``stage_cls``/``end_line``/``out_line`` are ``splice.probe.instrument.stages``' own, passed in
    so this module stays a plug-in of that one."""
    src = pair.original
    out = []
    cut_spans = []
    for c in pair.cuts:
        cut_spans.append((c.first, c.last))
        if id(c) in seen_cuts or pair.plan is None:
            continue
        regs = [r.reg for r in c.abi.live_out]
        if not regs:
            notes.append(f"cut {c.cut.index} ({c.title}): no live-outs (memory only): the frame "
                         "compares what it writes")
            continue
        types = [kernel.reg_type(r) or ".b32" for r in regs]
        line_o = end_line(src, kernel.stmt(c.last).node)
        site = next(p for p in pair.plan.pieces if p.kind == "site" and p.cut is c)
        out.append(stage_cls(0, f"cut {c.cut.index} ({c.title})", None, regs, types, line_o,
                             site.out_line + site.n_lines - 1, cut=c.cut.index))
    if epis is None:
        return out
    for e in kernel.epilogues:
        if epis != "all" and e.index not in epis:
            continue
        if any(a <= e.last and e.first <= b for a, b in cut_spans):
            continue              # inside a cut: the cut's stage covers it
        regs = [r.reg for r in kernel.abi(e.first, e.last).live_out]
        if not regs:
            notes.append(f"E{e.index}: no live-outs (memory only): not staged")
            continue
        if pair.plan is None:
            notes.append(f"E{e.index}: epilogue stages need a recipe (lines are matched through it)")
            continue
        types = [kernel.reg_type(r) or ".b32" for r in regs]
        line_o = end_line(src, kernel.stmt(e.last).node)
        out.append(stage_cls(0, f"E{e.index}", None, regs, types, line_o, out_line(pair.plan, line_o)))
    return out


def memory_writers(pair) -> list:
    """[(cut index, title)] of the cuts whose original statements or native code write memory
    (stores, surface writes, atomics, async copies, as the roles table declares them) outside
    shared memory.  When every register stage agrees and the outputs still differ, the
    difference was written to memory by one of these: with one writer, the stages can name it
    (E61's nine-tap gather ends in a ``sust`` and has no live-outs, so no register stage can)."""
    out = []
    for c in pair.cuts:
        texts = ((pair.original[c.region[0]:c.region[1]], False), ("\n".join(c.binding.site), False),
                 ("\n\n".join(c.binding.prelude), True))
        ops = [op for t, module in texts for op in memory_ops(t, allow_call_abi=True, module=module)]
        if any(not is_shared(sp) for op in ops for sp in written_spaces(op)):
            out.append((c.cut.index, c.title))
    return out


def memory_divergence(pair, outputs_differ: list) -> Optional[dict]:
    """The stages' verdict when every register stage agreed but ``outputs_differ`` (names of
    the outputs whose bytes differ) is not empty: the cut that wrote them, when only one cut
    writes memory; every writer, named, otherwise."""
    if not outputs_differ or pair.plan is None:
        return None
    writers = memory_writers(pair)
    if not writers:
        return None
    names = ", ".join(f"cut {i} ({t})" for i, t in writers)
    one = writers[0] if len(writers) == 1 else None
    return {"stage": "memory", "name": (f"memory written by {names}" if one else
                                        f"memory written by one of {names}"),
            "phase": None, "cut": one[0] if one else None,
            "first": {"outputs": list(outputs_differ),
                      "why": "every register stage agrees; only these cuts write memory"}}
