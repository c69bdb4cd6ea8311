"""Successive halving over the variants that survived the screen.

Rung 0 times every survivor for ``rounds`` rounds; each later rung keeps the best ``1/eta`` (at
least ``final``) and brings them to ``eta`` times the rounds; when ``final`` or fewer are left
they get ``final_rounds`` rounds in all and the search ends.  Rounds accumulate: a variant
promoted to rung 2 has the samples of rungs 0 and 1 too.  The best is the lowest ratio of
medians; ties go to the narrower interval's upper bound.  Every drop says at which rung, with
which figure, ranked where among how many, how many were kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .space import Search


@dataclass(frozen=True)
class Standing:
    key: str
    ratio: float
    low: float
    high: float


def final(search: Search, alive: int) -> bool:
    return alive <= search.final


def target(search: Search, rung: int, alive: int) -> int:
    """The rounds every variant alive at ``rung`` has when the rung is done."""
    base = search.rounds * search.eta ** rung
    return max(base, search.final_rounds) if final(search, alive) else base


def ranked(standings: list) -> list:
    return sorted(standings, key=lambda s: (s.ratio, s.high, s.key))


def promote(search: Search, rung: int, standings: list) -> tuple:
    """(kept keys, {dropped key: reason}) after ``rung``."""
    order = ranked(standings)
    keep = max(search.final, math.ceil(len(order) / search.eta))
    dropped = {}
    for place, s in enumerate(order[keep:], keep + 1):
        dropped[s.key] = (f"halving: rung {rung}, ranked {place} of {len(order)} (the best {keep} went on); "
                          f"ratio {s.ratio:.4f} [{s.low:.4f}, {s.high:.4f}]")
    return [s.key for s in order[:keep]], dropped
