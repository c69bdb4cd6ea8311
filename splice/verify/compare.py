"""Verdicts: compare a cut's original range and its bound native code live-out by live-out and
in their final memory state.

* **proved equal** — every live-out, every other register the native code writes outside its
  own scratch, and the final memory state have the same value number;
* **proved different** — some live-out (or the memory) differs definitely (``explain.py``);
* **not proven** — the forms differ only in ways no rule decides, or the checker cannot model
  the code (a loop, a branch out of the cut, an exit, a call it has no body for).  The GPU probe
  (``splice probe RECIPE --harness``) is the fallback.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..ptx.model import SPECIAL_REGISTERS
from . import sides
from .budget import DEFAULT_SECONDS, Budget, BudgetExceeded
from .canon import Graph
from .dataflow import Evaluator, Unsupported
from .explain import OPERAND_NAMES, Difference, Explainer, free_leaves, opword, parting
from .footprint import footprint
from .lanes import Declared, Lanes, uniform_inputs

EQUAL, DIFFERENT, NOT_PROVEN = "proved equal", "proved different", "not proven"
INTERNAL = "internal error"
EXIT = {EQUAL: 0, DIFFERENT: 1, NOT_PROVEN: 3, INTERNAL: 4}


@dataclass
class Row:
    name: str                      # symbol (d10) or register
    reg: str
    equal: bool
    definite: bool = False
    message: str = ""
    original: str = ""             # the first differing operation, as text
    native: str = ""
    where_original: str = ""       # sNNNN Lnnn
    where_native: str = ""         # native file:line


@dataclass
class CutResult:
    cut: int
    title: str
    abi: str
    verdict: str
    reason: str = ""
    rows: list = field(default_factory=list)     # live-outs (and extra registers), in order
    memory: Optional[Row] = None
    nodes: int = 0
    seconds: float = 0.0
    budget: bool = False                         # not proven because the time budget ran out
    entries: int = 1                             # ways into the cut proved (its top, labels)

    @property
    def differing(self) -> list:
        return [r for r in self.rows + ([self.memory] if self.memory else []) if not r.equal]


def verify_plan(plan, timeout: Optional[float] = DEFAULT_SECONDS) -> list:
    """Every cut of a plan, each within ``timeout`` seconds (None: no limit)."""
    cache: dict = {"declared": Declared(plan.source)}
    return [verify_cut(plan, cp, cache, timeout) for cp in plan.cuts]


def verify_cut(plan, cp, cache=None, timeout: Optional[float] = DEFAULT_SECONDS) -> CutResult:
    """One cut's verdict.  Whatever happens inside the checker ends as a verdict: *not proven*
    (a construct it does not model, or the budget ran out) or *internal error* — a bug of the
    checker, with its own exit status (4), never *equal* nor *different*."""
    budget = Budget(timeout)
    res = CutResult(cp.cut.index, cp.title, cp.binding.abi, NOT_PROVEN)
    try:
        _prove(plan, cp, {} if cache is None else cache, budget, res)
    except BudgetExceeded as exc:
        res.verdict, res.budget, res.rows, res.memory = NOT_PROVEN, True, [], None
        res.reason = f"budget: {exc} — the cut is neither proved nor refuted; a larger --timeout, or the " \
                     "GPU probe, decides"
    except MemoryError:
        raise
    except Exception as exc:     # noqa: BLE001 — a bug of the checker is a verdict of its own
        res.verdict, res.rows, res.memory = INTERNAL, [], None
        res.reason = f"internal error in splice verify ({type(exc).__name__}: {exc}{_raised_at(exc)}): " \
                     "the cut is neither proved nor refuted; please report it"
    res.seconds = budget.elapsed()
    return res


def _raised_at(exc) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f" at {f.filename.rsplit('/', 1)[-1]}:{f.lineno}"


@dataclass
class _Cut:
    """What both sides of one cut share: the graph, names, explanation memo, budget."""
    cp: Any
    g: Graph
    names: dict
    ex: Explainer
    budget: Budget
    lanes: Lanes
    aliases: dict
    original: tuple                # (statements, origin)
    native: tuple                  # (statements, origin, funcs, func origins, glue)


def _prove(plan, cp, cache, budget, res) -> None:
    body, origin = sides.original(plan, cp)
    g = Graph()
    ctx = _Cut(cp, g, _names(cp), Explainer(g, budget), budget,
               Lanes(g, uniform_inputs(getattr(cp.abi, "values", None) or {},
                                       cache.setdefault("declared", Declared(plan.source)))),
               special_aliases(cp), (body, origin), sides.native(plan, cp, cache))
    labels = sides.outside_entries(plan, cp, body)
    parts = [(None, _entry(ctx, None))] + [(lab, _entry(ctx, lab)) for lab in labels]
    res.entries, res.nodes = len(parts), len(g.nodes)
    pick = next((p for p in parts if p[1][0] == DIFFERENT), None) or \
        next((p for p in parts if p[1][0] != EQUAL), None) or parts[0]
    label, (res.verdict, reason, res.rows, res.memory) = pick
    if label is not None:
        reason = f"entered at label {label} (a branch from outside the cut reaches it): {reason}"
    res.reason = reason


def _entry(ctx: _Cut, start) -> tuple:
    """(verdict, reason, rows, memory row) of the cut entered at its top (``start`` None) or at
    label ``start``, where a branch from outside the cut reaches it: apply keeps such a label, so
    the spliced code is entered there too, with every register as the outside code left it."""
    body, origin = ctx.original
    nbody, norigin, funcs, forigin, glue = ctx.native
    try:
        ctx.budget.stage = "evaluating the original"
        ev_o = Evaluator(ctx.g, origin, aliases=ctx.aliases, lanes=ctx.lanes, budget=ctx.budget)
        st_o = ev_o.run(body, start=start)
        ctx.budget.stage = "evaluating the native code"
        ev_n = Evaluator(ctx.g, norigin, funcs, func_origin=forigin, glue=glue, aliases=ctx.aliases,
                         lanes=ctx.lanes, budget=ctx.budget)
        st_n = ev_n.run(nbody, start=start)
    except Unsupported as exc:
        return (NOT_PROVEN, f"{exc.reason}{_where(exc.where)}: the checker handles straight-line code "
                "and forward branches; run the GPU probe", [], None)
    ctx.budget.stage = "comparing and explaining"
    return _compare(ctx, ev_o, st_o, ev_n, st_n)


def _compare(ctx: _Cut, ev_o, st_o, ev_n, st_n) -> tuple:
    g, names, ex = ctx.g, ctx.names, ctx.ex
    mem_o, left_o = ev_o.outcome(st_o)
    mem_n, left_n = ev_n.outcome(st_n)
    if left_o != left_n:
        memory = _row(g, "memory", "", mem_o, mem_n, ev_o, ev_n, names, ex)
        leave = "the two sides leave the kernel (ret/exit) under different conditions"
        if memory.definite:
            return DIFFERENT, f"{memory.message} ({leave})", [], memory
        return NOT_PROVEN, f"{leave}; run the GPU probe", [], memory
    regs = [(names.get(r.reg + "/out", r.reg), r.reg) for r in ctx.cp.abi.live_out]
    outs = {r for _n, r in regs}
    regs += [(r, r) for r in dict.fromkeys(ev_n.written) if r not in outs and r not in ev_n.declared
             and r.startswith("%")]
    side = _side_exits(ctx, ev_o, ev_n, regs)
    if side is not None:
        return side
    if (st_o is None) != (st_n is None):
        return NOT_PROVEN, "one side never reaches the end of the cut; run the GPU probe", [], None
    rows = []
    if st_o is not None and st_n is not None:
        for name, reg in regs:
            a, b = ev_o.read(st_o, reg), ev_n.read(st_n, reg)
            rows.append(_row(g, name, reg, a, b, ev_o, ev_n, names, ex))
    if mem_o is None and mem_n is None:        # every path leaves by a branch out of the cut
        return EQUAL, "", rows, Row("memory", "", True)
    memory = _row(g, "memory", "", mem_o, mem_n, ev_o, ev_n, names, ex)
    bad = [r for r in rows + [memory] if not r.equal]
    if not bad:
        return EQUAL, "", rows, memory
    if any(r.definite for r in bad):
        return DIFFERENT, next(r.message for r in bad if r.definite), rows, memory
    return NOT_PROVEN, bad[0].message + "; run the GPU probe", rows, memory


def _side_exits(ctx: _Cut, ev_o, ev_n, regs) -> Optional[tuple]:
    """Branches out of the cut (to a label outside it: a loop's back edge, an early exit): per
    target, both sides must branch there under the same condition, with the same registers
    (every live-out, and every register the native code writes outside its scratch) and the same
    memory.  None when they do (or there are none); else a *not proven* verdict — never
    *different*: which registers are live at the target the checker does not know."""
    g = ctx.g
    so, sn = ev_o.side_exits(), ev_n.side_exits()
    for target in sorted(set(so) | set(sn)):
        xo, xn = so.get(target, []), sn.get(target, [])
        shown = target.split("@")[0]
        if _either(g, [x.reach for x in xo]) != _either(g, [x.reach for x in xn]):
            return (NOT_PROVEN, f"the two sides branch to {shown} (outside the cut) under different "
                    "conditions; run the GPU probe", [], None)
        for name, reg in regs + [("memory", None)]:
            a, b = _at_exit(g, ev_o, xo, reg), _at_exit(g, ev_n, xn, reg)
            if a != b:
                d = _row(g, name, reg or "", a, b, ev_o, ev_n, ctx.names, ctx.ex)
                return (NOT_PROVEN, f"where the cut branches to {shown}: {d.message}; run the GPU probe",
                        [replace(d, definite=False)], None)
    return None


def _either(g, conds):
    if not conds:
        return g.pred(False)
    out = conds[0]
    for c in conds[1:]:
        out = g.op("or.pred", (out, c))
    return out


def _at_exit(g, ev, states, reg):
    """A register's value (``reg`` None: the memory) where a side exit leaves: a select over
    the branches that take it."""
    vals = [x.mem if reg is None else ev.read(x, reg) for x in states]
    v = vals[-1]
    for c, x in zip(reversed([s.reach for s in states[:-1]]), reversed(vals[:-1])):
        v = g.sel(c, x, v)
    return v


def special_aliases(cp) -> dict:
    """Live-ins the analysis' provenance shows to hold a special register (``%r87`` = laneid):
    they are that register on both sides (rule provenance)."""
    out = {}
    live = {r.reg for r in cp.abi.live_in}
    for reg, text in (getattr(cp.abi, "values", None) or {}).items():
        if reg in live and isinstance(text, str) and ("%" + text) in SPECIAL_REGISTERS:
            out[reg] = "%" + text
    return out


def _where(o) -> str:
    return f" ({fmt_origin(o)})" if o else ""


def fmt_origin(o) -> str:
    if not o:
        return "?"
    if o[0] == "s":
        return (f"s{o[1]} " if o[1] is not None else "") + f"L{o[2]}"
    if o[0] == "n":
        return f"{o[1]}:{o[2]}"
    return f"generated line {o[2]}"


def _names(cp) -> dict:
    """register -> symbolic name for the report (``%r123`` -> ``c10``), outputs under reg/out."""
    out = {}
    for row in cp.binding.table:
        sym = row["symbol"].lstrip("%")
        if row["dir"] in ("out", "inout"):
            out.setdefault(row["register"] + "/out", sym)
        if row["dir"] in ("in", "inout"):
            out.setdefault(row["register"], sym)
    return out


def _chain(g, mem) -> tuple:
    """(the memory events of a state oldest first, the state below them): events are stores and
    other ordered effects; a guarded store (a select) or the entry state ends the chain."""
    out = []
    while True:
        kind, _key, args = g.nodes[mem]
        if kind == "sel" and g.nodes[args[1]][2] and g.nodes[args[1]][2][-1] == args[2]:
            out.append(mem)                   # a guarded store or effect: one event
            mem = args[2]
            continue
        if kind not in ("st", "mem") or not args:
            break
        out.append(mem)
        mem = args[-1]
    return out[::-1], mem


def _overwritten(g, chain, i) -> bool:
    """Whether a later event of ``chain`` may hide store ``i``: a store to the same address, or
    an ordered effect whose writes the checker does not know."""
    addr = g.nodes[chain[i]][2][0]
    for v in chain[i + 1:]:
        kind, _key, args = g.nodes[v]
        if kind != "st" or args[0] == addr:
            return True
    return False


def _pure(g, v) -> bool:
    """A value computed from inputs only (no load, no memory state): a store of it can differ
    from what memory held before."""
    return all(g.nodes[x][0] in ("in", "imm", "sym") for x in free_leaves(g, v))


def _memory_difference(g, a, b, ex=None):
    """A definite difference of two final memory states over the same state below them: a
    store dropped, a store writing a definitely different value, or two stores to one address in
    the other order — each only when no later event may hide it."""
    differ = (ex or Explainer(g)).difference
    (ca, below_a), (cb, below_b) = _chain(g, a), _chain(g, b)
    if below_a != below_b:
        return None
    key = lambda v: g.nodes[v][:2] + (g.nodes[v][2][:-1],)   # noqa: E731 (event without its past)
    ka, kb = [key(v) for v in ca], [key(v) for v in cb]
    if len(ka) > len(kb):
        return _dropped(g, ca, cb, ka, kb)
    if len(ka) != len(kb):
        return None
    diff = [i for i in range(len(ka)) if ka[i] != kb[i]]
    if len(diff) == 2 and ka[diff[0]] == kb[diff[1]] and ka[diff[1]] == kb[diff[0]]:
        x, y = ca[diff[0]], ca[diff[1]]
        if g.nodes[x][0] == "st" == g.nodes[y][0] and g.nodes[x][2][0] == g.nodes[y][2][0] \
                and not _overwritten(g, ca, diff[1]) \
                and differ(g.nodes[x][2][1], g.nodes[y][2][1]).definite:
            return Difference(x, cb[diff[0]], True, "reordered", "", ())
    last = _final_stores(g, ca, cb)
    if last is not None:
        la, lb = last
        for addr in la:
            if addr in lb and differ(g.nodes[la[addr]][2][1], g.nodes[lb[addr]][2][1]).definite:
                return Difference(la[addr], lb[addr], True, "stored", "", ())
    if len(diff) == 1:
        x, y = g.nodes[ca[diff[0]]], g.nodes[cb[diff[0]]]
        if x[0] == y[0] == "st" and x[1] == y[1] and x[2][0] == y[2][0] and not _overwritten(g, ca, diff[0]):
            if differ(x[2][1], y[2][1]).definite:
                return Difference(ca[diff[0]], cb[diff[0]], True, "stored", "", ())
    return None


def _dropped(g, ca, cb, ka, kb):
    """Stores of the original the native code lacks (its events are the original's with some
    left out: a store removed, or a ``ret`` before them): definite when one of them stores a
    value computed from inputs alone, no later event of the original may hide it, and every
    event the native code keeps is a store provably elsewhere (same base, disjoint bytes) — so
    the native code leaves that address as it was, the original writes an input there."""
    j, dropped = 0, []
    for i, k in enumerate(ka):
        if j < len(kb) and kb[j] == k:
            j += 1
        else:
            dropped.append(i)
    if j != len(kb):
        return None
    for i in reversed(dropped):
        v = ca[i]
        if g.nodes[v][0] == "st" and len(g.nodes[v][2]) == 3 and not _overwritten(g, ca, i) \
                and _pure(g, g.nodes[v][2][1]) and all(_apart(g, v, w) for w in cb):
            return Difference(v, v, True, "dropped", "", ())
    return None


def _apart(g, v, w) -> bool:
    """Two store events whose byte ranges (off one base) cannot overlap."""
    (kv, nv, av), (kw, nw, aw) = g.nodes[v], g.nodes[w]
    if kv != "st" or kw != "st" or len(av) != 3 or len(aw) != 3:
        return False
    xa, xb = g.nodes[av[0]] if not isinstance(av[0], tuple) else None, \
        g.nodes[aw[0]] if not isinstance(aw[0], tuple) else None
    fa, fb = footprint(nv), footprint(nw)
    if xa is None or xb is None or xa[0] != "addr" or xb[0] != "addr" or xa[2] != xb[2] \
            or fa is None or fb is None or fa.bytes is None or fb.bytes is None or fa.space != fb.space:
        return False
    oa, ob = xa[1], xb[1]
    return oa + fa.bytes <= ob or ob + fb.bytes <= oa


def _event(g, v, names) -> str:
    kind, key, args = g.nodes[v]
    if kind == "sel":
        return f"if {show(g, args[0], names, 1)}: {_event(g, args[1], names)}"
    if kind == "st" and len(args) == 3:
        return f"{key} {show(g, args[0], names, 1)} <- {show(g, args[1], names, 1)}"
    return key if isinstance(key, str) else kind


def _memory_row(g, a, b, ev_o, ev_n, names) -> Row:
    """Memory states that differ in no definite way: the first event where they part."""
    (ca, _ba), (cb, _bb) = _chain(g, a), _chain(g, b)
    i = 0
    while i < min(len(ca), len(cb)) and ca[i] == cb[i]:
        i += 1
    ea = _event(g, ca[i], names) if i < len(ca) else "(no more memory events)"
    eb = _event(g, cb[i], names) if i < len(cb) else "(no more memory events)"
    msg = (f"memory: event {i + 1} is {eb} here, {ea} in the original ({len(cb)} events here, "
           f"{len(ca)} in the original; no rule decides whether the final memory differs)")
    return Row("memory", "", False, False, msg, ea, eb,
               fmt_origin(ev_o.origins.get(ca[i])) if i < len(ca) else "",
               fmt_origin(ev_n.origins.get(cb[i])) if i < len(cb) else "")


def _final_stores(g, ca, cb):
    """address -> last store event, per side, when every event of both chains is an unguarded
    store of one opcode off one base (so which store a location keeps is decidable)."""
    events = ca + cb
    if not events or any(g.nodes[v][0] != "st" for v in events):
        return None
    keys = {g.nodes[v][1] for v in events}
    addrs = [g.nodes[v][2][0] for v in events]
    if len(keys) != 1 or any(isinstance(x, tuple) or g.nodes[x][0] != "addr" for x in addrs) \
            or len({g.nodes[x][2] for x in addrs}) != 1:
        return None
    out = []
    for chain in (ca, cb):
        last = {}
        for v in chain:
            last[g.nodes[v][2][0]] = v
        out.append(last)
    return out


def _row(g, name, reg, a, b, ev_o, ev_n, names, ex) -> Row:
    if a == b:
        return Row(name, reg, True)
    d = _memory_difference(g, a, b, ex) if name == "memory" else None
    if d is not None:
        sa, sb = g.nodes[d.a], g.nodes[d.b]
        at = show(g, sa[2][0], names, 1)
        msg = {"dropped": f"the original's store to {at} is missing here",
               "reordered": f"two stores to {at} are in the other order",
               "stored": f"a store writes a definitely different value: {at} gets "
                         f"{show(g, sb[2][1], names, 2)} here, {show(g, sa[2][1], names, 2)} in the original",
               }[d.what]
        return Row(name, reg, False, True, f"memory: {msg}", show(g, d.a, names), show(g, d.b, names),
                   fmt_origin(ev_o.origins.get(d.a)), fmt_origin(ev_n.origins.get(d.b)))
    if name == "memory":
        return _memory_row(g, a, b, ev_o, ev_n, names)
    d = ex.difference(a, b)
    msg = describe(g, d, names, name)
    return Row(name, reg, False, d.definite, msg, show(g, d.a, names), show(g, d.b, names),
               fmt_origin(ev_o.origins.get(d.a) or _up(ev_o, d)),
               fmt_origin(ev_n.origins.get(d.b) or _up(ev_n, d, native=True)))


def _up(ev, d, native=False):
    for v in reversed(d.path):
        if v in ev.origins:
            return ev.origins[v]
    return None


def describe(g, d: Difference, names, name) -> str:
    na, nb = g.nodes[d.a], g.nodes[d.b]
    if d.what in ("swap", "operand") and d.position:
        kind, key, args = na
        word = opword(key) if kind == "op" else kind
        i = d.position[0]
        labels = OPERAND_NAMES.get(word, ())
        label = labels[i] if i < len(labels) else f"operand {i + 1}"
        here = _arg(g, nb[2][i], names)
        there = _arg(g, args[i], names)
        text = f"{name}: {word} {label} operand is {here} here, {there} in the original"
    elif d.what == "opcode":
        text = f"{name}: {_opname(nb)} here, {_opname(na)} in the original"
    elif d.what == "value":
        text = f"{name}: {show(g, d.b, names)} here, {show(g, d.a, names)} in the original"
    else:
        text = f"{name}: {show(g, d.b, names, 1)} here, {show(g, d.a, names, 1)} in the original"
    return text + _where_they_part(g, d, names) + (f" ({d.reason})" if d.reason and not d.definite else "")


def _where_they_part(g, d: Difference, names) -> str:
    """Where the two forms part, when the short texts above print both sides alike (a
    difference below an operation that may mask it: ``mul24.hi`` vs ``mul24.lo`` under lop3s
    printed as ``mul24(…)`` twice)."""
    if show(g, d.a, names, 1) != show(g, d.b, names, 1):
        return ""
    pa, pb, parent = parting(g, d.a, d.b)
    at = ""
    if parent is not None and parent[1] is not None and g.nodes[pa][0] in ("imm", "in", "sym"):
        at = f" operand {parent[1] + 1} of {_opname(g.nodes[parent[0]])}:"     # a bare 1 vs 0 says little
    for depth in (1, 2, 3):
        here, there = show(g, pb, names, depth), show(g, pa, names, depth)
        if here != there:
            return f"; they part at{at} {here} here, {there} in the original"
    return ""


def _opname(n) -> str:
    return n[1] if n[0] == "op" else n[0]


def _arg(g, v, names) -> str:
    if isinstance(v, tuple):
        return "(" + _join(g, v, names, 1) + ")"
    return show(g, v, names, 1)


def _join(g, xs, names, depth: int) -> str:
    """Values separated by commas, a run of three or more consecutive elements of one operation
    as one ``wgmma(…)[0..31]``: each of a wgmma's 32 D registers was printed (36 KB for one cut)."""
    out, i = [], 0
    while i < len(xs):
        j, base = i, _element(g, xs[i])
        while base and j + 1 < len(xs) and _element(g, xs[j + 1]) == (base[0], base[1] + j + 1 - i):
            j += 1
        if base and j - i >= 2:
            out.append(f"{show(g, base[0], names, depth - 1)}[{base[1]}..{base[1] + j - i}]")
        else:
            out += [show(g, x, names, depth) for x in xs[i:j + 1]]
        i = j + 1
    return ", ".join(out)


def _element(g, v):
    """(operation, index) of a value that is one element of an operation's result, else None."""
    if isinstance(v, tuple):
        return None
    kind, key, args = g.nodes[v]
    return (args[0], key) if kind == "elt" and isinstance(key, int) else None


def show(g, v, names, depth: int = 2) -> str:
    """A short text of a value: leaves by their symbolic names, operations to ``depth``;
    memoised per graph (one cut's names), so a wide operation (a wgmma's 64 accumulators)
    shown in every row is rendered once."""
    if isinstance(v, tuple):
        return "{" + _join(g, v, names, depth) + "}"
    key = (v, depth)
    got = g.shown.get(key)
    if got is None:
        got = g.shown[key] = _show(g, v, names, depth)
    return got


def _show(g, v, names, depth: int) -> str:
    kind, key, args = g.nodes[v]
    if kind == "in":
        return names.get(key, key)
    if kind == "imm":
        return _imm_text(key)
    if kind == "undef" and isinstance(key, tuple):
        return f"{key[0]} (read {key[2]})"      # a time register: a new value at every read
    if kind in ("sreg", "sym", "undef"):
        return str(key)
    if kind == "mem0":
        return "memory on entry"
    if depth <= 0:
        return {"op": opword(key) if isinstance(key, str) else kind}.get(kind, kind) + "(…)"
    inner = _join(g, args, names, depth - 1)
    if kind == "op":
        return f"{key}({inner})"
    if kind == "ioff":
        return f"({inner} + {key[1]})"
    if kind == "addr":
        return f"[{inner}+{key}]"
    if kind in ("elt", "part"):
        return f"{inner}[{key if kind == 'elt' else key[1]}]"
    if kind in ("st", "mem"):
        return f"{key}({inner})"
    return f"{kind}({inner})"


def _imm_text(key) -> str:
    tag, val = key
    if tag == "i":
        return str(val)
    if tag.startswith("f"):
        return f"0f{val:08X}" if tag == "f32" else f"0d{val:016X}"
    return str(val)
