// Warp-level matrix data movement and tensor-core MMA (sm_90):
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16, movmatrix.sync.aligned.m8n8.trans.b16,
// stmatrix.sync.aligned.m8n8.x{1,4}[.trans].shared.b16, and
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 / m16n8k8 bf16.
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[2], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ uint32_t ldmatrix_x1(const void *p) {
    uint32_t r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%0}, [%1];" : "=r"(r) : "r"(smem_u32(p)));
    return r;
}
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t a) {
    uint32_t d;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
    return d;
}
__device__ __forceinline__ void stmatrix_x4(void *p, const uint32_t (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(smem_u32(p)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
__device__ __forceinline__ void stmatrix_x1_trans(void *p, uint32_t r) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(smem_u32(p)), "r"(r) : "memory");
}
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_1688_bf16(float (&d)[4], const uint32_t (&a)[2], uint32_t b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b));
}

// One warp: C(16x8) = A(16x16) * B(16x8), A and B staged in shared memory.
__global__ void __launch_bounds__(32)
warp_mma_16x8x16(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ C, int ktiles) {
    __shared__ alignas(128) half sA[16 * 16];
    __shared__ alignas(128) half sB[16 * 8];
    const int lane = threadIdx.x;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int kt = 0; kt < ktiles; ++kt) {
        for (int i = lane; i < 256; i += 32) sA[i] = A[kt * 256 + i];
        for (int i = lane; i < 128; i += 32) sB[i] = B[kt * 128 + i];
        __syncwarp();
        uint32_t a[4], b[2];
        ldmatrix_x4(a, &sA[(lane % 16) * 16 + (lane / 16) * 8]);
        ldmatrix_x2_trans(b, &sB[(lane % 16) * 8]);
        mma_16816(acc, a, b);
        __syncwarp();
    }
    C[lane * 4 + 0] = acc[0];
    C[lane * 4 + 1] = acc[1];
    C[lane * 4 + 2] = acc[2];
    C[lane * 4 + 3] = acc[3];
}

// Transpose 8x8 b16 tiles in registers (movmatrix) and write them back with stmatrix.
__global__ void __launch_bounds__(32)
warp_transpose_tiles(const uint16_t *__restrict__ in, uint16_t *__restrict__ out) {
    __shared__ alignas(128) uint16_t s[4 * 64];
    __shared__ alignas(128) uint16_t t[4 * 64];
    const int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) s[i] = in[blockIdx.x * 256 + i];
    __syncwarp();
    uint32_t r[4];
    ldmatrix_x4(r, &s[(lane % 8) * 8 + (lane / 8) * 64]);
#pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = movmatrix_trans(r[i]);
    stmatrix_x4(&t[(lane % 8) * 8 + (lane / 8) * 64], r);
    uint32_t one = ldmatrix_x1(&s[(lane % 8) * 8]);
    stmatrix_x1_trans(&t[(lane % 8) * 8], one);
    uint32_t a2[2] = {r[0], r[1]};
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    mma_1688_bf16(acc, a2, r[2]);
    __syncwarp();
    for (int i = lane; i < 256; i += 32) out[blockIdx.x * 256 + i] = t[i] ^ (uint16_t)acc[i % 4];
}
