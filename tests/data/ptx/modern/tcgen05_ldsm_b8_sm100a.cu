// sm_100a forms by inline asm: ldmatrix m16n16 .b8 (transposed) and m8n16 b8x16.b6x16_p32,
// stmatrix m16n8 .b8, tcgen05.cp / tcgen05.shift / tcgen05.mma.ws with a tensor-memory accumulator.
#include <cstdint>
__global__ void ldsm_b8(const uint8_t* __restrict__ g, uint32_t* __restrict__ out) {
  __shared__ alignas(128) uint8_t tile[16 * 32];
  for (int i = threadIdx.x; i < 16 * 32; i += 32) tile[i] = g[blockIdx.x * 512 + i];
  __syncthreads();
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(tile + (threadIdx.x % 16) * 32);
  uint32_t r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b6x16_p32 {%0, %1}, [%2];" : "=r"(r2), "=r"(r3) : "r"(addr));
  asm volatile("stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%0], {%1};" :: "r"(addr), "r"(r0 ^ r2) : "memory");
  __syncthreads();
  out[blockIdx.x * 32 + threadIdx.x] = r0 + r1 + r2 + r3 + tile[threadIdx.x];
}
__global__ void tcgen05_ws(uint64_t adesc, uint64_t bdesc, uint32_t idesc, uint32_t* __restrict__ out) {
  __shared__ uint32_t taddr;
  if (threadIdx.x < 32)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 128;" :: "r"((uint32_t)__cvta_generic_to_shared(&taddr)));
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t t = taddr;
  if (threadIdx.x == 0) {
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: "r"(t), "l"(adesc));
    asm volatile("tcgen05.shift.cta_group::1.down [%0];" :: "r"(t));
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %3, 0;\n\t"
                 "tcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}"
                 :: "r"(t), "l"(adesc), "l"(bdesc), "r"(idesc));
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%0];" :: "l"((uint64_t)0));
  }
  uint32_t v;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(v) : "r"(t));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x < 32) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 128;" :: "r"(t));
}
