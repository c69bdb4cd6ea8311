"""The timing method (splice/probe/timing_engine.py) on a simulated device with its own clock
(tests/timing_fake.py): no position bias, the A/A control, N per sample, where the flush goes,
the stopping rule, late submissions, throttling.  Deterministic: no GPU, no wall clock."""
from __future__ import annotations

import json

import pytest

from splice.probe.timing_engine import TimingOptions, measure

from .timing_fake import FakeDevice, FakeState, old_loop

NAMES = ["original", "control", "spliced"]
SHORT = 0.023                     # the Triton matmul's ~23 us launch


def _run(dev, opt=None, state=None, names=NAMES):
    opt = opt or TimingOptions(runs=60, min_rounds=10, budget_s=100.0, resamples=500)
    return measure(dev, names, "original", "control", opt, state)


def test_the_fake_reproduces_the_old_position_bias():
    """Original first after a host sync, spliced second: an identical kernel reads ~0.82."""
    dev = FakeDevice({"original": SHORT, "spliced": SHORT})
    t = old_loop(dev, ["original", "spliced"], 50)
    ratio = sorted(t["spliced"])[25] / sorted(t["original"])[25]
    assert ratio == pytest.approx(SHORT / (SHORT + dev.submit_ms), rel=1e-6) and ratio < 0.85


def test_identical_modules_read_1_00_and_indistinguishable():
    dev = FakeDevice({n: SHORT for n in NAMES}, noise=0.01)
    r = _run(dev)
    for n in ("control", "spliced"):
        iv = r["ratios"][n]
        assert abs(iv["ratio"] - 1.0) < 0.01 and iv["lo"] <= 1.0 <= iv["hi"]
    assert r["ratios"]["spliced"]["verdict"] == "indistinguishable"
    assert "verdict" not in r["ratios"]["control"]
    assert r["aa"]["band"] == pytest.approx(max(r["aa"]["hi"] - 1, 1 - r["aa"]["lo"], 0))
    # the per-launch time is the kernel's, not kernel + submission latency
    assert r["modules"]["original"]["events"]["median_ms"] == pytest.approx(SHORT, rel=0.02)


@pytest.mark.parametrize("factor,expect", [(1.05, "slower"), (0.95, "faster"), (1.0, "indistinguishable")])
def test_a_real_difference_gets_its_verdict(factor, expect):
    dev = FakeDevice({"original": SHORT, "control": SHORT, "spliced": SHORT * factor}, noise=0.01)
    r = _run(dev)
    assert r["ratios"]["spliced"]["verdict"] == expect
    assert r["ratios"]["spliced"]["ratio"] == pytest.approx(factor, rel=0.01)


def test_n_launches_per_sample_from_the_first_measurement():
    dev = FakeDevice({n: SHORT for n in NAMES})
    r = _run(dev)
    assert r["method"]["batch"] == 44 and r["method"]["batch_from_ms"] == pytest.approx(SHORT)
    timed = [e for e in dev.log if e[0] == "launch"]
    assert timed[-1][2] == 44                          # the rounds launch N at once
    assert len(r["modules"]["spliced"]["samples_ms"]) == r["rounds"]


def test_a_long_frame_is_one_launch_per_sample():
    dev = FakeDevice({n: 8.6 for n in NAMES})
    assert _run(dev)["method"]["batch"] == 1


def _intervals(log):
    """(inside, between): the calls inside each timed interval and those before each start."""
    inside, before, cur, pending = [], [], None, []
    for e in log:
        if e[0] == "start":
            cur, before_start = [], pending
            before.append(before_start)
            pending = []
        elif e[0] == "stop":
            inside.append(cur)
            cur = None
        elif cur is not None:
            cur.append(e)
        else:
            pending.append(e)
    return inside, before


def test_cold_cache_flushes_before_every_timed_launch_outside_the_interval():
    dev = FakeDevice({n: SHORT for n in NAMES}, cold_extra_ms=0.01)
    r = _run(dev, TimingOptions(cache="cold", runs=20, min_rounds=10, budget_s=100.0, resamples=300))
    inside, before = _intervals(dev.log)
    assert inside and all([e[0] for e in xs] == ["launch"] and xs[0][2] == 1 for xs in inside)
    # the last three calls before every start: restore, flush, spacer -- nothing after the flush
    # but the spacer, which touches no memory
    rounds_part = [b for b in before if b]
    assert all([e[0] for e in b[-3:]] == ["restore", "flush", "spacer"] for b in rounds_part)
    assert sum(1 for e in dev.log if e[0] == "flush") == sum(1 for e in dev.log if e[0] == "start")
    # every timed launch paid the cold-cache cost
    assert r["modules"]["original"]["events"]["median_ms"] == pytest.approx(SHORT + 0.01, rel=0.01)
    assert r["method"]["cache"] == "cold" and r["method"]["batch"] == 31       # 1 ms / 33 us


def test_warm_cache_never_flushes():
    dev = FakeDevice({n: SHORT for n in NAMES}, cold_extra_ms=0.01)
    r = _run(dev)
    assert not any(e[0] == "flush" for e in dev.log)
    assert r["modules"]["original"]["events"]["median_ms"] == pytest.approx(SHORT, rel=0.01)
    inside, before = _intervals(dev.log)
    assert all([e[0] for e in b[-2:]] == ["restore", "spacer"] for b in before if b)


def test_every_round_has_the_same_preceding_work_and_a_recorded_balanced_order():
    dev = FakeDevice({n: SHORT for n in NAMES})
    r = _run(dev, TimingOptions(runs=30, min_rounds=30, budget_s=100.0, resamples=200))
    assert r["rounds"] == 30 and len(r["orders"]) == 30
    for block in range(10):
        rows = r["orders"][3 * block:3 * block + 3]
        assert all(sorted(x[p] for x in rows) == [0, 1, 2] for p in range(3))
    spacers = {e[1] for e in dev.log[-200:] if e[0] == "spacer"}
    assert len(spacers) == 1 and r["method"]["spacer_us"] in spacers


def test_the_spacer_covers_the_host_submission():
    """With a slow host (50 us per call) and N = 44 plain launches, the spacer grows past the
    submission time, so no round is late and the samples are the kernel's time."""
    dev = FakeDevice({n: SHORT for n in NAMES}, submit_ms=0.05)
    r = _run(dev)
    assert r["method"]["batch"] == 44 and r["method"]["spacer_us"] > 44 * 50 and r["late_rounds"] == 0
    assert r["modules"]["spliced"]["events"]["median_ms"] == pytest.approx(SHORT, rel=1e-6)


def _all_samples(r):
    return [x for n in NAMES for x in r["modules"][n]["samples_ms"]]


def test_one_host_pause_discards_its_round_and_keeps_the_spacer():
    dev = FakeDevice({n: SHORT for n in NAMES}, stalls={40}, stall_ms=5.0)
    quiet = _run(FakeDevice({n: SHORT for n in NAMES}), TimingOptions(runs=20, min_rounds=20, budget_s=100.0,
                                                                        resamples=200))
    r = _run(dev, TimingOptions(runs=20, min_rounds=20, budget_s=100.0, resamples=200))
    assert r["late_rounds"] == 1 and r["late_kept"] == 0 and r["rounds"] == 20
    assert max(_all_samples(r)) < SHORT * 1.01          # the pause is in no sample
    assert r["method"]["spacer_us"] == quiet["method"]["spacer_us"]


def test_a_host_that_is_often_late_doubles_the_spacer():
    """A 0.3 ms pause in each of 8 rounds: the first three are discarded, then the spacer
    doubles and covers it; no sample holds a pause."""
    first_round_mark = 3 * 3 + 3 + 1                      # first measurement, full samples, then rounds
    dev = FakeDevice({n: SHORT for n in NAMES}, stalls=set(range(first_round_mark, first_round_mark + 24, 3)),
                     stall_ms=0.3)
    r = _run(dev, TimingOptions(runs=20, min_rounds=20, budget_s=100.0, resamples=200))
    assert r["late_rounds"] == 3 and r["late_kept"] == 0 and r["rounds"] == 20
    assert r["method"]["spacer_us"] > 900 and max(_all_samples(r)) < SHORT * 1.01


def test_stops_at_precision_when_the_device_is_quiet():
    dev = FakeDevice({n: SHORT for n in NAMES})
    r = _run(dev, TimingOptions(runs=500, min_rounds=10, budget_s=100.0, resamples=200))
    assert r["stopped"] == "precision" and r["rounds"] == 10


def test_stops_on_the_time_budget_of_the_fake_clock():
    dev = FakeDevice({n: 8.6 for n in NAMES}, noise=0.05)
    r = _run(dev, TimingOptions(runs=10000, target=1e-6, budget_s=2.0, resamples=200))
    assert r["stopped"] == "budget"
    assert r["seconds"] == pytest.approx(2.0, abs=0.1)       # ~30 ms per round on the fake clock
    assert 50 < r["rounds"] < 100


def test_stops_at_the_runs_cap():
    dev = FakeDevice({n: SHORT for n in NAMES}, noise=0.05)
    r = _run(dev, TimingOptions(runs=12, target=1e-6, budget_s=100.0, resamples=200))
    assert r["stopped"] == "runs" and r["rounds"] == 12


def test_the_same_seed_gives_the_same_run():
    a = _run(FakeDevice({n: SHORT for n in NAMES}, noise=0.02))
    b = _run(FakeDevice({n: SHORT for n in NAMES}, noise=0.02))
    assert a == b
    c = measure(FakeDevice({n: SHORT for n in NAMES}, noise=0.02), NAMES, "original", "control",
                TimingOptions(runs=60, budget_s=100.0, resamples=500, seed=5))
    assert c["orders"] != a["orders"]


def test_drift_hits_every_module_alike():
    dev = FakeDevice({n: 1.0 for n in NAMES}, drift=0.5, noise=0.002)
    r = _run(dev, TimingOptions(runs=120, min_rounds=120, budget_s=1000.0, resamples=500))
    assert abs(r["ratios"]["spliced"]["ratio"] - 1.0) < 0.003
    assert r["ratios"]["spliced"]["verdict"] == "indistinguishable"


def test_a_throttled_run_withholds_its_verdict():
    dev = FakeDevice({"original": SHORT, "control": SHORT, "spliced": SHORT * 1.2}, noise=0.01)
    r = _run(dev, state=FakeState(masks=[0, 0, 0x4, 0]))
    assert r["device"]["throttled"] and "sw_power_cap" in r["device"]["reasons"]
    assert r["ratios"]["spliced"]["verdict"] == "withheld" and "sw_power_cap" in r["withheld"]
    assert r["device"]["polls"] == r["rounds"] and r["device"]["polls_throttled"] == 1


def test_power_violation_time_during_the_run_is_throttling():
    dev = FakeDevice({n: SHORT for n in NAMES})
    r = _run(dev, state=FakeState(before_viol=1000, after_viol=5_000_000))
    assert r["device"]["throttled"] and r["ratios"]["spliced"]["verdict"] == "withheld"
    assert any("power violation" in x for x in r["device"]["reasons"])


def test_an_idle_reason_is_not_throttling():
    dev = FakeDevice({n: SHORT for n in NAMES})
    r = _run(dev, state=FakeState(masks=[0x1]))
    assert r["device"]["throttled"] is False and r["withheld"] is None
    assert r["ratios"]["spliced"]["verdict"] == "indistinguishable"


def test_without_a_state_reader_the_state_is_unknown_and_said():
    r = _run(FakeDevice({n: SHORT for n in NAMES}))
    assert r["device"]["state"] == "unknown" and r["device"]["throttled"] is None
    assert "no device state reader" in r["device"]["reason"]
    assert r["ratios"]["spliced"]["verdict"] == "indistinguishable"


def test_many_variants_against_one_baseline():
    """The API a search over variants uses: any number of modules, one control, one run."""
    cost = {"original": SHORT, "control": SHORT, **{f"v{i}": SHORT * (1 + 0.02 * (i - 2)) for i in range(5)}}
    r = measure(FakeDevice(cost, noise=0.005), list(cost), "original", "control",
                TimingOptions(runs=80, budget_s=100.0, resamples=300))
    got = {f"v{i}": r["ratios"][f"v{i}"]["verdict"] for i in range(5)}
    assert got == {"v0": "faster", "v1": "faster", "v2": "indistinguishable", "v3": "slower", "v4": "slower"}
    assert sorted({o for row in r["orders"] for o in row}) == list(range(7))


def test_the_result_is_strict_json():
    r = _run(FakeDevice({n: SHORT for n in NAMES}, noise=0.01), state=FakeState())
    json.dumps(r, allow_nan=False)


def test_measure_refuses_a_missing_control_or_no_runs():
    dev = FakeDevice({n: SHORT for n in NAMES})
    with pytest.raises(ValueError):
        measure(dev, ["original", "spliced"], "original", "control", TimingOptions())
    with pytest.raises(ValueError):
        measure(dev, NAMES, "original", "original", TimingOptions())
    with pytest.raises(ValueError):
        measure(dev, NAMES, "original", "control", TimingOptions(runs=0))
    with pytest.raises(ValueError):
        TimingOptions(cache="lukewarm")
