// Floating-point variety: f16x2 / bf16x2 packed arithmetic (fma.rn.f16x2, fma.rn.relu.bf16x2,
// max.NaN, hmul2.sat), approximate transcendentals (ex2.approx.ftz.f32, lg2, rsqrt, tanh.approx,
// sin/cos.approx), IEEE div/sqrt with rounding modes (div.rn.f64, sqrt.rn.f32, rcp.rn),
// cvt with rounding / saturation (cvt.rni.s32.f32, cvt.rn.bf16x2.f32, cvt.sat.f16.f32),
// f64 fma, copysign, testp, and hexadecimal float immediates (0f3F800000, 0d...).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void packed_half(const __half2 *__restrict__ a, const __half2 *__restrict__ b, __half2 *__restrict__ c,
                            const __nv_bfloat162 *__restrict__ x, __nv_bfloat162 *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 p = __hfma2(a[i], b[i], __float2half2_rn(1.f));
    p = __hmax2_nan(p, __hmul2_sat(a[i], b[i]));
    p = h2exp(p);
    c[i] = __hfma2_relu(p, a[i], b[i]);
    __nv_bfloat162 q = __hfma2(x[i], x[i], __float2bfloat162_rn(0.5f));
    q = __hfma2_relu(q, x[i], __floats2bfloat162_rn(-1.f, 2.f));
    float2 f = __bfloat1622float2(q);
    y[i] = __floats2bfloat162_rn(tanhf(f.x), __expf(f.y));
}

__global__ void fast_and_exact(const float *__restrict__ in, float *__restrict__ out, double *__restrict__ dout,
                               int *__restrict__ iout, __half *__restrict__ hout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    float fa = __expf(x) + __logf(x + 2.f) + __sinf(x) * __cosf(x) + rsqrtf(x * x + 1.f);
    float ta;
    asm("tanh.approx.f32 %0, %1;" : "=f"(ta) : "f"(x));
    float ex = __fdiv_rn(x, 3.f) + __fsqrt_rn(fabsf(x)) + __frcp_rn(x + 7.f) + copysignf(1.5f, -x);
    double d = (double)x;
    double de = fma(d, 1.0 / 3.0, sqrt(fabs(d))) / (d + 1e-300);
    out[i] = fa + ta + ex + (isnan(x) ? 0.f : 1.f) + (isinf(x) ? 2.f : 0.f);
    dout[i] = de;
    iout[i] = __float2int_rn(x) + __float2int_rz(x * 2.f) + __float2int_rd(x) + __float2uint_ru(fabsf(x));
    hout[i] = __float2half_rn(__saturatef(x));
}
