// sm_120a (consumer Blackwell) warp-level MMA with kinds: f8f6f4 (e2m1 x e3m2), mxf8f6f4 with
// block scales (scale_vec::1X, ue8m0), mxf4nvf4 (scale_vec::4X, ue4m3), e4m3 f16-accumulate.
#include <cstdint>
extern "C" __global__ void kinds(const uint32_t* a, const uint32_t* b, const uint32_t* sc, float* d) {
  int t = threadIdx.x;
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  uint32_t a0 = a[t], a1 = a[32 + t], a2 = a[64 + t], a3 = a[96 + t], b0 = b[t], b1 = b[32 + t];
  uint32_t sa = sc[t], sb = sc[32 + t];
  asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e5m2.f32.ue8m0 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, %10, {0, 0}, %11, {0, 0};\n"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(sa), "r"(sb));
  asm volatile("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, %10, {0, 0}, %11, {0, 0};\n"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(sa), "r"(sb));
  d[t * 4 + 0] = c0; d[t * 4 + 1] = c1; d[t * 4 + 2] = c2; d[t * 4 + 3] = c3;
}
