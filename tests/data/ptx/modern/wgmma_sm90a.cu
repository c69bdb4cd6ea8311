// wgmma on sm_90a: one warpgroup computes a 64xN tile with
// wgmma.mma_async.sync.aligned.m64n{64,128}k16 (f16 and bf16 inputs, f32 accumulate),
// fenced by wgmma.fence and drained with commit_group / wait_group.
// A and B are read from shared memory through matrix descriptors.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ uint64_t make_desc(const void *smem_ptr) {
    uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
    uint64_t desc = 0;
    desc |= (uint64_t)((addr & 0x3FFFF) >> 4);          // start address
    desc |= (uint64_t)(16 >> 4) << 16;                  // leading byte offset
    desc |= (uint64_t)(1024 >> 4) << 32;                // stride byte offset
    desc |= (uint64_t)1 << 62;                          // 128B swizzle
    return desc;
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// 64x64x16, f32 += f16 * f16: 32 f32 accumulators per thread.
__device__ __forceinline__ void wgmma_m64n64k16_f16(float (&d)[32], uint64_t da, uint64_t db, int scale_d) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(scale_d));
}

// 64x32x16, f32 += bf16 * bf16 with A from registers (RS variant).
__device__ __forceinline__ void wgmma_m64n32k16_bf16_rs(float (&d)[16], const uint32_t (&a)[4], uint64_t db) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, 1, 1, 1, 1;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

__global__ void __launch_bounds__(128, 1)
wgmma_gemm_f16(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ C, int K) {
    __shared__ alignas(1024) half sA[64 * 64];
    __shared__ alignas(1024) half sB[64 * 64];
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) acc[i] = 0.f;

    for (int k0 = 0; k0 < K; k0 += 64) {
        for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
            sA[i] = A[blockIdx.x * 64 * K + (i / 64) * K + k0 + (i % 64)];
            sB[i] = B[blockIdx.y * 64 * K + (i / 64) * K + k0 + (i % 64)];
        }
        __syncthreads();
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            wgmma_m64n64k16_f16(acc, make_desc(sA + kk * 16), make_desc(sB + kk * 16), 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
        __syncthreads();
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
        int row = warp * 16 + (lane / 4) + 8 * ((i / 2) % 2);
        int col = (lane % 4) * 2 + (i % 2) + 8 * (i / 4);
        C[(blockIdx.x * 64 + row) * 64 * gridDim.y + blockIdx.y * 64 + col] = acc[i];
    }
}

__global__ void __launch_bounds__(128)
wgmma_rs_bf16(const uint32_t *__restrict__ Afrag, const __nv_bfloat16 *__restrict__ B, float *__restrict__ C) {
    __shared__ alignas(1024) __nv_bfloat16 sB[32 * 64];
    for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) sB[i] = B[i];
    __syncthreads();
    uint32_t a[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = Afrag[threadIdx.x * 4 + i];
    float acc[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) acc[i] = 0.f;
    wgmma_fence();
    wgmma_m64n32k16_bf16_rs(acc, a, make_desc(sB));
    wgmma_m64n32k16_bf16_rs(acc, a, make_desc(sB + 16));
    wgmma_commit();
    wgmma_wait<1>();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 16; ++i) C[threadIdx.x * 16 + i] = acc[i];
}
