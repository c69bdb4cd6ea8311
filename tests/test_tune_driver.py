"""splice.tune.driver: what a screen result does to a variant's row."""
from __future__ import annotations

import pytest

from splice.tune.driver import record_screen
from splice.tune.embedded import Died
from splice.tune.steps import DIFFERENT, EQUAL, NOT_PROVEN, ScreenResult
from splice.tune.store import Store


def row_after(tmp_path, res) -> dict:
    st = Store(tmp_path / "tune.db")
    st.add("k", 0, {})
    record_screen(st, "k", res)
    return st.get("k")


def test_survivors_and_drops(tmp_path):
    assert row_after(tmp_path / "a", ScreenResult("k", "done", EQUAL))["state"] == "screened"
    assert row_after(tmp_path / "b", ScreenResult("k", "done", NOT_PROVEN))["state"] == "screened"
    r = row_after(tmp_path / "c", ScreenResult("k", "verify", DIFFERENT, (
        {"cut": 2, "title": "phase 8", "verdict": "proved different", "reason": "d3: add vs sub"},)))
    assert r["state"] == "dropped" and r["dropped"] == "verify: proved different (cut 2 phase 8: d3: add vs sub)"
    r = row_after(tmp_path / "d", ScreenResult("k", "apply", error="r.yaml:3:5: cut 1: unknown key\n  line"))
    assert r["dropped"] == "apply: r.yaml:3:5: cut 1: unknown key"
    r = row_after(tmp_path / "e", Died("its worker process died 2 times, the last time running it alone"))
    assert r["state"] == "dropped" and r["stage"] == "worker" and "running it alone" in r["dropped"]


def test_a_ptxas_time_out_leaves_the_variant_for_the_next_run(tmp_path):
    r = row_after(tmp_path, ScreenResult("k", "timeout", EQUAL, error="ptxas timed out after 120s on k (sm_90)"))
    assert r["state"] == "pending" and r["stage"] == "timeout" and "timed out" in r["error"]


class Inline:
    """An executor in this process (the driver's four calls, nothing spawned): the fake screen
    and the fake bench on the timing module's simulated device."""

    def __init__(self):
        from types import SimpleNamespace

        self.cpu = SimpleNamespace(map=lambda fn, items, key: ((it, fn(it)) for it in items))
        self.bench = None
        self.batches = 0

    def device(self) -> dict:
        from tests.tune_fakes import FakeBench

        return {**FakeBench.describe(), "workers": 1}

    def start_gpus(self, spec) -> None:
        from tests.tune_fakes import FakeBench

        self.bench = FakeBench(spec)

    def time(self, batches: list):
        """Each batch; after a fault, a fresh bench for the rest of it (as the executors do)."""
        from dataclasses import replace

        from tests.tune_fakes import FakeBench

        work = list(batches)
        while work:
            b = work.pop(0)
            self.batches += 1
            res = self.bench.run(b)
            if res.lost:
                self.bench = FakeBench(self.bench.spec)
            if res.undone:
                work.append(replace(b, candidates=tuple(c for c in b.candidates if c.key in res.undone)))
            yield replace(res, worker="inline")

    def states(self) -> list:
        return []

    def close(self) -> None:
        pass


def inline_run(out, **search):
    import dataclasses
    from pathlib import Path

    from splice.tune import driver
    from splice.tune.results import board
    from splice.tune.space import load_space
    from tests import tune_fakes

    space = load_space(str(Path(__file__).resolve().parents[1] / "tests/data/tune/qkv.yaml"))
    s = dataclasses.replace(space.search, **search)
    st, ex = Store(out / "tune.db"), Inline()
    try:
        summary = driver.run(space, st, ex, driver.Options(out, True, s, "tests.tune_fakes:FakeBench",
                                                           tune_fakes.fake_screen))
        return summary, st.rows(), board(st, summary), ex.batches
    finally:
        st.close()


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_rounds_are_caps_and_a_precise_variant_is_not_timed_again(tmp_path):
    """The last rung asks for 60 rounds; the timing stops once every interval is 2 % wide: the
    finalists have fewer rounds than asked, and a second run over the store times nothing."""
    summary, rows, b, batches = inline_run(tmp_path, final_rounds=60, ci_width=0.02)
    final = [r for r in rows if r["state"] == "timed"]
    assert final and all(r["asked"] >= 60 > r["rounds"] >= 20 for r in final)
    assert b["timing"]["stopped"].get("precision", 0) >= 1 and summary["best"] is not None
    again = inline_run(tmp_path, final_rounds=60, ci_width=0.02)
    assert again[3] == 0 and again[0]["best"]["key"] == summary["best"]["key"]


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_a_throttled_device_withholds_every_verdict_it_timed(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNE_FAKE_THROTTLE", "0x8")
    summary, rows, b, _ = inline_run(tmp_path)
    timed = [r for r in rows if r["ratio"] is not None]
    assert timed and all(r["timing"] == "withheld" and "hw_slowdown" in r["withheld"] for r in timed)
    assert b["timing"]["withheld"] == b["timing"]["timed"] > 0 and summary["best"]["verdict"] == "withheld"
