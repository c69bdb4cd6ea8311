"""A native's statements in another order: mma order, fence placement, operand-load placement.

Everything here works on model nodes (``splice.ptx.model``), never on text.  A variant is a
permutation of a straight-line native's statements chosen by a list scheduler: every statement
waits for the statements it depends on (a register it reads, a register it overwrites that
another reads or writes, an ordered side effect), and among the ready ones the scheduler takes
the one the chosen order wants first.  So any order the user asks for becomes the nearest
*legal* order, and the floating-point result cannot change: the mma that accumulate into one
register are chained through it (D of one is C of the next, or the same in-place register), so
their order is a dependency the scheduler keeps.  ``splice verify`` still proves each variant.

The tiles of a phase come from the mma themselves: an accumulator chain is a run of mma whose C
is the previous one's D (or the same in-place registers); its position in the chain is the
k-step; its first mma's A fragment names the m-tile and its B fragment the n-tile.
"""
from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from typing import Callable, Optional

from ..analysis import roles
from ..analysis.mma_forms import describe
from ..cut.kernel import defs_uses
from ..ptx import model as m

#: the loop nests of an mma order, outermost first; each keeps an accumulator's k-steps in order
ORDERS = {
    "original": None,
    "m-major": "mnk", "n-major": "nmk", "k-major": "kmn", "k-major-n": "knm",
    "m-k-n": "mkn", "n-k-m": "nkm", "chain-major": "ck",
}
_INTERLEAVE = re.compile(r"interleave-([1-9][0-9]{0,2})$")
FENCES = ("none", "start", "end", "both", "every-k")
LOADS = ("as-is", "hoisted", "sunk", "split")
#: special registers whose every read is an event of its own: never moved past anything
_TIME = frozenset(("%clock", "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"))


class Unschedulable(ValueError):
    """A native this module cannot reorder (control flow, a scope), with the statement why."""

    def __init__(self, reason: str, node=None):
        super().__init__(reason)
        self.reason = reason
        self.node = node


@dataclass(frozen=True)
class Tile:
    """Where one mma sits in its phase: body position, accumulator chain, k-step, m/n tile."""
    pos: int
    chain: int
    k: int
    m: int
    n: int


def check_order(name: str) -> None:
    if name not in ORDERS and not _INTERLEAVE.match(name):
        raise ValueError(f"unknown mma order {name!r} (one of {', '.join(ORDERS)}, interleave-N)")


def mma_tiles(body) -> dict:
    """{body position: Tile} of every mma.sync in ``body`` (wgmma and others are not tiles)."""
    chain_of: dict = {}          # D register tuple last written -> (chain, k)
    first_ab: dict = {}          # chain -> (A, B) of its first mma
    tiles = {}
    for pos, node in enumerate(body):
        mi = describe(node) if isinstance(node, m.Instruction) else None
        if mi is None or not mi.form.startswith("mma"):
            continue
        d, a, b, c = mi.frags
        chain, k = chain_of.get(c, (len(first_ab), -1))
        first_ab.setdefault(chain, (a, b))
        chain_of[d] = (chain, k + 1)
        tiles[pos] = (chain, k + 1)
    ms = _ranks(v[0] for v in first_ab.values())
    ns = _ranks(v[1] for v in first_ab.values())
    return {p: Tile(p, ch, k, ms[first_ab[ch][0]], ns[first_ab[ch][1]]) for p, (ch, k) in tiles.items()}


def _ranks(items) -> dict:
    out: dict = {}
    for x in items:
        out.setdefault(x, len(out))
    return out


def order_key(name: str) -> Callable:
    """Tile -> sort key of an order (``original``: body position)."""
    check_order(name)
    mt = _INTERLEAVE.match(name)
    if mt:
        g = int(mt.group(1))
        return lambda t: (t.chain // g, t.k, t.chain % g, t.pos)
    nest = ORDERS[name]
    if nest is None:
        return lambda t: (t.pos,)
    pick = {"m": lambda t: t.m, "n": lambda t: t.n, "k": lambda t: t.k, "c": lambda t: t.chain}
    getters = [pick[ch] for ch in nest]
    return lambda t: tuple(f(t) for f in getters) + (t.pos,)


def _ordered(node) -> bool:
    """A statement nothing may pass: a side effect (store, barrier, fence, atomic, ordered load)
    or a read of a clock."""
    if roles.is_impure(node):
        return True
    return any(isinstance(o, m.Reg) and o.name in _TIME for o in node.operands)


def _is_load(node) -> bool:
    return roles.memory_op(node.name).effect == roles.READ and not _ordered(node)


def straight_line(body) -> None:
    """Refuse what the scheduler cannot reorder: labels, scopes, branches, exits."""
    for node in body:
        if isinstance(node, m.Label):
            raise Unschedulable(f"label {node.name}: a native with control flow keeps its order", node)
        if isinstance(node, m.Block):
            raise Unschedulable("a { } scope: a native with nested scopes keeps its order", node)
        if isinstance(node, m.Instruction) and (roles.is_branch(node.name) or roles.is_exit(node.name)):
            raise Unschedulable(f"{node.name}: a native with control flow keeps its order", node)


def dependencies(body) -> list:
    """preds[j]: the statements before ``j`` that ``j`` must stay after."""
    facts = []
    for node in body:
        if isinstance(node, m.Instruction):
            d, u = defs_uses(node)
            facts.append((set(d), set(u), _ordered(node)))
        else:                                 # a directive (.pragma): stays where it is
            facts.append((set(), set(), True))
    preds: list = []
    for j, (dj, uj, oj) in enumerate(facts):
        pj = set()
        for i in range(j):
            di, ui, oi = facts[i]
            if oi or oj or (dj & (di | ui)) or (uj & di):
                pj.add(i)
        preds.append(pj)
    return preds


def _attached(body, tiles: dict, mma_rank: dict) -> list:
    """The rank a non-mma statement keeps by default: just before the mma that followed it in
    the native (it moves with that mma), or after all mma."""
    out = [0.0] * len(body)
    nxt = float(len(tiles)) + 0.5
    for p in range(len(body) - 1, -1, -1):
        if p in mma_rank:
            nxt = mma_rank[p] - 0.5
            out[p] = float(mma_rank[p])
        else:
            out[p] = nxt
    return out


def _load_rank(policy: str, need: float, attached: float, half: float) -> float:
    if policy == "hoisted":
        return -1.0
    if policy == "sunk":
        return need - 0.5 if need != float("inf") else attached
    if policy == "split":
        return -1.0 if need < half else half - 0.5
    return attached


def ranks(body, tiles: dict, order: str, loads: str) -> list:
    """The priority of every statement under an mma order and a load policy; producers inherit
    the priority of their earliest consumer, so what a hoisted load needs is hoisted with it.
    Equal priorities keep the native's order (the scheduler breaks ties by position), so the
    original order with loads as-is is the native itself."""
    key = order_key(order)
    mma_rank = {t.pos: r for r, t in enumerate(sorted(tiles.values(), key=key))}
    base = _attached(body, tiles, mma_rank)
    preds = dependencies(body)
    users: list = [[] for _ in body]
    for j, pj in enumerate(preds):
        for i in pj:
            users[i].append(j)
    need = [float("inf")] * len(body)
    eff = [0.0] * len(body)
    half = len(tiles) // 2
    for p in range(len(body) - 1, -1, -1):
        need[p] = min((eff[j] for j in users[p]), default=float("inf"))
        own = base[p]
        if loads != "as-is" and isinstance(body[p], m.Instruction) and _is_load(body[p]):
            own = _load_rank(loads, need[p], base[p], half)
        eff[p] = min(own, need[p])        # ties go by position: a producer comes first anyway
    return eff


def schedule(body, order: str = "original", loads: str = "as-is") -> list:
    """The issue order (body positions) of ``body`` under an mma order and a load policy."""
    if loads not in LOADS:
        raise ValueError(f"unknown load placement {loads!r} (one of {', '.join(LOADS)})")
    straight_line(body)
    tiles = mma_tiles(body)
    prio = ranks(body, tiles, order, loads)
    preds = dependencies(body)
    waiting = [len(p) for p in preds]
    users: list = [[] for _ in body]
    for j, pj in enumerate(preds):
        for i in pj:
            users[i].append(j)
    ready = [(prio[j], j) for j in range(len(body)) if not waiting[j]]
    heapq.heapify(ready)
    out = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(i)
        for j in users[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, (prio[j], j))
    return out


def fence_points(issued: list, tiles: dict, fence: str) -> tuple:
    """(fence before everything, issue positions after which a fence goes) for a placement."""
    if fence not in FENCES:
        raise ValueError(f"unknown fence placement {fence!r} (one of {', '.join(FENCES)})")
    start = fence in ("start", "both")
    after: set = set()
    if fence in ("end", "both") and issued:
        after.add(len(issued) - 1)
    if fence == "every-k":
        last: dict = {}
        for at, pos in enumerate(issued):
            if pos in tiles:
                last[tiles[pos].k] = at
        after.update(last.values())
    return start, after


def chain_orders(body, issued: Optional[list] = None) -> dict:
    """{accumulator chain: its mma's body positions in issue order}: what must never change."""
    tiles = mma_tiles(body)
    seq = issued if issued is not None else list(range(len(body)))
    out: dict = {}
    for pos in seq:
        if pos in tiles:
            out.setdefault(tiles[pos].chain, []).append(pos)
    return out
