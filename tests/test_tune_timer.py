"""splice.tune.timer's statistics: ratio of medians, a seeded bootstrap interval over rounds, a
verdict judged against the A/A band (these become the probe timing's own when it has them)."""
from __future__ import annotations

import random

import pytest

from splice.tune.timer import FASTER, SAME, SLOWER, ratio_interval, summarize, verdict


def pairs(ratio: float, n: int, jitter: float, seed: int = 0) -> list:
    rng = random.Random(seed)
    return [(10 * ratio * (1 + rng.uniform(-jitter, jitter)), 10 * (1 + rng.uniform(-jitter, jitter)))
            for _ in range(n)]


def test_the_interval_holds_the_ratio_and_narrows_with_rounds():
    r, lo, hi = ratio_interval(pairs(0.9, 10, 0.02))
    assert lo <= r <= hi and abs(r - 0.9) < 0.02
    r2, lo2, hi2 = ratio_interval(pairs(0.9, 200, 0.02))
    assert hi2 - lo2 < hi - lo
    assert ratio_interval(pairs(0.9, 10, 0.02), seed=5) == ratio_interval(pairs(0.9, 10, 0.02), seed=5)
    assert ratio_interval([(9.0, 10.0)]) == (0.9, 0.9, 0.9)
    with pytest.raises(ValueError):
        ratio_interval([])


def test_verdicts_against_one_and_the_aa_band():
    assert verdict(0.90, 0.95) == FASTER and verdict(1.05, 1.1) == SLOWER and verdict(0.97, 1.01) == SAME
    assert verdict(0.97, 0.99, aa=(0.985, 1.01)) == SAME       # inside what the method alone produces
    assert verdict(0.95, 0.97, aa=(0.985, 1.01)) == FASTER


def test_summarize():
    s = summarize(pairs(0.8, 30, 0.01), pairs(1.0, 30, 0.01, seed=1))
    assert s["verdict"] == FASTER and s["rounds"] == 30 and s["low"] <= s["ratio"] <= s["high"]
    assert summarize(pairs(1.0, 30, 0.01), pairs(1.0, 30, 0.01, seed=1))["verdict"] == SAME
