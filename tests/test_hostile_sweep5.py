"""A fifth hostile user: classes of failure the first four sweeps (tests/test_hostile_sweep.py …
tests/test_hostile_sweep4.py) do not reach, and the leftovers sweep 4 listed as not covered.
Each class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 5", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import os

import pytest

from .test_hostile_sweep3 import RECIPE, TINY, refused, run  # noqa: F401 - shared with sweeps 3 and 4
from .test_hostile_sweep4 import no_gpu, work  # noqa: F401 - fixtures: the work directory, cupy missing


# ---- probe --ncu without ncu: said before any GPU work ------------------------------------------

@pytest.fixture
def no_ncu(monkeypatch, tmp_path):
    """A PATH on which no ``ncu`` is found (whatever this machine has)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("argv", [["probe", "r.yaml", "--ncu"], ["probe", "spec.yaml", "tiny.ptx", "--ncu", "--json"]],
                         ids=["recipe", "spec"])
def test_ncu_requested_but_missing_is_refused_before_the_gpu(argv, work, no_gpu, no_ncu, capsys):
    """regression: ``probe --ncu`` without ncu on PATH built, rendered and timed both modules on
    the GPU, then put ``{"error": "ncu … not on PATH: --ncu skipped"}`` into the report and exited
    0: what was asked for was not done, and the user learnt it at the end of the run."""
    err = refused(capsys, run(argv), argv[1] + ":", "--ncu: ncu (Nsight Compute) is not on PATH")
    assert "cupy" not in err


def test_ncu_on_path_passes_the_planning_check(work, no_gpu, tmp_path, monkeypatch, capsys):
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ncu").write_text("#!/bin/sh\nexit 0\n")
    (tools / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools) + os.pathsep + os.environ.get("PATH", ""))
    refused(capsys, run(["probe", "r.yaml", "--ncu"]), "needs cupy")
