// Blackwell cluster launch control: a persistent loop that cancels not-yet-launched clusters
// (clusterlaunchcontrol.try_cancel into a 16-byte shared response, an mbarrier completing it,
// query_cancel.is_canceled / get_first_ctaid), plus sm_100a's f32 redux.sync (min/max .abs
// .NaN) and the stochastic-rounding cvt.rs (f16x2 and bf16x2 from f32 with random bits).
#include <cstdint>

__device__ __forceinline__ uint32_t s32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__global__ void __launch_bounds__(128)
clc_persistent(const float* __restrict__ x, float* __restrict__ y, uint32_t* __restrict__ rnd,
               float* __restrict__ wmin, int n_tiles) {
  __shared__ __align__(16) uint4 resp;
  __shared__ __align__(8) uint64_t bar;
  __shared__ int next;
  const uint32_t sb = s32(&bar), sr = s32(&resp);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sb));
  __syncthreads();
  int tile = blockIdx.x;
  uint32_t phase = 0;
  while (tile < n_tiles) {
    if (threadIdx.x == 0) {
      asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];"
                   :: "r"(sr), "r"(sb) : "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(sb));
    }
    // the tile's work: stochastic rounding and a warp min of |x|
    const int i = tile * 128 + threadIdx.x;
    float a = x[2 * i], b = x[2 * i + 1];
    uint32_t h, bh, r = rnd[i];
    asm("cvt.rs.f16x2.f32 %0, %1, %2, %3;" : "=r"(h) : "f"(a), "f"(b), "r"(r));
    asm("cvt.rs.relu.satfinite.bf16x2.f32 %0, %1, %2, %3;" : "=r"(bh) : "f"(a), "f"(b), "r"(r ^ 0x9E3779B9u));
    float m, mx;
    asm("redux.sync.min.abs.NaN.f32 %0, %1, 0xffffffff;" : "=f"(m) : "f"(a));
    asm("redux.sync.max.f32 %0, %1, 0xffffffff;" : "=f"(mx) : "f"(b));
    y[i] = __uint_as_float(h) + __uint_as_float(bh);
    if ((threadIdx.x & 31) == 0) wmin[tile * 4 + threadIdx.x / 32] = m + mx;
    // wait for the response, then read the next tile from it
    asm volatile("{\n\t.reg .pred P1;\n"
                 "CLC_WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@!P1 bra CLC_WAIT;\n\t}\n" :: "r"(sb), "r"(phase) : "memory");
    phase ^= 1;
    if (threadIdx.x == 0) {
      uint32_t ok, cx;
      asm volatile("{\n\t.reg .b128 rsp;\n\t.reg .pred p;\n\t"
                   "ld.shared.b128 rsp, [%2];\n\t"
                   "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, rsp;\n\t"
                   "selp.u32 %0, 1, 0, p;\n\t"
                   "@p clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %1, rsp;\n\t}\n"
                   : "=r"(ok), "=r"(cx) : "r"(sr) : "memory");
      next = ok ? (int)cx : n_tiles;
    }
    __syncthreads();
    tile = next;
    __syncthreads();
  }
}
