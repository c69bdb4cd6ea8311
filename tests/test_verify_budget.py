"""splice verify in bounded time: the explanation is memoised on the hash-consed DAG (Triton's
sm_90 wgmma phase with one descriptor bit changed, or scale-d 0, did not finish in 15 minutes),
and a budget per cut (``--timeout``) ends anything longer as *not proven (budget)*.  The times
themselves are bench/verify_budget.py's business; these check verdicts and the budget flag."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from splice.cli import main
from splice.verify.compare import EQUAL, NOT_PROVEN

ROOT = Path(__file__).resolve().parents[1]
TRITON = "tests/data/ptx/modern/triton_matmul_wgmma_sm90a.ptx"


@pytest.fixture(scope="module")
def vb():
    sys.path.insert(0, str(ROOT / "bench"))
    import verify_budget

    return verify_budget


def _recipe(tmp_path, native: str, name: str = "n") -> Path:
    (tmp_path / f"{name}.ptx").write_text(native)
    recipe = tmp_path / f"{name}.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(ROOT / TRITON), "cuts": [{"phase": 1, "native": f"{name}.ptx"}]}))
    return recipe


def test_issue_mutants_finish_within_the_default_budget(vb, tmp_path, capsys):
    """One descriptor bit, and scale-d 0: a verdict (not the budget), never equal."""
    native = vb.extracted(TRITON)
    muts = dict(vb.one_edit_mutants(native))
    picked = [n for n in muts if n.endswith("4611686293305294848 -> 4611686293305294849")][:2] + \
        [n for n in muts if n.endswith("scale-d 0")][:2]
    assert len(picked) == 4
    for i, name in enumerate(picked):
        assert main(["verify", str(_recipe(tmp_path, muts[name], f"m{i}")), "--json"]) == 3, name
        cut = json.loads(capsys.readouterr().out)["cuts"][0]
        assert cut["verdict"] == NOT_PROVEN and not cut["budget"], (name, cut["reason"])


def test_every_wgmma_line_edit_finishes_within_the_default_budget(vb, tmp_path):
    """Every one-edit mutant of the wgmma lines (each immediate's bits, scale-d, the descriptors
    exchanged, the line dropped) ends with a verdict of its own."""
    from splice.cut.pipeline import run_apply
    from splice.verify.compare import verify_plan

    native = vb.extracted(TRITON)
    wg = [i + 1 for i, j in enumerate(vb.body_lines(native)) if "wgmma.mma_async" in native.splitlines()[j]]
    muts = [(n, t) for n, t in vb.one_edit_mutants(native) if any(n.startswith(f"line {k}:") or n == f"line {k} dropped"
                                                                  for k in wg)]
    assert len(muts) >= 4 * 8
    for i, (name, text) in enumerate(muts):
        plan, *_ = run_apply(str(_recipe(tmp_path, text, f"w{i}")), ptxas=False)
        [r] = verify_plan(plan)
        assert not r.budget and r.verdict != EQUAL, (name, r.verdict, r.reason)


def test_a_budget_too_small_is_not_proven_budget(tmp_path, capsys):
    """Past --timeout the cut is not proven with the reason (exit 3), whatever it would be."""
    recipe = ROOT / "tests" / "data" / "recipes" / "enc5_p8_wrong.yaml"
    assert main(["verify", str(recipe), "--json", "--timeout", "1e-9"]) == 3
    cut = json.loads(capsys.readouterr().out)["cuts"][0]
    assert cut["verdict"] == NOT_PROVEN and cut["budget"] and cut["reason"].startswith("budget: verify stopped after")
    assert main(["verify", str(recipe), "--timeout", "1e-9"]) == 3
    assert "not proven (budget)" in " ".join(capsys.readouterr().out.split())


def test_apply_verifies_within_its_timeout(tmp_path, capsys):
    recipe, out = ROOT / "tests" / "data" / "recipes" / "enc5_p8_wrong.yaml", tmp_path / "o.ptx"
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--timeout", "1e-9", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert out.exists() and data["verify"][0]["budget"] and data["verify"][0]["verdict"] == NOT_PROVEN


def test_the_budget_reaches_the_explanation():
    """A clock that runs out while the difference is explained stops it there."""
    from splice.verify.budget import Budget, BudgetExceeded
    from splice.verify.canon import Graph
    from splice.verify.explain import Explainer

    g = Graph()
    a, b = g.leaf("in", "%a"), g.leaf("in", "%b")
    x, y = a, b
    for _ in range(200):
        x, y = g.op("add.f32", (x, a)), g.op("add.f32", (y, a))
    ticks = iter(range(10**6))
    budget = Budget(0.5, clock=lambda: next(ticks))      # one "second" per clock read
    with pytest.raises(BudgetExceeded):
        Explainer(g, budget).difference(x, y)
