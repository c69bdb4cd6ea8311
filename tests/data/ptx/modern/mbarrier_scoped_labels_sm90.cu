// The mbarrier wait CUTLASS writes (cutlass/arch/barrier.h): inline asm whose `{ }` scope defines
// its own labels (LAB_WAIT:, DONE:), the same names in every wait.  A value loaded before the
// first wait (`bytes`, a kernel parameter) is read after the last one, so liveness must follow
// each branch to the label of its own scope.
#include <cstdint>
__device__ __forceinline__ void wait(uint32_t bar, uint32_t phase) {
  asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n" :: "r"(bar), "r"(phase));
}
__global__ void scoped_labels(float* out, const float* in, uint32_t bytes, int n) {
  __shared__ uint64_t bars[2];
  __shared__ float buf[128];
  uint32_t b0 = (uint32_t)__cvta_generic_to_shared(&bars[0]);
  uint32_t b1 = (uint32_t)__cvta_generic_to_shared(&bars[1]);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b0), "r"(1));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b1), "r"(1));
  }
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < n; ++i) {
    buf[threadIdx.x] = in[i * blockDim.x + threadIdx.x];
    wait(b0, i & 1);
    acc += buf[(threadIdx.x + 1) & 127];
    wait(b1, i & 1);
  }
  if (threadIdx.x == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b1), "r"(bytes));
  out[threadIdx.x] = acc;
}
