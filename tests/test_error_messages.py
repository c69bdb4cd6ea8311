"""Error messages: rendered whatever they are placed at, bounded whatever the module holds, said in
words when the memory runs out.  Found 2026-12-01 with hostile inputs."""
from __future__ import annotations

import pytest

from .userfiles import many_entries, refused, run, work  # noqa: F401 - work: the fixture


def test_an_error_placed_at_a_path_object_is_rendered(capsys):
    """regression: ``SpliceError(msg, Path(...))`` was a ``TypeError`` traceback in ``_headline``
    (``where += ": "`` on a Path) in place of the message."""
    from pathlib import Path

    from splice.errors import SpliceError

    e = SpliceError("bad", Path("dir/x.yaml"), line=3)
    assert str(e) == "dir/x.yaml:3: bad" and e.render().startswith("dir/x.yaml:3: bad")


@pytest.mark.parametrize("cmd", [["stats"], ["spec"], ["index"], ["notes"], ["probe", "init"]], ids=lambda c: c[-1])
@pytest.mark.parametrize("query, says", [("nope", "no entry 'nope'"), ("k", "--entry 'k' matches 31 entries")],
                         ids=["missing", "ambiguous"])
def test_an_entry_error_lists_a_bounded_number_of_names(cmd, query, says, tmp_path, monkeypatch, capsys):
    """regression: ``--entry`` that names no entry (or several) listed every entry of the module
    in the error: a typo on a module of 50000 kernels printed 50000 lines."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.ptx").write_text(many_entries(31))
    err = refused(capsys, run([*cmd, "m.ptx", "--entry", query]), says)
    assert "… and 11 more (splice stats --json FILE lists every one)" in err
    assert err.count("\n  k") <= 20


def test_running_out_of_memory_is_said_not_a_traceback(work, monkeypatch, capsys):
    """regression: under an address-space limit (``ulimit -v 150000``: ``spec enc5.ptx
    --pressure``) the analysis' ``MemoryError`` left ``main`` as a traceback, exit 1.  Raised
    here where a real limit would, so that the test does not depend on this machine's memory."""
    from splice.analysis import pressure

    def exhausted(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(pressure, "pressure", exhausted)
    refused(capsys, run(["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none"]), "splice: out of memory")
