"""On the GPU: splice's tensor-map encoder (splice/probe/kinds/tma_encoding.py) against
cuda-bindings' wrapper of the same driver call, map by map.

For each map (the mutant bench's rank-1 u32 map; a 2-D f16 GEMM tile with a 128B swizzle; a
rank-2 u32 map of one row) it prints what each encoder got: splice's result, and the wrapper's
CUresult with the address of the CUtensorMap it encoded into, modulo 64 (the driver requires 64).
Where both succeed the 128 bytes must be equal (the enum values and arguments splice passes are
the driver's), when two encodes by splice's encoder agree (the control); splice's enum values
are compared with cuda-bindings' enums too.

    PYTHONPATH=/tmp/site:. python3 bench/tmap_encode_check.py

Prints one JSON object per map, then a summary line; exit 0 when splice's encoder succeeds on
every map, agrees byte for byte wherever the wrapper succeeds, and every enum value matches.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from splice.probe.kinds.tma_encoding import (DATA_TYPES, INTERLEAVE, L2_PROMOTION, OOB_FILL,  # noqa: E402
                                             SWIZZLE, MapRequest, encode)


def maps(base: int) -> dict:
    """The maps, over a cupy allocation at ``base`` (512-byte aligned)."""
    return {"mutant rank 1 (u32 x 1024, box 4, +8192)":
            MapRequest(data_type="UINT32", address=base + 8192, dims=(1024,), strides=(), element_strides=(1,),
                       box=(4,)),
            "gemm tile (f16 256x256, box 64x64, swizzle 128B)":
            MapRequest(data_type="FLOAT16", address=base, dims=(256, 256), strides=(512,), element_strides=(1, 1),
                       box=(64, 64), swizzle="128B", l2_promotion="L2_128B"),
            "rank 2 of one row (u32 1024x1, box 4x1)":
            MapRequest(data_type="UINT32", address=base + 8192, dims=(1024, 1), strides=(4096,),
                       element_strides=(1, 1), box=(4, 1))}


def wrapper(cu, r: MapRequest) -> tuple:
    """(CUresult name, map address mod 64, bytes or None) from cuda-bindings' wrapper."""
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    err, tmap = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + r.data_type), r.rank, r.address,
        [u64(x) for x in r.dims], [u64(x) for x in r.strides], [u32(x) for x in r.box],
        [u32(x) for x in r.element_strides],
        getattr(cu.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_" + r.interleave),
        getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + r.swizzle),
        getattr(cu.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_" + r.l2_promotion),
        getattr(cu.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_" + r.oob_fill))
    ok = err == cu.CUresult.CUDA_SUCCESS
    raw = b"".join(int(w).to_bytes(8, "little") for w in tmap.opaque) if ok else None
    return getattr(err, "name", str(err)), (int(tmap.getPtr()) % 64 if tmap is not None else None), raw


def enum_mismatches(cu) -> list:
    """splice's enum values against cuda-bindings' (cuda.h's)."""
    tables = ((cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_", {k: v[0] for k, v in DATA_TYPES.items()}),
              (cu.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_", INTERLEAVE),
              (cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_", SWIZZLE),
              (cu.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_", L2_PROMOTION),
              (cu.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_", OOB_FILL))
    bad = []
    for enum, prefix, ours in tables:
        for name, value in ours.items():
            member = getattr(enum, prefix + name, None)
            theirs = None if member is None else int(getattr(member, "value", member))
            if theirs != value:
                bad.append(f"{prefix}{name}: splice {value}, cuda-bindings {theirs}")
    return bad


def main() -> int:
    import cupy as cp  # heavy optional dependency: the GPU
    from cuda.bindings import driver as cu  # heavy optional dependency: cuda-bindings, the comparison

    buf = cp.zeros(1 << 20, dtype=cp.uint8)
    base = int(buf.data.ptr)
    ok = True
    for label, r in maps(base).items():
        try:
            ours, again, why = encode(r, label), encode(r, label), None
        except Exception as exc:  # noqa: BLE001 - the row records splice's refusal, whatever it is
            ours, again, why = None, None, f"{type(exc).__name__}: {exc}"
        name, mod64, theirs = wrapper(cu, r)
        # the A/A: two encodes of one map by splice's encoder are the same bytes, or no byte
        # comparison with the wrapper says anything
        same = None if ours is None or theirs is None or ours != again else ours == theirs
        ok = ok and ours is not None and same is not False
        print(json.dumps({"map": label, "splice": "ok" if ours is not None else why, "cuda_bindings": name,
                          "cuda_bindings_map_address_mod_64": mod64, "splice_twice_same": ours == again,
                          "same_bytes": same}))
    bad = enum_mismatches(cu)
    ok = ok and not bad
    print(f"enum mismatches: {bad or 'none'}; " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
