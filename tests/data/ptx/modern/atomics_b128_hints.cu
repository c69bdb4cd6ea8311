// Memory forms the kernels read first (2026-11-30) did not have: atom.cas.b128 / atom.exch.b128 (sm_90, PTX 8.3),
// createpolicy + L2::cache_hint loads/stores, ld.global.nc.L1::no_allocate, 128-bit
// int arithmetic through mov.b128, TMA reduce (cp.reduce.async.bulk.tensor) and the TMA L2 prefetch,
// multimem.ld_reduce / multimem.red on a multicast address, local-memory array indexed at run time.
#include <cstdint>
#include <cuda.h>

extern "C" __global__ void cas128(unsigned __int128* p, const unsigned __int128* cmp, unsigned __int128* out) {
  int t = threadIdx.x;
  uint64_t clo = (uint64_t)cmp[t], chi = (uint64_t)(cmp[t] >> 64);
  uint64_t slo = clo + 1, shi = chi ^ 0xffull;
  uint64_t rlo, rhi;
  asm volatile("{\n .reg .b128 c, s, r;\n mov.b128 c, {%2, %3};\n mov.b128 s, {%4, %5};\n"
               " atom.global.cas.b128 r, [%6], c, s;\n mov.b128 {%0, %1}, r;\n}\n"
               : "=l"(rlo), "=l"(rhi) : "l"(clo), "l"(chi), "l"(slo), "l"(shi), "l"(p + t) : "memory");
  uint64_t xlo, xhi;
  asm volatile("{\n .reg .b128 s, r;\n mov.b128 s, {%2, %3};\n"
               " atom.relaxed.gpu.global.exch.b128 r, [%4], s;\n mov.b128 {%0, %1}, r;\n}\n"
               : "=l"(xlo), "=l"(xhi) : "l"(rlo), "l"(rhi), "l"(p + 64 + t) : "memory");
  out[t] = ((unsigned __int128)(rhi ^ xhi) << 64) | (rlo + xlo);
}

extern "C" __global__ void cache_hints(const float* __restrict__ x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t pol, pol2;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %0, 0.5;" : "=l"(pol2));
  float v, w;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(x + i), "l"(pol));
  asm volatile("ld.global.L1::evict_last.L2::256B.f32 %0, [%1];" : "=f"(w) : "l"(x + n + i));
  float loc[16];
  for (int k = 0; k < 16; ++k) loc[k] = v * k + w;
  float r = loc[(i * 7) & 15] + loc[i & 15];
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" :: "l"(y + i), "f"(r), "l"(pol2) : "memory");
  asm volatile("discard.global.L2 [%0], 128;" :: "l"(y + n + (i & ~31)) : "memory");
}

extern "C" __global__ void tma_reduce(const __grid_constant__ CUtensorMap desc, int x0, int y0) {
  __shared__ alignas(128) float tile[32 * 32];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) tile[i] = (float)i;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(tile);
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
                 :: "l"(&desc), "r"(x0 + 32), "r"(y0) : "memory");
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(&desc), "r"(x0), "r"(y0), "r"(s) : "memory");
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(&desc), "r"(x0), "r"(y0 + 32), "r"(s) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

extern "C" __global__ void multimem_ops(float* mc, float* out) {
  int t = threadIdx.x;
  float v;
  asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(mc + t) : "memory");
  asm volatile("multimem.red.relaxed.sys.global.add.f32 [%0], %1;" :: "l"(mc + 256 + t), "f"(v) : "memory");
  asm volatile("multimem.st.relaxed.sys.global.f32 [%0], %1;" :: "l"(mc + 512 + t), "f"(v * 2.0f) : "memory");
  out[t] = v;
}
