"""Epilogue-granularity debug stages (no GPU: planning and instrumentation; ptxas when present)."""
import shutil
from pathlib import Path

import pytest

from splice.errors import SpliceError
from splice.probe.epilogue_stages import split_selection

ROOT = Path(__file__).resolve().parents[1]
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")


def test_split_selection():
    assert split_selection("all") == ("all", None)
    assert split_selection("8-10,E9") == ("8-10", {9})
    assert split_selection("E21-E23,e25") == ("", {21, 22, 23, 25})
    assert split_selection("epilogues,61") == ("61", "all")
    with pytest.raises(SpliceError, match="empty epilogue range"):
        split_selection("E9-E3")


@pytest.fixture(scope="module")
def wrong_e9():
    from splice.analysis import Kernel
    from splice.probe.modules import resolve
    from splice.probe.spec import load_spec

    pair = resolve(str(ROOT / "tests/data/recipes/dec1_e9_wrong_rounding.yaml"))
    return pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path)


def test_epilogue_cut_is_a_stage_in_program_order(wrong_e9):
    from splice.probe.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "8-10", spec)
    names = [s.name for s in sp.stages]
    assert names == ["phase 8", "phase 9", "cut 1 (E9 s5068-s5354)", "phase 10"]
    st = sp.stages[2]
    assert st.regs == [r.reg for r in pair.cuts[0].abi.live_out] and len(st.regs) == 68
    assert pair.spliced.splitlines()[st.line_spl - 1].strip() == "// splice: end cut 1"


def test_uncut_epilogues_staged_by_selection(wrong_e9):
    from splice.probe.stages import plan_stages

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8-E10,E26", spec)
    names = [s.name for s in sp.stages]
    assert names == ["E8", "cut 1 (E9 s5068-s5354)", "E10"]
    assert any("E26: no live-outs" in n for n in sp.notes)
    for s in sp.stages:
        if s.cut is None:      # outside the cut: the same line in both modules
            assert pair.original.splitlines()[s.line_orig - 1] == pair.spliced.splitlines()[s.line_spl - 1]


@needs_ptxas
def test_instrumented_epilogue_stages_compile(wrong_e9):
    from splice.probe.stages import instrument, plan_stages
    from splice.ptx.sass import compile_ptx

    pair, k, spec = wrong_e9
    sp = plan_stages(k, pair, "E8,E10", spec)
    assert compile_ptx(instrument(pair.spliced, sp, "spl"), "sm_90", 3).cubin
