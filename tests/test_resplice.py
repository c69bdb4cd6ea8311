"""Splicing a module spliced before: the glue splice adds (a called cut's .func, call-shared's
return slot) never collides with the glue already there, and a ptxas error in that glue is not
placed at a line it has not got.  Found 2026-12-01 with hostile inputs."""
from __future__ import annotations

import pytest

from .userfiles import RECIPE, refused, run, work  # noqa: F401 - work: the fixture


@pytest.mark.needs("ptxas")
def test_a_called_cut_of_a_module_spliced_before_gets_a_function_of_its_own(work, capsys):
    """regression: the ``.func`` of a called cut was ``__splice_fn<cut>``: splicing a module that an
    ``abi: call`` cut had spliced before made a second ``__splice_fn1`` (ptxas: duplicate
    definition of function; ``--no-ptxas`` wrote the broken module, exit 0)."""
    (work / "c1.yaml").write_text(RECIPE.replace("output: out.ptx", "output: c1.ptx") + "    abi: call\n")
    assert run(["apply", "c1.yaml", "--json"]) == 0
    assert run(["extract", "c1.ptx", "--statements", "s5-s6", "-o", "c1n.ptx"]) == 0
    (work / "c2.yaml").write_text("module: c1.ptx\nentry: tiny\noutput: c2.ptx\ncuts:\n"
                                  "  - statements: s5-s6\n    native: c1n.ptx\n    abi: call\n")
    capsys.readouterr()
    assert run(["apply", "c2.yaml", "--json"]) == 0, capsys.readouterr().err
    text = (work / "c2.ptx").read_text()
    assert text.count(") __splice_fn1(") == 1 and text.count(") __splice_fn2(") == 1


def test_a_second_call_shared_splice_is_refused_before_it_writes_a_broken_module(work, capsys):
    """regression: a call-shared cut of a module a call-shared cut had spliced declared a second
    ``.shared __splice_ret`` (ptxas: duplicate definition), and ``--no-ptxas`` wrote it, exit 0."""
    shared = "    abi: call-shared\n    threads: 32\n"
    (work / "s1.yaml").write_text(RECIPE.replace("output: out.ptx", "output: s1.ptx") + shared)
    assert run(["apply", "s1.yaml", "--no-ptxas", "--json"]) == 0
    assert run(["extract", "s1.ptx", "--statements", "s5-s6", "-o", "s1n.ptx"]) == 0
    (work / "s2.yaml").write_text("module: s1.ptx\nentry: tiny\noutput: s2.ptx\ncuts:\n"
                                  "  - statements: s5-s6\n    native: s1n.ptx\n" + shared)
    refused(capsys, run(["apply", "s2.yaml", "--no-ptxas"]), "s2.yaml:7:5: cut 1: the module already declares "
                                                             "__splice_ret")
    assert not (work / "s2.ptx").exists()


def test_a_ptxas_error_in_glue_outside_any_line_is_not_placed_at_line_none():
    """regression: a ptxas error in the glue splice adds before the entry (``__splice_ret``) was
    listed as ``r.yaml:None: ptxas error: …``."""
    from types import SimpleNamespace

    from splice.cut.validate import map_ptxas_error
    from splice.ptx.sass import Diagnostic

    plan = SimpleNamespace(origin=lambda n: ("r.yaml", None, "generated"), recipe=SimpleNamespace(path="r.yaml"))
    exc = SimpleNamespace(diagnostics=[Diagnostic("x.ptx", 41, "error", "Duplicate definition of variable 'v'")],
                          repro="ptxas x.ptx", stderr="")
    err = map_ptxas_error(plan, exc)
    assert "None" not in str(err) + err.detail and "  r.yaml: ptxas error: Duplicate" in err.detail
