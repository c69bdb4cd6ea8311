// TMA addressing modes the earlier kernels did not use: 3-D and 5-D tiles, im2col loads with
// their offset operands (3-D and 4-D), a tensor reduce (cp.reduce.async.bulk.tensor add), an
// im2col prefetch, and an L2 cache hint on a 3-D load.  One elected thread issues everything.
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ uint32_t s32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__global__ void __launch_bounds__(128)
tma_modes(const __grid_constant__ CUtensorMap t3, const __grid_constant__ CUtensorMap t5,
          const __grid_constant__ CUtensorMap tim3, const __grid_constant__ CUtensorMap tim4,
          const __grid_constant__ CUtensorMap tout, int n, int h, int w, int c) {
  __shared__ __align__(128) float tile[4096];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t sb = s32(&bar), st = s32(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sb));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %0, 0.5;" : "=l"(pol));
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%0, {%1, %2, %3}], {%4};"
                 :: "l"(&tim3), "r"(c), "r"(w), "r"(n), "h"((uint16_t)1) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sb), "r"(4 * 16384));
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%3, %4, %5}], [%2], %6;"
                 :: "r"(st), "l"(&t3), "r"(sb), "r"(c), "r"(w), "r"(h), "l"(pol) : "memory");
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
                 :: "r"(st + 16384), "l"(&t5), "r"(sb), "r"(c), "r"(w), "r"(h), "r"(n), "r"(0) : "memory");
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2], {%6};"
                 :: "r"(st + 32768), "l"(&tim3), "r"(sb), "r"(c), "r"(w), "r"(n), "h"((uint16_t)2) : "memory");
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};"
                 :: "r"(st + 49152), "l"(&tim4), "r"(sb), "r"(c), "r"(w), "r"(h), "r"(n),
                    "h"((uint16_t)1), "h"((uint16_t)3) : "memory");
  }
  asm volatile("{\n\t.reg .pred P1;\n"
               "WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n\t"
               "@!P1 bra WAIT;\n\t}\n" :: "r"(sb) : "memory");
  for (int i = threadIdx.x; i < 4096; i += 128) tile[i] = tile[i] * 2.0f + 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                 :: "l"(&tout), "r"(st), "r"(c), "r"(w), "r"(h) : "memory");
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.max.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                 :: "l"(&tout), "r"(st + 16384), "r"(c), "r"(w), "r"(h + 1) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(sb));
  }
}
