// Cooperative groups and assorted integer / memory-hint instructions: grid-wide sync
// (cooperative launch), tiled_partition reductions, bar.red.popc / .or (__syncthreads_count/_or),
// named barriers with thread counts (bar.sync id, n), ld.global.nc / .cs / .lu cache hints,
// st.global.cs, prefetch, fence/membar, %clock64 / %globaltimer, popc / brev / bfind / prmt /
// bfe / dp4a / mul.hi / 128-bit integers, and a dense switch (jump table -> brx.idx if chosen).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <stdint.h>
namespace cg = cooperative_groups;

__global__ void grid_sync_reduce(const int *__restrict__ in, int *__restrict__ partial, int *__restrict__ out, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int s = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) s += in[i];
    s = cg::reduce(warp, s, cg::plus<int>());
    if (warp.thread_rank() == 0) atomicAdd(&partial[blockIdx.x], s);
    grid.sync();
    if (grid.thread_rank() == 0) {
        int t = 0;
        for (int b = 0; b < gridDim.x; ++b) t += partial[b];
        *out = t;
    }
}

__global__ void __launch_bounds__(256)
barriers_and_hints(const uint32_t *__restrict__ in, uint32_t *__restrict__ out, long long *__restrict__ times, int sel) {
    const int t = threadIdx.x;
    long long t0 = clock64();
    uint32_t a = __ldg(in + t);
    uint32_t b = __ldcs(in + 256 + t);
    uint32_t c = __ldlu(in + 512 + t);
    asm volatile("prefetch.global.L2 [%0];" ::"l"(in + 1024 + t));
    int cnt = __syncthreads_count(a & 1);
    int any = __syncthreads_or(b > 7);
    int all = __syncthreads_and(c != 0);
    if (t < 64) asm volatile("bar.sync 1, 64;");           // named barrier for the first two warps
    else asm volatile("bar.arrive 2, 192;");
    uint32_t r = __popc(a) + __brev(b) + __clz(c) + __ffs(a ^ b) + __byte_perm(a, b, 0x5410);
    r += __dp4a(a, b, c) + __umulhi(a, c) + __funnelshift_l(a, b, c & 31);
    uint32_t fld;
    asm("bfe.u32 %0, %1, 4, 8;" : "=r"(fld) : "r"(a));
    uint32_t msb;
    asm("bfind.u32 %0, %1;" : "=r"(msb) : "r"(b));
    unsigned __int128 wide = (unsigned __int128)a * b * c + ((unsigned __int128)cnt << 70);
    r += (uint32_t)(wide >> 64) + fld + msb;
    switch ((sel + t) & 7) {               // dense switch
        case 0: r += 11; break;
        case 1: r ^= 0x55; break;
        case 2: r *= 3; break;
        case 3: r -= 7; break;
        case 4: r <<= 2; break;
        case 5: r = ~r; break;
        case 6: r |= 0x100; break;
        default: r >>= 1; break;
    }
    __threadfence_block();
    __stcs(out + t, r + any + all);
    uint64_t gt;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
    __threadfence_system();
    if (t == 0) times[blockIdx.x] = clock64() - t0 + (long long)gt;
}
