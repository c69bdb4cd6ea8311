// FP8 on sm_89+: mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 and .f32.e5m2.e4m3.f32,
// conversions cvt.rn.satfinite.e4m3x2.f16x2 / e5m2x2.f32 (cuda_fp8.h) and back
// (cvt.rn.f16x2.e4m3x2).
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

__device__ __forceinline__ void mma_e4m3_f16(uint32_t (&d)[2], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 "
                 "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_e5m2_e4m3_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Quantise f16 pairs to e4m3x2 (saturating), then multiply with a warp MMA.
__global__ void __launch_bounds__(32)
fp8_quant_mma(const __half2 *__restrict__ a16, const __half2 *__restrict__ b16, __half2 *__restrict__ c, float *__restrict__ c32) {
    const int lane = threadIdx.x;
    uint32_t a[4], b[2];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        __half2 lo = a16[lane * 8 + 2 * i], hi = a16[lane * 8 + 2 * i + 1];
        __nv_fp8x2_storage_t q0 = __nv_cvt_halfraw2_to_fp8x2(lo, __NV_SATFINITE, __NV_E4M3);
        __nv_fp8x2_storage_t q1 = __nv_cvt_halfraw2_to_fp8x2(hi, __NV_SATFINITE, __NV_E4M3);
        a[i] = (uint32_t)q0 | ((uint32_t)q1 << 16);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        float2 f = __half22float2(b16[lane * 4 + i]);
        float2 g = __half22float2(b16[lane * 4 + i + 2]);
        __nv_fp8x2_storage_t q0 = __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3);
        __nv_fp8x2_storage_t q1 = __nv_cvt_float2_to_fp8x2(g, __NV_SATFINITE, __NV_E5M2);
        b[i] = (uint32_t)q0 | ((uint32_t)q1 << 16);
    }
    uint32_t d[2] = {0u, 0u};
    mma_e4m3_f16(d, a, b);
    float e[4] = {0.f, 0.f, 0.f, 0.f};
    mma_e5m2_e4m3_f32(e, a, b);
    __half2 r0 = *reinterpret_cast<__half2 *>(&d[0]);
    __half2 r1 = *reinterpret_cast<__half2 *>(&d[1]);
    // Round-trip one lane's value through fp8 to exercise the up-conversion.
    __half2_raw back = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(a[0] & 0xffff), __NV_E4M3);
    c[lane * 2 + 0] = __hadd2(r0, __half2(back));
    c[lane * 2 + 1] = r1;
#pragma unroll
    for (int i = 0; i < 4; ++i) c32[lane * 4 + i] = e[i];
}

// Plain fp8 storage types: __nv_fp8_e4m3 round-trip through float.
__global__ void fp8_scale(const float *__restrict__ x, __nv_fp8_e4m3 *__restrict__ q, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = __nv_fp8_e4m3(x[i] * s);
}
