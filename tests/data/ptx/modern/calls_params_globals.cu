// ABI-level constructs: call.uni to non-inlined .func with param and return values,
// an indirect call through a function pointer (call with a prototype), a struct passed by value
// (.param .align 8 .b8 name[144]), .extern .shared dynamic shared memory, initialised .global
// arrays, .const data, #pragma unroll 1 (.pragma "nounroll"), and __launch_bounds__ with a
// minimum-blocks hint (.maxntid / .minnctapersm).
#include <stdint.h>

struct Params {          // 144 bytes, 8-byte aligned
    double scale[4];
    int64_t offset[4];
    float bias[16];
    int n;
    int flags;
    double extra;
};

__constant__ float c_coeffs[16] = {1.f, 0.5f, 0.25f, 0.125f, 2.f, 4.f, 8.f, 16.f,
                                   -1.f, -0.5f, 3.f, 5.f, 7.f, 11.f, 13.f, 17.f};
__constant__ Params c_params;
__device__ int g_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ float g_lut[4] = {0.1f, 0.2f, 0.3f, 0.4f};
__device__ unsigned long long g_counter = 0;

__device__ __noinline__ float poly(float x, int degree) {
    float r = 0.f;
#pragma unroll 1
    for (int i = degree; i >= 0; --i) r = r * x + c_coeffs[i & 15];
    return r;
}

__device__ __noinline__ int2 divmod(int a, int b) {
    return make_int2(a / b, a % b);
}

__device__ __noinline__ double apply_params(Params p, int i) {
    return p.scale[i & 3] * (double)p.offset[(i >> 2) & 3] + p.bias[i & 15] + p.n + p.extra;
}

typedef float (*unary_fn)(float);
__device__ __noinline__ float op_square(float x) { return x * x; }
__device__ __noinline__ float op_negate(float x) { return -x; }
__device__ __noinline__ float op_half(float x) { return 0.5f * x; }
__device__ unary_fn g_ops[3] = {op_square, op_negate, op_half};

__global__ void __launch_bounds__(256, 4)
calls_kernel(float *__restrict__ out, const float *__restrict__ in, Params p, int which) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float y = poly(x, 7);
    int2 qr = divmod(i, 7);
    double z = apply_params(p, i);
    unary_fn f = g_ops[(which + qr.y) % 3];
    float w = f(y);                                  // indirect call via prototype
    out[i] = w + (float)z + g_lut[qr.x & 3] + g_table[i & 7];
}

__global__ void __launch_bounds__(128)
dyn_shared_kernel(const float *__restrict__ in, float *__restrict__ out, int n) {
    extern __shared__ float dyn[];                   // .extern .shared .align 16 .b8 dyn[]
    int t = threadIdx.x;
    for (int i = t; i < n; i += blockDim.x) dyn[i] = in[blockIdx.x * n + i] * c_params.scale[0];
    __syncthreads();
    float s = 0.f;
#pragma unroll 1
    for (int i = t; i < n; i += blockDim.x) s += dyn[n - 1 - i];
    out[blockIdx.x * blockDim.x + t] = s;
    if (t == 0) atomicAdd(&g_counter, 1ull);
}

// Struct by value to the kernel itself and to a device function.
__global__ void byval_kernel(Params p, double *__restrict__ out) {
    out[threadIdx.x] = apply_params(p, threadIdx.x) + c_params.bias[threadIdx.x & 15];
}
