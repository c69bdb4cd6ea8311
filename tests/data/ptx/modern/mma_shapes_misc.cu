// Several mma.sync shapes in one module, each in its own entry (multiple entries per module):
// tf32 m16n8k8, int8 m16n8k32 (satfinite), f16 m8n8k4 quad pairs, f64 m8n8k4, bf16 m16n8k16,
// int4 m8n8k32, b1 m16n8k256 xor.popc.  Inline asm with several statements on one line.
#include <cstdint>
__global__ void tf32_k8(const float* __restrict__ a, const float* __restrict__ b, float* c, int k_tiles) {
  unsigned lane = threadIdx.x & 31;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int t = 0; t < k_tiles; ++t) {
    unsigned a0 = __float_as_uint(a[t * 128 + lane]), a1 = __float_as_uint(a[t * 128 + 32 + lane]);
    unsigned a2 = __float_as_uint(a[t * 128 + 64 + lane]), a3 = __float_as_uint(a[t * 128 + 96 + lane]);
    unsigned b0 = __float_as_uint(b[t * 64 + lane]), b1 = __float_as_uint(b[t * 64 + 32 + lane]);
    asm volatile("{ .reg .b32 t0, t1; cvt.rna.tf32.f32 t0, %4; cvt.rna.tf32.f32 t1, %5;\n"
                 "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {t0,t1,%6,%7}, {%8,%9}, {%0,%1,%2,%3}; }"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  c[lane * 4 + 0] = d0; c[lane * 4 + 1] = d1; c[lane * 4 + 2] = d2; c[lane * 4 + 3] = d3;
}

__global__ void s8_k32(const int4* __restrict__ a, const int2* __restrict__ b, int* c, int bias) {
  unsigned lane = threadIdx.x & 31;
  int4 av = a[lane]; int2 bv = b[lane]; int2 bw = b[lane + 32];
  int d[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) d[i] = bias;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(av.x), "r"(av.y), "r"(av.z), "r"(av.w), "r"(bv.x), "r"(bv.y));
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]) : "r"(av.x), "r"(av.y), "r"(av.z), "r"(av.w), "r"(bw.x), "r"(bw.y));
#pragma unroll
  for (int i = 0; i < 8; ++i) c[lane * 8 + i] = d[i];
}

__global__ void f16_m8n8k4(const unsigned* __restrict__ a, const unsigned* __restrict__ b, float* c) {
  unsigned lane = threadIdx.x & 31;
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned a0 = a[lane], a1 = a[lane + 32], b0 = b[lane], b1 = b[lane + 32];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
#pragma unroll
  for (int i = 0; i < 8; ++i) c[lane * 8 + i] = d[i];
}

__global__ void f64_m8n8k4(const double* __restrict__ a, const double* __restrict__ b, double* c, int n) {
  unsigned lane = threadIdx.x & 31;
  double d0 = 0, d1 = 0;
  for (int t = 0; t < n; ++t) {
    double av = a[t * 32 + lane], bv = b[t * 32 + lane];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d0), "+d"(d1) : "d"(av), "d"(bv));
  }
  c[lane * 2] = d0; c[lane * 2 + 1] = d1;
}

__global__ void b1_xor_s4(const uint4* __restrict__ a, const uint2* __restrict__ b, int* c) {
  unsigned lane = threadIdx.x & 31;
  uint4 av = a[lane]; uint2 bv = b[lane];
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0, e0 = 0, e1 = 0;
  asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(av.x), "r"(av.y), "r"(av.z), "r"(av.w), "r"(bv.x), "r"(bv.y));
  asm volatile("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+r"(e0), "+r"(e1) : "r"(av.x), "r"(bv.x));
  c[lane * 6 + 0] = d0; c[lane * 6 + 1] = d1; c[lane * 6 + 2] = d2; c[lane * 6 + 3] = d3;
  c[lane * 6 + 4] = e0; c[lane * 6 + 5] = e1;
}
