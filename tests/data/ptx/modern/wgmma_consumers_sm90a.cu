// Warp-specialised wgmma: warpgroup 0 produces (cp.async.bulk into shared, mbarrier),
// warpgroups 1 and 2 consume with different wgmma forms: f16 with a run-time scale-d
// predicate and immediate scale/negate, s8 m64n64k32, tf32 m64n32k8, e5m2 x e4m3 m64n64k32,
// and a sparse wgmma.mma_async.sp f16 m64n32k32.  setmaxnreg per role.
#include <cstdint>
#define WG_F16(N, regs, ...) 
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

extern "C" __global__ void __launch_bounds__(384, 1)
consumers(const uint64_t* descs, const float4* src, float* out, int iters, int scale_d) {
  __shared__ alignas(1024) uint8_t smem[32768];
  __shared__ alignas(8) uint64_t full;
  int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  uint32_t bar = (uint32_t)__cvta_generic_to_shared(&full);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (t == 0) {
      uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16384;" :: "r"(bar));
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16384, [%2];"
                   :: "r"(dst), "l"(src), "r"(bar) : "memory");
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  asm volatile("{\n .reg .pred P1;\n LAB_WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n"
               " @P1 bra DONE;\n bra LAB_WAIT;\n DONE:\n }" :: "r"(bar) : "memory");
  uint64_t da = descs[wg * 4], db = descs[wg * 4 + 1];
  float acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = 0.f;
  if (wg == 1) {
    for (int it = 0; it < iters; ++it) {
      fence();
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
                   " wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, -1, 0, 1;\n}\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                     "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
                     "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15])
                   : "l"(da + it * 2), "l"(db + it * 2), "r"(scale_d | it));
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
                   " wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                     "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
                     "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15])
                   : "l"(da + 64), "l"(db + 64), "n"(1));
      commit();
      wait0();
    }
  } else {
    int iacc[16];
    for (int i = 0; i < 16; ++i) iacc[i] = 0;
    fence();
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p;\n}\n"
                 : "+r"(iacc[0]), "+r"(iacc[1]), "+r"(iacc[2]), "+r"(iacc[3]), "+r"(iacc[4]), "+r"(iacc[5]),
                   "+r"(iacc[6]), "+r"(iacc[7]), "+r"(iacc[8]), "+r"(iacc[9]), "+r"(iacc[10]), "+r"(iacc[11]),
                   "+r"(iacc[12]), "+r"(iacc[13]), "+r"(iacc[14]), "+r"(iacc[15])
                 : "l"(da), "l"(db), "r"(scale_d));
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e4m3 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                   "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
                   "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15])
                 : "l"(da + 8), "l"(db + 8), "r"(1));
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %19, 0;\n"
                 " wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, %18, 0, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                   "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
                   "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15])
                 : "l"(da + 16), "l"(db + 16), "r"(t), "r"(1));
    commit();
    wait0();
    for (int i = 0; i < 16; ++i) acc[i] += (float)iacc[i];
  }
  for (int i = 0; i < 16; ++i) out[(wg * 128 + t) * 16 + i] = acc[i];
}
