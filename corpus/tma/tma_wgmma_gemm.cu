// splice_tma_wgmma_gemm: C (f32, M x N, row-major) = A (f16, M x K, K contiguous) x B^T
// (B f16, N x K, K contiguous), one 64 x 64 tile per block of one warpgroup (128 threads).
//
// Each K tile of 64: thread 0 arms an mbarrier with the tile's bytes and issues two TMA loads
// (cp.async.bulk.tensor.2d, 128-byte swizzle) of the A and B tiles into shared memory; every
// thread waits on the mbarrier's phase, then the warpgroup issues four wgmma.m64n64k16 (one per
// 16 of K) from shared-memory descriptors into 32 f32 accumulators per thread.  The tensor maps
// are __grid_constant__ parameters (.param .align 64 .b8 [128]), encoded on the host by
// cuTensorMapEncodeTiled (splice's probe: kind: tensor_map).  A wait that never completes traps
// instead of hanging (a map that does not fit the buffer).
//
// Built by corpus/tma/build.py (nvcc -arch=sm_90a -ptx -O3); see corpus/README.md.
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#define BM 64
#define BN 64
#define BK 64

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// wgmma shared-memory descriptor of a K-major tile with a 128-byte swizzle: the start address
// (>> 4), the leading byte offset (unused by a swizzled K-major tile: 1), the stride byte offset
// 1024 (8 rows of 128 bytes) and the swizzle mode (1: 128B) in bits 62-63
__device__ __forceinline__ uint64_t k_major_128b(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32)
           | ((uint64_t)1 << 62);
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    for (uint32_t tries = 0; !done; ++tries) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        if (tries > (1u << 26)) {
            asm volatile("trap;");
        }
    }
}

#define WGMMA_ACC "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define ACC_OUT(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
    "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), \
    "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), \
    "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), \
    "+f"(d[31])

// one m64n64k16 step: D += A(desc) x B(desc)^T, f32 accumulators, f16 operands, both K-major
__device__ __forceinline__ void wgmma_k16(float* d, uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WGMMA_ACC ", %32, %33, 1, 1, 1, 0, 0;"
                 : ACC_OUT(d) : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(128)
splice_tma_wgmma_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      float* __restrict__ c, int m, int n, int k) {
    __shared__ alignas(1024) half tile_a[BM * BK];
    __shared__ alignas(1024) half tile_b[BN * BK];
    __shared__ alignas(8) uint64_t full;
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const uint32_t bar = smem_addr(&full);
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
    const uint32_t sa = smem_addr(tile_a), sb = smem_addr(tile_b);
    for (int kt = 0; kt < k / BK; ++kt) {
        if (tid == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(bar), "r"((BM + BN) * BK * (int)sizeof(half)) : "memory");
            tma_load_2d(sa, &map_a, kt * BK, m0, bar);
            tma_load_2d(sb, &map_b, kt * BK, n0, bar);
        }
        wait_phase(bar, kt & 1);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {       // 16 halfs: 32 bytes further in the swizzled row
            wgmma_k16(acc, k_major_128b(sa + 32 * kk), k_major_128b(sb + 32 * kk));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        __syncthreads();                              // the tiles are read before the next loads
    }
    // the m64nN accumulator layout: warp w holds rows 16w..16w+15; register 4j+h*2+e of lane l is
    // row 16w + l/4 + 8h, column 8j + 2(l%4) + e
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
        const int row = m0 + warp * 16 + lane / 4 + 8 * ((i / 2) % 2);
        const int col = n0 + 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
        if (row < m && col < n) c[(size_t)row * n + col] = acc[i];
    }
}
