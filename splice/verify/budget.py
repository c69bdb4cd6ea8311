"""The time budget of one cut's proof: ``splice verify --timeout`` (and ``apply``'s verify).

The evaluation, the comparison and the explanation all call ``Budget.check`` as they go; past
the deadline it raises ``BudgetExceeded`` and the cut is *not proven (budget)* — a verdict like
any other *not proven*, never a hang of ``verify`` or of ``apply``.  One object per cut, passed
down (no process-wide state)."""
from __future__ import annotations

import math
import time
from typing import Optional

DEFAULT_SECONDS = 5.0
_EVERY = 32          # clock reads: one per this many checks


class BudgetExceeded(Exception):
    """The cut's time budget ran out."""

    def __init__(self, seconds: float, where: str = ""):
        super().__init__(f"verify stopped after {seconds:g} s{where}")
        self.seconds = seconds
        self.where = where


class Budget:
    def __init__(self, seconds: Optional[float] = DEFAULT_SECONDS, clock=time.perf_counter):
        self.seconds = math.inf if seconds is None else float(seconds)
        self.clock = clock
        self.start = clock()
        self.deadline = self.start + self.seconds
        self.steps = 0
        self.stage = "evaluating the original"

    def check(self) -> None:
        self.steps += 1
        if self.steps % _EVERY == 0 and self.clock() > self.deadline:
            raise BudgetExceeded(self.seconds, f" ({self.stage}; --timeout)")

    def elapsed(self) -> float:
        return self.clock() - self.start
