"""The statistics of a timing run: pure functions over per-launch samples, no device.

* :func:`ratio_interval` -- the ratio of medians of two modules' samples with a seeded, paired
  percentile bootstrap interval.  Paired by round: the samples of one round were taken within
  milliseconds of each other, so a resample draws whole rounds and the clock or thermal drift
  of a round moves both medians together instead of widening the interval.
* :func:`verdict` -- faster / slower / indistinguishable against the A/A band: the control (the
  original against a second loaded copy of itself) shows how far from 1.00 the method alone can
  put a ratio, so an A/B interval is only a difference where it clears that band.
* :func:`stop_reason` -- adaptive stopping: the intervals are narrow enough, the time budget is
  spent, or the round cap (``--runs``) is reached.
* :func:`choose_batch` -- how many launches one sample covers, from a first measurement.
* :func:`round_orders` -- the launch order of each round: blocks of a seeded Latin square, so that
  every module takes every position once per block (no module is always first after the sync).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

VERDICTS = ("faster", "slower", "indistinguishable", "withheld")


@dataclass(frozen=True)
class Interval:
    """``ratio`` = median(b) / median(a) and its bootstrap interval [lo, hi] at ``confidence``."""
    ratio: float
    lo: float
    hi: float
    confidence: float
    rounds: int

    @property
    def width(self) -> float:
        """Relative width of the interval, (hi - lo) / ratio: what the stopping rule bounds."""
        return (self.hi - self.lo) / self.ratio if self.ratio else math.inf

    def contains(self, x: float) -> bool:
        return self.lo <= x <= self.hi

    def as_dict(self) -> dict:
        return {"ratio": self.ratio, "lo": self.lo, "hi": self.hi, "confidence": self.confidence,
                "width": self.width, "rounds": self.rounds}


def bootstrap_indices(rounds: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, rounds) round indices drawn with replacement from a seeded generator: the
    same seed and round count give the same draws, so an interval is reproducible."""
    return np.random.default_rng(seed).integers(0, rounds, size=(resamples, rounds))


def ratio_interval(a: Sequence[float], b: Sequence[float], confidence: float = 0.95,
                   resamples: int = 2000, seed: int = 0, idx: Optional[np.ndarray] = None) -> Interval:
    """median(b) / median(a) with a paired percentile bootstrap interval.

    ``a`` and ``b`` are per-round samples (index i of both comes from round i).  ``idx`` (from
    :func:`bootstrap_indices`) lets several ratios share one set of draws."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"ratio_interval: need two equal, non-empty 1-D sample lists, got {x.shape} and {y.shape}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: must be between 0 and 1")
    ratio = float(np.median(y) / np.median(x))
    if idx is None:
        idx = bootstrap_indices(x.size, resamples, seed)
    r = np.median(y[idx], axis=1) / np.median(x[idx], axis=1)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(r, [tail, 1.0 - tail])
    return Interval(ratio, float(lo), float(hi), confidence, int(x.size))


def band(control: Interval) -> float:
    """Half-width of the A/A band: how far from 1.00 the control's interval reaches (its bias
    and its spread together)."""
    return max(control.hi - 1.0, 1.0 - control.lo, 0.0)


def verdict(iv: Interval, control: Interval) -> str:
    """faster / slower when the whole A/B interval lies outside the A/A band 1 ± band(control),
    indistinguishable otherwise -- whatever the median says."""
    b = band(control)
    if iv.hi < 1.0 - b:
        return "faster"
    if iv.lo > 1.0 + b:
        return "slower"
    return "indistinguishable"


def stop_reason(rounds: int, elapsed_s: float, widths: Sequence[float], *, target: float, budget_s: float,
                cap: int, min_rounds: int) -> Optional[str]:
    """Why the rounds stop now, or None to go on.  ``widths``: the relative width of every
    interval the run reports (the control's and each variant's); all must be within ``target``."""
    if rounds >= min(min_rounds, cap) and widths and max(widths) <= target:
        return "precision"
    if rounds >= cap:
        return "runs"
    if elapsed_s >= budget_s:
        return "budget"
    return None


def choose_batch(first_ms: float, min_sample_ms: float, max_batch: int) -> int:
    """Launches per sample so that one sample covers at least ``min_sample_ms`` of the
    shortest module (``first_ms``: its per-launch time from the first measurement): the CUDA
    event's resolution (~0.5 us) is then a small part of every sample."""
    if max_batch < 1:
        raise ValueError(f"max_batch {max_batch}: must be 1 or more")
    if first_ms <= 0 or not math.isfinite(first_ms):
        return max_batch
    return max(1, min(max_batch, math.ceil(min_sample_ms / first_ms)))


class RoundOrders:
    """The order of every round: blocks of k rounds, each block the k rotations of a seeded
    random permutation taken in a seeded random order.  Every module is at every position
    exactly once per block, and which module precedes which changes from block to block."""

    def __init__(self, k: int, seed: int):
        self.k = k
        self.rng = np.random.default_rng(seed)
        self.pending: list = []

    def next(self) -> list:
        if not self.pending:
            base = self.rng.permutation(self.k)
            rows = [list(map(int, np.roll(base, -j))) for j in range(self.k)]
            self.pending = [rows[i] for i in self.rng.permutation(self.k)]
        return self.pending.pop(0)


def round_orders(k: int, rounds: int, seed: int) -> list:
    """The first ``rounds`` orders :class:`RoundOrders` gives."""
    ro = RoundOrders(k, seed)
    return [ro.next() for _ in range(rounds)]


def summary(samples: Sequence[float]) -> dict:
    """median/min/max/mean/stdev, p10/p90 and spread ((max - min) / median) of per-launch ms."""
    t = np.sort(np.asarray(samples, dtype=float))
    if t.size == 0:
        return {"runs": 0}
    med = float(np.median(t))
    return {"runs": int(t.size), "median_ms": med, "min_ms": float(t[0]), "max_ms": float(t[-1]),
            "mean_ms": float(t.mean()), "stdev_ms": float(t.std(ddof=1)) if t.size > 1 else 0.0,
            "p10_ms": float(np.quantile(t, 0.1)), "p90_ms": float(np.quantile(t, 0.9)),
            "spread": float((t[-1] - t[0]) / med) if med else None,
            "fps": 1000.0 / med if med else None}
