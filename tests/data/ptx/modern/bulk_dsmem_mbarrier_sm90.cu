// Read 2026-12-01: bulk copies between the shared memories of a cluster and mbarriers signalled across
// CTAs: cp.async.bulk.shared::cluster.shared::cta (DSMEM push), mbarrier.arrive.release.cluster
// on a peer's barrier (mapa), 1-D bulk store global <- shared (bulk_group), getctarank,
// mbarrier.test_wait polling, cp.async.mbarrier.arrive.noinc after cp.async.
#include <cstdint>

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
dsmem_push(const float4* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ __align__(128) float4 mine[256];
  __shared__ __align__(128) float4 theirs[256];
  __shared__ __align__(8) uint64_t bar;
  uint32_t rank, peer_rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  peer_rank = rank ^ 1;
  for (int i = threadIdx.x; i < 256; i += blockDim.x) mine[i] = in[blockIdx.x * 256 + i];
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    uint32_t remote_dst, remote_bar, owner;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_dst) : "r"(smem(theirs)), "r"(peer_rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_bar) : "r"(smem(&bar)), "r"(peer_rank));
    asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(owner) : "r"(remote_bar));
    if (owner == peer_rank) {
      asm volatile("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" :: "r"(remote_bar), "r"(4096));
      asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   :: "r"(remote_dst), "r"(smem(mine)), "r"(4096), "r"(remote_bar) : "memory");
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(remote_bar) : "memory");
    }
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(smem(&bar)) : "memory");
  }
  float acc = 0.f;
  for (int i = threadIdx.x; i < 256; i += blockDim.x) acc += theirs[i].x + theirs[i].w;
  mine[threadIdx.x].y = acc;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(out + blockIdx.x * 1024), "r"(smem(mine)), "r"(4096) : "memory");
    asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__global__ void __launch_bounds__(64) cpasync_noinc(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ __align__(16) float buf[64 * 4];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 64;" :: "r"(smem(&bar)));
  __syncthreads();
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem(buf + threadIdx.x * 4)),
               "l"(in + (blockIdx.x * 64 + threadIdx.x) * 4) : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(smem(&bar)) : "memory");
  uint32_t ok = 0;
  while (!ok) {
    asm volatile("{\n.reg .pred p;\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%1];\n"
                 "LAB_W:\nmbarrier.try_wait.relaxed.cta.shared::cta.b64 p, [%1], st;\n@!p bra LAB_W;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(smem(&bar)) : "memory");
  }
  out[blockIdx.x * 64 + threadIdx.x] = buf[((threadIdx.x + 1) & 63) * 4] * 2.f;
}
