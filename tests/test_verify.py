"""splice verify: the shipped recipes, the wrong recipe, identity cuts of both stand-ins, and the
mutant corpus of tests/data/verify (every mutant different or not proven, never equal)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from splice.cli import main
from splice.cut.pipeline import run_apply
from splice.verify.compare import DIFFERENT, EQUAL, NOT_PROVEN, verify_plan

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "verify"
EXPECT = {"equal": EQUAL, "different": DIFFERENT, "not proven": NOT_PROVEN}


def _verify(recipe):
    plan, _v, _o, _t = run_apply(str(recipe), ptxas=False)
    return verify_plan(plan)


@pytest.mark.parametrize("recipe", ["recipes/enc5_p8.yaml", "recipes/dec1_p8.yaml",
                                    "tests/data/recipes/enc5_p8_call.yaml",
                                    "tests/data/recipes/enc5_p8_call_shared.yaml"])
def test_shipped_recipes_proved_equal(recipe):
    res = _verify(ROOT / recipe)
    assert [r.verdict for r in res] == [EQUAL] * len(res)
    assert all(r.rows and all(x.equal for x in r.rows) for r in res)


def test_wrong_recipe_proved_different_names_the_swap():
    [r] = _verify(ROOT / "tests/data/recipes/enc5_p8_wrong.yaml")
    assert r.verdict == DIFFERENT
    d0 = next(x for x in r.differing if x.name == "d0")
    assert d0.message == "d0: mma B operand is (b2, b3) here, (b0, b1) in the original"
    assert d0.where_original.startswith("s1186 ") and "enc5_p8_wrong.ptx:" in d0.where_native


def test_cli_exit_status_and_json(capsys):
    assert main(["verify", str(ROOT / "recipes/enc5_p8.yaml")]) == 0
    capsys.readouterr()
    assert main(["verify", str(ROOT / "tests/data/recipes/enc5_p8_wrong.yaml"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == 1 and data["cuts"][0]["verdict"] == DIFFERENT
    assert main(["verify", str(ROOT / "recipes/enc5_qkv_wave.yaml"), "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert {c["verdict"] for c in data["cuts"]} == {NOT_PROVEN}


def test_apply_reports_verify(tmp_path, capsys):
    out = tmp_path / "o.ptx"
    assert main(["apply", str(ROOT / "tests/data/recipes/enc5_p8_wrong.yaml"), "--no-ptxas", "-o",
                 str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verify"][0]["verdict"] == DIFFERENT
    assert main(["apply", str(ROOT / "tests/data/recipes/enc5_p8_wrong.yaml"), "--no-ptxas", "-o",
                 str(out), "--verify-strict"]) == 1


def _mutants():
    return sorted((DATA / "epi").glob("*.ptx"))


@pytest.mark.parametrize("native", _mutants(), ids=lambda p: p.stem)
def test_mutant_corpus(native, tmp_path):
    text = native.read_text()
    expect = EXPECT[re.search(r"verify-expect: ([a-z ]+?)(?: \(|$)", text, re.M).group(1).strip()]
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(DATA / "kernel.ptx"),
                                      "cuts": [{"statements": "s9-s30", "native": str(native)}]}))
    [r] = _verify(recipe)
    if native.stem.startswith("m"):
        assert r.verdict != EQUAL, r
    assert r.verdict == expect, (r.verdict, r.reason)


def test_corpus_size():
    assert sum(1 for p in _mutants() if p.stem.startswith("m")) >= 26
    assert sum(1 for p in _mutants() if p.stem.startswith("v")) >= 8


def _identity(tmp_path, module, what):
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.errors import SpliceError

    k = load_kernel(str(ROOT / module))
    cuts = []
    if what == "phases":
        for ph in k.phases:
            (tmp_path / f"p{ph.index}.ptx").write_text(extract(k, phase=ph.index)["text"])
            cuts.append({"phase": ph.index, "native": f"p{ph.index}.ptx"})
    else:
        for e in k.epilogues:
            (tmp_path / f"e{e.first}.ptx").write_text(extract(k, statements=(e.first, e.last))["text"])
            cuts.append({"statements": f"s{e.first}-s{e.last}", "native": f"e{e.first}.ptx"})
    dropped = []
    while True:
        (tmp_path / "r.yaml").write_text(yaml.safe_dump({"module": str(ROOT / module), "cuts": cuts}))
        try:
            return _verify(tmp_path / "r.yaml"), dropped
        except SpliceError as exc:   # an epilogue apply cannot cut (splits a scope, writes a live-in)
            mt = re.search(r"cut (\d+)", exc.message)
            gone = cuts[int(mt.group(1)) - 1] if mt else \
                next(c for c in cuts if c["native"] == Path(str(exc.path)).name)
            cuts.remove(gone)
            dropped.append(gone)


@pytest.mark.parametrize("module", ["corpus/enc5.ptx", "corpus/dec1.ptx"])
def test_identity_phases_proved_equal(module, tmp_path):
    res, dropped = _identity(tmp_path, module, "phases")
    assert not dropped and res
    assert [r.verdict for r in res] == [EQUAL] * len(res)


@pytest.mark.parametrize("module", ["corpus/enc5.ptx", "corpus/dec1.ptx"])
def test_identity_epilogues(module, tmp_path):
    res, _dropped = _identity(tmp_path, module, "epilogues")
    assert len(res) >= 16
    for r in res:
        assert r.verdict == EQUAL or (r.verdict == NOT_PROVEN and r.reason.startswith("loop")), r.reason
