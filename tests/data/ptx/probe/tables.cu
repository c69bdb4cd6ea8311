// Probe test kernels for pointer tables and module globals (tests/test_probe_tables*.py).
// Regenerate (CUDA 13.0):
//   nvcc -ptx -arch=sm_80 -o tables.ptx tables.cu
//   nvcc -ptx -arch=sm_80 -DWRONG -o tables_wrong.ptx tables.cu
// tables_wrong.ptx is a deliberately wrong "splice": dsts[1] gets +1 and the counter is bumped
// by 2, so the probe must name dsts_1 and counter as the differing outputs.

// a table of input pointers and a table of output pointers (grouped / batched kernels)
extern "C" __global__ void table_sum(const float* const* srcs, int nsrc, float* out,
                                     float* const* dsts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < nsrc; ++k) s += srcs[k][i] * (float)(k + 1);
    out[i] = s;
    for (int k = 0; k < nsrc; ++k) {
        float v = srcs[k][i] + s;
#ifdef WRONG
        if (k == 1) v += 1.0f;
#endif
        dsts[k][i] = v;
    }
}

// module globals: a __constant__ table set by the host, an initialised __device__ table, a
// __device__ counter the kernel bumps
__constant__ float lut[16];
__device__ float gains[4] = {1.0f, 2.0f, 0.5f, 4.0f};
__device__ unsigned int counter;

extern "C" __global__ void lut_count(const int* idx, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = idx[i] & 15;
    float v = lut[k] * gains[k & 3];
    out[i] = v;
#ifdef WRONG
    if (v > 0.0f) atomicAdd(&counter, 2u);
#else
    if (v > 0.0f) atomicAdd(&counter, 1u);
#endif
}

// no parameter at all: __device__ arrays in and out, a __constant__ scale (params: [] in the spec)
__device__ float g_in[256];
__device__ float g_out[256];
__constant__ float c_scale[4];

extern "C" __global__ void globals_only()
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef WRONG
    if (i < 256) g_out[i] = g_in[i] * c_scale[(i + 1) & 3];
#else
    if (i < 256) g_out[i] = g_in[i] * c_scale[i & 3];
#endif
}
