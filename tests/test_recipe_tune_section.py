"""A recipe that holds its own ``tune:`` section: ``splice apply`` and ``splice verify`` take it
as the recipe it is (the section ignored: the spliced module is the one the recipe without it
gives), ``splice tune`` reads the section from the recipe itself and validates it at its line."""
from __future__ import annotations

import json
from pathlib import Path

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "recipes/triton_matmul_p1.yaml"


def recipe(tmp_path, tune: str, name: str = "r.yaml") -> Path:
    """The Triton phase recipe, its paths made absolute, with ``tune`` appended."""
    text = BASE.read_text().replace("module: triton/", f"module: {ROOT / 'corpus/triton'}/")
    text = text.replace("native: native/", f"native: {ROOT / 'recipes/native'}/")
    p = tmp_path / name
    p.write_text(text + tune)
    return p


TUNE = "tune:\n  space:\n    - cuts: 1\n      fence: [none, start]\n  directives: {maxnreg: [none, 64]}\n"


def test_apply_ignores_the_tune_section(tmp_path, capsys):
    plain, tuned = recipe(tmp_path, "", "plain.yaml"), recipe(tmp_path, TUNE)
    assert main(["apply", str(plain), "-o", str(tmp_path / "a.ptx"), "--no-ptxas", "--json"]) == 0
    capsys.readouterr()
    assert main(["apply", str(tuned), "-o", str(tmp_path / "b.ptx"), "--no-ptxas", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (tmp_path / "a.ptx").read_bytes() == (tmp_path / "b.ptx").read_bytes()
    assert not data.get("directives")                  # the space's maxnreg is not the recipe's
    assert main(["verify", str(tuned)]) == 0


def test_tune_reads_and_validates_the_section_in_the_recipe(tmp_path, capsys):
    tuned = recipe(tmp_path, TUNE)
    assert main(["tune", str(tuned), "--plan", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["recipe"] == str(tuned) and plan["size"] == 4
    assert [d["key"] for d in plan["dimensions"]] == ["fence", "maxnreg"]
    bad = recipe(tmp_path, "tune:\n  space:\n    - cuts: 1\n      fence: [sideways]\n", "bad.yaml")
    assert main(["apply", str(bad), "-o", str(tmp_path / "c.ptx"), "--no-ptxas"]) == 0   # apply: not its key
    capsys.readouterr()
    assert main(["tune", str(bad), "--plan"]) == 2
    err = capsys.readouterr().err
    line = bad.read_text().splitlines().index("      fence: [sideways]") + 1
    assert f"{bad}:{line}:" in err and "'sideways' is not one of" in err
