// splice corpus: a small multi-parameter GEMM with an mma.sync K loop (f16 in, f32 out).
//
//   C[M, N] (f32, row-major, ldc) = A[M, K] (f16, row-major, lda) x B^T, B stored [N, K] (f16,
//   row-major, ldb: each column of the product is a contiguous K-row, the .col operand of mma).
//
// Block 128 threads = 4 warps, block tile 32 x 32; warp w owns rows 16*(w/2).., columns
// 16*(w%2)..: two m16n8k16 n-tiles.  One K-loop iteration covers 32 of K: four mma.sync per
// warp, (k0, n0) (k0, n1) (k1, n0) (k1, n1) -- two independent accumulator chains, so the order
// of the n-tiles inside an iteration is free (recipes/gemm_f16f32_p1.yaml reorders them).
// Fragments come straight from global memory (no shared memory): the point is the parameter
// list (3 pointers + 6 int32) and the loop, not the speed.  M, N multiples of 32, K of 32.
//
// Build: python corpus/gemm/build.py (nvcc -arch=sm_80 and sm_90 -ptx -O3).
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t ld2(const __half* p) {
    return *reinterpret_cast<const uint32_t*>(p);
}

__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(128)
splice_gemm_f16f32(const __half* __restrict__ A, const __half* __restrict__ B,
                   float* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = blockIdx.y * 32 + 16 * (warp >> 1);
    const int col0 = blockIdx.x * 32 + 16 * (warp & 1);
    if (row0 >= M || col0 >= N) return;
    float acc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
    const __half* a_lo = A + (size_t)(row0 + g) * lda + 2 * t;
    const __half* a_hi = A + (size_t)(row0 + g + 8) * lda + 2 * t;
    const __half* b_n0 = B + (size_t)(col0 + g) * ldb + 2 * t;
    const __half* b_n1 = B + (size_t)(col0 + 8 + g) * ldb + 2 * t;
#pragma unroll 1
    for (int k = 0; k < K; k += 32) {
        uint32_t a0[4] = {ld2(a_lo + k), ld2(a_hi + k), ld2(a_lo + k + 8), ld2(a_hi + k + 8)};
        uint32_t a1[4] = {ld2(a_lo + k + 16), ld2(a_hi + k + 16), ld2(a_lo + k + 24),
                          ld2(a_hi + k + 24)};
        uint32_t b00 = ld2(b_n0 + k), b01 = ld2(b_n0 + k + 8);
        uint32_t b10 = ld2(b_n1 + k), b11 = ld2(b_n1 + k + 8);
        uint32_t b02 = ld2(b_n0 + k + 16), b03 = ld2(b_n0 + k + 24);
        uint32_t b12 = ld2(b_n1 + k + 16), b13 = ld2(b_n1 + k + 24);
        mma16816(acc[0], a0, b00, b01);
        mma16816(acc[1], a0, b10, b11);
        mma16816(acc[0], a1, b02, b03);
        mma16816(acc[1], a1, b12, b13);
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
        float* c_lo = C + (size_t)(row0 + g) * ldc + col0 + 8 * n + 2 * t;
        float* c_hi = C + (size_t)(row0 + g + 8) * ldc + col0 + 8 * n + 2 * t;
        *reinterpret_cast<float2*>(c_lo) = make_float2(acc[n][0], acc[n][1]);
        *reinterpret_cast<float2*>(c_hi) = make_float2(acc[n][2], acc[n][3]);
    }
}
