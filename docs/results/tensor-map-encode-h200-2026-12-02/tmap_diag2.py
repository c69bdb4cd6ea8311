"""Which rank-1 cuTensorMapEncodeTiled calls the H200 driver accepts: cuda-bindings vs libcuda direct."""
import ctypes
import cupy as cp
from cuda.bindings import driver as d
buf = cp.zeros(1 << 20, dtype=cp.uint8)
base = int(buf.data.ptr)
u32, u64 = d.cuuint32_t, d.cuuint64_t
E = d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32
def bind(label, rank, dims, strides, box, es):
    try:
        r = d.cuTensorMapEncodeTiled(E, rank, base + 8192, dims, strides, box, es,
                                     d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                                     d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        print("bindings", label, r[0])
    except Exception as e:
        print("bindings", label, "EXC", type(e).__name__, e)
bind("rank1 strides [4096]", 1, [u64(1024)], [u64(4096)], [u32(4)], [u32(1)])
bind("rank1 strides None", 1, [u64(1024)], None, [u32(4)], [u32(1)])
bind("rank1 plain ints strides [4096]", 1, [1024], [4096], [4], [1])
bind("rank1 box 8 strides [4096]", 1, [u64(1024)], [u64(4096)], [u32(8)], [u32(1)])
lib = ctypes.CDLL("libcuda.so.1")
f = lib.cuTensorMapEncodeTiled
f.restype = ctypes.c_int
class TM(ctypes.Structure):
    _fields_ = [("w", ctypes.c_uint64 * 16)]
U64 = ctypes.c_uint64; U32 = ctypes.c_uint32
def raw(label, rank, dims, strides, box, es):
    tm = TM()
    dv = (U64 * len(dims))(*dims)
    sv = (U64 * max(1, len(strides)))(*strides) if strides is not None else None
    bv = (U32 * len(box))(*box); ev = (U32 * len(es))(*es)
    r = f(ctypes.byref(tm), 7, U32(rank), ctypes.c_void_p(base + 8192), dv, sv, bv, ev, 0, 0, 0, 0)
    print("libcuda", label, r, hex(tm.w[0]) if r == 0 else "")
# CU_TENSOR_MAP_DATA_TYPE_UINT32 is 2 in cuda.h? print the enum value to be sure
print("UINT32 enum", int(E))
f2 = f
def raw2(label, rank, dims, strides, box, es):
    tm = TM()
    dv = (U64 * len(dims))(*dims)
    sv = (U64 * max(1, len(strides)))(*strides) if strides is not None else None
    bv = (U32 * len(box))(*box); ev = (U32 * len(es))(*es)
    r = f(ctypes.byref(tm), int(E), U32(rank), ctypes.c_void_p(base + 8192), dv, sv, bv, ev, 0, 0, 0, 0)
    print("libcuda", label, r)
raw2("rank1 NULL strides", 1, [1024], None, [4], [1])
raw2("rank1 empty strides", 1, [1024], [], [4], [1])
raw2("rank1 strides [4096]", 1, [1024], [4096], [4], [1])
raw2("rank2 [1024,1]", 2, [1024, 1], [4096], [4, 1], [1, 1])
