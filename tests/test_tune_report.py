"""splice.report's tune screens: the leaderboard table, the live view, the plot."""
from __future__ import annotations

import io

from rich.console import Console

from splice.report.plot_tune import tune_png
from splice.report.tune import LiveView, print_board


def board(timed: bool = True) -> dict:
    rows = []
    for i, (ratio, regs) in enumerate([(0.86, 255), (0.91, 254), (None, None)]):
        t = timed and ratio is not None
        rows.append({"key": f"{i}" * 64, "choices": {"fence@5": ["start", "end", "both"][i]}, "verify": "equal",
                     "registers": regs, "spill_stores": 8, "spill_loads": 16, "ratio": ratio if t else None,
                     "low": ratio - 0.01 if t else None, "high": ratio + 0.01 if t else None,
                     "verdict": "faster" if t else "", "rounds": 40 if t else 0, "state": "timed" if t else "dropped",
                     "screen_stage": "done",
                     "dropped": "" if t else "halving: rung 0, ranked 3 of 3 (the best 2 went on); ratio 0.9"})
    return {"store": "x/tune.db", "arch": "sm_90", "original": {"resources": {"registers": 255}},
            "aa": {"ratio": 1.0, "low": 0.998, "high": 1.002, "rounds": 40}, "counts": {"timed": 2, "dropped": 1},
            "best": {"key": "0" * 64, "recipe": "x/best.yaml", "ratio": 0.86, "low": 0.85, "high": 0.87,
                     "verdict": "faster"} if timed else None, "variants": rows}


def test_the_board_table():
    out = io.StringIO()
    print_board(board(), Console(file=out, width=200))
    text = out.getvalue()
    assert "0.8600 [0.8500, 0.8700]" in text and "best 000000000000" in text
    assert "halving: rung 0, ranked 3 of 3 (the best 2 went on)" in text and "; ratio 0.9" not in text
    assert "A/A (the original against a second copy of itself): 1.0000 [0.9980, 1.0020] over 40 rounds" in text


def test_the_plot_has_both_panels_and_none_without_timing():
    img = tune_png(board())
    assert img.shape == (840, 1200, 3) and img.dtype.name == "uint8"
    assert tune_png(board(timed=False)) is None


def test_the_live_view_follows_the_run():
    v = LiveView(lambda: [("gpu0", "rung 1: 8 variants x 8 rounds")], Console(file=io.StringIO(), width=120))
    v.note("variants", distinct=64)
    v.note("screen", total=64, done=10)
    v.note("screened", key="k", row={"state": "dropped"})
    v.note("timed", key="k", row={"key": "a" * 64, "ratio": 0.9, "low": 0.89, "high": 0.91})
    out = io.StringIO()
    Console(file=out, width=120).print(v.render())
    text = out.getvalue()
    assert "screened 11/64, dropped 1" in text and "aaaaaaaaaaaa 0.9000 [0.8900, 0.9100]" in text
    assert "rung 1: 8 variants x 8 rounds" in text
