"""Texture and surface geometries of the probe (1d, 2d, 3d, a1d, a2d; splice/probe/images.py):
the spec's keys and their validation, the check against the kernel's instructions, `probe init`
filling in the geometry, host layouts and report indices, and the device path through a fake
cupy (the 1-D layered array's own CUDA structs).  No GPU: tests/test_probe_images_gpu.py runs
the same kernels on one."""
from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from splice.cli import main
from splice.probe.spec import parse_spec

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests/data/ptx/probe"
IMAGES, QUERY = DATA / "images.ptx", DATA / "images_query.ptx"

LAYERED = """name: lay
ptx: {ptx}
entry: img_layered
launch: {{grid: [4, 3], block: [8]}}
params:
- {{name: t1, kind: texture, geometry: a1d, width: 8, layers: 3, format: r32f, fill: {{rule: arange}}}}
- {{name: t2, kind: texture, geometry: a2d, width: 8, height: 4, layers: 3, format: r32f, fill: {{rule: arange}}}}
- {{name: s1, kind: surface, geometry: a1d, width: 8, layers: 3, format: r32f}}
- {{name: s2, kind: surface, geometry: a2d, width: 8, height: 4, layers: 3, format: r32f}}
- {{name: w, kind: scalar, dtype: s32, value: 8}}
- {{name: h, kind: scalar, dtype: s32, value: 4}}
- {{name: layers, kind: scalar, dtype: s32, value: 3}}
"""


def _spec(params: list, tmp_path):
    return parse_spec({"name": "t", "ptx": "m.ptx", "entry": "e", "launch": {"grid": [1], "block": [1]},
                       "params": params}, str(tmp_path / "s.yaml"))


# ---------------------------------------------------------------- the spec

@pytest.mark.parametrize("geometry, extra, extents, shape", [
    ("1d", {}, (16,), (16,)),
    ("2d", {"height": 3}, (16, 3), (3, 16)),
    ("3d", {"height": 3, "depth": 5}, (16, 3, 5), (5, 3, 16)),
    ("a1d", {"layers": 4}, (16, 4), (4, 16)),
    ("a2d", {"height": 3, "layers": 4}, (16, 3, 4), (4, 3, 16)),
])
def test_each_geometry_reads_its_extents_and_host_layout(geometry, extra, extents, shape, tmp_path):
    from splice.probe import images
    from splice.probe.inputs import surface_poison, texture_texels

    s = _spec([{"name": "t", "kind": "texture", "geometry": geometry, "width": 16, "format": "r32f",
                "fill": {"rule": "arange"}, **extra},
               {"name": "s", "kind": "surface", "geometry": geometry, "width": 16, "format": "rg16f", **extra}],
              tmp_path)
    t, o = s.field("t"), s.field("s")
    assert t.geometry == o.geometry == geometry and images.extents(t) == extents
    tx = texture_texels(t, 0)
    assert tx.shape == shape and np.array_equal(tx.reshape(-1), np.arange(tx.size, dtype=np.float32))
    assert surface_poison(o).shape == shape[:-1] + (2 * 16,)        # two channels per texel


def test_a_2d_image_without_geometry_is_as_before(tmp_path):
    s = _spec([{"name": "s", "kind": "surface", "width": 5, "height": 2, "format": "r32f"}], tmp_path)
    f = s.field("s")
    assert (f.geometry, f.width, f.height, f.depth, f.layers) == ("2d", 5, 2, 0, 0)


BAD = [
    ("geometry: 4d, width: 8", "params[0].geometry", "'4d' is not one of 1d, 2d, 3d, a1d, a2d"),
    # a list or a mapping was a TypeError traceback (unhashable, looked up in the refused table)
    ("geometry: [3d], width: 8", "params[0].geometry", "['3d'] is not one of 1d, 2d, 3d, a1d, a2d"),
    ("geometry: {3d: 1}, width: 8", "params[0].geometry", "{'3d': 1} is not one of 1d, 2d, 3d, a1d, a2d"),
    ("geometry: cube, width: 8", "params[0].geometry", "cube: a cube map, which the probe does not make"),
    ("geometry: a2dms, width: 8", "params[0].geometry", "a2dms: a layered multisample 2-D image"),
    ("geometry: 2d, width: 8, height: 2, depth: 4", "params[0].depth",
     "a 2d (2-D) KIND has no depth: depth is for geometry: 3d"),
    ("geometry: 3d, width: 8, height: 2, layers: 4", "params[0].layers",
     "a 3d (3-D) KIND has no layers: layers is for geometry: a1d or a2d"),
    ("geometry: 1d, width: 8, height: 2", "params[0].height", "a 1d (1-D) KIND has no height"),
    ("geometry: a1d, width: 8, height: 1, layers: 2", "params[0].height", "a a1d (layered 1-D) KIND has no height"),
    ("geometry: a2d, width: 8, height: 2", "params[0].layers", "missing (a a2d KIND takes width, height, layers)"),
    ("geometry: 3d, width: 8, height: 2, depth: 0", "params[0].depth", "0 is below 1"),
    ("geometry: 3d, width: 8, height: 2, depth: 16385", "params[0].depth",
     "16385: more than the 16384 CUDA allows a 3d (3-D) KIND (maxKIND3D: 16384 x 16384 x 16384)"),
    ("geometry: a2d, width: 8, height: 2, layers: 2049", "params[0].layers",
     "2049: more than the 2048 CUDA allows a a2d (layered 2-D) KIND (maxKIND2DLayered: 32768 x 32768 x 2048)"),
    ("geometry: a1d, width: 32769, layers: 2", "params[0].width",
     "32769: more than the 32768 CUDA allows a a1d (layered 1-D) KIND (maxKIND1DLayered: 32768 x 2048)"),
]


@pytest.mark.parametrize("kind", ["texture", "surface"])
@pytest.mark.parametrize("keys, where, says", BAD)
def test_wrong_geometry_combinations_exit_2_at_the_key(kind, keys, where, says, tmp_path, monkeypatch, capsys):
    """Every wrong combination is exit 2 with file:line:col of the key, before cupy is imported."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    fill = ", fill: {rule: zeros}" if kind == "texture" else ""
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: q\nptx: {QUERY}\nentry: img_query\nlaunch: {{grid: [1], block: [1]}}\nparams:\n"
                    f"- {{name: t, kind: {kind}, {keys}, format: r32f{fill}}}\n"
                    "- {name: s, kind: surface, geometry: a1d, width: 8, layers: 3, format: rgba32f}\n"
                    "- {name: out, kind: buffer, dtype: u32, shape: [6], role: output}\n")
    assert main(["probe", str(spec), str(QUERY)]) == 2
    err = capsys.readouterr().err
    line = spec.read_text().splitlines()[5]
    key = where.rsplit(".", 1)[1]
    col = 3 if says.startswith("missing") else 1 + line.index(f"{key}: ") + len(key) + 2   # the value (the mapping)
    want = says.replace("maxKIND", "max" + kind.capitalize()).replace("KIND", kind)
    assert f"s.yaml:6:{col}: {where}: {want}" in err, err
    assert "Traceback" not in err and "cupy" not in err


def test_the_2d_limits_message_is_unchanged(tmp_path):
    from splice.probe.spec import SpecError

    with pytest.raises(SpecError, match="65537: more than the 65536 CUDA allows a 2-D surface"):
        _spec([{"name": "s", "kind": "surface", "width": 8, "height": 65537, "format": "r32f"}], tmp_path)


def test_a_1d_surface_has_the_surface_limit_not_the_texture_one(tmp_path):
    """maxSurface1D is 32768, maxTexture1D 131072: one table per kind."""
    from splice.probe.spec import SpecError

    _spec([{"name": "t", "kind": "texture", "geometry": "1d", "width": 131072, "format": "r32f",
            "fill": {"rule": "zeros"}}, {"name": "s", "kind": "surface", "geometry": "1d", "width": 32768,
                                         "format": "r32f"}], tmp_path)
    with pytest.raises(SpecError, match=r"32769: more than the 32768 CUDA allows a 1d \(1-D\) surface \(maxSurface1D"):
        _spec([{"name": "s", "kind": "surface", "geometry": "1d", "width": 32769, "format": "r32f"}], tmp_path)


# ---------------------------------------------------------------- against the kernel

def _write(tmp_path, text: str):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_a_geometry_the_kernel_does_not_use_is_refused_at_the_field(tmp_path, monkeypatch, capsys):
    """The spec says a2d, img_layered reads t1 with tex.a1d: a CUDA array read with another
    geometry gives undefined texels, the same in both modules -- "identical" would be a lie."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    text = LAYERED.format(ptx=IMAGES).replace("geometry: a1d, width: 8, layers: 3, format: r32f, fill",
                                              "geometry: a2d, width: 8, height: 1, layers: 3, format: r32f, fill", 1)
    assert main(["probe", str(_write(tmp_path, text)), str(IMAGES)]) == 2
    err = capsys.readouterr().err
    assert "s.yaml:6:3: params[0]: t1: geometry a2d, but img_layered uses this texture as a1d" in err


def test_the_right_geometries_pass_the_check(tmp_path):
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    spec = load_spec(_write(tmp_path, LAYERED.format(ptx=IMAGES)))
    check(spec, IMAGES.read_text(), str(IMAGES))


def test_an_image_only_queried_passes_with_any_geometry(tmp_path):
    """txq/suq name no geometry: the check has nothing to hold the spec to."""
    from splice.probe.check import check

    s = parse_spec({"name": "q", "ptx": str(QUERY), "entry": "img_query", "launch": {"grid": [1], "block": [1]},
                    "params": [{"name": "t", "kind": "texture", "geometry": "3d", "width": 4, "height": 3, "depth": 5,
                                "format": "r32f", "fill": {"rule": "arange"}},
                               {"name": "s", "kind": "surface", "geometry": "a1d", "width": 8, "layers": 3,
                                "format": "rgba32f"},
                               {"name": "out", "kind": "buffer", "dtype": "u32", "shape": [6], "role": "output"}]},
                   str(tmp_path / "q.yaml"))
    check(s, QUERY.read_text(), str(QUERY))


# ---------------------------------------------------------------- probe init

def test_init_fills_in_each_geometry(tmp_path):
    import yaml

    from splice.probe.init import skeleton

    text, rows = skeleton(IMAGES.read_text(), str(IMAGES), "img_layered")
    params = yaml.safe_load(text)["params"]
    keys = ("width", "height", "depth", "layers")
    got = [(p["name"], p["kind"], p.get("geometry"), sorted(k for k in keys if k in p)) for p in params[:4]]
    assert got == [("param_0", "texture", "a1d", ["layers", "width"]),
                   ("param_1", "texture", "a2d", ["height", "layers", "width"]),
                   ("param_2", "surface", "a1d", ["layers", "width"]),
                   ("param_3", "surface", "a2d", ["height", "layers", "width"])]
    assert "TODO: used" not in text
    text3, _ = skeleton(IMAGES.read_text(), str(IMAGES), "img_3d")
    assert [p.get("geometry") for p in yaml.safe_load(text3)["params"][:2]] == ["3d", "3d"]
    assert "depth: null" in text3


def test_init_says_when_an_image_has_two_geometries_and_refuses_cubes():
    from splice.probe.init import skeleton

    path = ROOT / "tests/data/ptx/modern/tex_layered_cube.ptx"
    text, _ = skeleton(path.read_text(), str(path))
    assert "TODO: used with 2 geometries, a2d (layered 2-D), 2d (2-D): one CUDA array has one geometry" in text
    assert "TODO: used as cube (a cube map), which the probe does not make" in text
    assert "geometry: a1d" in text and "geometry: a2d" in text


def test_an_init_skeleton_with_geometry_null_refuses_to_load(tmp_path, capsys):
    path = ROOT / "tests/data/ptx/modern/tex_layered_cube.ptx"
    out = tmp_path / "sk.yaml"
    assert main(["probe", "init", str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text()
    # fill in every other null: the geometry's TODO is what must stop it
    subs = {"value: null": "value: 1", "grid: null": "grid: [1]", "block: null": "block: [64]",
            "width: null": "width: 8", "height: null": "height: 8", "layers: null": "layers: 2",
            "shape: null": "shape: [64, 4]"}
    lines = text.splitlines()
    for a, b in subs.items():
        lines = [ln.replace(a, b) for ln in lines]
    out.write_text("\n".join(lines) + "\n")
    assert main(["probe", str(out), str(path)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, ln in enumerate(lines, 1) if "geometry: null" in ln)
    assert f"sk.yaml:{line}:" in err
    assert "params[0].geometry: null (a TODO left?) is not one of 1d, 2d, 3d, a1d, a2d" in err


def test_init_of_a_query_only_image_says_so():
    from splice.probe.init import skeleton

    text, rows = skeleton(QUERY.read_text(), str(QUERY))
    assert "geometry: 3d" in text and "geometry: a1d" in text       # tex.3d and sust.p.a1d name them


# ---------------------------------------------------------------- reports

def test_surface_indices_and_difference_maps_per_geometry(tmp_path):
    from splice.probe.compare import compare_output, elements
    from splice.probe.memory import _index

    s = _spec([{"name": "s", "kind": "surface", "geometry": "a2d", "width": 4, "height": 3, "layers": 2,
                "format": "rg16f"}], tmp_path)
    f = s.field("s")
    raw = np.zeros((2, 3, 8), dtype=np.float16)
    e = elements(f, raw)
    assert e.shape == (2, 3, 4, 2)
    b = raw.copy()
    b[1, 2, 2 * 3 + 1] = 1.0                     # layer 1, y 2, x 3, channel 1
    res, heat = compare_output(f, e, elements(f, b))
    assert res["first_index"] == [3, 2, 1] and res["first_xy"] == [3, 2, 1]
    assert res["layers_differ"] == {1: 1} and res["pixels_differ"] == 1
    assert heat.shape == (6, 4) and heat[3 + 2, 3] > 0 and "layers 0..1 stacked" in res["map"]
    flat = (1 * 3 * 4 + 2 * 4 + 3) * 2 + 1
    assert _index(f, flat) == [3, 2, 1, 1]


@pytest.mark.parametrize("geometry, extra, at, want, key", [
    ("1d", {}, (5,), [5], None),
    ("3d", {"height": 2, "depth": 3}, (2, 1, 5), [5, 1, 2], "slices_differ"),
    ("a1d", {"layers": 3}, (2, 5), [5, 2], "layers_differ"),
])
def test_other_geometries_report_their_first_texel(geometry, extra, at, want, key, tmp_path):
    from splice.probe.compare import compare_output, elements, output_coverage

    f = _spec([{"name": "s", "kind": "surface", "geometry": geometry, "width": 8, "format": "r32f", **extra}],
              tmp_path).field("s")
    from splice.probe.images import host_shape

    a = np.zeros(host_shape(f, 1), dtype=np.float32)
    b = a.copy()
    b[at] = 2.0
    res, heat = compare_output(f, elements(f, a), elements(f, b))
    assert res["first_xy"] == want and heat.ndim == 2 and heat.shape[1] == 8
    assert (res.get(key) == {at[0]: 1}) if key else ("layers_differ" not in res)
    cov = output_coverage(f, elements(f, np.full(host_shape(f, 1), np.float32(np.nan))))
    assert cov["uncovered"] == 0 and cov["nonfinite"] == a.size


# ---------------------------------------------------------------- the device path, faked

class _Rt:
    """Just the cupy.cuda.runtime entry points images.create uses; a CUDA array is a host numpy
    array of its host layout, and memcpy3DAsync interprets the ctypes struct images.py wrote."""
    cudaChannelFormatKindFloat, cudaChannelFormatKindUnsigned = 2, 1
    cudaArraySurfaceLoadStore = 2                    # cupy has no cudaArrayLayered (images.CUDA_ARRAY_LAYERED)
    cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, cudaResourceTypeArray = 1, 0, 0, 0
    memcpyHostToDevice, memcpyDeviceToHost, memcpyDeviceToDevice = 1, 2, 3

    def __init__(self):
        self.arrays: dict = {}
        self.objects: dict = {}

    def malloc3DArray(self, desc, w, h, d, flags):
        ptr = 0x1000 + 0x100 * len(self.arrays)
        self.arrays[ptr] = (w, h, d, flags, np.zeros((d, 4 * w), dtype=np.uint8))   # 1-D layered, 4-byte texels
        return ptr

    def memcpy3DAsync(self, at, stream):
        from splice.probe.images import _Memcpy3DParms

        p = _Memcpy3DParms.from_address(at)
        assert tuple(p.extent) == (self.arrays[p.dstArray or p.srcArray][0], 1,
                                   self.arrays[p.dstArray or p.srcArray][2])
        if p.dstArray:
            w, h, d, flags, mem = self.arrays[p.dstArray]
            src = (ctypes.c_uint8 * (p.srcPtr.pitch * d)).from_address(p.srcPtr.ptr)
            mem[...] = np.frombuffer(src, dtype=np.uint8).reshape(d, p.srcPtr.pitch)
        else:
            w, h, d, flags, mem = self.arrays[p.srcArray]
            dst = (ctypes.c_uint8 * (p.dstPtr.pitch * d)).from_address(p.dstPtr.ptr)
            np.frombuffer(dst, dtype=np.uint8).reshape(d, p.dstPtr.pitch)[...] = mem

    def createSurfaceObject(self, at):
        res = (ctypes.c_uint8 * 16).from_address(at)
        assert ctypes.c_int.from_buffer(res, 0).value == 0
        handle = 77 + len(self.objects)
        self.objects[handle] = ctypes.c_void_p.from_buffer(res, 8).value
        return handle

    createTextureObject = lambda self, at, td: self.createSurfaceObject(at)     # noqa: E731

    def destroySurfaceObject(self, h):
        self.objects.pop(h)

    destroyTextureObject = destroySurfaceObject

    def freeArray(self, ptr):
        self.arrays.pop(ptr)

    def deviceSynchronize(self):
        pass


def test_a_layered_1d_surface_goes_through_its_own_array_and_object(tmp_path):
    """cupy's CUDAarray refuses {width, 0, layers}; images.Layered1D makes it with
    malloc3DArray and copies with a cudaMemcpy3DParms of extent {width, 1, layers}."""
    from splice.probe import images
    from splice.probe.inputs import surface_poison

    rt = _Rt()
    tex = SimpleNamespace(ChannelFormatDescriptor=lambda *a: SimpleNamespace(ptr=1),
                          TextureDescriptor=lambda **k: SimpleNamespace(ptr=2))
    cp = SimpleNamespace(cuda=SimpleNamespace(runtime=rt, texture=tex))
    f = _spec([{"name": "s", "kind": "surface", "geometry": "a1d", "width": 5, "layers": 3, "format": "r32f",
                "role": "inout", "fill": {"rule": "arange"}}], tmp_path).field("s")
    from splice.probe.inputs import texture_texels

    handle, arr, keep = images.create(cp, f, texture_texels(f, 0))
    (ptr,) = rt.arrays
    assert rt.arrays[ptr][:4] == (5, 0, 3, 1 | rt.cudaArraySurfaceLoadStore)
    assert rt.objects[handle] == ptr
    back = np.empty(images.host_shape(f, 1), dtype=np.float32)
    arr.copy_to(back)
    assert np.array_equal(back, np.arange(15, dtype=np.float32).reshape(3, 5))
    arr.copy_from(surface_poison(f))
    arr.copy_to(back)
    assert (back.view(np.uint32) == 0xFFFFFFFF).all()
    del keep, arr
    import gc

    gc.collect()
    assert not rt.arrays and not rt.objects


def test_the_gpu_tests_specs_pass_every_check_before_the_gpu(tmp_path):
    """The specs of tests/test_probe_images_gpu.py, against images.ptx and images_wrong.ptx: the
    GPU run fails only on the GPU side."""
    from splice.probe.check import check
    from tests.test_probe_images_gpu import SPECS, WRONG, _query_spec, _spec_dict

    for entry in SPECS:
        for ptx in (IMAGES, WRONG):
            check(parse_spec(_spec_dict(entry, ptx), str(tmp_path / "s.yaml")), ptx.read_text(), str(ptx))
    check(parse_spec(_query_spec(), str(tmp_path / "q.yaml")), QUERY.read_text(), str(QUERY))


def test_a_module_the_driver_refuses_to_load_is_an_error_naming_it(tmp_path):
    """``suq.array_size`` compiles with ptxas 13 for sm_90, and an H200's driver (580) refuses the
    cubin with CUDA_ERROR_NOT_SUPPORTED when cupy first asks for the kernel: that was a
    CUDADriverError traceback out of the probe's inputs stage."""
    from splice.errors import SpliceError
    from splice.probe.device import Device

    class CUDADriverError(Exception):
        pass

    def refuse(entry):
        raise CUDADriverError("CUDA_ERROR_NOT_SUPPORTED: operation not supported")

    dev = Device.__new__(Device)
    dev.cp = SimpleNamespace(RawModule=lambda path: SimpleNamespace(get_function=refuse))
    dev.spec = _spec([{"name": "s", "kind": "surface", "width": 4, "height": 4, "format": "r32f"}], tmp_path)
    dev.modules = {}
    with pytest.raises(SpliceError, match="the driver refuses to load the spliced module .CUDA_ERROR_NOT_SUPPORTED"):
        dev.load("spliced", tmp_path / "x.cubin")


IMAGE_KEYS = ("geometry", "width", "height", "depth", "layers")


@pytest.mark.parametrize("key", IMAGE_KEYS)
def test_every_image_key_of_every_wrong_value_is_exit_2(key, tmp_path, monkeypatch, capsys):
    """The wrong values of every YAML type (tests/hostile/base/wrong-values.yaml: null, a list, a
    mapping, huge, a float, a bool, empty, negative, an int) in each image key of a 3-D texture
    and a 2-D layered surface: exit 2 naming the spec at a line, never a traceback; before, a list
    in geometry: was one."""
    import yaml

    WRONG = yaml.safe_load((Path(__file__).parent / "hostile" / "base" / "wrong-values.yaml").read_text())
    monkeypatch.setitem(sys.modules, "cupy", None)
    base = {"geometry": "3d", "width": "4", "height": "3", "depth": "5"}
    for kind, value in WRONG.items():
        if key != "geometry" and value == "5":
            continue                    # a valid extent
        t = {**base, key: value}
        s = {"geometry": "a2d", "width": "8", "height": "2", "layers": "3", key: value}
        keys_t = ", ".join(f"{k}: {v}" for k, v in t.items())
        keys_s = ", ".join(f"{k}: {v}" for k, v in s.items())
        spec = tmp_path / f"{kind}.yaml"
        spec.write_text(f"name: q\nptx: {QUERY}\nentry: img_query\nlaunch: {{grid: [1], block: [1]}}\nparams:\n"
                        f"- {{name: t, kind: texture, {keys_t}, format: r32f, fill: {{rule: arange}}}}\n"
                        f"- {{name: s, kind: surface, {keys_s}, format: rgba32f}}\n"
                        "- {name: out, kind: buffer, dtype: u32, shape: [6], role: output}\n")
        rc = main(["probe", str(spec), str(QUERY)])
        err = capsys.readouterr().err
        assert rc == 2 and f"{kind}.yaml:" in err and "Traceback" not in err, (key, value, err)
