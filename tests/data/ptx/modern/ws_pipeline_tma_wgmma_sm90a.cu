// CUTLASS 3.x-style warp-specialized GEMM tile (written by hand with inline PTX: no CUTLASS
// headers here).  Warpgroup 0 is the producer (setmaxnreg.dec, one elected thread issues TMA
// loads into a 4-stage ring guarded by full/empty mbarriers); warpgroups 1 and 2 are consumers
// (setmaxnreg.inc, try_wait loop on the full barrier, 4 wgmma m64n64k16 per stage, wait_group 1
// then release the previous stage), epilogue cvt f16x2 + stmatrix + fence.proxy.async + TMA store.
// Block tile 128x64, K tile 64, f16 in, f32 accumulate, f16 out.
#include <cuda.h>
#include <cstdint>

#define STAGES 4
#define BM 128
#define BN 64
#define BK 64

struct __align__(1024) Smem {
  uint16_t a[STAGES][BM * BK];
  uint16_t b[STAGES][BN * BK];
  uint16_t c[BM * BN];
  uint64_t full[STAGES];
  uint64_t empty[STAGES];
};

__device__ __forceinline__ uint32_t s32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t* b, uint32_t n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(s32(b)), "r"(n));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* b, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(s32(b)), "r"(bytes));
}
__device__ __forceinline__ void mbar_arrive(uint64_t* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(s32(b)));
}
// ClusterBarrier::wait of CUTLASS: labels inside a { } scope, inlined many times.
__device__ __forceinline__ void mbar_wait(uint64_t* b, uint32_t parity) {
  asm volatile("{\n\t.reg .pred P1;\n"
               "LAB_WAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
               "@P1 bra DONE;\n\tbra LAB_WAIT;\n"
               "DONE:\n\t}\n" :: "r"(s32(b)), "r"(parity));
}
__device__ __forceinline__ uint32_t elect_one() {
  uint32_t pred = 0;
  asm volatile("{\n\t.reg .b32 %%rx;\n\t.reg .pred %%px;\n\t"
               "elect.sync %%rx|%%px, %1;\n\t@%%px mov.s32 %0, 1;\n\t}\n"
               : "+r"(pred) : "r"(0xffffffffu));
  return pred;
}
__device__ __forceinline__ uint64_t evict_last_policy() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* tm, uint64_t* bar,
                                            int c0, int c1, uint64_t pol) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%3, %4}], [%2], %5;"
               :: "r"(s32(dst)), "l"(tm), "r"(s32(bar)), "r"(c0), "r"(c1), "l"(pol) : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* tm, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(tm), "r"(s32(src)), "r"(c0), "r"(c1) : "memory");
  asm volatile("cp.async.bulk.commit_group;");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
// 128B-swizzled K-major descriptor: start>>4, LBO 16 B, SBO 1024 B, swizzle mode 1 (128B).
__device__ __forceinline__ uint64_t desc(const void* p) {
  uint64_t a = (s32(p) & 0x3FFFF) >> 4;
  return a | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ __forceinline__ void wgmma_64x64x16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n\t}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(scale_d));
}

__global__ void __launch_bounds__(384, 1)
ws_gemm_tma_wgmma(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                  const __grid_constant__ CUtensorMap tmC, int k_tiles) {
  extern __shared__ __align__(1024) unsigned char raw[];
  Smem& s = *reinterpret_cast<Smem*>(raw);
  const int wg = threadIdx.x / 128;
  const int warp = threadIdx.x / 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"(&tmA) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"(&tmB) : "memory");
    for (int i = 0; i < STAGES; ++i) { mbar_init(&s.full[i], 1); mbar_init(&s.empty[i], 2); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (warp == 0 && elect_one()) {
      const uint64_t pol = evict_last_policy();
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int st = kt % STAGES;
        mbar_wait(&s.empty[st], ((kt / STAGES) & 1) ^ 1);
        mbar_expect_tx(&s.full[st], (BM + BN) * BK * 2);
        tma_load_2d(s.a[st], &tmA, &s.full[st], kt * BK, m0, pol);
        tma_load_2d(s.b[st], &tmB, &s.full[st], kt * BK, n0, pol);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1;  // consumer warpgroup: rows cw*64 .. cw*64+63 of the tile
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) d[i] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % STAGES;
      mbar_wait(&s.full[st], (kt / STAGES) & 1);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (int k = 0; k < BK / 16; ++k)
        wgmma_64x64x16(d, desc(&s.a[st][cw * 64 * BK + k * 16]), desc(&s.b[st][k * 16]), kt > 0 || k > 0);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      if (kt > 0 && threadIdx.x % 128 == 0) mbar_arrive(&s.empty[(kt - 1) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    // epilogue: f32 -> f16x2, stmatrix x4 into the C tile, then one thread stores it with TMA
    const int lane = threadIdx.x % 32, wq = (threadIdx.x % 128) / 32;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t h[4];
#pragma unroll
      for (int q = 0; q < 4; ++q)
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h[q]) : "f"(d[j * 8 + q * 2 + 1]), "f"(d[j * 8 + q * 2]));
      const void* row = &s.c[(cw * 64 + wq * 16 + (lane % 16)) * BN + j * 16 + (lane / 16) * 8];
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                   :: "r"(s32(row)), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (threadIdx.x == 128) tma_store_2d(&tmC, s.c, n0, m0);
  }
  asm volatile("griddepcontrol.launch_dependents;");
}
