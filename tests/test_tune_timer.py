"""splice.tune.timer's statistics: ratio of medians, a seeded bootstrap interval over rounds, a
verdict judged against the A/A band (these become the probe timing's own when it has them)."""
from __future__ import annotations

import random
from pathlib import Path

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


class CUDADriverError(RuntimeError):
    """Named as cupy names its driver errors: the bench tells a GPU fault by the class name."""


class FakeDevice:
    """What ProbeBench uses of splice.probe.device.Device, on the CPU: a module is its cubin's
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


def bench(tmp_path, monkeypatch):
    from splice.tune.timer import ProbeBench

    b = object.__new__(ProbeBench)           # the bench without a GPU: its device is the fake's
    b.dev, b.device, b.broken = FakeDevice(), "fake", False
    monkeypatch.setattr(ProbeBench, "_render", render)
    monkeypatch.setattr(ProbeBench, "_time",
                        lambda self, names, rounds: {n: [1.0 + i] * rounds for i, n in enumerate(names)})
    b.dev.modules["control"] = "good"
    b.reference = b._render("control")
    return b


def cubin(tmp_path, name: str, body: str) -> str:
    p = tmp_path / f"{name}.cubin"
    p.write_text(body)
    return str(p)


def test_the_probe_bench_compares_outputs_and_stops_at_a_fault(tmp_path, monkeypatch):
    from splice.tune.timer import Candidate, TimeBatch

    b = bench(tmp_path, monkeypatch)
    cands = (Candidate("a", cubin(tmp_path, "a", "good"), "sa"), Candidate("b", cubin(tmp_path, "b", "bad"), "sb"),
             Candidate("c", cubin(tmp_path, "c", "boom"), "sc"), Candidate("d", cubin(tmp_path, "d", "good"), "sd"))
    res = b.run(TimeBatch(0, 3, cands))
    by = {t.key: t for t in res.timings}
    assert by["a"].identical is True and by["b"].identical is False     # NaN bits equal: identical
    assert "ILLEGAL_ADDRESS" in by["c"].fault and res.undone == ("d",) and b.broken and res.lost
    res = b.run(TimeBatch(0, 3, cands[:2]))
    by = {t.key: t for t in res.timings}
    assert len(by["a"].pairs) == 3 and by["b"].pairs == ()         # only identical outputs are timed
    assert by["a"].judged["ratio"] == 3.0 / 1.0 and by["a"].judged["verdict"] == "slower"   # 3 ms vs 1 ms
    assert len(res.aa) == 3 and res.pid > 0
