// Hopper warp-specialisation building blocks (sm_90a): setmaxnreg.inc/dec.sync.aligned.u32,
// elect.sync (with its predicate output), griddepcontrol.launch_dependents / .wait (programmatic
// dependent launch), 1-D bulk copies cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// and cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32, mbarrier.try_wait with a time
// limit, mbarrier.arrive.release.cluster, st.async / red.async to a remote CTA's shared memory,
// fence.proxy.async, and a producer/consumer split of warpgroups.
#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ bool elect_one() {
    uint32_t pred = 0, laneid = 0;
    asm volatile(
        "{\n"
        ".reg .b32 %%rx;\n"
        ".reg .pred %%px;\n"
        "elect.sync %%rx|%%px, %2;\n"
        "@%%px mov.s32 %1, 1;\n"
        "mov.s32 %0, %%rx;\n"
        "}\n" : "+r"(laneid), "+r"(pred) : "r"(0xffffffffu));
    return pred != 0;
}
__device__ __forceinline__ bool mbar_try_wait(uint64_t *bar, uint32_t phase, uint32_t ns) {
    uint32_t ok;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
        "selp.b32 %0, 1, 0, p;\n"
        "}\n" : "=r"(ok) : "r"(smem_u32(bar)), "r"(phase), "r"(ns) : "memory");
    return ok != 0;
}

constexpr int CHUNK = 4096;  // bytes per bulk copy

__global__ void __launch_bounds__(384, 1)
warp_specialized(const float *__restrict__ in, float *__restrict__ out, int nchunks) {
    __shared__ alignas(128) float buf[2][CHUNK / 4];
    __shared__ alignas(8) uint64_t full[2], empty[2];
    const int wg = threadIdx.x / 128;
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 256;" ::"r"(smem_u32(&empty[s])));
        }
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x < 32 && elect_one()) {
            for (int c = 0; c < nchunks; ++c) {
                int s = c & 1;
                if (c >= 2) while (!mbar_try_wait(&empty[s], ((c / 2) - 1) & 1, 1000)) {}
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&full[s])), "n"(CHUNK) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             ::"r"(smem_u32(buf[s])), "l"(in + (size_t)c * (CHUNK / 4)), "n"(CHUNK), "r"(smem_u32(&full[s])) : "memory");
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        for (int c = 0; c < nchunks; ++c) {
            int s = c & 1;
            while (!mbar_try_wait(&full[s], (c / 2) & 1, 1000)) {}
            int t = threadIdx.x - 128;
            for (int i = t; i < CHUNK / 4; i += 256) buf[s][i] = buf[s][i] * 2.f + 1.f;
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            asm volatile("bar.sync 1, 256;");
            if (t == 0) {
                asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                             ::"l"(out + (size_t)c * (CHUNK / 4)), "r"(smem_u32(buf[s])), "n"(CHUNK) : "memory");
                asm volatile("cp.async.bulk.commit_group;");
                asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            }
            asm volatile("bar.sync 1, 256;");
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(&empty[s])) : "memory");
        }
    }
    asm volatile("griddepcontrol.launch_dependents;");
}

// st.async / red.async into the peer CTA of a 2-CTA cluster, signalling its mbarrier.
__global__ void __cluster_dims__(2, 1, 1)
cluster_st_async(int *__restrict__ out) {
    __shared__ alignas(8) uint64_t bar;
    __shared__ int slot[2];
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        slot[0] = slot[1] = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar)));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 8;" ::"r"(smem_u32(&bar)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (threadIdx.x == 0) {
        uint32_t peer = rank ^ 1, rslot, rbar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rslot) : "r"(smem_u32(&slot[0])), "r"(peer));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(smem_u32(&bar)), "r"(peer));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(rslot), "r"((int)rank + 10), "r"(rbar) : "memory");
        asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];" ::"r"(rslot + 4), "r"(5u), "r"(rbar) : "memory");
        while (!mbar_try_wait(&bar, 0, 10000)) {}
        out[blockIdx.x] = slot[0] + slot[1];
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
