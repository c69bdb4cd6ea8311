"""A Markdown draft in the shape of the user's own epilogue notes (../shared/seeds/*).

Sections: 0 conventions, 1 shared vocabulary (parameters, W, tables, shared arrays), 2 the
phase table with the M/N/K check, 3 one section per epilogue (range, statement count, op
histogram, named operation, sub-sections, evidence lines ``sNNNN LNNNNN: text``, inputs /
outputs / memory), 4 uncharacterised.  Everything is computed; nothing is copied from the notes.
"""
from __future__ import annotations

from ..ptx import model as m
from .calls import describe, mma_in_calls
from .notes_claims import notes_claims
from .notes_facts import Facts
from .notes_render import constants_section, epilogues_section, uncharacterised_section
from .operands import phase_operands
from .roles import reads_shared_unaddressed
from .spec import param_fields, shared_arrays, table_loads, weight_image_bytes
from .vocab import find_profile, vocabulary

MAX_EVIDENCE = 3


# how a phase's B source reads in a sentence ("B from …")
_B_FROM = {"descriptor": "a shared-memory descriptor"}


def _rng(a, b):
    return f"s{a}–s{b}" if a != b else f"s{a}"


def _bytes(r):
    return f"{r[0]}..{r[1]}" if r else "–"


def notes_markdown(k, profile=None) -> str:
    """The draft, section by section (module docstring).  ``profile``: a ``vocab.Profile``
    whose word sets the draft may use where their rules hold (None: the first profile whose
    globs match the entry; False: none, neutral words only)."""
    return _draft(k, profile)[0]


def notes_document(k, profile=None) -> tuple:
    """(the draft, its claims with their evidence: ``notes_claims``)."""
    text, F = _draft(k, profile)
    return text, notes_claims(k, F)


def _draft(k, profile) -> tuple:
    if profile is None:
        profile = find_profile(k.name)
    V = vocabulary(k, profile or None)
    L: list = []
    w = L.append
    F = Facts(k, V)
    _conventions(k, V, w)
    _vocabulary(k, F, w)
    _phase_table(k, V, w)
    epilogues_section(k, F, w)
    uncharacterised_section(k, F, w)
    return "\n".join(L), F


def multiline_mma(k) -> bool:
    """Does the entry hold an ``mma`` statement written over several lines (the fact behind
    the DLDN conventions' "4-line mma.sync")?"""
    src = k.module.source
    for pos in k.indices_of("mma"):
        span = getattr(k.stmts[pos].node, "span", None)
        if span and "\n" in src[span[0]:span[1]].strip():
            return True
    return False


def _conventions(k, V, w) -> None:
    """The title and §0: what the indices, phases and field names mean in this draft."""
    phases = k.phases
    w(f"# `{k.name}` — the epilogues of phases 1…{len(phases)}" if phases
      else f"# `{k.name}` — no phases")
    w("")
    w(f"Draft written by `splice notes` from `{k.path}`, entry `{k.name}` "
      f"({k.last_number} statements). Check every claim with `splice index --range sA-sB`.")
    w("")
    w("## 0. Conventions")
    w("")
    four = V.has("dldn-conventions") and multiline_mma(k)
    w("* **`sNNNN` is a statement index** (statements of the entry body; a wrapped `{ … }` block "
      + ("and a 4-line `mma.sync` count" if four else "and an instruction written over several "
         "lines count") + " as one statement, numbered at their first line). "
      "**`LNNNNN` is the physical line** of the same statement.")
    w("* A **phase** is a maximal run of adjacent `mma` statements"
      + ("" if not any(p.form.startswith("wgmma") for p in phases)
         else " (a `wgmma` group, from its fence to its commit, is one phase)")
      + "; an **epilogue** `Exx` is the run of statements between phase xx's last `mma` and "
        "the next phase's first.")
    wf = k.provenance.weight_atom
    if V.weight:
        w(f"* `W` denotes the weight image, the parameter field `{wf}`.")
    else:
        w("* Parameter fields are named by parameter and byte offset (`param_N+off`); no field "
          "is given a role name.")
    w("* Shapes are the **true** M/N/K from D→C chain analysis (m-tiles × n-tiles × k-steps); "
      "the naive reading (distinct A × distinct B) is shown beside them.")
    w("* Anything the analysis could not decide is in §4 under **uncharacterised**.")
    w("")


def _vocabulary(k, F, w) -> None:
    """§1: parameter fields read, the weight image's extent, constants, tables, shared arrays."""
    V = F.V
    w("## 1. Shared vocabulary")
    w("")
    w("### 1.1 Parameters read")
    w("")
    w("| field | bytes | statements | name |")
    w("|---|---|---|---|")
    for f in param_fields(k, {V.weight_field: "W"} if V.weight else {}):
        sts = ", ".join(f"s{n}" for n in f["statements"][:6])
        w(f"| `{f['param']}+{f['offset']}` | {f['bytes']} | {sts} | {f['name'] or ''} |")
    w("")
    img = weight_image_bytes(k) if V.weight else None
    if img is not None:
        w(f"Weight-image extent: **{img} bytes** (largest offset + access size over every load "
          "off `W`, lane and `tid.z` terms excluded).")
        w("")
    constants_section(k, F, w)
    tabs = table_loads(k)
    if tabs:
        w("### 1.3 Per-column tables (`W + ((laneid<<2)&12) + off`)" if V.weight else
          f"### 1.3 Lane-masked loads (`{V.text('W')} + ((laneid<<2)&12) + off`)")
        w("")
        w("| statements | bytes | loads | opcode |")
        w("|---|---|---|---|")
        for t in tabs:
            w(f"| {_rng(t['first'], t['last'])} | {t['bytes'][0]}..{t['bytes'][1]} | "
              f"{t['loads']} | `{t['opcode']}` |")
        w("")
    sh = shared_arrays(k)
    if sh:
        w("### 1.4 Shared arrays")
        w("")
        hidden = _unaddressed_shared_reads(k)
        for nm, s in sh.items():
            w(f"* `{nm}` ({s['bytes']} bytes): {len(s['stores'])} stores, {len(s['loads'])} loads"
              + (f"; first store s{s['stores'][0]}" if s["stores"] else "")
              + (f"; first load s{s['loads'][0]}" if s["loads"] else "") + hidden)
        w("")


def _unaddressed_shared_reads(k) -> str:
    """A caveat for the shared arrays' load counts: the entry's wgmma (operands through
    descriptors) and bulk copies from shared memory read it without an address the counts
    follow, so "0 loads" read as a write-only array."""
    names = [s.node.name for s in k.stmts if type(s.node) is m.Instruction
             and reads_shared_unaddressed(s.node.name)]
    if not names:
        return ""
    wg = sum(1 for x in names if x.startswith("wgmma"))
    parts = ([f"{wg} wgmma (descriptors)"] if wg else []) + \
        ([f"{len(names) - wg} bulk cop{'y' if len(names) - wg == 1 else 'ies'} from shared memory"]
         if len(names) > wg else [])
    return f" (loads counted at an address only; {' and '.join(parts)} in this entry read shared memory, not counted)"


def _operand_columns(k, V) -> list:
    """(header, Phase -> cell) of the operand-load columns: the DLDN notes' weight bytes, bias
    bytes and slot stride where the profile's rules hold; otherwise a column only where a phase
    has a value, named by what it is (the bytes of B/C loaded off a field, a tid.z term)."""
    cols = []
    phases = k.phases
    fld = V.text("W")
    if V.weight or any(p.weight_bytes for p in phases):
        cols.append(("weight bytes" if V.weight else f"B bytes (`{fld}`)", lambda p: _bytes(p.weight_bytes)))
    if V.weight or any(p.bias_bytes for p in phases):
        cols.append(("bias bytes" if V.weight else f"C bytes (`{fld}`)", lambda p: _bytes(p.bias_bytes)))
    slot = V.weight and V.has("tid.z-slot")
    if slot or any(p.slot_stride for p in phases):
        cols.append(("slot stride" if slot else "tid.z coefficient", lambda p: str(p.slot_stride or "–")))
    return cols


def _phase_table(k, V, w) -> None:
    """§2: one row per phase with its true and naive shapes, then what the table cannot show."""
    w("## 2. Phase table")
    w("")
    cols = _operand_columns(k, V)
    w("| # | stmt range | M | N | K | naive M×N×K | mma | check | grid | "
      + "".join(f"{h} | " for h, _f in cols) + "epi |")
    w("|---|---|---|---|---|---|---|---|---|" + "---|" * len(cols) + "---|")
    for p in k.phases:
        if p.regular:
            mt, nt, ks = p.tiles
            chk = f"{mt}×{nt}×{ks}" + ("" if p.consistent else " ≠")
        else:               # no M×N×K: say what the group is
            chk = (f"irregular: {p.accumulators} acc, products "
                   + " + ".join(f"{n}×{k}" for k, n in sorted(p.products.items())))
        shape = p.shape or ("–", "–", "–")
        epi = (p.epilogue[1] - p.epilogue[0] + 1) if p.epilogue else 0
        nv = "×".join(str(x) for x in p.naive_shape)
        w(f"| {p.index} | {_rng(p.first, p.last)} | {shape[0]} | {shape[1]} | {shape[2]} | "
          f"{nv} | {len(p.mma)} | {chk} | {p.grid} | "
          + "".join(f"{f(p)} | " for _h, f in cols) + f"{epi} |")
    w("")
    _phase_notes(k, V, w)


def _phase_notes(k, V, w) -> None:
    """Below the phase table: tensor-core code outside it, banded phases' chains, and phases
    that read no weight operand."""
    phases = k.phases
    elsewhere = describe(mma_in_calls(k), indirect=not phases)
    if elsewhere:       # tensor-core code the table cannot show (tcgen05, a called .func)
        w(f"Not in the table: {elsewhere}.")
        w("")
    band = [p for p in phases if p.grid == "band" and p.regular]
    if band:
        w("The naive reading fails for the banded phases: the chains show k-slices, not tiles.")
        w("")
        for p in band:
            ch = p.chains[0]
            w(f"* P{p.index}: {len(p.chains)} chains of length {p.tiles[2]} "
              f"(first chain {' → '.join('s%d' % n for n in ch)}) → "
              f"{p.tiles[0]} m-tiles × {p.tiles[1]} n-tiles × {p.tiles[2]} k-steps = "
              f"{p.shape[0]}×{p.shape[1]}×{p.shape[2]} (naive "
              f"{'×'.join(str(x) for x in p.naive_shape)})")
        w("")
    now = [p.index for p in phases if p.weight_bytes is None]
    if not V.weight:
        _operand_sources(k, w)
    elif now:
        srcs = sorted({_B_FROM.get(k.phase(i).b_source, k.phase(i).b_source) for i in now})
        w(f"Phases that read no weight operand: {', '.join('P%d' % i for i in now)} "
          f"(B from {', '.join(srcs)}).")
        w("")


def _operand_sources(k, w) -> None:
    """Where each phase's A, B and C come from, by def-use (``operands.phase_operands``)."""
    rows = [(p.index, phase_operands(k, p)) for p in k.phases]
    if not rows:
        return
    w("Operands by def-use (what defines each phase's A, B and C registers):")
    w("")
    for i, ops in rows:
        w(f"* P{i}: " + "; ".join(f"{role} {txt}" for role, txt in ops.items()) + ".")
    w("")


def _next_reads(k, e, abi):
    p = k.phase(e.next_phase)
    ops = set(p.a_regs) | set(p.b_regs) | set(p.c_regs)
    return sum(1 for r in abi.live_out if r.reg in ops)


def _memory_line(e):
    parts = []
    names = {"next-B loads": "next-B weight loads", "C-seed loads": "C-seed loads",
             "W loads": "other weight loads", "table loads": "table loads",
             "shared staging": "shared accesses/barriers", "plane-arena scatter": "global stores",
             "texture gather": "texture reads", "surface write": "surface writes"}
    for key, label in names.items():
        f = e.dldn_features.get(key)
        if f:
            parts.append(f"{len(f.stmts)} {label}")
    return ", ".join(parts)
