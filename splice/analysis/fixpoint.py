"""One fixpoint engine for every analysis that iterates until nothing changes.

Several analyses compute facts that feed themselves: a register's taint reaches the registers
computed from it, around loops too; a region widens to whole blocks until no block straddles it;
adjacent runs merge until no rule applies.  Each used to be a hand-written ``while changed``
loop over everything.  Here they are one worklist engine (the shape of the classic sparse
dataflow solvers): the client gives the items (statements, blocks, rules) in their order, a
transfer function applying one item and returning the *keys* whose facts it changed, and which
items read a key; the engine re-runs only those readers, until the worklist is empty.

Two schedules, both deterministic:

* ``sweep`` (dataflow): round-robin in item order, as the old loops ran, but an item runs again
  only when a key it reads changed since it last ran -- after the current item in this sweep
  when it comes later, in the next sweep otherwise.  For a transfer that depends only on the
  facts of what it reads, and facts that only grow, the result is the old loops' exactly (the
  skipped runs were no-ops) and the least fixpoint.
* ``priority`` (rewriting): always the lowest pending item first, so after any change the rules
  are tried again from the first (a merge of plumbing before a merge of equal neighbours).

``solve`` returns how many transfers ran (``tests/test_fixpoint.py`` checks the work saved).
"""
from __future__ import annotations

import heapq
from typing import Callable, Hashable, Iterable, Optional, Sequence

SWEEP = "sweep"
PRIORITY = "priority"


class NoFixpoint(RuntimeError):
    """The transfer kept changing facts past the bound it was given: not monotone."""


def solve(items: int, transfer: Callable[[int], Iterable[Hashable]],
          readers: Optional[Callable[[Hashable], Iterable[int]]] = None, order: str = SWEEP,
          sweeps: Optional[int] = None) -> int:
    """Apply ``transfer`` to items ``0 .. items-1`` until no pending item is left.

    ``transfer(i)`` applies item ``i`` and returns the keys whose facts it changed (empty when
    none).  ``readers(key)`` lists the items that read ``key``; ``None``: every item reads every
    key.  ``sweeps`` bounds the rounds of a ``sweep`` schedule (``NoFixpoint`` past it)."""
    if order not in (SWEEP, PRIORITY):
        raise ValueError(f"unknown schedule {order!r}")
    now = list(range(items))          # a sorted list is a heap
    pending = set(now)
    later: list = []
    waiting: set = set()
    runs, rounds = 0, 1
    while now or later:
        if not now:
            now, pending, later, waiting = later, waiting, [], set()
            rounds += 1
            if sweeps is not None and rounds > sweeps:
                raise NoFixpoint(f"no fixpoint after {sweeps} sweeps")
        i = heapq.heappop(now)
        pending.discard(i)
        runs += 1
        changed = transfer(i)
        if not changed:
            continue
        for key in changed:
            for r in (range(items) if readers is None else readers(key)):
                if order == PRIORITY or r > i:
                    if r not in pending:
                        pending.add(r)
                        heapq.heappush(now, r)
                elif r not in waiting:
                    waiting.add(r)
                    heapq.heappush(later, r)
    return runs


def reader_index(reads: Sequence[Iterable[Hashable]]) -> Callable[[Hashable], Iterable[int]]:
    """``readers`` for ``solve`` from what each item reads: ``reads[i]`` are item i's keys."""
    index: dict = {}
    for i, keys in enumerate(reads):
        for k in keys:
            index.setdefault(k, []).append(i)
    empty: tuple = ()
    return lambda key: index.get(key, empty)

