// TMA on sm_90a: 2-D tensor tile loads with
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes,
// completion tracked by an mbarrier (init / arrive.expect_tx / try_wait.parity / inval),
// a TMA store back (cp.async.bulk.tensor.2d.global.shared::cta.bulk_group),
// thread-block clusters (__cluster_dims__ -> .explicitcluster/.reqnctapercluster),
// __block_size__ (-> .reqntid), and __maxnreg__ (-> .maxnreg).
#include <cuda.h>          // CUtensorMap
#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ uint64_t mbar_arrive(uint64_t *bar) {
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(smem_u32(bar)) : "memory");
    return state;
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra DONE;\n"
        "bra LAB_WAIT;\n"
        "DONE:\n"
        "}\n" ::"r"(smem_u32(bar)), "r"(phase) : "memory");
}
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];"
        ::"r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1, uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        ::"r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, const void *src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(map), "r"(smem_u32(src)), "r"(c0), "r"(c1) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

constexpr int TILE_M = 64, TILE_N = 64;

// One CTA per tile: TMA load, scale, TMA store.
__global__ void __maxnreg__(64)
tma_scale_tile(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map, float alpha) {
    __shared__ alignas(128) float tile[TILE_M * TILE_N];
    __shared__ alignas(8) uint64_t bar;
    const int c0 = blockIdx.x * TILE_N, c1 = blockIdx.y * TILE_M;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"(&in_map) : "memory");
        mbar_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, &in_map, &bar, c0, c1);
    }
    mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < TILE_M * TILE_N; i += 128) tile[i] *= alpha;
    asm volatile("fence.proxy.async.shared::cta;");
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&out_map, tile, c0, c1);
        asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_u32(&bar)));
    }
}

// A 2x1 cluster: CTA rank 0 multicasts the tile to both CTAs' shared memory.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
tma_multicast_cluster(const __grid_constant__ CUtensorMap in_map, float *__restrict__ out) {
    __shared__ alignas(128) float tile[TILE_M * TILE_N];
    __shared__ alignas(8) uint64_t bar;
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (threadIdx.x == 0) {
        mbar_expect_tx(&bar, sizeof(tile));
        if (rank == 0) tma_load_2d_multicast(tile, &in_map, &bar, blockIdx.x / 2 * TILE_N, blockIdx.y * TILE_M, 0x3);
    }
    mbar_wait(&bar, 0);
    float s = 0.f;
    for (int i = threadIdx.x; i < TILE_M * TILE_N; i += 128) s += tile[i];
    out[blockIdx.x * 128 + threadIdx.x] = s;
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// __block_size__ fixes the block (and cluster) shape: .reqntid / .reqnctapercluster.
__global__ void __block_size__((256, 1, 1), (4, 1, 1))
cluster_dsmem_reduce(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float partial[256];
    uint32_t rank, nrank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nrank));
    partial[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
    if (rank == 0) {
        float s = partial[threadIdx.x];
        for (uint32_t r = 1; r < nrank; ++r) {
            uint32_t remote;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(&partial[threadIdx.x])), "r"(r));
            float v;
            asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote));
            s += v;
        }
        out[blockIdx.x / 4 * 256 + threadIdx.x] = s;
    }
    asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}
