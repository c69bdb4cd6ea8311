// Distributed shared memory: a cluster-wide histogram and a reduction through peer CTAs' shared
// memory (cooperative_groups cluster API), launched with a run-time cluster size (no __cluster_dims__).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void cluster_hist(const int* __restrict__ in, int* __restrict__ bins, int n, int nbins) {
  extern __shared__ int smem[];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  unsigned csize = cluster.num_blocks();
  int per = (nbins + csize - 1) / csize;
  for (int i = threadIdx.x; i < per; i += blockDim.x) smem[i] = 0;
  cluster.sync();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int v = in[i];
    int b = v < 0 ? 0 : (v >= nbins ? nbins - 1 : v);
    int* dst = cluster.map_shared_rank(smem, b / per);
    atomicAdd(dst + b % per, 1);
  }
  cluster.sync();
  for (int i = threadIdx.x; i < per; i += blockDim.x) {
    int g = rank * per + i;
    if (g < nbins) atomicAdd(&bins[g], smem[i]);
  }
}

__global__ void __cluster_dims__(4, 1, 1) cluster_reduce(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float part[128];
  cg::cluster_group cluster = cg::this_cluster();
  float v = x[blockIdx.x * 128 + threadIdx.x];
  part[threadIdx.x] = v;
  cluster.sync();
  if (cluster.block_rank() == 0) {
    float s = 0.f;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) s += cluster.map_shared_rank(part, r)[threadIdx.x];
    out[(blockIdx.x / 4) * 128 + threadIdx.x] = s;
  }
  cluster.sync();
}
