"""The bundled CUTLASS 3.x TMA GEMM (corpus/cutlass): its probe spec is probe init's skeleton
filled from the Params CUTLASS builds, loads and checks against the PTX, and is what the filler
writes today; the tensor-map keys CUTLASS's maps need (a stride 0 for an extent-1 mode, the
map's element type apart from the tensor's) are accepted, and refused where they would be wrong."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from splice.errors import SpliceError
from splice.probe.language.document import load_spec, parse_spec
from splice.probe.language.entry import check

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "probes/cutlass_tma_gemm_sm90a.yaml"
PTX = ROOT / "corpus/cutlass/cutlass_tma_gemm_sm90a.ptx"
META = ROOT / "corpus/cutlass/cutlass_tma_gemm_params.json"


def test_the_filled_spec_checks_against_the_cutlass_ptx():
    spec = load_spec(SPEC)
    check(spec, PTX.read_text(), str(PTX))
    [params] = spec.params
    fields = {f.name: f for f in params.fields}
    meta = json.loads(META.read_text())
    for rec, name in zip(meta["tma"], ("tma_A", "tma_B")):
        f = fields[name]
        assert f.offset == rec["offset"] and list(f.dims) == rec["dims"] and list(f.box) == rec["box"]
        assert list(f.strides) == rec["strides"] and f.swizzle == "128B" and f.dtype == "u16"
    assert fields["D"].role == "output" and fields["C"].role == "input"
    assert fields["alpha"].value == (1.0,) and fields["problem_shape_3"].value == (1,)


def test_the_filler_writes_the_committed_spec():
    """corpus/cutlass/fill_probe_spec.py --check: probe init's skeleton today, filled from the
    recorded Params, is the committed spec (a change to the skeleton shows here)."""
    r = subprocess.run([sys.executable, "corpus/cutlass/fill_probe_spec.py", "--check"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def _map_spec(**over) -> dict:
    data = yaml.safe_load(SPEC.read_text())
    field = copy.deepcopy(data["params"][0]["fields"][0])
    field.update(over)
    data["params"][0]["fields"][0] = field
    return data


def test_a_stride_0_is_taken_only_for_an_extent_1_mode():
    parse_spec(_map_spec(strides=[1024, 0]), "s.yaml", ROOT)
    with pytest.raises(SpliceError, match="rows overlap"):
        parse_spec(_map_spec(dims=[512, 256, 2], strides=[1024, 0]), "s.yaml", ROOT)


def test_the_maps_element_type_is_the_tensors_size():
    parse_spec(_map_spec(dtype="f16"), "s.yaml", ROOT)
    with pytest.raises(SpliceError, match="u32 is 4 bytes, the tensor's f16 2"):
        parse_spec(_map_spec(dtype="u32"), "s.yaml", ROOT)
    with pytest.raises(SpliceError, match="no tensor-map element type"):
        parse_spec(_map_spec(dtype="e2m1"), "s.yaml", ROOT)
