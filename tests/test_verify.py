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


_KERNELS: dict = {}


def _verify(recipe, module=None):
    """verify_plan of a recipe; with ``module``, the parsed kernel is kept between calls (the
    mutant and identity tests plan many recipes against one stand-in)."""
    if module is None:
        plan, _v, _o, _t = run_apply(str(recipe), ptxas=False)
        return verify_plan(plan)
    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan

    if module not in _KERNELS:
        _KERNELS[module] = load_kernel(str(ROOT / module))
    r = load_recipe(str(recipe), search_path(str(recipe)), None)
    return verify_plan(make_plan(r, _KERNELS[module]))


@pytest.mark.parametrize("recipe", ["recipes/enc5_p8.yaml", "recipes/dec1_p8.yaml",
                                    "tests/data/recipes/enc5_p8_call.yaml",
                                    "tests/data/recipes/enc5_p8_call_shared.yaml",
                                    "recipes/perf/dec1_fence.yaml", "recipes/gemm_f16f32_p1.yaml",
                                    "recipes/enc5_act_epilogues.yaml"])
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


@pytest.mark.parametrize("recipe,verdict", [
    ("tests/data/recipes/gemm_f16f32_p1_wrong.yaml", DIFFERENT),
    ("tests/data/recipes/triton_matmul_p1_wrong.yaml", DIFFERENT),
    ("tests/data/recipes/dec1_e9_wrong_rounding.yaml", NOT_PROVEN),
    ("tests/data/recipes/dec1_e9_wrong_shuffle.yaml", NOT_PROVEN),
])
def test_shipped_wrong_recipes_never_equal(recipe, verdict):
    res = _verify(ROOT / recipe)
    assert {r.verdict for r in res} == {verdict}
    if verdict == DIFFERENT:
        assert res[0].reason.startswith("acc0: mma ")


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
    return sorted((DATA / "epi").glob("*.ptx")) + sorted((DATA / "p8").glob("*.ptx"))


def _expect(native):
    return EXPECT[re.search(r"verify-expect: ([a-z ]+?)(?: \(|$)", native.read_text(), re.M).group(1).strip()]


@pytest.mark.parametrize("native", _mutants(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_mutant_corpus(native, tmp_path):
    """Every mutant (m*, p*) is different or not proven, never equal; legal variants (v*) equal."""
    if native.parent.name == "epi":
        module, cut = "tests/data/verify/kernel.ptx", {"statements": "s9-s30"}
    else:
        module, cut = "corpus/enc5.ptx", {"phase": 8}
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(ROOT / module), "cuts": [{**cut, "native": str(native)}]}))
    [r] = _verify(recipe, module)
    if not native.stem.startswith("v"):
        assert r.verdict != EQUAL, r
    assert r.verdict == _expect(native), (r.verdict, r.reason)


@pytest.mark.parametrize("native", sorted((DATA / "scope").glob("*.ptx")), ids=lambda p: p.stem)
def test_nested_scope_identity(native, tmp_path):
    """A register declared in a nested { } scope is another register: the flattened identity
    extract of zluda's block.ptx is proved different, the scoped one equal."""
    module = "tests/data/ptx/thirdparty/zluda/ptx/src/test/spirv_run/block.ptx"
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(ROOT / module),
                                      "cuts": [{"statements": "s1-s7", "native": str(native)}]}))
    [r] = _verify(recipe, module)
    assert r.verdict == _expect(native), r.reason
    if r.verdict == DIFFERENT:
        assert r.reason.startswith("memory: a store writes a definitely different value")


def test_corpus_size():
    mutants = [p for p in _mutants() if not p.stem.startswith("v")]
    assert len(mutants) >= 30
    assert sum(1 for p in _mutants() if p.stem.startswith("v")) >= 9


def test_issue_example_message(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(ROOT / "corpus/enc5.ptx"), "cuts": [
        {"phase": 8, "native": str(DATA / "p8" / "p01_c_halves_swapped.ptx")}]}))
    [r] = _verify(recipe, "corpus/enc5.ptx")
    assert r.reason == "d10: mma C operand is (c11, c10) here, (c10, c11) in the original"


def _identity(tmp_path, module, what):
    """Extract every phase (or epilogue) and verify a recipe applying it unchanged: one recipe
    per cut, so a cut apply refuses (an epilogue that splits a { } scope, or whose extract
    writes a live-in) is counted and skipped without re-planning the others."""
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.errors import SpliceError

    k = _KERNELS.get(module) or load_kernel(str(ROOT / module))
    _KERNELS[module] = k
    ranges = [(ph.first, ph.last, {"phase": ph.index}) for ph in k.phases] if what == "phases" else \
        [(e.first, e.last, {"statements": f"s{e.first}-s{e.last}"}) for e in k.epilogues]
    results, refused = [], []
    for first, last, sel in ranges:
        native = tmp_path / f"s{first}.ptx"
        kw = {"phase": sel["phase"]} if "phase" in sel else {"statements": (first, last)}
        native.write_text(extract(k, **kw)["text"])
        recipe = tmp_path / f"s{first}.yaml"
        recipe.write_text(yaml.safe_dump({"module": str(ROOT / module), "cuts": [{**sel, "native": native.name}]}))
        try:
            results += _verify(recipe, module)
        except SpliceError as exc:
            refused.append((first, exc.message))
    return results, refused


@pytest.mark.slow
@pytest.mark.parametrize("module", ["corpus/enc5.ptx", "corpus/dec1.ptx"])
def test_identity_phases_proved_equal(module, tmp_path):
    res, dropped = _identity(tmp_path, module, "phases")
    assert not dropped and res
    assert [r.verdict for r in res] == [EQUAL] * len(res)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["corpus/enc5.ptx", "corpus/dec1.ptx"])
def test_identity_epilogues(module, tmp_path):
    res, _dropped = _identity(tmp_path, module, "epilogues")
    assert len(res) >= 16
    for r in res:
        assert r.verdict == EQUAL or (r.verdict == NOT_PROVEN and r.reason.startswith("loop")), r.reason
