"""Rendering of a timing record (splice/report/timing.py): the tables say the ratio, its interval,
the A/A band, the verdict, the cache state, N and the device's state; the PNG draws A, A' and B."""
from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from splice.probe.timing_engine import TimingOptions, measure
from splice.report.png import decode, encode
from splice.report.timing import print_timing, timing_png, write_timing_png

from .timing_fake import FakeDevice, FakeState

NAMES = ["original", "control", "spliced"]


def _record(factor=1.1, state=None, cache="warm"):
    dev = FakeDevice({"original": 0.023, "control": 0.023, "spliced": 0.023 * factor}, noise=0.01,
                     cold_extra_ms=0.002)
    return measure(dev, NAMES, "original", "control",
                   TimingOptions(cache=cache, runs=40, budget_s=100.0, resamples=300), state)


def _text(rec) -> str:
    buf = io.StringIO()
    print_timing(rec, Console(file=buf, width=200))
    return buf.getvalue()


def test_the_tables_say_ratio_interval_band_verdict_and_method():
    rec = _record(1.1, FakeState())
    t = _text(rec)
    sp = rec["ratios"]["spliced"]
    assert f"{sp['ratio']:.4f}" in t and f"[{sp['lo']:.4f}, {sp['hi']:.4f}]" in t and "slower" in t
    assert "A/A control/original" in t and f"1 ± {rec['aa']['band']:.4f}" in t
    assert "warm cache, 44 launches per sample" in t and "no throttling" in t
    for n in NAMES:
        assert n in t


def test_an_unknown_device_state_is_said():
    t = _text(_record(1.0))
    assert "device state unknown" in t and "throttling not checked" in t and "indistinguishable" in t


def test_a_throttled_run_says_so_and_withholds():
    t = _text(_record(1.1, FakeState(masks=[0x40])))
    assert "THROTTLED" in t and "hw_thermal_slowdown" in t and "verdict withheld" in t and "withheld" in t


def test_cold_cache_is_named():
    assert "cold cache" in _text(_record(1.0, cache="cold"))


def test_the_png_draws_every_module_on_one_axis(tmp_path):
    rec = _record(1.1, FakeState())
    img = timing_png(rec, "TEST")
    assert img.ndim == 3 and img.shape[2] == 3 and img.shape[1] == 1400
    # one histogram band per module, each drawn in its own colour
    from splice.report.plot import PALETTE
    for i in range(3):
        assert (img == np.array(PALETTE[i], np.uint8)).all(axis=2).sum() > 100
    path = write_timing_png(rec, tmp_path / "t.png", "TEST")
    back = decode((tmp_path / "t.png").read_bytes())
    assert back.shape == img.shape and encode(img) == (tmp_path / "t.png").read_bytes() and path.endswith("t.png")


def test_the_png_of_identical_samples_does_not_divide_by_zero():
    rec = measure(FakeDevice({n: 1.0 for n in NAMES}), NAMES, "original", "control",
                  TimingOptions(runs=10, resamples=100))
    img = timing_png(rec)
    assert img.shape[0] > 300
