"""The tensor-map encoder (splice/probe/kinds/tma_encoding.py): every rule of the CUDA driver API
checked on the CPU, each refusal naming its rule; what reaches libcuda (a 64-byte-aligned map,
no NULL array: a rank-1 map's unread stride); the mutant bench's map encoded by it."""
from __future__ import annotations

import ctypes
import dataclasses
import sys
from pathlib import Path

import pytest

from splice.probe.kinds.tma_encoding import DATA_TYPES, MapRefused, MapRequest, encode, refusal

ROOT = Path(__file__).resolve().parents[1]

#: the asynchronous-proxy mutants' map (bench/mutants_async.py): rank 1, 1024 u32, box 4
MUTANT = MapRequest(data_type="UINT32", address=0x7F00_0000_2000, dims=(1024,), strides=(),
                    element_strides=(1,), box=(4,))
#: a 2-D f16 tile with a 128B swizzle, as a GEMM's A operand
TILE = MapRequest(data_type="FLOAT16", address=0x7F00_0001_0000, dims=(256, 256), strides=(512,),
                  element_strides=(1, 1), box=(64, 64), swizzle="128B", l2_promotion="L2_128B")


def _with(r: MapRequest, **kw) -> MapRequest:
    return dataclasses.replace(r, **kw)


class Driver:
    """libcuda's two encoders, recording the C arguments and writing a map."""

    def __init__(self, result: int = 0):
        self.calls: list = []
        self.result = result

    def _call(self, name, args):
        self.calls.append((name, args))
        ctypes.memmove(args[0].value, bytes(range(128)), 128)
        return self.result

    def cuTensorMapEncodeTiled(self, *args):
        return self._call("tiled", args)

    def cuTensorMapEncodeIm2col(self, *args):
        return self._call("im2col", args)


def test_the_mutant_map_and_a_gemm_tile_keep_every_rule():
    assert refusal(MUTANT) is None and refusal(TILE) is None


BROKEN = [
    ("rank 0", _with(MUTANT, dims=(), strides=(), box=(), element_strides=()), "tensorRank"),
    ("rank 6", _with(TILE, dims=(2,) * 6, strides=(16,) * 5, box=(8,) * 6, element_strides=(1,) * 6,
                     swizzle="NONE"), "tensorRank"),
    ("interleave at rank 2", _with(TILE, interleave="16B", swizzle="NONE"), "tensorRank"),
    ("unknown data type", _with(MUTANT, data_type="UINT128"), "tensorDataType"),
    ("address off 16", _with(MUTANT, address=MUTANT.address + 8), "globalAddress"),
    ("address off 32 with a 32B interleave",
     _with(TILE, dims=(64, 4, 4), strides=(128, 512), box=(16, 4, 4), element_strides=(1, 1, 1),
           interleave="32B", swizzle="32B", address=TILE.address + 16), "globalAddress"),
    ("dim 0", _with(MUTANT, dims=(0,)), "globalDim"),
    ("dim above 2^32", _with(MUTANT, dims=((1 << 32) + 1,)), "globalDim"),
    ("a stride given for rank 1", _with(MUTANT, strides=(4096,)), "globalStrides"),
    ("a stride missing for rank 2", _with(TILE, strides=()), "globalStrides"),
    ("stride off 16", _with(TILE, strides=(520,)), "globalStrides"),
    ("stride of 2^40", _with(TILE, strides=(1 << 40,)), "globalStrides"),
    ("box of 257", _with(TILE, box=(64, 257)), "boxDim"),
    ("box of 0", _with(TILE, box=(0, 64)), "boxDim"),
    ("box per dimension", _with(TILE, box=(64,)), "boxDim"),
    ("inner box 12 bytes", _with(MUTANT, box=(3,)), "boxDim"),
    ("inner box beyond the swizzle", _with(TILE, box=(128, 64), swizzle="128B"), "swizzle"),
    ("inner box beyond a 32B swizzle", _with(TILE, box=(32, 64), swizzle="32B"), "swizzle"),
    ("element stride 9", _with(TILE, element_strides=(1, 9)), "elementStrides"),
    ("element stride 0", _with(MUTANT, element_strides=(0,)), "elementStrides"),
    ("element strides per dimension", _with(TILE, element_strides=(1,)), "elementStrides"),
    ("NaN fill of an integer type", _with(MUTANT, oob_fill="NAN_REQUEST_ZERO_FMA"), "oobFill"),
    ("im2col at rank 2", _with(TILE, mode="im2col", box=()), "tensorRank"),
    ("im2col of 300 channels", MapRequest(data_type="FLOAT16", address=0x1000, dims=(8, 8, 8), strides=(16, 128),
                                          element_strides=(1, 1, 1), mode="im2col", lower_corner=(0,),
                                          upper_corner=(0,), channels_per_pixel=300, pixels_per_column=8),
     "channelsPerPixel"),
    ("im2col corners per spatial dimension",
     MapRequest(data_type="FLOAT16", address=0x1000, dims=(8, 8, 8), strides=(16, 128), element_strides=(1, 1, 1),
                mode="im2col", lower_corner=(0, 0), upper_corner=(0,), channels_per_pixel=8, pixels_per_column=8),
     "pixelBoxLowerCorner"),
]


@pytest.mark.parametrize("label, request_, rule", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_rule_refuses_on_the_cpu_naming_itself(label, request_, rule):
    """Every broken rule is found before the driver is called, and the message names it."""
    drv = Driver()
    assert refusal(request_)[0] == rule, label
    with pytest.raises(MapRefused) as e:
        encode(request_, "map m", "s.yaml", 7, lib=drv)
    assert e.value.rule == rule and f"the driver's rule: {rule}" in e.value.message
    assert e.value.message.startswith("map m: the driver would refuse this tensor map")
    assert not drv.calls


def test_a_refused_map_exits_2_with_the_file_and_line(capsys):
    """A refusal is a user error: splice's CLI handler prints it with the spec's file and line."""
    from splice.errors import SpliceError

    err = MapRefused("globalAddress", "map m: the driver would refuse this tensor map: off", "s.yaml", 7)
    assert isinstance(err, SpliceError) and "s.yaml" in str(err) and "7" in str(err)


def test_a_rank_1_map_reaches_libcuda_with_a_stride_array_and_an_aligned_map():
    """cuda-bindings passes an empty list as NULL; here a rank-1 map's globalStrides is a real
    array of one (unread) stride, the tensor's bytes rounded up to 16, and the map 64-aligned."""
    drv = Driver()
    raw = encode(MUTANT, "mutant map", lib=drv)
    ((name, args),) = drv.calls
    tmap, dtype, rank, address, dims, strides, box, elem = args[:8]
    assert name == "tiled" and tmap.value % 64 == 0
    assert (dtype.value, rank.value, address.value) == (DATA_TYPES["UINT32"][0], 1, MUTANT.address)
    assert list(dims) == [1024] and list(strides) == [4096] and list(box) == [4] and list(elem) == [1]
    assert all(ctypes.addressof(a) for a in (dims, strides, box, elem))
    assert [a.value for a in args[8:]] == [0, 0, 0, 0] and raw == bytes(range(128))


def test_an_unforeseen_refusal_names_the_call_and_the_result():
    from splice.errors import SpliceError

    with pytest.raises(SpliceError, match=r"cuTensorMapEncodeTiled refused the map \(CUresult 1\).*dims \[1024\]"):
        encode(MUTANT, "mutant map", lib=Driver(result=1))


def test_an_im2col_map_passes_its_corners_and_pixels():
    r = MapRequest(data_type="FLOAT16", address=0x1000, dims=(64, 8, 8, 2), strides=(128, 1024, 8192),
                   element_strides=(1, 1, 1, 1), mode="im2col", lower_corner=(-1, -1), upper_corner=(1, 1),
                   channels_per_pixel=64, pixels_per_column=32)
    drv = Driver()
    encode(r, "conv map", lib=drv)
    ((name, args),) = drv.calls
    assert name == "im2col" and list(args[6]) == [-1, -1] and list(args[7]) == [1, 1]
    assert (args[8].value, args[9].value, list(args[10])) == (64, 32, [1, 1, 1, 1])


def test_the_mutant_bench_encodes_through_it_and_refuses_before_the_gpu(monkeypatch):
    """bench/mutants_async.py's map is this module's request; verify_mutants checks it on the
    CPU before any GPU work and stops with the rule (exit status 2)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import mutants_async as ma
    import verify_mutants as vm

    assert ma.tensor_map_request(0x7F00_0000_0000) == _with(MUTANT, address=0x7F00_0000_0000 + ma.TENSOR_OFFSET)
    assert vm.tensor_map_refusal() == ""
    monkeypatch.setattr(ma, "BOX", 3)                   # 12 bytes: not a multiple of 16
    assert "boxDim" in vm.tensor_map_refusal()
    monkeypatch.setattr(sys, "argv", ["verify_mutants.py", "--dry-run"])
    assert vm.main() == 2
