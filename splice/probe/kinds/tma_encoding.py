"""Encoding a TMA tensor map (``CUtensorMap``, 128 bytes): the driver's rules checked on the CPU,
then ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` called in libcuda itself.

Everything that encodes a map goes through :func:`encode` (``kind: tensor_map`` and the
asynchronous-proxy mutants of ``bench/mutants_async.py``), so a map the driver would refuse is
refused here first, naming the rule it breaks (a :class:`MapRefused`, exit status 2), instead of
the driver's bare ``CUDA_ERROR_INVALID_VALUE`` after the GPU run started.  The rules are the
CUDA driver API's (Tensor Map Object Management, ``cuTensorMapEncodeTiled``): rank 1..5 (3..5
with an interleave or in im2col mode); ``globalAddress`` 16-byte aligned (32 with a 32B
interleave); each ``globalDim`` 1..2^32; ``tensorRank - 1`` ``globalStrides``, each a multiple of
16 (32 with a 32B interleave) below 2^40; each ``boxDim`` 1..256 and, without interleave,
``boxDim[0] x element size`` a multiple of 16 bytes and within the swizzle's span; each
``elementStrides`` 1..8; the NaN out-of-bounds fill only for a floating-point type; the map
itself 64-byte aligned.

Why libcuda through ctypes and not cuda-bindings' wrapper: on an H200 (driver 13.0, cuda-bindings
13.3.1) that wrapper returned ``CUDA_ERROR_INVALID_VALUE`` for every rank-1 map of the mutant bench
although every documented rule held.  The cause, measured on 2026-12-02
(docs/results/tensor-map-encode-h200-2026-12-02): the wrapper passes an empty ``globalStrides``
list (a rank-1 map has none) as a NULL pointer, and the driver refuses NULL whatever the rank
(libcuda called directly: NULL refused, a real array accepted; the wrapper with a one-element
list: accepted).  The wrapper also encodes into a struct inside a Python object, whose address
only the allocator's 16-byte alignment is sure of where the driver requires 64.  Here the map is
written into a 64-byte-aligned buffer of our own and every array is a real array (a rank-1 map
gets one stride the driver does not read: the tensor's byte size rounded up to 16).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ...errors import SpliceError

MAP_BYTES = 128
MAP_ALIGN = 64
MAX_RANK = 5
#: CUtensorMapDataType (cuda.h): value, element bytes, floating point
DATA_TYPES = {"UINT8": (0, 1, False), "UINT16": (1, 2, False), "UINT32": (2, 4, False), "INT32": (3, 4, False),
              "UINT64": (4, 8, False), "INT64": (5, 8, False), "FLOAT16": (6, 2, True), "FLOAT32": (7, 4, True),
              "FLOAT64": (8, 8, True), "BFLOAT16": (9, 2, True), "FLOAT32_FTZ": (10, 4, True),
              "TFLOAT32": (11, 4, True), "TFLOAT32_FTZ": (12, 4, True)}
INTERLEAVE = {"NONE": 0, "16B": 1, "32B": 2}
SWIZZLE = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3, "128B_ATOM_32B": 4, "128B_ATOM_32B_FLIP_8B": 5,
           "128B_ATOM_64B": 6}
#: the bytes a swizzle pattern spans: a box's inner extent fits in it
SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128, "128B_ATOM_32B": 128, "128B_ATOM_32B_FLIP_8B": 128,
                "128B_ATOM_64B": 128}
L2_PROMOTION = {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}
OOB_FILL = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}


@dataclass(frozen=True)
class MapRequest:
    """One map, in the driver's terms (enum members by their cuda.h names without prefix)."""
    data_type: str
    address: int
    dims: tuple                  # globalDim, innermost first
    strides: tuple               # globalStrides in bytes of dims 1.. (rank - 1 of them)
    element_strides: tuple
    box: tuple = ()              # tiled: boxDim
    mode: str = "tiled"          # or im2col
    lower_corner: tuple = ()     # im2col: pixelBoxLowerCorner / UpperCorner, channels, pixels
    upper_corner: tuple = ()
    channels_per_pixel: int = 0
    pixels_per_column: int = 0
    interleave: str = "NONE"
    swizzle: str = "NONE"
    l2_promotion: str = "NONE"
    oob_fill: str = "NONE"

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_bytes(self) -> int:
        return DATA_TYPES[self.data_type][1]


class MapRefused(SpliceError):
    """A map the driver's rules refuse; ``rule`` names the rule."""

    def __init__(self, rule: str, message: str, where=None, line: Optional[int] = None):
        super().__init__(f"{message} (the driver's rule: {rule})", where, line)
        self.rule = rule


def refusal(r: MapRequest) -> Optional[tuple]:
    """(rule, what breaks it) for the first driver rule ``r`` breaks, None when it breaks none."""
    for check in (_rank_rule, _enum_rule, _address_rule, _dims_rule, _strides_rule, _box_rule,
                  _element_strides_rule, _im2col_rule, _oob_rule):
        why = check(r)
        if why is not None:
            return why
    return None


def _rank_rule(r: MapRequest):
    low = 3 if r.interleave != "NONE" or r.mode == "im2col" else 1
    if not low <= r.rank <= MAX_RANK:
        return ("tensorRank", f"rank {r.rank}: a map has {low} to {MAX_RANK} dimensions"
                + (" with an interleave or in im2col mode" if low == 3 else ""))
    return None


def _enum_rule(r: MapRequest):
    for name, value, table in (("tensorDataType", r.data_type, DATA_TYPES), ("interleave", r.interleave, INTERLEAVE),
                               ("swizzle", r.swizzle, SWIZZLE), ("l2Promotion", r.l2_promotion, L2_PROMOTION),
                               ("oobFill", r.oob_fill, OOB_FILL), ("mode", r.mode, {"tiled": 0, "im2col": 1})):
        if value not in table:
            return (name, f"{name} {value!r}: not one of {', '.join(table)}")
    return None


def _address_rule(r: MapRequest):
    align = 32 if r.interleave == "32B" else 16
    if r.address % align:
        return ("globalAddress", f"global address {r.address:#x}: not {align}-byte aligned")
    return None


def _dims_rule(r: MapRequest):
    for i, n in enumerate(r.dims):
        if not 0 < n <= 1 << 32:
            return ("globalDim", f"dims[{i}] = {n}: each extent is 1 to 2^32")
    return None


def _strides_rule(r: MapRequest):
    if len(r.strides) != r.rank - 1:
        return ("globalStrides", f"{len(r.strides)} strides for rank {r.rank}: one per dimension after the "
                                 f"first ({r.rank - 1})")
    multiple = 32 if r.interleave == "32B" else 16
    for i, s in enumerate(r.strides):
        if s % multiple or not 0 <= s < 1 << 40:
            return ("globalStrides", f"strides[{i}] = {s} bytes: each stride is a multiple of {multiple} "
                                     "below 2^40")
    return None


def _box_rule(r: MapRequest):
    if r.mode != "tiled":
        return None
    if len(r.box) != r.rank or any(not 0 < b <= 256 for b in r.box):
        return ("boxDim", f"box {list(r.box)}: one extent per dimension ({r.rank}), each 1 to 256")
    inner = r.box[0] * r.element_bytes
    if r.interleave == "NONE" and inner % 16:
        return ("boxDim", f"box[0] = {r.box[0]} x {r.element_bytes} bytes = {inner}: without interleave a box's "
                          "inner extent is a multiple of 16 bytes")
    if r.interleave == "NONE" and r.swizzle in SWIZZLE_SPAN and inner > SWIZZLE_SPAN[r.swizzle]:
        return ("swizzle", f"box[0] = {inner} bytes: more than the {SWIZZLE_SPAN[r.swizzle]} bytes a "
                           f"{r.swizzle} swizzle spans")
    return None


def _element_strides_rule(r: MapRequest):
    if len(r.element_strides) != r.rank or any(not 0 < e <= 8 for e in r.element_strides):
        return ("elementStrides", f"element strides {list(r.element_strides)}: one per dimension ({r.rank}), "
                                  "each 1 to 8")
    return None


def _im2col_rule(r: MapRequest):
    if r.mode != "im2col":
        return None
    if len(r.lower_corner) != r.rank - 2 or len(r.upper_corner) != r.rank - 2:
        return ("pixelBoxLowerCorner", f"corners {list(r.lower_corner)}, {list(r.upper_corner)}: one value per "
                                       f"spatial dimension ({r.rank - 2})")
    if not 0 < r.channels_per_pixel <= 256:
        return ("channelsPerPixel", f"{r.channels_per_pixel} channels per pixel: 1 to 256")
    if not 0 < r.pixels_per_column <= 1024:
        return ("pixelsPerColumn", f"{r.pixels_per_column} pixels per column: 1 to 1024")
    return None


def _oob_rule(r: MapRequest):
    if r.oob_fill != "NONE" and not DATA_TYPES[r.data_type][2]:
        return ("oobFill", f"the NaN out-of-bounds fill with {r.data_type}: it is for floating-point types only")
    return None


def encode(r: MapRequest, what: str, where=None, line: Optional[int] = None, lib: Any = None) -> bytes:
    """The map's 128 bytes: ``r`` checked against the driver's rules (:class:`MapRefused`
    naming the rule), then encoded by libcuda (``lib``: the loaded driver library, for tests)
    into a 64-byte-aligned buffer; a refusal the rules did not foresee is a SpliceError with the
    driver's CUresult.  ``what`` names the map in messages."""
    why = refusal(r)
    if why is not None:
        raise MapRefused(why[0], f"{what}: the driver would refuse this tensor map: {why[1]}", where, line)
    lib = lib if lib is not None else driver_library()
    store = np.zeros(MAP_BYTES + MAP_ALIGN, dtype=np.uint8)
    at = (-store.ctypes.data) % MAP_ALIGN
    out = store[at:at + MAP_BYTES]
    call = "cuTensorMapEncodeTiled" if r.mode == "tiled" else "cuTensorMapEncodeIm2col"
    fn = getattr(lib, call)
    err = fn(*_arguments(r, out.ctypes.data))
    if int(err) != 0:
        raise SpliceError(f"{what}: {call} refused the map (CUresult {int(err)}) although it keeps every rule "
                          f"checked here: {describe(r)}", where, line)
    return out.tobytes()


def driver_library():
    """libcuda (the driver a cupy process has loaded already)."""
    return ctypes.CDLL("libcuda.so.1")


def _arguments(r: MapRequest, map_address: int) -> tuple:
    """The C arguments, every array a real one (a rank-1 map's one unread stride: never NULL)."""
    u64, u32, i32 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
    strides = r.strides or (-(-r.dims[0] * r.element_bytes // 16) * 16,)
    head = (ctypes.c_void_p(map_address), i32(DATA_TYPES[r.data_type][0]), u32(r.rank), ctypes.c_void_p(r.address),
            (u64 * r.rank)(*r.dims), (u64 * len(strides))(*strides))
    tail = (i32(INTERLEAVE[r.interleave]), i32(SWIZZLE[r.swizzle]), i32(L2_PROMOTION[r.l2_promotion]),
            i32(OOB_FILL[r.oob_fill]))
    elem = (u32 * r.rank)(*r.element_strides)
    if r.mode == "tiled":
        return head + ((u32 * r.rank)(*r.box), elem) + tail
    corners = max(r.rank - 2, 1)
    lower = (ctypes.c_int * corners)(*(r.lower_corner or (0,)))
    upper = (ctypes.c_int * corners)(*(r.upper_corner or (0,)))
    return head + (lower, upper, u32(r.channels_per_pixel), u32(r.pixels_per_column), elem) + tail


def describe(r: MapRequest) -> str:
    return (f"{r.data_type} rank {r.rank} at {r.address:#x}, dims {list(r.dims)}, strides {list(r.strides)}, "
            + (f"box {list(r.box)}" if r.mode == "tiled" else
               f"corners {list(r.lower_corner)}..{list(r.upper_corner)}, {r.channels_per_pixel} channels, "
               f"{r.pixels_per_column} pixels")
            + f", element strides {list(r.element_strides)}, interleave {r.interleave}, swizzle {r.swizzle}")
