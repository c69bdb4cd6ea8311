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

import time
from dataclasses import dataclass, field
from typing import Optional

from .canon import Graph
from .dataflow import Evaluator, Unsupported
from .explain import OPERAND_NAMES, Difference, first_difference, opword, parting
from . import sides

EQUAL, DIFFERENT, NOT_PROVEN = "proved equal", "proved different", "not proven"
EXIT = {EQUAL: 0, DIFFERENT: 1, NOT_PROVEN: 3}


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

    @property
    def differing(self) -> list:
        return [r for r in self.rows + ([self.memory] if self.memory else []) if not r.equal]


def verify_plan(plan) -> list:
    cache: dict = {}
    return [verify_cut(plan, cp, cache) for cp in plan.cuts]


def verify_cut(plan, cp, cache=None) -> CutResult:
    t0 = time.perf_counter()
    cache = {} if cache is None else cache
    res = CutResult(cp.cut.index, cp.title, cp.binding.abi, NOT_PROVEN)
    g = Graph()
    names = _names(cp)
    try:
        body, origin = sides.original(plan, cp)
        entries = sides.outside_entries(plan, cp, body)
        if entries:
            raise Unsupported(f"label {entries[0]} is named outside the cut (a branch from outside "
                              "may enter it there)")
        aliases = special_aliases(cp)
        ev_o = Evaluator(g, origin, aliases=aliases)
        st_o = ev_o.run(body)
        nbody, norigin, funcs, forigin, glue = sides.native(plan, cp, cache)
        ev_n = Evaluator(g, norigin, funcs, func_origin=forigin, glue=glue, aliases=aliases)
        st_n = ev_n.run(nbody)
    except Unsupported as exc:
        res.reason = f"{exc.reason}{_where(exc.where)}: the checker handles straight-line code " \
                     "and forward branches; run the GPU probe"
        res.seconds = time.perf_counter() - t0
        return res
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        # splice apply verifies every cut: a construct the checker mis-reads must not stop the
        # splice; the verdict says so, with the error, and is never "equal"
        res.reason = f"checker error ({type(exc).__name__}: {exc}); run the GPU probe"
        res.seconds = time.perf_counter() - t0
        return res
    mem_o, left_o = ev_o.outcome(st_o)
    mem_n, left_n = ev_n.outcome(st_n)
    if (st_o is None) != (st_n is None) or (left_o is None) != (left_n is None) or left_o != left_n:
        res.reason = "the two sides leave the kernel (ret/exit) under different conditions; run the GPU probe"
        res.seconds = time.perf_counter() - t0
        return res
    if st_o is not None and st_n is not None:
        regs = [(names.get(r.reg + "/out", r.reg), r.reg) for r in cp.abi.live_out]
        outs = {r for _n, r in regs}
        extra = [r for r in dict.fromkeys(ev_n.written) if r not in outs and r not in ev_n.declared
                 and r.startswith("%")]
        for name, reg in regs + [(r, r) for r in extra]:
            a, b = ev_o.read(st_o, reg), ev_n.read(st_n, reg)
            res.rows.append(_row(g, name, reg, a, b, ev_o, ev_n, names))
    res.memory = _row(g, "memory", "", mem_o, mem_n, ev_o, ev_n, names)
    res.nodes = len(g.nodes)
    bad = res.differing
    if not bad:
        res.verdict = EQUAL
    elif any(r.definite for r in bad):
        res.verdict = DIFFERENT
        res.reason = next(r.message for r in bad if r.definite)
    else:
        res.reason = bad[0].message + "; run the GPU probe"
    res.seconds = time.perf_counter() - t0
    return res


def special_aliases(cp) -> dict:
    """Live-ins the analysis' provenance shows to hold a special register (``%r87`` = laneid):
    they are that register on both sides (rule provenance)."""
    from ..ptx.model import SPECIAL_REGISTERS

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
    return all(g.nodes[x][0] in ("in", "imm", "sym") for x in _leaves_of(g, v))


def _leaves_of(g, v):
    from .explain import _leaves

    return _leaves(g, v)


def _memory_difference(g, a, b):
    """A definite difference of two final memory states over the same state below them: a
    store dropped, a store writing a definitely different value, or two stores to one address in
    the other order — each only when no later event may hide it."""
    (ca, below_a), (cb, below_b) = _chain(g, a), _chain(g, b)
    if below_a != below_b:
        return None
    key = lambda v: g.nodes[v][:2] + (g.nodes[v][2][:-1],)   # noqa: E731 (event without its past)
    ka, kb = [key(v) for v in ca], [key(v) for v in cb]
    if len(ka) == len(kb) + 1:
        for i in range(len(ka)):
            if ka[:i] + ka[i + 1:] == kb and g.nodes[ca[i]][0] == "st" and not _overwritten(g, ca, i) \
                    and _pure(g, g.nodes[ca[i]][2][1]):
                return Difference(ca[i], ca[i], True, "dropped", "", ())
    if len(ka) != len(kb):
        return None
    diff = [i for i in range(len(ka)) if ka[i] != kb[i]]
    if len(diff) == 2 and ka[diff[0]] == kb[diff[1]] and ka[diff[1]] == kb[diff[0]]:
        x, y = ca[diff[0]], ca[diff[1]]
        if g.nodes[x][0] == "st" == g.nodes[y][0] and g.nodes[x][2][0] == g.nodes[y][2][0] \
                and not _overwritten(g, ca, diff[1]) \
                and first_difference(g, g.nodes[x][2][1], g.nodes[y][2][1]).definite:
            return Difference(x, cb[diff[0]], True, "reordered", "", ())
    last = _final_stores(g, ca, cb)
    if last is not None:
        la, lb = last
        for addr in la:
            if addr in lb and first_difference(g, g.nodes[la[addr]][2][1], g.nodes[lb[addr]][2][1]).definite:
                return Difference(la[addr], lb[addr], True, "stored", "", ())
    if len(diff) == 1:
        x, y = g.nodes[ca[diff[0]]], g.nodes[cb[diff[0]]]
        if x[0] == y[0] == "st" and x[1] == y[1] and x[2][0] == y[2][0] and not _overwritten(g, ca, diff[0]):
            if first_difference(g, x[2][1], y[2][1]).definite:
                return Difference(ca[diff[0]], cb[diff[0]], True, "stored", "", ())
    return None


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


def _row(g, name, reg, a, b, ev_o, ev_n, names) -> Row:
    if a == b:
        return Row(name, reg, True)
    d = _memory_difference(g, a, b) if name == "memory" else None
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
    d = first_difference(g, a, b)
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
    """A short text of a value: leaves by their symbolic names, operations to ``depth``."""
    if isinstance(v, tuple):
        return "{" + _join(g, v, names, depth) + "}"
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
