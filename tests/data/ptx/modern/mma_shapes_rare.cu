// mma.sync forms and register flows the kernels read before did not have: m8n8k16 s8 (Turing int8),
// m16n8k4 tf32, m16n8k8 f16 with f16 accumulators, and D written to other registers than C
// (a fresh C per k-step, and a chain where one mma's D is the next one's C in new registers).
#include <cstdint>
__global__ void imma_m8n8k16(const int* __restrict__ A, const int* __restrict__ B, int* __restrict__ D, int k) {
  int lane = threadIdx.x;
  int c0 = 0, c1 = 0;
  for (int s = 0; s < k; ++s) {
    int a = A[s * 32 + lane], b = B[s * 32 + lane];
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(c0), "+r"(c1) : "r"(a), "r"(b));
  }
  D[lane * 2] = c0; D[lane * 2 + 1] = c1;
}
__global__ void tf32_m16n8k4(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ C,
                             float* __restrict__ D) {
  int lane = threadIdx.x;
  uint32_t a0 = __float_as_uint(A[lane * 2]), a1 = __float_as_uint(A[lane * 2 + 1]);
  uint32_t b0 = __float_as_uint(B[lane]);
  float c[4], d[4];
  for (int i = 0; i < 4; ++i) c[i] = C[lane * 4 + i];
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  // a second product whose C is the first one's D (a chain in new registers)
  float e[4];
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
               : "=f"(e[0]), "=f"(e[1]), "=f"(e[2]), "=f"(e[3])
               : "r"(a1), "r"(a0), "r"(b0), "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]));
  for (int i = 0; i < 4; ++i) D[lane * 4 + i] = e[i] - d[i];
}
__global__ void hmma_f16acc_k8(const uint32_t* __restrict__ A, const uint32_t* __restrict__ B,
                               const uint32_t* __restrict__ Cin, uint32_t* __restrict__ D, int k) {
  int lane = threadIdx.x;
  uint32_t acc0 = 0, acc1 = 0;
  for (int s = 0; s < k; ++s) {
    uint32_t a0 = A[(s * 32 + lane) * 2], a1 = A[(s * 32 + lane) * 2 + 1], b0 = B[s * 32 + lane];
    uint32_t c0 = Cin[(s * 32 + lane) * 2], c1 = Cin[(s * 32 + lane) * 2 + 1];
    uint32_t d0, d1;
    // a fresh C each k-step: D is not C
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
                 : "=r"(d0), "=r"(d1) : "r"(a0), "r"(a1), "r"(b0), "r"(c0), "r"(c1));
    acc0 ^= d0; acc1 ^= d1;
  }
  D[lane * 2] = acc0; D[lane * 2 + 1] = acc1;
}
