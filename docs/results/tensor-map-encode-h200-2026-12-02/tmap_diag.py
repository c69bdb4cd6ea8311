"""Which cuTensorMapEncodeTiled calls the H200's driver accepts (diagnostic)."""
import cupy as cp
from cuda.bindings import driver as d
import cuda.bindings
print("cuda-bindings", cuda.bindings.__version__, "driver", d.cuDriverGetVersion())
buf = cp.zeros(1 << 20, dtype=cp.uint8)
base = int(buf.data.ptr)
u32, u64 = d.cuuint32_t, d.cuuint64_t
E = d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32
def tryit(label, rank, addr, dims, strides, box, es):
    try:
        r = d.cuTensorMapEncodeTiled(E, rank, addr, [u64(x) for x in dims], [u64(x) for x in strides],
                                     [u32(x) for x in box], [u32(x) for x in es],
                                     d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                                     d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        print(label, r[0])
    except Exception as e:
        print(label, "EXC", type(e).__name__, e)
tryit("rank1 box4 +8192", 1, base + 8192, [1024], [], [4], [1])
tryit("rank1 box4 base", 1, base, [1024], [], [4], [1])
tryit("rank1 box8", 1, base, [1024], [], [8], [1])
tryit("rank1 box16", 1, base, [1024], [], [16], [1])
tryit("rank1 box32", 1, base, [1024], [], [32], [1])
tryit("rank2 4x1", 2, base, [1024, 1], [4096], [4, 1], [1, 1])
tryit("rank2 32x32", 2, base, [64, 64], [256], [32, 32], [1, 1])
tryit("rank1 box4 ptr-object", 1, d.CUdeviceptr(base), [1024], [], [4], [1])
