"""A sixth hostile user: classes of failure the first five sweeps (tests/test_hostile_sweep.py …
tests/test_hostile_sweep5.py) do not reach, and the leftovers sweep 5 listed as not covered.
Each class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 6", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import os

import pytest

from .conftest import tree_digest
from .test_hostile_sweep3 import RECIPE, TINY, refused, run  # noqa: F401 - shared with sweeps 3 to 5
from .test_hostile_sweep4 import work  # noqa: F401 - fixture: the work directory


# ---- a module found by its entry: never one of several -----------------------------------------

def test_a_module_named_by_no_file_is_not_one_of_several_declaring_the_entry(work, capsys):
    """regression: ``module: tinyy.ptx`` (a typo) was looked for by name, then as "the first
    *.ptx of the corpus directory declaring .entry tiny": ``a-spliced.ptx``, an earlier spliced
    output of the same kernel, sorted first and the recipe ran on it, exit 0."""
    (work / "a-spliced.ptx").write_text(TINY.replace("// tiny", "// spliced tiny", 1))
    (work / "r.yaml").write_text(RECIPE.replace("module: tiny.ptx", "module: tinyy.ptx"))
    before = tree_digest(work)
    err = refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]),
                  "r.yaml:1:9: module 'tinyy.ptx' is not a file, and 2 files of", "declare .entry tiny",
                  str(work / "a-spliced.ptx"), str(work / "tiny.ptx"))
    assert "out.ptx" not in os.listdir(work), err
    assert tree_digest(work) == before


def test_a_module_found_by_its_entry_alone_is_still_taken(work, capsys):
    """The rule that lets a recipe written for the stand-in run on a user's corpus whose file
    is named otherwise stays: one file declaring the entry is that module."""
    os.rename(work / "tiny.ptx", work / "0018-PREPASS.ptx")
    (work / "other.ptx").write_text(TINY.replace(".entry tiny", ".entry nottiny"))
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    assert '"module": "' + str(work / "0018-PREPASS.ptx") in capsys.readouterr().out


def test_a_module_named_exactly_wins_over_files_declaring_the_entry(work, capsys):
    (work / "a-spliced.ptx").write_text(TINY)
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    assert "\"module\": \"tiny.ptx\"" in capsys.readouterr().out


# ---- spec --pressure of a module of many entries: a bounded number of PNGs ----------------------

HEAD = ".version 8.7\n.target sm_90\n.address_size 64\n\n"


def _many(n: int) -> str:
    return HEAD + "".join(f".visible .entry k{i}()\n{{\n\tret;\n}}\n" for i in range(n))


def test_pressure_of_more_entries_than_pngs_it_writes_is_refused(work, capsys):
    """regression: ``spec --pressure`` wrote one PNG per entry under build/: 50000 kernels wrote
    50000 files in ten minutes, where the report shows the first 100."""
    from splice.commands.perf import MAX_PNGS

    (work / "many.ptx").write_text(_many(MAX_PNGS + 1))
    refused(capsys, run(["spec", "many.ptx", "--pressure", "--no-ptxas"]),
            f"many.ptx: the module has more than {MAX_PNGS} entries", "--png none")
    assert not (work / "build").exists()


def test_pressure_of_many_entries_runs_with_png_none_or_an_entry(work, capsys):
    from splice.commands.perf import MAX_PNGS

    (work / "many.ptx").write_text(_many(MAX_PNGS + 1))
    assert run(["spec", "many.ptx", "--pressure", "--no-ptxas", "--png", "none", "--json"]) == 0
    assert capsys.readouterr().out.count('"entry"') == MAX_PNGS + 1
    assert run(["spec", "many.ptx", "--pressure", "--no-ptxas", "--entry", "k7"]) == 0
    assert os.listdir(work / "build") == ["many_k7_pressure.png"]
