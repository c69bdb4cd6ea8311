"""splice.tune.driver: what a screen result does to a variant's row."""
from __future__ import annotations

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
