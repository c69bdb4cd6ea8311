"""The leaderboard as data: what ``splice tune --json`` prints and ``leaderboard.json`` holds,
and what splice.report renders.  Built from the store alone, so a finished, killed or resumed
run gives the same board for the same rows."""
from __future__ import annotations

import json

from .steps import NOT_PROVEN, why_not_proven
from .store import Store
from .timer import aa_summary


def _rank_key(r: dict) -> tuple:
    """Timed variants by ratio, then the screened ones not timed (a CPU-only run), then those
    dropped after some timing (by ratio), then the other dropped ones, then the pending."""
    ratio = r["ratio"] if r["ratio"] is not None else float("inf")
    group = {"timed": 0, "screened": 1, "pending": 4}.get(r["state"], 2 if r["ratio"] is not None else 3)
    return (group, ratio, r["idx"])


def row_json(r: dict) -> dict:
    res = r["resources"] or {}
    same = None if r["identical"] is None else bool(r["identical"])
    return {"key": r["key"], "index": r["idx"], "points": r["points"], "choices": r["choices"],
            "recipe": r["recipe"], "state": r["state"], "screen_stage": r["stage"], "verify": r["verdict"],
            "verify_why": why_not_proven(r["cuts"]) if r["verdict"] == NOT_PROVEN else "", "cuts": r["cuts"],
            "registers": res.get("registers"), "spill_stores": res.get("spill_stores"),
            "spill_loads": res.get("spill_loads"), "stack": res.get("stack"), "identical": same,
            "harness": r["harness"], "ratio": r["ratio"], "low": r["low"], "high": r["high"],
            "verdict": r["timing"], "rounds": r["rounds"], "asked": r["asked"], "withheld": r["withheld"],
            "rung": r["rung"], "dropped": r["dropped"],
            "pairs": r["pairs"], "seconds": r["seconds"]}


def timing_json(calls: list) -> dict:
    """The GPU batches in a few figures: how many (and how many timed anything: a batch that
    stopped at a fault timed nothing), why their rounds stopped, how many had their verdicts
    withheld (the device throttled) and why, the method of the last one."""
    stopped: dict = {}
    withheld = []
    method = None
    timed = 0
    for c in calls:
        rec = json.loads(c.get("record") or "{}")
        timed += bool(rec.get("rounds"))
        if rec.get("stopped"):
            stopped[rec["stopped"]] = stopped.get(rec["stopped"], 0) + 1
        if rec.get("withheld"):
            withheld.append(rec["withheld"])
        method = rec.get("method") or method
    return {"batches": len(calls), "timed": timed, "stopped": stopped, "withheld": len(withheld),
            "withheld_why": withheld[:1], "method": method}


def board(store: Store, summary: dict) -> dict:
    rows = sorted(store.rows(), key=_rank_key)
    aa = store.aa_pairs()
    counts: dict = {}
    for r in rows:
        counts[r["state"]] = counts.get(r["state"], 0) + 1
    calls = store.calls()
    return {"store": str(store.path), "arch": store.get_meta("arch"), "original": store.get_meta("original"),
            "aa": aa_summary(aa) if aa else None, "counts": counts, "best": summary.get("best"),
            "size": summary.get("size"), "points": summary.get("points"), "calls": len(calls),
            "timing": timing_json(calls), "timing_seconds": summary.get("timing_seconds"),
            "variants": [row_json(r) for r in rows]}
