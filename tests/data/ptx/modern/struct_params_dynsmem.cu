// A by-value parameter struct with nested structs and pointer arrays chosen at run time, a
// __grid_constant__ struct indexed dynamically, dynamic shared memory with several typed views,
// a dynamically indexed local array, __launch_bounds__ with a max-registers hint and cluster dims
// (unseen kernels, 2026-12-01).
#include <cuda_fp16.h>
#include <cstdint>
struct Inner { float scale; int16_t shift; uint8_t flags[3]; };
struct Layer { const __half* src[4]; float* dst[2]; Inner in[2]; int n; double bias; };
struct Table { int idx[64]; float w[64]; };
extern "C" __global__ void __maxnreg__(64)
struct_params(Layer L, const __grid_constant__ Table T, int pick) {
    extern __shared__ __align__(16) unsigned char dyn[];
    float* fview = reinterpret_cast<float*>(dyn);
    __half2* hview = reinterpret_cast<__half2*>(dyn + 512 * sizeof(float));
    int4* qview = reinterpret_cast<int4*>(dyn + 1024 * sizeof(float));
    const int t = threadIdx.x;
    const __half* s = L.src[(pick + blockIdx.x) & 3];             // pointer chosen at run time
    float v = __half2float(s[t]) * L.in[pick & 1].scale + (float)L.bias;
    v += T.w[T.idx[(t + pick) & 63] & 63];                          // grid-constant, dynamic index
    float loc[16];
    for (int k = 0; k < 16; ++k) loc[k] = v * k + L.in[k & 1].flags[k % 3];
    fview[t] = loc[(t ^ pick) & 15] + (L.in[1].shift << 2);
    hview[t] = __floats2half2_rn(v, -v);
    __syncthreads();
    int4 q = qview[t & 31];
    float acc = fview[(t + 1) & 127] + __low2float(hview[(t + 3) & 127]) + q.x + q.w;
    if (t < L.n) L.dst[pick & 1][blockIdx.x * 128 + t] = acc;
}
__global__ void __cluster_dims__(2, 1, 1) clustered(float* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}
