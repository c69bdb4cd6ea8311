"""The fixpoint engine (splice/analysis/fixpoint.py): the schedules, the work saved, the bound."""
from __future__ import annotations

import random

import pytest

from splice.analysis.fixpoint import PRIORITY, NoFixpoint, reader_index, solve


def _round_robin(stmts, seeds):
    """The loop the analyses had: sweep every statement until a sweep changes nothing."""
    taint = {s: s for s in seeds}
    changed, sweeps = True, 0
    while changed:
        changed, sweeps = False, sweeps + 1
        for defs, uses in stmts:
            src = next((taint[u] for u in uses if u in taint), None)
            for d in defs if src is not None else ():
                if d not in taint:
                    taint[d] = src
                    changed = True
    return taint, sweeps


def _engine(stmts, seeds):
    taint = {s: s for s in seeds}

    def step(i):
        defs, uses = stmts[i]
        src = next((taint[u] for u in uses if u in taint), None)
        grew = [d for d in defs if src is not None and d not in taint]
        for d in grew:
            taint[d] = src
        return grew

    runs = solve(len(stmts), step, reader_index([u for _d, u in stmts]))
    return taint, runs


def _program(rng, n, regs):
    return [([f"r{rng.randrange(regs)}"], [f"r{rng.randrange(regs)}" for _ in range(rng.randrange(3))])
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_the_sweep_schedule_gives_what_round_robin_gave(seed):
    """Backward edges (a use before its definition) need several sweeps; the first-writer-wins
    label (which seed a register is tainted by) is the round-robin one exactly."""
    rng = random.Random(seed)
    stmts = _program(rng, 60, 25)
    seeds = [f"r{rng.randrange(25)}" for _ in range(2)]
    want, sweeps = _round_robin(stmts, seeds)
    got, runs = _engine(stmts, seeds)
    assert got == want
    assert runs <= sweeps * len(stmts)


def test_a_statement_runs_again_only_when_what_it_reads_changed():
    # a chain written backwards: r9 <- r8 <- ... <- r0, each statement before its source's
    chain = [([f"r{k + 1}"], [f"r{k}"]) for k in range(9)][::-1]
    filler = [([f"x{k}"], [f"y{k}"]) for k in range(200)]
    stmts = chain + filler
    taint, runs = _engine(stmts, ["r0"])
    assert taint["r9"] == "r0"
    _want, sweeps = _round_robin(stmts, ["r0"])
    assert sweeps == 10                         # round robin: 10 sweeps of 209 statements
    assert runs == len(stmts) + 8               # the engine: one sweep, then each link once


def test_priority_tries_the_rules_again_from_the_first():
    log = []
    state = {"a": 2, "b": 2}

    def rule(i):
        name = "ab"[i]
        log.append(name)
        if state[name]:
            state[name] -= 1
            return ("state",)
        return ()

    solve(2, rule, order=PRIORITY)
    assert log == ["a", "a", "a", "b", "a", "b", "a", "b"]


def test_a_transfer_that_never_settles_is_refused_past_its_bound():
    n = {"v": 0}

    def grow(_i):
        n["v"] += 1
        return ("v",)

    with pytest.raises(NoFixpoint):
        solve(1, grow, sweeps=5)


def test_an_unknown_schedule_is_refused():
    with pytest.raises(ValueError):
        solve(1, lambda i: (), order="random")
