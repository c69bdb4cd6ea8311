"""splice.tune.timer on the probe's timing method: the statistics a variant is judged by over its
rounds are the timing module's own (one implementation), a GPU batch is one call of the timing
method with the original, its A/A control and the candidates (rounds a cap, cache state and
sample time passed on), and its record becomes the pairs, the batch's verdicts, why the rounds
stopped and what was withheld -- on the timing tests' simulated device (tests/timing_fake.py)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from splice.probe import timing_stats
from splice.tune.timer import (BASELINE, CONTROL, FASTER, SAME, Candidate, ProbeBench, TimeBatch, Timing, aa_summary,
                               interval, options, summarize)

from .tune_fakes import FakeBench


def pairs(ratio: float, n: int, jitter: float, seed: int = 0) -> list:
    rng = random.Random(seed)
    return [(10 * ratio * (1 + rng.uniform(-jitter, jitter)), 10 * (1 + rng.uniform(-jitter, jitter)))
            for _ in range(n)]


def test_the_statistics_are_the_timing_modules():
    p = pairs(0.9, 30, 0.02)
    b, a = zip(*p)
    assert interval(p, seed=3) == timing_stats.ratio_interval(a, b, 0.95, seed=3)
    s = summarize(p, pairs(1.0, 30, 0.01, seed=1))
    iv, aa = interval(p), interval(pairs(1.0, 30, 0.01, seed=1))
    assert s == {"ratio": iv.ratio, "low": iv.lo, "high": iv.hi, "verdict": timing_stats.verdict(iv, aa), "rounds": 30}
    assert s["verdict"] == FASTER
    assert summarize(pairs(1.0, 30, 0.01), pairs(1.0, 30, 0.01, seed=1))["verdict"] == SAME
    band = aa_summary(pairs(1.0, 30, 0.01, seed=1))
    assert band["band"] == timing_stats.band(aa) and band["rounds"] == 30
    with pytest.raises(ValueError):
        interval([])


def test_a_batch_s_options_are_the_timing_method_s():
    o = options(TimeBatch(2, 16, (), seed=7, timing=Timing(cache="cold", min_sample_ms=2.5, ci_width=0.01,
                                                              time_budget=30.0)))
    assert (o.runs, o.seed, o.cache, o.min_sample_ms, o.target, o.budget_s) == (16, 7, "cold", 2.5, 0.01, 30.0)


def cubin(tmp_path, name: str, body: str) -> str:
    p = tmp_path / f"{name}.cubin"
    p.write_text(body)
    return str(p)


def fake(tmp_path, name: str, speed: float, fault: int = 0) -> Candidate:
    return Candidate(name, cubin(tmp_path, name, f"speed={speed}\nfault={fault}\ndie=0\n"), "sha-" + name)


def test_a_batch_is_one_timing_run_with_the_control(tmp_path):
    b = FakeBench(None)
    res = b.run(TimeBatch(0, 12, (fake(tmp_path, "a", 0.8), fake(tmp_path, "b", 1.0)), seed=1))
    rec = res.record
    assert rec["roles"] == {"baseline": BASELINE, "control": CONTROL} and rec["names"][:2] == [BASELINE, CONTROL]
    assert res.rounds == rec["rounds"] == 12 and res.asked == 12 and res.stopped == "runs" and not res.withheld
    by = {t.key: t for t in res.timings}
    assert len(by["a"].pairs) == 12 and len(res.aa) == 12
    assert by["a"].judged["verdict"] == "faster" and by["b"].judged["verdict"] == "indistinguishable"
    assert abs(by["a"].judged["ratio"] - 0.8) < 0.01
    assert "samples_ms" not in rec["modules"][BASELINE] and rec["method"]["cache"] == "warm"
    # the pairs are the record's samples, round by round: the batch's ratio is summarize's
    assert summarize(by["a"].pairs, res.aa, 1)["ratio"] == pytest.approx(by["a"].judged["ratio"])


def test_rounds_are_a_cap_the_timing_stops_once_precise(tmp_path):
    b = FakeBench(None)
    res = b.run(TimeBatch(0, 200, (fake(tmp_path, "a", 0.9),), timing=Timing(ci_width=0.02)))
    assert res.stopped == "precision" and 20 <= res.rounds < 200 and res.asked == 200


def test_a_throttled_device_withholds_the_batch_s_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNE_FAKE_THROTTLE", "0x4")
    res = FakeBench(None).run(TimeBatch(0, 10, (fake(tmp_path, "a", 0.8),)))
    assert "sw_power_cap" in res.withheld and res.timings[0].judged["verdict"] == "withheld"


def test_a_fault_marks_its_variant_and_sends_the_others_again(tmp_path):
    """A fault loses the context: the faulting candidate is marked, those checked before it and
    after it run again on a fresh worker (none comes back untimed and unqueued)."""
    b = FakeBench(None)
    cands = (fake(tmp_path, "a", 0.9), fake(tmp_path, "c", 1.0, fault=1), fake(tmp_path, "d", 0.95))
    res = b.run(TimeBatch(0, 4, cands))
    assert [t.key for t in res.timings] == ["c"] and "ILLEGAL_ADDRESS" in res.timings[0].fault
    assert res.undone == ("a", "d") and res.lost and b.broken and res.rounds == 0


class CUDADriverError(RuntimeError):
    """Named as cupy names its driver errors: the bench tells a GPU fault by the class name."""


class FakeDevice:
    """What ProbeBench uses of splice.probe.run.device.Device, on the CPU: a module is its cubin's
    text; "bad" renders other bytes, "boom" faults as an illegal address."""

    def __init__(self):
        self.modules: dict = {}
        self.cp = None
        self.stream = None

    def load(self, name, cubin, entry=None):
        self.modules[name] = Path(cubin).read_text()


def render(self, name: str) -> dict:
    import numpy as np

    body = self.dev.modules[name]
    if body == "boom":
        raise CUDADriverError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
    return {"arena": np.frombuffer(("bad" if body == "bad" else "good").encode(), dtype=np.uint8),
            "frame": np.array([1.0, float("nan")], dtype=np.float16)}


def probe_bench(monkeypatch, seen: list):
    """The probe's bench without a GPU: its device is the fake above, its timing the timing
    module on the simulated device (what time_device is given is recorded)."""
    from .timing_fake import FakeDevice as SimulatedDevice

    def measure(self, names, opts):
        from splice.probe.timing import measure as run

        seen.append((list(names), opts))
        return run(SimulatedDevice({n: 1.0 + i for i, n in enumerate(names)}), names, BASELINE, CONTROL, opts)

    b = object.__new__(ProbeBench)
    b.dev, b.device, b.broken = FakeDevice(), "fake", False
    monkeypatch.setattr(ProbeBench, "_render", render)
    monkeypatch.setattr(ProbeBench, "_measure", measure)
    b.dev.modules[BASELINE] = "good"
    b.reference = b._render(BASELINE)
    return b


def test_the_probe_bench_compares_outputs_and_times_the_identical_ones(tmp_path, monkeypatch):
    seen: list = []
    b = probe_bench(monkeypatch, seen)
    cands = (Candidate("a", cubin(tmp_path, "a", "good"), "sa"), Candidate("b", cubin(tmp_path, "b", "bad"), "sb"),
             Candidate("c", cubin(tmp_path, "c", "boom"), "sc"), Candidate("d", cubin(tmp_path, "d", "good"), "sd"))
    res = b.run(TimeBatch(0, 3, cands))
    by = {t.key: t for t in res.timings}
    assert by["b"].identical is False and "ILLEGAL_ADDRESS" in by["c"].fault     # NaN bits equal: a identical
    assert res.undone == ("a", "d") and b.broken and res.lost and not seen       # nothing timed on a lost context
    res = b.run(TimeBatch(0, 3, cands[:2], timing=Timing(cache="cold")))
    by = {t.key: t for t in res.timings}
    assert seen[0][0] == [BASELINE, CONTROL, "a"] and seen[0][1].cache == "cold" and seen[0][1].runs == 3
    assert len(by["a"].pairs) == 3 and by["b"].pairs == () and by["b"].identical is False
    assert by["a"].judged["ratio"] == pytest.approx(3.0) and by["a"].judged["verdict"] == "slower"   # 3 ms vs 1 ms
    assert len(res.aa) == 3 and res.pid > 0
