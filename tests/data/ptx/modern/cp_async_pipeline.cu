// Ampere-style async copies: cp.async.ca (4/8/16 B) and cp.async.cg (16 B) into shared
// memory, grouped with cp.async.commit_group and drained with cp.async.wait_group N /
// cp.async.wait_all, in a double-buffered loop. Also the zero-fill (src-size) form.
#include <cuda_pipeline.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async_cg16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_ca16_zfill(void *dst, const void *src, bool valid) {
    int n = valid ? 16 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_async_ca4(void *dst, const void *src) {
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 4;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_group() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

constexpr int TILE = 1024;  // floats per stage

// Double-buffered sum: load stage s+1 while summing stage s.
__global__ void __launch_bounds__(256)
pipelined_sum(const float4 *__restrict__ in, float *__restrict__ out, int nstages) {
    __shared__ alignas(16) float4 buf[2][TILE / 4];
    const int t = threadIdx.x;
    const float4 *base = in + blockIdx.x * nstages * (TILE / 4);
    cp_async_cg16(&buf[0][t], base + t);
    commit();
    float acc = 0.f;
    for (int s = 0; s < nstages; ++s) {
        if (s + 1 < nstages) {
            cp_async_cg16(&buf[(s + 1) & 1][t], base + (s + 1) * (TILE / 4) + t);
        }
        commit();
        wait_group<1>();
        __syncthreads();
        float4 v = buf[s & 1][(t + 7) % (TILE / 4)];
        acc += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    out[blockIdx.x * blockDim.x + t] = acc;
}

// Bounds-checked copy with zero fill and small (4-byte) cp.async.ca copies.
__global__ void tail_copy(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ alignas(16) float s16[512];
    __shared__ float s4[128];
    int t = threadIdx.x;
    int i = blockIdx.x * 512 + t * 4;
    cp_async_ca16_zfill(&s16[t * 4], in + i, i + 3 < n);
    cp_async_ca4(&s4[t], in + (blockIdx.x * 128 + t) % n);
    commit();
    wait_group<0>();
    __syncthreads();
    out[blockIdx.x * 128 + t] = s16[t * 4] + s16[t * 4 + 3] + s4[127 - t];
}

// The cuda_pipeline.h primitives (lowered to cp.async.ca 8/16 bytes).
__global__ void pipeline_primitives(const double *__restrict__ in, double *__restrict__ out) {
    __shared__ alignas(16) double sh[256];
    __pipeline_memcpy_async(&sh[threadIdx.x], &in[blockIdx.x * 256 + threadIdx.x], sizeof(double));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = sh[255 - threadIdx.x] * 2.0;
}
