"""GPU: render each stand-in frame twice through the probe runner; byte-identical,
finite and fully covered.  Skips cleanly without cupy or a CUDA device."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.gpu


@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("name", ["enc5", "dec1"])
def test_frame_renders_twice_identically(name):
    from splice.probe.run.single import run

    cubin = ROOT / "build" / "probe" / f"{name}.cubin"
    res = run(ROOT / "probes" / f"{name}.yaml", cubin=cubin if cubin.exists() else None,
              repeat=2, timing=3)
    assert len(res.renders) == 2
    assert res.identical, [r.sha256 for r in res.renders]
    for r in res.renders:
        assert r.uncovered == 0 and r.nonfinite == 0 and r.alpha_nonzero == 0
        assert len(r.frame) == 3840 * 2160 * 8
