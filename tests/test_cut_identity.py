"""Identity round trip of the cut engine on a sample: extract every phase (and every epilogue as a
``statements:`` cut), apply it unchanged, and ptxas must give the original's SASS.

The scan over every corpus is ``bench/roundtrip_cuts.py`` (docs/results/cut-roundtrip.md)."""
from __future__ import annotations

from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
TC = ROOT / "tests" / "data" / "ptx" / "tensor_core"


SAMPLE = [
    (TC / "mma_k_loop.ptx", "sm_90"),            # in-place accumulator in a counted loop
    (TC / "mma_irregular.ptx", "sm_90"),         # irregular group, in place
    (TC / "mma_forms_zoo.ptx", "sm_90"),
    (TC / "triton_matmul_mma_k256_sm80.ptx", "sm_90"),    # Triton mma.sync K loop, in place         # f64, tf32, s8, b1, m8n8k4, bf16, mma.sp
    (MODERN / "triton_matmul_wgmma_sm90a.ptx", "sm_90a"),   # wgmma group in a K loop
    (MODERN / "wgmma_sm90a.ptx", "sm_90a"),      # wgmma inside inline-asm scopes, A in registers
]


@pytest.mark.slow
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("path, arch", SAMPLE, ids=[p.name for p, _ in SAMPLE])
def test_extract_then_apply_is_sass_identical(path, arch):
    from splice.cut.identity import run_module

    trials = run_module(str(path), arch, 3, (), epilogues=False)
    assert trials, "no phase found"
    bad = [f"{t.entry} phase {t.target} {t.statements}: {t.stage}: {t.reason}" for t in trials
           if not t.identical]
    assert not bad, "\n".join(bad)


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_epilogue_statement_cuts_are_sass_identical():
    from splice.cut.identity import run_module

    trials = [t for t in run_module(str(TC / "mma_k_loop.ptx"), "sm_90", 3, ()) if t.kind == "epilogue"]
    assert len(trials) == 2 and all(t.identical for t in trials), [(t.stage, t.reason) for t in trials]


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_a_changed_cut_is_caught():
    """The comparison can fail: a native phase that drops the mma is not identical."""
    from splice.analysis import Kernel
    from splice.cut.identity import Reference, try_cut

    path = TC / "mma_k_loop.ptx"
    k = Kernel.load(path, "mma_k_loop")
    ref = Reference(str(path), "sm_90", 3)
    ref.sass = ref.sass[:-1] + ["resources changed"]     # a reference that cannot match
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        t = try_cut(k, ref, "phase", 1, k.phases[0].first, k.phases[0].last, Path(tmp))
    assert t.stage == "sass" and t.reason
