"""Markdown for the richer parts of ``splice notes``: the constants table, one section per
epilogue (sub-sections with evidence, pack-source tracing, inputs/outputs/memory) and the
uncharacterised list.  Every sentence is built from ``notes_facts.Facts``."""
from __future__ import annotations

from collections import Counter, defaultdict

from ..errors import SpliceError
from ..ptx import model as m
from .notes_facts import base_text, f16_of, is_pack, offsets_text, opaque_terms, param_addresses, symbolic_base
from .provenance import TABLE_ATOM, coef, const_of, render

MAX_EVIDENCE = 12
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _rng(a, b):
    return f"s{a}–s{b}" if a != b else f"s{a}"


def _regs(items, n=4):
    names = [r for r, _ in items]
    if len(names) <= n:
        return ", ".join(f"`{x}`" for x in names)
    return ", ".join(f"`{x}`" for x in names[:n]) + f", … `{names[-1]}`"


def _names(xs, n=3):
    u = list(dict.fromkeys(xs))
    if len(u) <= n:
        return ", ".join(f"`{x}`" for x in u)
    return ", ".join(f"`{x}`" for x in u[:n]) + f", … `{u[-1]}` ({len(u)} registers)"


def _fmt_float(v):
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    return repr(v)


# ---------------------------------------------------------------------------------------------
# §1.2 constants


def constants_section(k, F, w):
    rows = F.constants()
    if not rows:
        return
    w("### 1.2 Constants")
    w("")
    w("Every `mov.f32`/`mov.f64`/`mov.f16` with a literal operand, grouped by literal. "
      "*f16* is the literal rounded to binary16 (round to nearest even); *consumers* are the "
      "first instructions that read the register (through copies).")
    w("")
    w("| literal | value | f16 | first definition | defs | defined in | used in | consumers |")
    w("|---|---|---|---|---|---|---|---|")
    for r in rows:
        d0 = r["defs"][0]
        h = r["f16"]
        f16 = f"0x{h[0]:04X} = {_fmt_float(h[1])}" if h else "overflow"
        first = f"{r['reg']} s{F.n(d0)} L{k.stmts[d0].line} `{r['opcode']}`"
        used = _regions(list(r["use_regions"]))
        cons = ", ".join(f"{c}×{n}" if n > 1 else c for c, n in r["consumers"].most_common(3))
        w(f"| `{r['literal']}` | {_fmt_float(r['value'])} | {f16} | {first} | {len(r['defs'])} | "
          f"{_regions(r['def_regions'])} | {used or '–'} | {cons or '–'} |")
    w("")
    reused = [r for r in rows if set(r["use_regions"]) - set(r["def_regions"])]
    for r in reused:
        extra = [x for x in r["use_regions"] if x not in r["def_regions"]]
        w(f"* `{r['literal']}` ({r['reg']}) is defined in {_regions(r['def_regions'])} and read "
          f"again in {_regions(extra)}, which do not materialise it themselves.")
    if reused:
        w("")


def _regions(names):
    """E23, E25, …, E59 style: compress a list of region labels."""
    if not names:
        return ""
    es = sorted({int(x[1:]) for x in names if x[:1] == "E" and x[1:].isdigit()})
    ps = sorted({int(x[1:]) for x in names if x[:1] == "P" and x[1:].isdigit()})
    other = sorted({x for x in names if not (x[:1] in "EP" and x[1:].isdigit())})
    out = []
    for pre, xs in (("E", es), ("P", ps)):
        if len(xs) > 4:
            out.append(f"{pre}{xs[0]}, {pre}{xs[1]}, …, {pre}{xs[-1]} ({len(xs)})")
        else:
            out.extend(f"{pre}{x}" for x in xs)
    return ", ".join(other + out)


# ---------------------------------------------------------------------------------------------
# §3 epilogues


def _signature(e):
    return (e.count, tuple(sorted(e.histogram.items())))


def epilogues_section(k, F, w):
    epis = F.epis
    w("## 3. The epilogues")
    w("")
    w("| epilogue | range | stmts | named operation |")
    w("|---|---|---|---|")
    groups = defaultdict(list)
    order = []
    for e in epis:
        sg = _signature(e)
        if sg not in groups:
            order.append(sg)
        groups[sg].append(e)
    for sg in order:
        g = groups[sg]
        e = g[0]
        nm = e.named(F.V.has("dldn-epilogue-names"))
        if len(g) == 1:
            w(f"| E{e.index} | {_rng(e.first, e.last)} | {e.count} | {nm} |")
        else:
            w(f"| {_elist(g)} | {_rng(e.first, e.last)} … {_rng(g[-1].first, g[-1].last)} "
              f"({len(g)} runs) | {e.count} each | {nm} |")
    w("")
    for sg in order:
        g = groups[sg]
        _epilogue_section(k, F, w, g)


def _elist(g):
    if len(g) <= 3:
        return ", ".join(f"E{e.index}" for e in g)
    return f"E{g[0].index}, E{g[1].index}, …, E{g[-1].index}"


def _epilogue_section(k, F, w, g):
    e = g[0]
    nm = e.named(F.V.has("dldn-epilogue-names"))
    w("---")
    w("")
    if len(g) == 1:
        w(f"### E{e.index} — {_rng(e.first, e.last)}: {nm}")
    else:
        w(f"### {_elist(g)} — {e.count} statements each: {nm}")
        w("")
        w(f"{len(g)} runs with the same statement count and the same op histogram; the details "
          f"below are E{e.index}'s, the table after them gives every run's own ranges.")
    w("")
    top = ", ".join(f"{c} `{nm}`" for nm, c in e.histogram.most_common(10))
    w(f"{e.count} statements; op histogram: {top}"
      + (f" (+{len(e.histogram) - 10} more opcodes)." if len(e.histogram) > 10 else "."))
    w("")
    runs = F.subsections(e)
    if len(runs) > 1:
        w("| sub-section | range | stmts | what | top ops |")
        w("|---|---|---|---|---|")
        for i, r in enumerate(runs):
            ops = ", ".join(f"{c} `{nm}`" for nm, c in r["hist"].most_common(4))
            w(f"| ({LETTERS[i % 26]}) | {_rng(r['first'], r['last'])} | {len(r['pos'])} | "
              f"{r['name']} | {ops} |")
        w("")
    for i, r in enumerate(runs):
        w(f"**({LETTERS[i % 26]}) {r['name']}, {_rng(r['first'], r['last'])}** "
          f"({len(r['pos'])} statements)")
        w("")
        ev, summary = _evidence(k, F, r["pos"])
        w("```")
        for line in ev:
            w(line)
        w("```")
        w("")
        for s in summary:
            w(f"* {s}")
        if summary:
            w("")
    _packs(k, F, w, e)
    _io(k, F, w, e)
    if len(g) > 1:
        w("Every run of this shape:")
        w("")
        w("| run | range | memory | packs read |")
        w("|---|---|---|---|")
        for x in g:
            mem = "; ".join(_mem_short(gr, F.V.w) for gr in F.memory(x.first, x.last)) or "–"
            w(f"| E{x.index} | {_rng(x.first, x.last)} | {mem} | {_pack_short(k, F, x) or '–'} |")
        w("")


def _annot(k, F, pos):
    acc = F.prov.access_at(pos)
    node = F.node(pos)
    line = k.cite(F.n(pos))
    if acc is not None and acc.space != "param":
        return f"{line}   // [{base_text(acc.addr, F.V.w)}]"
    if acc is not None and acc.space == "param" and acc.addr is not None:
        return f"{line}   // {render(acc.addr, F.V.w)}"
    if type(node) is m.Instruction and node.opcode == "mov" and len(node.operands) == 2 \
            and type(node.operands[1]) is m.Imm:
        try:
            v = float(node.operands[1].value)
            h = f16_of(v)
            return f"{line}   // {_fmt_float(v)}" + (f", f16 0x{h[0]:04X}" if h else "")
        except Exception:
            return line
    return line


def _evidence(k, F, poss):
    poss = [p for p in poss if type(F.node(p)) is m.Instruction]
    if not poss:
        return [], []
    pick = [poss[0], poss[-1]]
    groups = {}
    seen_ops = set()
    for p in poss:
        node = F.node(p)
        acc = F.prov.access_at(p)
        if acc is not None:
            base = symbolic_base(acc.addr)
            key = (node.name, base)
            groups.setdefault(key, []).append(p)
        elif node.opcode == "mov" and len(node.operands) == 2 and type(node.operands[1]) is m.Imm \
                and node.name.endswith((".f32", ".f64", ".f16")):
            pick.append(p)
        elif is_pack(node) or node.opcode in ("rcp", "rsqrt", "ex2", "lg2", "div", "sqrt", "shfl",
                                               "movmatrix", "bar", "tex", "sust", "neg", "abs",
                                               "max", "min", "and"):
            if node.name not in seen_ops:
                seen_ops.add(node.name)
                pick.append(p)
    summary = []
    for (name, base), ps in groups.items():
        pick.append(ps[0])
        if len(ps) > 1:
            pick.append(ps[-1])
        acc = F.prov.access_at(ps[0])
        if acc.space == "param":
            continue
        offs = [F.prov.access_at(p).addr for p in ps]
        btxt = render(base, F.V.w) if base is not None else "?"
        ot = offsets_text([const_of(a) if a is not None else None for a in offs])
        idx = [nm for a in offs for nm, _d in opaque_terms(a)]
        itxt = f", idx = {_names(idx)}" if idx else ""
        summary.append(f"{len(ps)} × `{name}` at `{btxt}` {ot}{itxt} "
                       f"({_rng(F.n(ps[0]), F.n(ps[-1]))})".replace("  ", " "))
    pick = sorted(set(pick))
    if len(pick) > MAX_EVIDENCE:
        keep = set(pick[:MAX_EVIDENCE - 1]) | {pick[-1]}
        pick = sorted(keep)
    out = []
    prev = None
    idx = {p: i for i, p in enumerate(poss)}
    for p in pick:
        if prev is not None and idx[p] > idx[prev] + 1:
            out.append("   …")
        out.append(_annot(k, F, p))
        prev = p
    return out, summary


def _src_label(F, item):
    if item[0] == "P":
        return f"P{item[1]}'s D"
    if item[0] == "ld":
        acc = F.prov.access_at(item[1])
        if F.V.weight and acc.addr is not None and coef(acc.addr, TABLE_ATOM):
            what = "table load"
        elif F.V.weight and acc.addr is not None and coef(acc.addr, "W"):
            what = "weight load"
        else:
            what = f"{acc.kind}.{acc.space}"
        base = render(symbolic_base(acc.addr), F.V.w) if acc.addr is not None else "?"
        if len(base) > 48:      # long lane-index arithmetic: name the base only
            base = base.split(" ", 1)[0] + " + …"
        return f"{what} `{base}`"
    if item[0] == "in":
        return f"kernel-entry value {item[1]}"
    return "unresolved"


def _pack_groups(k, F, e):
    a, b = k.first_pos_of(e.first), k.pos_of(e.last)
    packs = [p for p in range(a, b + 1)
             if type(F.node(p)) is m.Instruction and is_pack(F.node(p))]
    groups = defaultdict(list)
    for p in packs:
        srcs = F.operand_sources(p)
        labels = Counter(_src_label(F, s) for s in srcs)
        sig = tuple(sorted(labels))
        groups[sig].append((p, srcs))
    return packs, groups


def _pack_short(k, F, e):
    packs, groups = _pack_groups(k, F, e)
    parts = []
    for sig, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        parts.append(f"{len(items)}: " + " + ".join(sig))
    return "; ".join(parts)


def _packs(k, F, w, e):
    packs, groups = _pack_groups(k, F, e)
    if not packs:
        return
    w(f"**Pack sources.** {len(packs)} `cvt.rn.satfinite.e4m3x2.f16x2` "
      f"({_rng(F.n(packs[0]), F.n(packs[-1]))}), traced backwards by def-use through every "
      "mov/cvt/arithmetic step to the mma, load or control-flow merge that produced their inputs:")
    w("")
    for sig, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ex = items[0][0]
        offs = sorted({F.prov.access_at(s[1]).addr for _p, srcs in items for s in srcs
                       if s[0] == "ld" and F.prov.access_at(s[1]).addr is not None}, key=str)
        ot = offsets_text(sorted({const_of(a) for a in offs}))
        unres = sorted({s[1] for _p, srcs in items for s in srcs if s[0] == "?"})
        extra = f"; the loads at {ot}" if ot else ""
        extra += (f"; unresolved registers {', '.join('`%s`' % x for x in unres[:4])}"
                  + (" …" if len(unres) > 4 else "")) if unres else ""
        w(f"* {len(items)} packs read {' + '.join(sig) if sig else 'constants only'} "
          f"(e.g. {k.cite(F.n(ex))}){extra}.")
    feeds = Counter()
    regs = defaultdict(set)
    for p in packs:
        f, r = F.feeds(p)
        feeds.update(f)
        for kk, v in r.items():
            regs[kk] |= v
    parts = []
    for (ph, role), rs in sorted(regs.items()):
        parts.append(f"P{ph}'s {role} ({len(rs)} registers)")
    st = Counter()
    ops = Counter()
    for lab, c in feeds.items():
        if lab[0] == "st":
            st[f"`st.{lab[1]}` [{lab[2]}] in {lab[3]}"] += c
        elif lab[0] == "op":
            ops[f"`{lab[1]}` in {lab[2]}"] += c
    parts += [f"{s} ×{c}" for s, c in st.most_common(4)]
    parts += [f"{s} ×{c}" for s, c in ops.most_common(3)]
    if parts:
        w(f"* The packed values (through their `mov.b32` packing) feed: {'; '.join(parts)}.")
    w("")


def _mem_short(g, w=None):
    ot = offsets_text(g["offs"])
    base = render(g["base"], w) if g["base"] is not None else "?"
    return f"{len(g['stmts'])}×`{g['opcode']}` `{base}` {ot}".rstrip()


def _io(k, F, w, e):
    try:
        abi, ins, outs = F.io(e)
    except Exception as exc:  # pragma: no cover - defensive
        w(f"Inputs/outputs: not computed ({exc}).")
        w("")
        return
    w(f"**Inputs** ({len(abi.live_in)} live-in registers, by definition):")
    w("")
    for lab, items in sorted(ins.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:8]:
        ns = [n for _r, n in items if n is not None]
        where = f" ({_rng(min(ns), max(ns))})" if ns else ""
        w(f"* {len(items)} from {lab}{where}: {_regs(items)}")
    if len(ins) > 8:
        w(f"* … {sum(len(v) for v in list(ins.values())[8:])} more in {len(ins) - 8} groups")
    if not ins:
        w("* none")
    w("")
    w(f"**Outputs** ({len(abi.live_out)} live-out registers, by first later use):")
    w("")
    for lab, items in sorted(outs.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:8]:
        ns = [n for _r, n in items if n is not None]
        where = f" ({_rng(min(ns), max(ns))})" if ns else ""
        w(f"* {len(items)} read first by {lab}{where}: {_regs(items)}")
    if not outs:
        w("* none")
    w("")
    mem = F.memory(e.first, e.last)
    if mem:
        w("**Memory** (by space and symbolic base):")
        w("")
        w("| access | space | base | offsets | count | statements |")
        w("|---|---|---|---|---|---|")
        for g in mem:
            base = render(g["base"], F.V.w) if g["base"] is not None else "?"
            w(f"| `{g['opcode']}` | {g['space']} | `{base}` | {offsets_text(g['offs']) or '–'} | "
              f"{len(g['stmts'])} | {_rng(g['stmts'][0], g['stmts'][-1])} |")
        w("")
    else:
        w("**Memory:** none.")
        w("")


# ---------------------------------------------------------------------------------------------
# §4 uncharacterised


def uncharacterised_section(k, F, w):
    """§4: what the PTX does not say, one numbered item each, in the notes' order: parameters,
    phases, slots, then each epilogue."""
    w("## 4. Uncharacterised")
    w("")
    items = [*_u_params(k, F), *_u_phases(k, F), *_u_slots(k, F.V)]
    for e in F.epis:
        items += [*_u_packs(k, F, e), *_u_loads(k, F, e), *_u_stores(k, F, e), *_u_io(F, e)]
    if not items:
        w("Nothing.")
    for i, t in enumerate(items, 1):
        w(f"U{i}. {t}")
        w("")


def _u_params(k, F):
    """Parameter bytes no ``ld.param`` reads (or that are read through the address)."""
    taken = {F.prov.param_short.get(p, p): n for p, n in param_addresses(k).items()}
    for short, size, gaps in F.params_unread():
        if not (gaps and size):
            continue
        rng = ", ".join(f"[{a}, {b})" for a, b in gaps)
        if short in taken:
            yield (f"**Parameter read through its address.** `{short}` ({size} bytes) has "
                   f"its address taken at s{taken[short]}; no `ld.param` of it reads bytes "
                   f"{rng}, and what is read through the address (a TMA unit reading a "
                   "tensor map, loads through a register) is not tracked by byte.")
            continue
        yield (f"**Parameter bytes never read.** `{short}` is declared {size} bytes; no "
               f"`ld.param` reads bytes {rng}. Missing: the parameter struct's field "
               "names (not in the PTX).")


def _u_phases(k, F):
    """Phases whose chains do not explain their mma count, and register-resident B operands."""
    for p in k.phases:
        if p.regular and not p.consistent:
            yield (f"**P{p.index}'s shape.** The D→C chains give {p.tiles[0]}×{p.tiles[1]}×"
                   f"{p.tiles[2]} = {p.tiles[0] * p.tiles[1] * p.tiles[2]} ≠ {len(p.mma)} mma: "
                   "the chain reading cannot be reconciled with the phase's mma count.")
        if p.b_source in ("registers", "mixed"):
            pos0 = k.first_pos_of(p.first)
            srcs: Counter = Counter()
            for r in p.b_regs:
                key = F.key(r, pos0)
                d = F.prov.reaching_def(key, pos0) if key else None
                if d is None:
                    srcs["unresolved"] += 1
                    continue
                for s in F.sources(d):
                    srcs[_src_label(F, s)] += 1
            # most common first, ties by name: the sources are a set, whose order changes with
            # the process' string hashing (the notes differed from one run to the next)
            top = sorted(srcs.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
            made = ", ".join(s for s, _c in top) or "nothing traceable"
            yield (f"**P{p.index}'s B operand is register-resident** ({p.b_source}: "
                   f"{len(p.b_regs)} registers, made of {made}). Which tensor it is in "
                   + ("model terms (e.g. V vs Vᵀ)" if F.V.has("dldn-epilogue-names") else "the model's terms")
                   + " is not decidable from the PTX.")


def _u_slots(k, V):
    """Phases whose operand-load offsets are relative to a tid.z term (the DLDN notes' per-tid.z
    slot, where the profile's rule holds)."""
    slots = defaultdict(list)
    for p in k.phases:
        if p.slot_stride:
            slots[p.slot_stride].append(p.index)
    slot = V.weight and V.has("tid.z-slot")
    for stride, ps in slots.items():
        if slot:
            yield (f"**Slot-relative weight offsets of {_regions(['P%d' % i for i in ps])}.** "
                   f"Their operand loads read `W + {stride}·tid.z + …`, so the byte offsets in "
                   "the phase table are relative to a per-tid.z slot, not absolute image "
                   "offsets. Whether the tid.z groups compute different tiles or replicas of "
                   "one tile is not decidable without the launch geometry (`%ntid.z`).")
            continue
        yield (f"**tid.z-relative operand offsets of {_regions(['P%d' % i for i in ps])}.** "
               f"Their operand loads read `{V.text('W')} + {stride}·tid.z + …`, so the byte "
               "offsets in the phase table are relative to tid.z. Whether the tid.z groups "
               "compute different tiles or replicas of one tile is not decidable without the "
               "launch geometry (`%ntid.z`).")


def _u_packs(k, F, e):
    packs, _groups = _pack_groups(k, F, e)
    un = [p for p in packs if any(s[0] == "?" for s in F.operand_sources(p))]
    if un:
        yield (f"**E{e.index}: {len(un)} pack sources unresolved** (first "
               f"s{F.n(un[0])}): a register on the chain has several definitions that "
               "reach it through a control-flow merge, so def-use cannot name one producer.")


def _u_loads(k, F, e):
    """What an epilogue's table and weight loads feed: the role is known, the tensor is not."""
    words = (("table loads", "per-column table"), ("W loads", "weight-image")) if F.V.weight else \
        (("table loads", "lane-masked"), ("W loads", "global"))
    for fname, what in words:
        f = e.dldn_features.get(fname)
        if not f:
            continue
        feeds: Counter = Counter()
        for n in f.stmts:
            ff, _regs = F.feeds(k.pos_of(n))
            for lab, c in ff.items():
                if lab[0] == "mma":
                    feeds[f"P{lab[1]}'s {lab[2]} directly"] += c
                elif lab[0] == "op":
                    feeds[f"`{lab[1]}` ({lab[2]})"] += c
                else:
                    feeds[f"`st.{lab[1]}` ({lab[3]})"] += c
        acc = F.prov.access_at(k.pos_of(f.first))
        base = render(tuple(x for x in acc.addr if x[0] != ""), F.V.w) if acc.addr else "?"
        fd = ", ".join(s for s, _c in feeds.most_common(3)) or "nothing later"
        yield (f"**E{e.index}: what the {len(f.stmts)} {what} loads hold** "
               f"(`{base}`, {_rng(f.first, f.last)}). They feed {fd}; the arithmetic "
               "role is computable, the tensor's name is not ("
               + ("no parameter names in the weight image" if F.V.weight else "the PTX names no tensor")
               + ").")


def _u_stores(k, F, e):
    """Global stores whose index is not an affine form of lane, thread and parameters."""
    opq = [g for g in F.memory(e.first, e.last)
           if g["kind"] in ("st", "red", "atom") and g["space"] in ("global", "generic")
           and (g["base"] is None or g.get("opaque"))]
    if not opq:
        return
    n = sum(len(g["stmts"]) for g in opq)
    bases = "; ".join(f"`{render(g['base'], F.V.w) if g['base'] is not None else '?'}`" for g in opq[:4])
    idx = [t for g in opq for t in g.get("opaque", ())]
    defs = sorted({d for _nm, d in idx if d is not None})
    ops = Counter(F.node(d).name for d in defs)
    why = ", ".join(f"{c}× `{o}`" for o, c in ops.most_common(3))
    if any(o.startswith("selp") for o in ops):
        why += ": a per-lane select between a computed index and a constant, decided at run time"
    elif any(o.startswith(("mul", "mad")) for o in ops):
        why += ": a product of two run-time values"
    else:
        why += ": not reducible by the affine walk"
    ex = k.cite(F.n(defs[0])) if defs else ""
    yield (f"**E{e.index}: the index of {n} global stores** "
           f"({_rng(opq[0]['stmts'][0], opq[-1]['stmts'][-1])}) at {bases}: "
           f"`idx` = {_names([nm for nm, _d in idx])} is not an affine form of "
           f"laneid/tid/params (its definitions are {why}{'; e.g. ' + ex if ex else ''}). "
           "The buffer's layout and whether it aliases another parameter field are "
           "not established.")


def _u_io(F, e):
    """Live-ins without one definition and live-outs without a later use; an epilogue whose
    cut ABI cannot be taken says why (it was skipped in silence)."""
    try:
        _abi, ins, outs = F.io(e)
    except SpliceError as exc:
        yield (f"**E{e.index}: its live-in and live-out registers are not listed**: the cut "
               f"ABI of {_rng(e.first, e.last)} cannot be taken ({exc.message}).")
        return
    merged = [r for lab, v in ins.items() if lab.startswith("a definition") for r in v]
    if merged:
        yield (f"**E{e.index}: {len(merged)} live-in registers without a unique "
               f"definition** ({_regs(merged)}): they are defined on several paths.")
    dead = [r for lab, v in outs.items() if lab.startswith("no later") for r in v]
    if dead:
        yield (f"**E{e.index}: {len(dead)} live-out registers with no later use in "
               f"program order** ({_regs(dead)}): they are live only around a back edge.")
