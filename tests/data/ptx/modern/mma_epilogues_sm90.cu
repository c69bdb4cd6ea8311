// mma.sync K loops with their epilogues: bf16 m16n8k16 (2x2 tiles per warp, warp tile 32x16)
// ending in cvt.rn.relu.bf16x2.f32 and cvt.rn.satfinite.bf16x2.f32; u4 x s4 m16n8k64
// .satfinite (one tile, K loop) with a dequantising epilogue; f64 DMMA m16n8k16 (two tiles
// along N, warp tile 16x16) ending in an alpha/beta update.
#include <cstdint>

__global__ void bf16_gemm_relu(const uint32_t* __restrict__ A, const uint32_t* __restrict__ B,
                               uint32_t* __restrict__ C, uint32_t* __restrict__ Csat, int k_steps) {
  const int lane = threadIdx.x % 32;
  float acc[2][2][4] = {};
  for (int k = 0; k < k_steps; ++k) {
    uint32_t a[2][4], b[2][2];
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int q = 0; q < 4; ++q) a[m][q] = A[((k * 2 + m) * 4 + q) * 32 + lane];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int q = 0; q < 2; ++q) b[n][q] = B[((k * 2 + n) * 2 + q) * 32 + lane];
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int n = 0; n < 2; ++n)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[m][n][0]), "+f"(acc[m][n][1]), "+f"(acc[m][n][2]), "+f"(acc[m][n][3])
                     : "r"(a[m][0]), "r"(a[m][1]), "r"(a[m][2]), "r"(a[m][3]), "r"(b[n][0]), "r"(b[n][1]));
  }
#pragma unroll
  for (int m = 0; m < 2; ++m)
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t r, s;
        asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(acc[m][n][2 * h + 1]), "f"(acc[m][n][2 * h]));
        asm("cvt.rn.satfinite.bf16x2.f32 %0, %1, %2;" : "=r"(s) : "f"(acc[m][n][2 * h + 1]), "f"(acc[m][n][2 * h]));
        C[((m * 2 + n) * 2 + h) * 32 + lane] = r;
        Csat[((m * 2 + n) * 2 + h) * 32 + lane] = s;
      }
}

__global__ void int4_gemm_dequant(const uint32_t* __restrict__ A, const uint32_t* __restrict__ B,
                                  float* __restrict__ C, const float* __restrict__ scale, int k_steps) {
  const int lane = threadIdx.x % 32;
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int k = 0; k < k_steps; ++k) {
    uint32_t a0 = A[(k * 4 + 0) * 32 + lane], a1 = A[(k * 4 + 1) * 32 + lane];
    uint32_t a2 = A[(k * 4 + 2) * 32 + lane], a3 = A[(k * 4 + 3) * 32 + lane];
    uint32_t b0 = B[(k * 2 + 0) * 32 + lane], b1 = B[(k * 2 + 1) * 32 + lane];
    asm volatile("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  const float s = scale[lane / 4];
  C[lane * 4 + 0] = fmaxf((float)d0 * s, 0.f);
  C[lane * 4 + 1] = fmaxf((float)d1 * s, 0.f);
  C[lane * 4 + 2] = (float)d2 * s;
  C[lane * 4 + 3] = (float)d3 * s;
}

__global__ void dmma_alpha_beta(const double* __restrict__ A, const double* __restrict__ B,
                                double* __restrict__ C, double alpha, double beta, int k_steps) {
  const int lane = threadIdx.x % 32;
  double acc[2][4] = {};
  for (int k = 0; k < k_steps; ++k) {
    double a[8], b[2][4];
#pragma unroll
    for (int q = 0; q < 8; ++q) a[q] = A[(k * 8 + q) * 32 + lane];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) b[n][q] = B[((k * 2 + n) * 4 + q) * 32 + lane];
#pragma unroll
    for (int n = 0; n < 2; ++n)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                   : "+d"(acc[n][0]), "+d"(acc[n][1]), "+d"(acc[n][2]), "+d"(acc[n][3])
                   : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                     "d"(b[n][0]), "d"(b[n][1]), "d"(b[n][2]), "d"(b[n][3]));
  }
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      double* c = &C[(n * 4 + q) * 32 + lane];
      *c = alpha * acc[n][q] + beta * *c;
    }
}
