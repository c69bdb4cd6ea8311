"""A recipe's targets: two that overlap, or one named twice, are refused before any target is
planned (binding one costs milliseconds: a recipe of 5000 copies of E23 was planned in full,
84 s, before the overlap was found at assembly)."""
from __future__ import annotations

import pytest

from splice.cli import main

from .conftest import STANDIN

ENTRY = "cuda_dldn_engine_swin_enc5_kernel"


@pytest.fixture
def work(tmp_path, monkeypatch):
    (tmp_path / "enc5.ptx").symlink_to(STANDIN / "enc5.ptx")
    (tmp_path / "e.ptx").write_text("// an epilogue\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused_unplanned(work, monkeypatch, capsys, cuts: str) -> str:
    """Apply a recipe of ``cuts``: exit 2, nothing written, and no target planned."""
    import splice.cut.splice as S

    planned = []
    real = S._plan_cut
    monkeypatch.setattr(S, "_plan_cut", lambda *a, **k: planned.append(a) or real(*a, **k))
    (work / "r.yaml").write_text(f"module: enc5.ptx\nentry: {ENTRY}\ncuts:\n{cuts}")
    assert main(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]) == 2
    assert planned == [] and not (work / "o.ptx").exists()
    return capsys.readouterr().err


def test_5000_copies_of_one_epilogue_are_refused_before_planning(work, monkeypatch, capsys):
    err = refused_unplanned(work, monkeypatch, capsys,
                            "  - epilogues: [" + ", ".join(["23"] * 5000) + "]\n    native: e.ptx\n")
    assert "r.yaml:4:5: cut 1: E23 s6014-s6120 is named twice: each statement is replaced once" in err


def test_two_cuts_of_one_target_are_refused(work, monkeypatch, capsys):
    err = refused_unplanned(work, monkeypatch, capsys, "  - epilogues: [21, 23]\n    native: e.ptx\n"
                                                       "  - epilogue: 23\n    native: e.ptx\n")
    assert "cut 2: E23 s6014-s6120 is cut 1's target too" in err


def test_overlapping_ranges_are_refused_whatever_their_order(work, monkeypatch, capsys):
    """An overlap with a target that ends further on than the one just before it (sorted by
    first statement) is found too."""
    err = refused_unplanned(work, monkeypatch, capsys, "  - statements: s6100-s6200\n    native: e.ptx\n"
                                                       "  - statements: s5990-s6400\n    native: e.ptx\n"
                                                       "  - epilogue: 23\n    native: e.ptx\n")
    assert "overlaps s5990-s6400 (cut 2)" in err
