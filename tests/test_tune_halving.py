"""splice.tune.halving: rounds per rung, who goes on, and why the others stop."""
from __future__ import annotations

from splice.tune.halving import Standing, final, promote, target
from splice.tune.space import Search


def test_rounds_grow_by_eta_and_the_last_rung_gets_final_rounds():
    s = Search(rounds=3, eta=2, final=4, final_rounds=30)
    assert [target(s, r, 64) for r in range(4)] == [3, 6, 12, 24]
    assert target(s, 2, 4) == 30 and final(s, 4) and not final(s, 5)
    assert target(Search(rounds=3, eta=3, final=2, final_rounds=10), 3, 2) == 81   # never fewer than the rung's


def test_promote_keeps_the_best_and_says_why_each_other_stops():
    s = Search(eta=3, final=2)
    st = [Standing(f"k{i}", 1.0 - i / 100, 0.99 - i / 100, 1.01 - i / 100) for i in range(7)]
    kept, dropped = promote(s, 1, st)
    assert kept == ["k6", "k5", "k4"]                      # ceil(7 / 3), the lowest ratios
    assert set(dropped) == {"k0", "k1", "k2", "k3"}
    assert dropped["k3"] == "halving: rung 1, ranked 4 of 7 (the best 3 went on); ratio 0.9700 [0.9600, 0.9800]"
    kept, dropped = promote(s, 0, st[:3])
    assert len(kept) == 2 and len(dropped) == 1            # never fewer than final


def test_ties_go_to_the_narrower_upper_bound():
    kept, _ = promote(Search(eta=2, final=1), 0, [Standing("a", 0.9, 0.8, 1.0), Standing("b", 0.9, 0.85, 0.95)])
    assert kept == ["b"]
