"""Probe specs: loading/validation, deterministic inputs, parameter-block packing."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from splice.probe.language.fill_data import CHUNK, buffer_bytes, weight_image
from splice.probe.run.args import pack_params, param_bytes, param_dtype
from splice.probe.language.context import SpecError
from splice.probe.language.document import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("enc5", "dec1")


def raw(name):
    return yaml.safe_load((ROOT / "probes" / f"{name}.yaml").read_text())


@pytest.fixture(params=LAYERS)
def spec(request):
    return load_spec(ROOT / "probes" / f"{request.param}.yaml")


def test_specs_load_and_match_the_notes(spec):
    expect = yaml.safe_load((ROOT / "corpus" / f"{spec.name}.expect.yaml").read_text())
    assert spec.param_size == expect["param_bytes"] == 144
    assert spec.shared_static == expect["smem_bytes"] and spec.shared_dynamic == 0
    assert spec.block[2] == expect["waves"] and spec.block[:2] == (32, 1)
    assert spec.entry == expect["entry"]
    offsets = {f.offset for f in spec.fields}
    assert set(expect["param_offsets"].values()) <= offsets
    w = [f for f in spec.fields if f.kind == "buffer" and f.fill.rule == "weight_image"][0]
    assert w.offset == 40 and w.image_bytes == expect["weight_image_bytes"] and w.bytes >= w.image_bytes
    fr = spec.field(spec.frame.field)
    assert (fr.kind, fr.offset, fr.width, fr.height, fr.format) == ("surface", 112, 3840, 2160, "rgba16f")
    # one launch covers the frame: tile width = 32 lanes per wave (enc5) / 32*waves (dec1), 8 rows
    tile_w = 32 if spec.name == "enc5" else 32 * spec.block[2]
    assert spec.grid[0] * tile_w == 3840 and spec.grid[1] * 8 == 2160


@pytest.mark.parametrize("mutate, key", [
    (lambda d: d["launch"].pop("grid"), "launch.grid: missing"),
    (lambda d: d["launch"].__setitem__("block", [32, 1, 64]), "launch.block"),
    (lambda d: d["params"]["fields"][1].__setitem__("offset", 12), "params.fields[1].offset"),
    (lambda d: d["params"]["fields"][1].__setitem__("kind", "pointer"), "params.fields[1].kind"),
    (lambda d: d["params"]["fields"][1]["fill"].__setitem__("rule", "random"), "params.fields[1].fill.rule"),
    (lambda d: d["params"]["fields"][1]["fill"].__setitem__("max_code", 0x7F), "params.fields[1].fill.max_code"),
    (lambda d: d["params"]["fields"][2].__setitem__("offset", 8), "params.fields[2].offset"),
    (lambda d: d["frame"].__setitem__("field", "input"), "frame.field"),
    (lambda d: d["params"].__setitem__("size", 100), "params.fields"),
])
def test_errors_name_the_yaml_key(mutate, key):
    d = copy.deepcopy(raw("enc5"))
    mutate(d)
    with pytest.raises(SpecError) as ei:
        parse_spec(d, "probes/enc5.yaml")
    assert key in str(ei.value) and str(ei.value).startswith("probes/enc5.yaml: ")


def test_inputs_are_deterministic_and_prefix_stable(spec):
    f = spec.field("input")
    a = buffer_bytes(f, spec.seed, limit=2 * CHUNK)
    b = buffer_bytes(f, spec.seed, limit=2 * CHUNK)
    c = buffer_bytes(f, spec.seed, limit=CHUNK + 17)
    assert np.array_equal(a, b) and np.array_equal(a[:CHUNK + 17], c)
    assert not np.isin(a, [0x7F, 0xFF]).any()
    other = buffer_bytes(f, spec.seed + 1, limit=CHUNK)
    assert not np.array_equal(a[:CHUNK], other)


def _e4m3_to_float(b):
    b = b.astype(np.int32)
    s = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = b & 7
    return s * np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))


def test_weight_image_is_valid_e4m3_and_f16(spec):
    f = [f for f in spec.fields if f.kind == "buffer" and f.fill.rule == "weight_image"][0]
    img = weight_image(f, spec.seed)
    assert img.shape == (f.bytes,) and np.array_equal(img, weight_image(f, spec.seed))
    mask = np.ones(f.bytes, dtype=bool)
    for r in f.fill.regions:
        vals = img[r.lo:r.hi].view(np.float16).astype(np.float64)
        assert np.isfinite(vals).all() and vals.min() >= r.low - 1e-3 and vals.max() <= r.high + 1e-3
        mask[r.lo:r.hi] = False
    e4 = img[mask]
    assert not np.isin(e4, [0x7F, 0xFF]).any()
    assert np.abs(_e4m3_to_float(e4)).max() <= 0.25


def test_textures_are_finite_rgba16f(spec):
    for f in spec.fields:
        if f.kind == "texture":
            # regenerate only the first rows cheaply through a shrunken copy of the field
            small = type(f)(**{**f.__dict__, "width": 64, "height": 4})
            t = small.texels(spec.seed)
            assert t.shape == (4, 256) and t.dtype == np.float16 and np.isfinite(t).all()


def test_param_struct_packing(spec):
    handles = {f.name: 0x7F0000000000 + 0x100 * f.offset for f in spec.fields if f.kind != "scalar"}
    dt = param_dtype(spec)
    assert dt.itemsize == 144 and dt.isalignedstruct
    v = pack_params(spec, handles)
    assert isinstance(v, np.void) and v.dtype == dt
    raw_bytes = param_bytes(spec, handles)
    assert len(raw_bytes) == 144
    for f in spec.fields:
        if f.kind == "scalar":
            np_t = {"u32": "<u4", "u16": "<u2", "f32": "<f4"}[f.dtype]   # PTX names (uint32 reads as u32)
            got = np.frombuffer(raw_bytes, dtype=np_t, count=len(f.value), offset=f.offset)
            assert got.tolist() == list(f.value), f.name
        else:
            assert int.from_bytes(raw_bytes[f.offset:f.offset + 8], "little") == handles[f.name], f.name
    assert raw_bytes[0:8] == np.array([3840, 2160], dtype="<u4").tobytes()
    with pytest.raises(KeyError):
        pack_params(spec, {})


def test_runner_imports_without_cupy():
    import splice.probe.run.single as r  # noqa: F401  (cupy is imported lazily)
    assert callable(r.run)
