"""What a probe spec's values become once loaded: a build arch normalised as --arch is, an element
poison the bits of its type, a shape no deeper than numpy's arrays (tests/hostile/probe-specs
has the values refused at their keys).  Found 2026-12-01 with hostile inputs."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from splice.cli import main

from .conftest import ROOT

TABLES = ROOT / "tests/data/ptx/probe/tables.ptx"
GLOBALS_ONLY = """name: g
ptx: PTX
entry: globals_only
launch: {grid: [2], block: [128]}
params: []
globals:
- {name: g_in, dtype: f32, shape: [256], role: input, fill: {rule: zeros}}
- {name: g_out, dtype: DTYPE, bytes: 1024, role: output, poison: {value: VALUE}}
"""


def test_a_build_arch_is_normalised_as_arch_is():
    from splice.probe.spec import load_spec

    text = (ROOT / "probes" / "gemm_sm80.yaml").read_text() + "build_arch: 90a\n"
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "s.yaml")
        open(p, "w").write(text.replace("ptx: corpus/", f"ptx: {ROOT}/corpus/"))
        assert load_spec(p).build_arch == "sm_90a"


@pytest.mark.parametrize("dtype, value, bits", [
    ("f32", "-0.0", 0x80000000), ("f16", "1.0", 0x3C00), ("bf16", ".nan", 0x7FC0),
    ("u32", "-1", 0xFFFFFFFF), ("s16", "-2", 0xFFFE), ("e4m3", "0.5", 0x30), ("e4m3", "448.0", 0x7E),
    ("e5m2", ".inf", 0x7C), ("f32", ".inf", 0x7F800000),
])
def test_element_poisons_of_the_type_keep_their_bits(tmp_path, dtype, value, bits):
    from splice.probe.spec import load_spec

    p = tmp_path / "s.yaml"
    p.write_text(GLOBALS_ONLY.replace("DTYPE", dtype).replace("VALUE", value).replace("PTX", str(TABLES)))
    g = load_spec(p).globals[1]
    assert g.poison == bits and g.poison_is_byte is False


def _probe(tmp_path, monkeypatch, capsys, text: str, ptx: Path) -> tuple:
    """``splice probe s.yaml PTX`` without cupy: (exit status, stderr).  A spec that passes every
    check stops at "needs cupy"; one that does not is exit 2 at its line."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("PTX", str(ptx)))
    rc = main(["probe", str(spec), str(ptx)])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return rc, err


SUM = """name: t
ptx: PTX
entry: table_sum
launch: {grid: [1], block: [64]}
params:
- {name: srcs, kind: table, ALIGN_T entries: [{dtype: f32, shape: [64], ALIGN_E fill: {rule: zeros}}]}
- {name: nsrc, kind: scalar, dtype: s32, value: 1}
- {name: out, kind: buffer, dtype: f32, shape: [64], role: output}
- {name: dsts, kind: table, count: 1, each: {dtype: f32, shape: [64], role: output}}
- {name: n, kind: scalar, dtype: s32, value: 64}
"""


def test_a_shape_of_more_dimensions_than_numpy_has_is_refused_at_its_key(tmp_path, monkeypatch, capsys):
    """regression: ``shape: [1, 1, … x100]`` (4 bytes) was accepted; the read-back output is
    reshaped to the spec's shape after the GPU run: numpy's "maximum supported dimension"
    ValueError traceback (``compare.elements``)."""
    import numpy as np

    from splice.probe.compare import elements
    from splice.probe.spec import MAX_DIMS, Field

    ok = Field("o", 0, "buffer", 8, dtype="u8", bytes=4, shape=(1,) * (MAX_DIMS - 2) + (2, 2), role="output")
    assert elements(ok, np.zeros(4, dtype=np.uint8)).ndim == MAX_DIMS
    text = SUM.replace("ALIGN_T", "").replace("ALIGN_E", "").replace(
        "{name: out, kind: buffer, dtype: f32, shape: [64], role: output}",
        "{name: out, kind: buffer, dtype: f32, shape: [64" + ", 1" * 99 + "], role: output}")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert rc == 2 and "s.yaml:8:" in err and f"params[2].shape: 100 dimensions: more than the {MAX_DIMS}" in err, err
