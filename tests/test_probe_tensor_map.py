"""kind: tensor_map -- a TMA tensor map over a buffer of the spec: its keys and checks, its check
against the PTX .param, probe init's lines for it, its encoding (libcuda through tma_encoding, faked here: the
driver is on the GPU machine) and its place in the argument pack, without a GPU."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
import yaml

from splice.probe.language.context import SpecError
from splice.probe.language.document import load_spec, parse_spec
from splice.probe.language.entry import check

ROOT = Path(__file__).resolve().parents[1]
TMA = ROOT / "corpus/tma/tma_wgmma_gemm_sm90a.ptx"
SPEC = ROOT / "probes/tma_wgmma_gemm_sm90a.yaml"


def _doc(**map_keys) -> dict:
    d = yaml.safe_load(SPEC.read_text())
    d["params"][0].update(map_keys)
    return d


def _parse(d: dict):
    return parse_spec(d, str(ROOT / "probes/t.yaml"))


def test_the_bundled_spec_reads_two_maps_each_after_its_tensor():
    spec = load_spec(SPEC)
    kinds = [(f.name, f.kind) for f in spec.fields]
    assert kinds[:4] == [("A", "buffer"), ("map_a", "tensor_map"), ("B", "buffer"), ("map_b", "tensor_map")]
    m = spec.field("map_a")
    assert (m.size, m.align, m.dims, m.strides, m.box, m.swizzle) == (128, 128, (256, 256), (512,), (64, 64), "128B")
    assert spec.params[0].size == 128 and spec.params[0].align == 128
    assert not m.is_output and spec.field("A").role == "input"
    check(spec, TMA.read_text(), str(TMA))        # the PTX's .param .align 128 .b8 [128] fits


@pytest.mark.parametrize("keys, key, says", [
    ({"strides": [500]}, "strides[0]", "a multiple of 16"),
    ({"box": [4, 64]}, "box[0]", "multiple of 16 bytes"),
    ({"box": [128, 64]}, "box[0]", "more than the 128 a 128B swizzle spans"),
    ({"box": [64, 300]}, "box[1]", "expected an integer in 1..256"),
    ({"box": [64]}, "box", "expected a list of 2 integer(s)"),
    ({"dims": [256, 512]}, "dims", "beyond A's 131072"),
    ({"swizzle": "96B"}, "swizzle", "is not one of none, 32B"),
    ({"swizzle": None}, "swizzle", "null (a TODO left?)"),
    ({"dims": [None, None]}, "dims[0]", "expected an integer"),
    ({"element_strides": [1, 9]}, "element_strides[1]", "1..8"),
    ({"pass": "pointer"}, "pass", "is not one of value, global"),
    ({"mode": "im2col", "dims": [256, 256]}, "dims", "3 to 5 integers"),
    ({"interleave": "16B", "swizzle": "none"}, "dims", "rank 2: a map has 3 to 5 dimensions with an interleave"),
    ({"oob_fill": "nan", "dtype": "u16"}, "oob_fill", "for floating-point types only (the driver's rule: oobFill)"),
])
def test_a_map_that_cannot_be_encoded_is_refused_at_its_key(keys, key, says):
    with pytest.raises(SpecError) as e:
        _parse(_doc(**keys))
    assert e.value.key == f"params[0].{key}" and says in str(e.value), str(e.value)


def test_the_tensor_is_a_buffer_of_its_own_keys():
    d = _doc()
    d["params"][0]["tensor"]["width"] = 4
    with pytest.raises(SpecError, match=r"params\[0\]\.tensor\.width: unknown key"):
        _parse(d)
    d = _doc()
    d["params"][0]["tensor"]["dtype"] = "b32"
    with pytest.raises(SpecError, match="not a buffer element type"):
        _parse(d)


def test_against_the_ptx_param_by_value_or_by_address(tmp_path):
    text = TMA.read_text()
    spec = _parse(_doc(align=64))
    with pytest.raises(SpecError, match="align 64, but the PTX declares .align 128"):
        check(spec, text, str(TMA))
    spec = _parse(_doc(**{"pass": "global"}))
    with pytest.raises(SpecError, match=r"pass: global, 8 bytes.*128 bytes"):
        check(spec, text, str(TMA))
    u64 = text.replace(".param .align 128 .b8 splice_tma_wgmma_gemm_param_0[128]",
                       ".param .u64 splice_tma_wgmma_gemm_param_0")
    with pytest.raises(SpecError, match=r"128 bytes by value.*8 bytes"):
        check(_parse(_doc()), u64, "u64.ptx")
    assert check(_parse(_doc(**{"pass": "global"})), u64, "u64.ptx").name == "splice_tma_wgmma_gemm"


def test_probe_init_writes_what_the_ptx_shows_and_marks_the_rest():
    from splice.probe.language.init import skeleton

    text, rows = skeleton(TMA.read_text(), str(TMA))
    assert [r["kind"] for r in rows] == ["tensor_map", "tensor_map", "buffer", "scalar", "scalar", "scalar"]
    assert rows[0]["rank"] == 2 and rows[0]["mode"] == "tiled" and rows[0]["role"] == "input"
    d = yaml.safe_load(text)
    m = d["params"][0]
    assert m["kind"] == "tensor_map" and m["align"] == 128 and m["dims"] == [None, None] and m["swizzle"] is None
    assert m["tensor"]["role"] == "input" and m["tensor"]["dtype"] is None
    with pytest.raises(SpecError, match=r"tensor\.dtype: null \(a TODO left\?\)"):   # TODOs refuse to load
        parse_spec(d, str(TMA.parent / "s.yaml"))


def test_tma_kernels_of_the_corpus_get_tensor_maps():
    from splice.probe.language.init import skeleton

    for name in ("tma_modes_sm90a.ptx", "triton_matmul_tma_sm90a.ptx", "ws_pipeline_tma_wgmma_sm90a.ptx"):
        path = ROOT / "tests/data/ptx/modern" / name
        text, rows = skeleton(path.read_text(), str(path))
        assert any(r["kind"] == "tensor_map" for r in rows), (name, rows)


# ---------------------------------------------------------------------------- encoding, faked

class _FakeDriver:
    """libcuda as far as the encoder calls it: each call's C arguments read back, the map's 128
    bytes written where the encoder asked (the tensor's address in its first word)."""

    def __init__(self, result: int = 0):
        self.calls: list = []
        self.result = result

    def cuTensorMapEncodeTiled(self, *args):
        tmap, dtype, rank, address, dims, strides, box, elem = args[:8]
        self.calls.append({"map": tmap.value, "dtype": dtype.value, "rank": rank.value, "address": address.value,
                           "dims": list(dims), "strides": list(strides), "box": list(box), "elem": list(elem),
                           "enums": [a.value for a in args[8:]]})
        words = (ctypes.c_uint64 * 16)(*(address.value + i for i in range(16)))
        ctypes.memmove(tmap.value, words, 128)
        return self.result


@pytest.fixture
def fake_driver(monkeypatch):
    from splice.probe.kinds import tma_encoding

    drv = _FakeDriver()
    monkeypatch.setattr(tma_encoding, "driver_library", lambda: drv)
    return drv


def test_encode_passes_every_key_to_the_driver(fake_driver):
    m = load_spec(SPEC).field("map_a")
    raw = m.encode(0x7000_0000_0000, "s.yaml")
    (c,) = fake_driver.calls
    assert (c["dtype"], c["rank"], c["address"]) == (6, 2, 0x7000_0000_0000)          # FLOAT16
    assert (c["dims"], c["strides"], c["box"], c["elem"]) == ([256, 256], [512], [64, 64], [1, 1])
    assert c["enums"] == [0, 3, 2, 0]        # interleave NONE, swizzle 128B, L2 128B, OOB fill NONE (cuda.h)
    assert c["map"] % 64 == 0                # the driver's rule on the map's own address
    assert len(raw) == 128 and int.from_bytes(raw[:8], "little") == 0x7000_0000_0000


def test_a_refused_encode_names_the_field_and_the_cuesult(fake_driver):
    from splice.errors import SpliceError

    fake_driver.result = 1                   # CUDA_ERROR_INVALID_VALUE
    with pytest.raises(SpliceError, match="tensor_map map_a over A: cuTensorMapEncodeTiled refused the map "
                                          r"\(CUresult 1\)"):
        load_spec(SPEC).field("map_a").encode(0x1000, "s.yaml")


def test_a_map_the_driver_would_refuse_names_the_rule_before_the_driver(fake_driver):
    """An address off the 16-byte grid (a tensor buffer the spec placed there) is refused on the
    CPU, naming the driver's rule; the driver is never called."""
    from splice.probe.kinds.tma_encoding import MapRefused

    with pytest.raises(MapRefused, match="globalAddress") as e:
        load_spec(SPEC).field("map_a").encode(0x1008, "s.yaml")
    assert e.value.rule == "globalAddress" and not fake_driver.calls


def test_the_map_reaches_the_kernel_by_value_over_its_tensor(fake_driver):
    """Through the probe's device path (a fake cupy): the tensor allocated first, the map encoded
    over its address, the map's 128 bytes at .param 0 and 1 (128-aligned), C's pointer at 2."""
    from splice.probe.run.device import Device
    from tests.test_probe_device import FakeCupy

    spec = load_spec(SPEC)
    seen = {}

    def kernel(kp):
        ptrs = (ctypes.c_uint64 * 6).from_address(kp)
        seen["a"] = ctypes.string_at(int(ptrs[0]), 128)
        seen["b"] = ctypes.string_at(int(ptrs[1]), 128)
        seen["c"] = int.from_bytes(ctypes.string_at(int(ptrs[2]), 8), "little")
        seen["aligned"] = int(ptrs[0]) % 128 == 0 and int(ptrs[1]) % 128 == 0

    dev = Device(spec, FakeCupy([kernel]))
    dev.load("original", "o.cubin")
    dev.render("original")
    assert int.from_bytes(seen["a"][:8], "little") == dev.handles["A"]
    assert int.from_bytes(seen["b"][:8], "little") == dev.handles["B"]
    assert seen["c"] == dev.handles["C"] and seen["aligned"]
    A = dev.views["A"].a.view(np.float16)
    assert A.size == 256 * 256 and np.isfinite(A).all() and A.std() > 0.1     # filled as its fill says
