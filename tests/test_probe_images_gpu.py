"""GPU: 1-D, 3-D and layered textures and surfaces (tests/data/ptx/probe/images.cu, images.ptx,
images_wrong.ptx, images_query.ptx).  First the device path alone (each kernel's outputs against
numpy: the texels reach the kernel in the geometry the spec names and come back in the host
layout), then `splice probe SPEC MODULE` of each kernel against itself (identical, exit 0) and
against images_wrong.ptx, where one texel of one output per kernel differs (exit 1, the texel
named).  Skipped cleanly without cupy and a device."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests/data/ptx/probe"
GOOD, WRONG, QUERY = DATA / "images.ptx", DATA / "images_wrong.ptx", DATA / "images_query.ptx"
pytestmark = pytest.mark.gpu

R32 = {"format": "r32f"}
ARANGE = {"fill": {"rule": "arange", "start": 0.5, "step": 1.0}}


def _i(name, v):
    return {"name": name, "kind": "scalar", "dtype": "s32", "value": v}


#: entry -> (launch, params); extents: 1d 100; 3d 8x4x5; layered 8 (x4) x 3 layers; inout 3d 4x2x3
SPECS = {
    "img_1d": ({"grid": [4], "block": [32]},
               [{"name": "t", "kind": "texture", "geometry": "1d", "width": 100, **R32, **ARANGE},
                {"name": "s", "kind": "surface", "geometry": "1d", "width": 100, **R32}, _i("w", 100)]),
    "img_3d": ({"grid": [4, 5], "block": [8]},
               [{"name": "t", "kind": "texture", "geometry": "3d", "width": 8, "height": 4, "depth": 5,
                 **R32, **ARANGE},
                {"name": "s", "kind": "surface", "geometry": "3d", "width": 8, "height": 4, "depth": 5, **R32},
                _i("w", 8), _i("h", 4), _i("d", 5)]),
    "img_layered": ({"grid": [4, 3], "block": [8]},
                    [{"name": "t1", "kind": "texture", "geometry": "a1d", "width": 8, "layers": 3, **R32, **ARANGE},
                     {"name": "t2", "kind": "texture", "geometry": "a2d", "width": 8, "height": 4, "layers": 3, **R32,
                      "fill": {"rule": "arange", "start": 1000.0, "step": 1.0}},
                     {"name": "s1", "kind": "surface", "geometry": "a1d", "width": 8, "layers": 3, **R32},
                     {"name": "s2", "kind": "surface", "geometry": "a2d", "width": 8, "height": 4, "layers": 3, **R32},
                     _i("w", 8), _i("h", 4), _i("layers", 3)]),
    "img_inout3d": ({"grid": [2, 3], "block": [4]},
                    [{"name": "s", "kind": "surface", "geometry": "3d", "width": 4, "height": 2, "depth": 3,
                      "format": "rgba32f", "role": "inout", **ARANGE}, _i("w", 4), _i("h", 2), _i("d", 3)]),
}


def _spec_dict(entry, ptx=GOOD):
    launch, params = SPECS[entry]
    return {"name": entry, "ptx": str(ptx), "entry": entry, "launch": launch, "params": params}


def _render(entry, tmp_path, ptx=GOOD, extra=None):
    from splice.probe.language.entry import check
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.language.document import parse_spec

    spec = parse_spec({**_spec_dict(entry, ptx), **(extra or {})}, str(tmp_path / "s.yaml"))
    check(spec, ptx.read_text(), str(ptx))
    cp = import_cupy()
    dev = Device(spec, cp)
    dev.load("main", compile_one(entry, ptx.read_text(), device_arch(cp), tmp_path).path)
    return dev.render("main")


def test_1d_texture_to_1d_surface(tmp_path):
    got = _render("img_1d", tmp_path)["s"]
    assert got.shape == (100,), "a 1-D surface reads back as (C*W,)"
    assert np.array_equal(got, 2 * (0.5 + np.arange(100, dtype=np.float32))), "tex.1d / sust.b.1d texels"


def test_3d_texture_to_3d_surface(tmp_path):
    got = _render("img_3d", tmp_path)["s"]
    assert got.shape == (5, 4, 8), "a 3-D surface reads back as (D, H, C*W)"
    want = (0.5 + np.arange(160, dtype=np.float32)).reshape(5, 4, 8) + 1
    assert np.array_equal(got, want), "tex.3d / sust.b.3d texels: slice z is the outer axis"


def test_layered_textures_to_layered_surfaces(tmp_path):
    out = _render("img_layered", tmp_path)
    t1 = (0.5 + np.arange(24, dtype=np.float32)).reshape(3, 8)
    t2 = (1000 + np.arange(96, dtype=np.float32)).reshape(3, 4, 8)
    assert out["s1"].shape == (3, 8) and np.array_equal(out["s1"], 3 * t1), "tex.a1d / sust.b.a1d, layer outer"
    assert out["s2"].shape == (3, 4, 8) and np.array_equal(out["s2"], t1[:, None, :] + t2), "tex.a2d / sust.b.a2d"


def test_inout_3d_rgba32f_surface(tmp_path):
    got = _render("img_inout3d", tmp_path)["s"].reshape(3, 2, 4, 4)
    start = (0.5 + np.arange(96, dtype=np.float32)).reshape(3, 2, 4, 4)
    want = start.copy()
    want[..., 0] *= -1
    want[..., 3] *= 0.5
    assert np.array_equal(got, want), "suld.b.3d.v4 then sust.b.3d.v4 of an inout surface restored before the launch"


def test_txq_suq_see_the_geometry(tmp_path):
    """txq.depth of a 3-D texture and suq.height of a 1-D layered surface (its layers) report the spec's
    extents."""
    from splice.probe.language.entry import check
    from splice.probe.run.device import Device, device_arch, import_cupy
    from splice.probe.run.modules import compile_one
    from splice.probe.language.document import parse_spec

    spec = parse_spec(_query_spec(), str(tmp_path / "q.yaml"))
    check(spec, QUERY.read_text(), str(QUERY))
    cp = import_cupy()
    dev = Device(spec, cp)
    dev.load("main", compile_one("img_query", QUERY.read_text(), device_arch(cp), tmp_path).path)
    out = dev.render("main")["out"].view(np.uint32)
    texel = np.float32(2 * 12 + 0 * 4 + 1).view(np.uint32)          # t[z=2][y=0][x=1], arange from 0
    assert list(out) == [4, 3, 5, 8, 3, int(texel)], \
        "txq width/height/depth, suq width/height (a 1-D layered surface: its layers), tex.3d texel"


def _query_spec():
    return {"name": "q", "ptx": str(QUERY), "entry": "img_query", "launch": {"grid": [1], "block": [1]},
            "frame": {"field": "out"},
            "params": [{"name": "t", "kind": "texture", "geometry": "3d", "width": 4, "height": 3, "depth": 5,
                        "format": "r32f", "fill": {"rule": "arange"}},
                       {"name": "s", "kind": "surface", "geometry": "a1d", "width": 8, "layers": 3,
                        "format": "rgba32f"},
                       {"name": "out", "kind": "buffer", "dtype": "u32", "shape": [6], "role": "output"}]}


# ---------------------------------------------------------------- splice probe, end to end

def _probe(spec: dict, module: Path, tmp_path, capsys):
    import yaml

    from splice.cli import main

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    rc = main(["probe", str(path), str(module), "--runs", "3", "--json", "--report-dir", str(tmp_path / "rep")])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("entry", [*SPECS, "img_query"])
def test_each_kernel_against_itself_is_identical(entry, tmp_path, capsys):
    spec = _query_spec() if entry == "img_query" else _spec_dict(entry)
    rc, r = _probe(spec, QUERY if entry == "img_query" else GOOD, tmp_path, capsys)
    assert rc == 0 and r["ok"] and r["identical"], f"{entry} vs itself: {r['compare']}"
    assert r["covered"], f"{entry}: every frame texel written: {r['frames']}"


#: entry -> {output: (first differing texel as reported, per-layer/slice counts key, counts)}
WRONG_AT = {
    "img_1d": {"s": ([7], None, None)},
    "img_3d": {"s": ([1, 2, 3], "slices_differ", {"3": 1})},
    "img_layered": {"s1": ([5, 2], "layers_differ", {"2": 1}), "s2": ([0, 1, 1], "layers_differ", {"1": 1})},
    "img_inout3d": {"s": ([0, 0, 1], "slices_differ", {"1": 1})},
}


@pytest.mark.parametrize("entry", list(WRONG_AT))
def test_a_wrong_splice_is_caught_at_its_texel(entry, tmp_path, capsys):
    rc, r = _probe(_spec_dict(entry), WRONG, tmp_path, capsys)
    assert rc == 1 and not r["identical"], f"{entry}: images_wrong.ptx must differ: {r['compare']}"
    for out, (first, key, counts) in WRONG_AT[entry].items():
        c = r["compare"]["outputs"][out]
        assert c["elements_differ"] == 1 and c["first_xy"] == first, f"{entry}.{out}: {c}"
        assert key is None or c[key] == counts, f"{entry}.{out}: per layer/slice {c}"
        assert Path(c["heatmap"]).read_bytes()[:4] == b"\x89PNG", f"{entry}.{out}: difference map written"
    same = set(r["compare"]["outputs"]) - set(WRONG_AT[entry])
    assert all(r["compare"]["outputs"][o]["identical"] for o in same), r["compare"]


def test_a_module_the_driver_refuses_to_load_is_exit_2(tmp_path, capsys):
    """suq.array_size: ptxas 13 compiles it for sm_90, an H200's driver (580) refuses the cubin
    (CUDA_ERROR_NOT_SUPPORTED). The probe says so, exit 2, instead of a CUDADriverError traceback."""
    import yaml

    from splice.cli import main

    bad = tmp_path / "refused.ptx"
    bad.write_text(QUERY.read_text().replace("suq.height.b32", "suq.array_size.b32"))
    spec = tmp_path / "q.yaml"
    spec.write_text(yaml.safe_dump(_query_spec()))
    rc = main(["probe", str(spec), str(bad), "--runs", "1", "--report-dir", str(tmp_path / "rep")])
    err = capsys.readouterr().err
    if rc == 0:
        pytest.skip("this driver loads suq.array_size: nothing to refuse")
    assert rc == 2 and "the driver refuses to load the spliced module" in err and "Traceback" not in err, err
