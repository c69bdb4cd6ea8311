// Read 2026-12-01: mma.sync shapes interleaved the way hand-tuned kernels write them: the next k-step's
// ldmatrix between two mma of one K chain (double-buffered fragments), two accumulator sets
// updated alternately (even/odd k), e5m2 x e5m2 with an f16 accumulator, and an int8 dot
// (dp4a) next to a bf16 mma whose C is packed with cvt.rn.bf16x2.f32.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2t(uint32_t (&r)[2], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ldmatrix of step k+1 issued between the mma of step k: one K chain of 4 steps
__global__ void ldsm_double_buffer(const __half* A, const __half* B, float* C) {
  __shared__ __align__(128) __half sa[16 * 64];
  __shared__ __align__(128) __half sb[64 * 8];
  int t = threadIdx.x;
  for (int i = t; i < 16 * 64; i += 32) sa[i] = A[i];
  for (int i = t; i < 64 * 8; i += 32) sb[i] = B[i];
  __syncwarp();
  uint32_t a[2][4], b[2][2];
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  ldsm_x4(a[0], smem(sa + (t % 16) * 64 + (t / 16) * 8));
  ldsm_x2t(b[0], smem(sb + (t % 16) * 8));
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (k + 1 < 4) {
      ldsm_x4(a[(k + 1) & 1], smem(sa + (t % 16) * 64 + (k + 1) * 16 + (t / 16) * 8));
      ldsm_x2t(b[(k + 1) & 1], smem(sb + ((k + 1) * 16 + t % 16) * 8));
    }
    mma16816(d, a[k & 1], b[k & 1]);
  }
  for (int i = 0; i < 4; ++i) C[t * 4 + i] = d[i];
}

// two accumulator sets updated alternately (even k -> d0, odd k -> d1), summed at the end
__global__ void pingpong_acc(const uint32_t* Af, const uint32_t* Bf, float* C, int ksteps) {
  int t = threadIdx.x;
  float d0[4] = {0.f, 0.f, 0.f, 0.f}, d1[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k = 0; k < ksteps; k += 2) {
    uint32_t a0[4], b0[2], a1[4], b1[2];
    for (int i = 0; i < 4; ++i) { a0[i] = Af[(k * 4 + i) * 32 + t]; a1[i] = Af[((k + 1) * 4 + i) * 32 + t]; }
    for (int i = 0; i < 2; ++i) { b0[i] = Bf[(k * 2 + i) * 32 + t]; b1[i] = Bf[((k + 1) * 2 + i) * 32 + t]; }
    mma16816(d0, a0, b0);
    mma16816(d1, a1, b1);
  }
  for (int i = 0; i < 4; ++i) C[t * 4 + i] = d0[i] + d1[i];
}

// e5m2 x e5m2 with an f16 accumulator (m16n8k32), two k-steps
__global__ void e5m2_f16acc(const uint32_t* Af, const uint32_t* Bf, uint32_t* C) {
  int t = threadIdx.x;
  uint32_t c0 = 0, c1 = 0;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(c0), "+r"(c1)
                 : "r"(Af[(k * 4 + 0) * 32 + t]), "r"(Af[(k * 4 + 1) * 32 + t]), "r"(Af[(k * 4 + 2) * 32 + t]),
                   "r"(Af[(k * 4 + 3) * 32 + t]), "r"(Bf[(k * 2) * 32 + t]), "r"(Bf[(k * 2 + 1) * 32 + t]));
  }
  C[t * 2] = c0; C[t * 2 + 1] = c1;
}

// dp4a dot product beside a bf16 m16n8k8 whose C is built by packing floats
__global__ void dp4a_bf16(const int* x, const int* y, const uint32_t* Af, const uint32_t* Bf, const float* c_in,
                          int* dot, float* C, int n) {
  int t = threadIdx.x;
  int acc = 0;
  for (int i = t; i < n; i += 32) acc = __dp4a(x[i], y[i], acc);
  dot[t] = acc;
  float c[4];
  for (int i = 0; i < 4; ++i) c[i] = c_in[t * 4 + i];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(Af[t]), "r"(Af[32 + t]), "r"(Bf[t]));
  __nv_bfloat162 p = __floats2bfloat162_rn(c[0], c[1]);
  C[t * 4] = c[0] + c[2]; C[t * 4 + 1] = c[1] + c[3];
  C[t * 4 + 2] = __bfloat162float(p.x); C[t * 4 + 3] = __bfloat162float(p.y);
}
