"""splice.tune.steps: one variant's CPU screen is what apply, verify and the probe's build
say of its recipe -- a proved-equal variant gets its cubin and ptxas' figures, a proved-different
one no compile, a recipe apply refuses its message."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.tune.steps import DIFFERENT, EQUAL, NOT_PROVEN, ScreenJob, screen, verdict_of, why_not_proven
from tests.conftest import TINY_SWAPPED

ROOT = Path(__file__).resolve().parents[1]
TRITON = ROOT / "recipes/native/triton_matmul_p1.ptx"


def recipe(tmp_path, native_text: str) -> str:
    (tmp_path / "native").mkdir(exist_ok=True)
    (tmp_path / "native/p1.ptx").write_text(native_text)
    module = ROOT / "corpus/triton/matmul_sm80.ptx"
    (tmp_path / "r.yaml").write_text(f"module: {module}\nentry: matmul_kernel\narch: sm_80\n"
                                     "cuts:\n  - phase: 1\n    native: native/p1.ptx\n")
    return str(tmp_path / "r.yaml")


@pytest.mark.needs("ptxas")
def test_an_equal_variant_gets_its_cubin_and_resources(tmp_path):
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, TRITON.read_text()), "sm_90", str(tmp_path / "store")))
    assert res.stage == "done" and res.verdict == EQUAL and res.survives
    assert Path(res.cubin).read_bytes()[:4] == b"\x7fELF" and len(res.cubin_sha) == 64
    assert res.resources["registers"] > 0 and res.resources["spill_stores"] == 0
    assert set(res.seconds) == {"apply", "verify", "ptxas"}


def test_a_different_variant_costs_no_compile(tmp_path):
    lines = TRITON.read_text().splitlines()
    mma = [i for i, ln in enumerate(lines) if ln.startswith("mma")]
    lines[mma[0]], lines[mma[1]] = lines[mma[1]], lines[mma[0]]     # one accumulator's k-steps swapped
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, "\n".join(lines) + "\n"), "sm_90", str(tmp_path / "store")))
    assert res.stage == "verify" and res.verdict == DIFFERENT and not res.cubin and not res.survives
    assert res.cuts[0]["verdict"] == "proved different"


def test_an_apply_error_is_the_result(tmp_path):
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, TINY_SWAPPED), "sm_90", str(tmp_path / "store")))
    assert res.stage == "apply" and ("r.yaml" in res.error or "p1.ptx" in res.error)
    assert not res.survives


def test_a_ptxas_timeout_is_a_timeout_not_a_refusal(tmp_path, monkeypatch):
    """ptxas stopped by its time limit judged nothing: the variant's stage is 'timeout' (it stays
    pending and is screened again), not 'ptxas' (a refusal that drops it).  The fake ptxas here
    sleeps past a 1 s limit."""
    tool = tmp_path / "ptxas"
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\nexec sleep 60\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    monkeypatch.setenv("SPLICE_PTXAS_TIMEOUT", "1")
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, TRITON.read_text()), "sm_90", str(tmp_path / "store")))
    assert res.stage == "timeout" and "timed out after 1 s" in res.error and not res.cubin, (res.stage, res.error)


def test_verdict_of_the_cuts():
    assert verdict_of(["proved equal", "proved equal"]) == EQUAL
    assert verdict_of(["proved equal", "not proven"]) == NOT_PROVEN
    assert verdict_of(["not proven", "proved different"]) == DIFFERENT
    assert verdict_of(["not proven (budget)"]) == NOT_PROVEN
    assert verdict_of([]) == NOT_PROVEN


def test_a_verify_that_fails_inside_is_not_proven(tmp_path, monkeypatch):
    """An internal error of verify (splice verify's exit status 4) proves nothing either way: the
    variant is not proven, the cut recorded as verify's internal error; the GPU harness decides."""
    import splice.verify.compare as compare

    def broken(plan, timeout):
        raise TypeError("list indices must be integers or slices, not tuple")

    monkeypatch.setattr(compare, "verify_plan", broken)
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, TRITON.read_text()), "sm_90", str(tmp_path / "store")))
    assert res.verdict == NOT_PROVEN and res.cuts[0]["verdict"] == compare.INTERNAL
    assert "internal error in splice verify (TypeError" in res.cuts[0]["reason"]
    assert why_not_proven(res.cuts) == "internal error"
    assert res.stage in ("done", "ptxas", "timeout")


def test_an_internal_error_in_one_cut_is_that_cut_s(tmp_path, monkeypatch):
    """verify_plan's own per-cut internal error (a bug inside the checker of one cut) reaches the
    variant as not proven, naming the cut."""
    import splice.verify.compare as compare

    def boom(*a, **k):
        raise KeyError("a register the checker never saw")

    monkeypatch.setattr(compare, "_prove", boom)
    res = screen(ScreenJob("k" * 64, recipe(tmp_path, TRITON.read_text()), "sm_90", str(tmp_path / "store")))
    assert res.verdict == NOT_PROVEN and res.cuts[0]["verdict"] == compare.INTERNAL and res.cuts[0]["cut"] == 1
    assert why_not_proven(res.cuts) == "internal error: cut 1"


def test_verify_gets_the_timeout_and_a_spent_budget_is_not_proven(tmp_path, monkeypatch):
    import splice.verify.compare as compare

    seen = []
    real = compare.verify_plan

    def spy(plan, timeout):
        seen.append(timeout)
        return real(plan, timeout)

    monkeypatch.setattr(compare, "verify_plan", spy)
    r = recipe(tmp_path, TRITON.read_text())
    screen(ScreenJob("k" * 64, r, "sm_90", str(tmp_path / "store"), verify_timeout=7.5))
    screen(ScreenJob("k" * 64, r, "sm_90", str(tmp_path / "store")))
    from splice.verify.budget import DEFAULT_SECONDS

    assert seen == [7.5, DEFAULT_SECONDS]

    def spent(plan, cut, cache, budget, res):
        from splice.verify.budget import BudgetExceeded

        raise BudgetExceeded(budget.seconds, " (evaluating the original; --timeout)")

    monkeypatch.setattr(compare, "_prove", spent)
    res = screen(ScreenJob("k" * 64, r, "sm_90", str(tmp_path / "store"), verify_timeout=0.5))
    assert res.verdict == NOT_PROVEN and res.cuts[0]["budget"] and why_not_proven(res.cuts) == "budget: cut 1"
