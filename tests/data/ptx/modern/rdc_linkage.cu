// Separate compilation (-rdc=true) linkage directives: an .extern .func declaration for a device
// function defined in another translation unit, .weak .func from template instantiations and
// inline functions, .visible .func for non-inlined external functions, .extern .global variables,
// and a .weak .global from a variable template. ptxas compiles it with -c (relocatable).
#include <stdint.h>

extern __device__ float external_scale(float x, int k);   // defined elsewhere -> .extern .func
extern __device__ int external_flag;                        // -> .extern .global

template <typename T>
__device__ __noinline__ T clamp_add(T a, T b, T lo, T hi) {  // instantiated -> .weak .func
    T s = a + b;
    return s < lo ? lo : (s > hi ? hi : s);
}

template <typename T> __device__ T g_total = T(7);           // variable template -> .weak .global

__device__ __noinline__ float visible_helper(float x) {     // -> .visible .func
    return x * external_scale(x, 3) + (float)external_flag;
}

__global__ void __launch_bounds__(64, 8)
rdc_kernel(float *__restrict__ out, const float *__restrict__ in, const int *__restrict__ iv) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = clamp_add<float>(in[i], 1.f, -4.f, 4.f);
    int b = clamp_add<int>(iv[i], 3, 0, 255);
    double c = clamp_add<double>((double)a, (double)b, -1e3, 1e3);
    out[i] = visible_helper(a) + (float)c + (float)g_total<int>;
    atomicAdd(&g_total<unsigned long long>, 1ull);
}
