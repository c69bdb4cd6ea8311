// Warp-synchronous and atomic operations: shfl.sync (idx/up/down/bfly) incl. the predicate output
// form (shfl.sync ... d|p), vote.sync (ballot/all/any/uni), match.any/all, redux.sync,
// atom (add/cas/exch/min/max/inc, f32/f64/u64, .shared and .global, scoped .sys/.cta) and red (no
// return value; explicit inline PTX incl. .relaxed.gpu / .release.sys / .v2.f16x2), setp with two predicate outputs (setp ... p|q), predicated instructions, and
// activemask / nanosleep / __syncwarp.
#include <stdint.h>

__device__ __forceinline__ float shfl_down_pred(float v, int delta, bool &valid) {
    float r;
    uint32_t ok;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "shfl.sync.down.b32 %0|p, %2, %3, 0x1f, 0xffffffff;\n"
        "selp.u32 %1, 1, 0, p;\n"
        "}\n" : "=f"(r), "=r"(ok) : "f"(v), "r"(delta));
    valid = ok != 0;
    return r;
}

// setp with the complementary second destination: p = a < b, q = !(a < b).
__device__ __forceinline__ int setp_pair(int a, int b, int x, int y) {
    int r;
    asm(
        "{\n"
        ".reg .pred p, q;\n"
        "setp.lt.s32 p|q, %1, %2;\n"
        "@p  add.s32 %0, %3, %4;\n"
        "@q  sub.s32 %0, %3, %4;\n"
        "}\n" : "=r"(r) : "r"(a), "r"(b), "r"(x), "r"(y));
    return r;
}
__device__ __forceinline__ int setp_pair_f32(float a, float b, int c) {
    int r;
    asm(
        "{\n"
        ".reg .pred p, q, t;\n"
        "setp.ne.s32 t, %3, 0;\n"
        "setp.gtu.and.f32 p|q, %1, %2, t;\n"
        "selp.s32 %0, 1, -1, p;\n"
        "@!q add.s32 %0, %0, 10;\n"
        "}\n" : "=r"(r) : "f"(a), "f"(b), "r"(c));
    return r;
}

__global__ void warp_reduce(const float *__restrict__ in, float *__restrict__ out, int *__restrict__ stats) {
    const int lane = threadIdx.x & 31;
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    float up = __shfl_up_sync(0xffffffffu, v, 1);
    float bc = __shfl_sync(0xffffffffu, v, 0);
    bool valid;
    float dn = shfl_down_pred(v, 2, valid);
    unsigned ballot = __ballot_sync(0xffffffffu, v > 0.f);
    int all = __all_sync(0xffffffffu, v > -1.f);
    int any = __any_sync(0xffffffffu, v > 100.f);
    int uni = __uni_sync(0xffffffffu, lane < 16);
    unsigned am = __activemask();
    unsigned peers = __match_any_sync(0xffffffffu, (int)v);
    int pred;
    unsigned allm = __match_all_sync(0xffffffffu, (unsigned)lane >> 5, &pred);
    unsigned rsum = __reduce_add_sync(0xffffffffu, (unsigned)lane);
    unsigned rmax = __reduce_max_sync(0xffffffffu, (unsigned)lane * 3u);
    int sp = setp_pair(lane, 16, (int)ballot, (int)peers) + setp_pair_f32(v, up, lane & 1);
    if (lane == 0) out[blockIdx.x] = bc + (valid ? dn : 0.f);
    stats[blockIdx.x * blockDim.x + threadIdx.x] = all + any + uni + (int)am + (int)allm + pred + (int)rsum + (int)rmax + sp;
    __syncwarp();
}

__global__ void atomics(float *fsum, double *dsum, unsigned long long *u64, int *imin, int *imax,
                        unsigned *ctr, int *flag, const float *__restrict__ in) {
    __shared__ int s_hist[32];
    __shared__ float s_sum;
    const int t = threadIdx.x;
    if (t < 32) s_hist[t] = 0;
    if (t == 0) s_sum = 0.f;
    __syncthreads();
    float v = in[blockIdx.x * blockDim.x + t];
    atomicAdd(&s_hist[(int)fabsf(v) & 31], 1);            // red.shared.add.u32
    atomicAdd(&s_sum, v);                                  // red.shared.add.f32
    int old = atomicCAS(&s_hist[0], 0, t);                 // atom.shared.cas.b32
    __syncthreads();
    if (t < 32) atomicAdd(&imin[t], s_hist[t]);            // red.global.add.s32
    atomicAdd(fsum, v);                                    // red.global.add.f32
    atomicAdd(dsum, (double)v);                            // red.global.add.f64
    unsigned long long prev = atomicAdd(u64, 1ull);        // atom.global.add.u64
    atomicMin(imin + 32, (int)v);                          // red.global.min.s32
    int mx = atomicMax(imax, old + (int)prev);             // atom.global.max.s32
    unsigned tk = atomicInc(ctr, 1023u);                   // atom.global.inc.u32
    atomicExch(flag, mx + (int)tk);                        // atom.global.exch.b32
    atomicAdd_system(ctr + 1, 1u);                         // red.sys
    atomicOr_block(ctr + 2, 1u << (t & 31));               // red.cta.or
    // nvcc 13 prints atom even when the result is unused; red is written out explicitly.
    asm volatile("red.global.add.u32 [%0], %1;" ::"l"(ctr + 3), "r"(1u) : "memory");
    asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;" ::"l"(fsum + 2), "f"(v) : "memory");
    asm volatile("red.release.sys.global.max.s32 [%0], %1;" ::"l"(imax + 1), "r"(t) : "memory");
    asm volatile("red.shared.xor.b32 [%0], %1;" ::"r"((uint32_t)__cvta_generic_to_shared(&s_hist[1])), "r"((unsigned)t) : "memory");
    asm volatile("red.global.add.noftz.v2.f16x2 [%0], {%1, %2};" ::"l"(flag + 4), "r"(0x3c003c00u), "r"(0x3c003c00u) : "memory");
    if (t == 0) {
        __nanosleep(100);
        __threadfence();
        atomicAdd(fsum + 1, s_sum);
    }
}
