"""The timing's statistics (splice/probe/timing_stats.py): the ratio of medians and its seeded
bootstrap interval, the A/A band and the verdict, the stopping rule, N per sample, round orders."""
from __future__ import annotations

import numpy as np
import pytest

from splice.probe.timing_stats import (Interval, band, choose_batch, ratio_interval, round_orders, stop_reason,
                                       summary, verdict)


def _pair(n, ratio, noise, seed=0):
    rng = np.random.default_rng(seed)
    drift = 1.0 + 0.02 * np.sin(np.arange(n) / 7.0)           # shared by both modules of a round
    a = 1.0 * drift * np.exp(rng.normal(0, noise, n))
    b = ratio * drift * np.exp(rng.normal(0, noise, n))
    return a, b


def test_ratio_of_medians_and_a_seeded_interval():
    a, b = _pair(200, 1.03, 0.01)
    iv = ratio_interval(a, b, 0.95, 2000, seed=7)
    assert iv.ratio == pytest.approx(float(np.median(b) / np.median(a)))
    assert iv.lo < iv.ratio < iv.hi and iv.contains(1.03) and not iv.contains(1.0)
    assert ratio_interval(a, b, 0.95, 2000, seed=7) == iv                 # same seed, same interval
    assert ratio_interval(a, b, 0.95, 2000, seed=8) != iv
    assert iv.rounds == 200 and iv.width == pytest.approx((iv.hi - iv.lo) / iv.ratio)


def test_the_interval_narrows_with_rounds_and_widens_with_confidence():
    a, b = _pair(400, 1.0, 0.02, seed=3)
    short = ratio_interval(a[:40], b[:40], 0.95, 2000, 1)
    long = ratio_interval(a, b, 0.95, 2000, 1)
    assert long.width < short.width
    assert ratio_interval(a, b, 0.99, 2000, 1).width > long.width


def test_pairing_by_round_cancels_the_shared_drift():
    """Drift common to a round moves both medians; resampling whole rounds keeps it out of the
    interval, resampling each module alone would not."""
    n = 300
    drift = 1.0 + 0.2 * np.sin(np.arange(n) / 5.0)
    a, b = drift * 1.0, drift * 1.01
    iv = ratio_interval(a, b, 0.95, 2000, 0)
    assert iv.hi - iv.lo < 0.01 and iv.contains(1.01)


def test_coverage_of_the_interval_over_many_seeds():
    """About 95 % of 95 % intervals contain the true ratio (a loose bound: 40 trials)."""
    hits = 0
    for s in range(40):
        a, b = _pair(120, 1.02, 0.02, seed=100 + s)
        hits += ratio_interval(a, b, 0.95, 1000, s).contains(1.02)
    assert hits >= 33


def test_ratio_interval_refuses_what_it_cannot_pair():
    with pytest.raises(ValueError):
        ratio_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        ratio_interval([], [])
    with pytest.raises(ValueError):
        ratio_interval([1.0], [1.0], confidence=1.0)


def _iv(r, lo, hi):
    return Interval(r, lo, hi, 0.95, 50)


def test_verdict_against_the_aa_band():
    aa = _iv(1.001, 0.997, 1.004)                 # the method alone: up to 0.4 % from 1.00
    assert band(aa) == pytest.approx(0.004)
    assert verdict(_iv(0.95, 0.94, 0.96), aa) == "faster"
    assert verdict(_iv(1.05, 1.04, 1.06), aa) == "slower"
    # a median 0.3 % off and an interval clear of 1.00, but inside the A/A band: no claim
    assert verdict(_iv(1.003, 1.002, 1.0035), aa) == "indistinguishable"
    assert verdict(_iv(0.997, 0.9965, 0.998), aa) == "indistinguishable"
    assert verdict(_iv(1.0, 0.99, 1.01), aa) == "indistinguishable"
    # just outside the band on either side
    assert verdict(_iv(1.006, 1.0045, 1.007), aa) == "slower"
    assert verdict(_iv(0.994, 0.993, 0.9955), aa) == "faster"


def test_a_biased_control_widens_the_band():
    aa = _iv(0.98, 0.975, 0.985)                  # a method that puts an identical copy at 0.98
    assert band(aa) == pytest.approx(0.025)
    assert verdict(_iv(0.98, 0.977, 0.983), aa) == "indistinguishable"
    assert verdict(_iv(0.97, 0.965, 0.972), aa) == "faster"


def test_stop_reason_precision_budget_and_cap():
    kw = dict(target=0.005, budget_s=10.0, cap=200, min_rounds=10)
    assert stop_reason(5, 1.0, [0.001], **kw) is None                  # precise, but too few rounds
    assert stop_reason(10, 1.0, [0.001, 0.004], **kw) == "precision"
    assert stop_reason(10, 1.0, [0.001, 0.006], **kw) is None           # every interval must be narrow
    assert stop_reason(10, 10.0, [0.001, 0.006], **kw) == "budget"
    assert stop_reason(200, 1.0, [0.01], **kw) == "runs"
    assert stop_reason(50, 1.0, [], **kw) is None                      # no look at the intervals this round
    assert stop_reason(3, 0.1, [0.001], target=0.005, budget_s=10, cap=3, min_rounds=10) == "precision"


def test_choose_batch_covers_the_minimum_sample_time():
    assert choose_batch(0.023, 1.0, 1000) == 44          # 44 x 23 us >= 1 ms
    assert choose_batch(8.6, 1.0, 1000) == 1
    assert choose_batch(0.0001, 1.0, 1000) == 1000       # capped
    assert choose_batch(0.0, 1.0, 50) == 50              # below the event's resolution
    assert choose_batch(0.5, 0.0, 1000) == 1
    with pytest.raises(ValueError):
        choose_batch(1.0, 1.0, 0)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_round_orders_put_every_module_at_every_position(k):
    orders = round_orders(k, 20 * k, seed=11)
    assert all(sorted(o) == list(range(k)) for o in orders)
    for block in range(20):
        rows = orders[block * k:(block + 1) * k]
        for pos in range(k):
            assert sorted(r[pos] for r in rows) == list(range(k))      # a Latin square per block
    assert round_orders(k, 20 * k, seed=11) == orders
    assert round_orders(k, 20 * k, seed=12) != orders
    firsts = {o[0] for o in orders[:k]}
    assert firsts == set(range(k))                        # not always the same module first


def test_round_orders_vary_the_predecessor():
    orders = round_orders(3, 300, seed=2)
    before = {(o[i - 1], o[i]) for o in orders for i in range(1, 3)}
    assert len(before) == 6                               # every module after every other


def test_summary():
    s = summary([2.0, 1.0, 3.0, 2.0])
    assert s["median_ms"] == 2.0 and s["min_ms"] == 1.0 and s["spread"] == 1.0 and s["fps"] == 500.0
    assert summary([])["runs"] == 0
