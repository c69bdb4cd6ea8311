// Compiled with -G (full device debug, -O0 device code): .section .debug_info / .debug_abbrev /
// .debug_loc / .debug_str / .debug_frame style blocks, .loc with inlined_at, local variables
// in .local depot, and many .loc entries. Kept tiny so the PTX stays small.
struct Pair { float a; int b; };

__device__ __noinline__ float weigh(Pair p, float w) {
    float r = p.a * w;
    if (p.b > 2) r += 1.f;
    return r;
}

__device__ __forceinline__ float twice(float x) { return x + x; }

__global__ void debug_kernel(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Pair p = {in[i], i & 7};
        float local[4];
        for (int j = 0; j < 4; ++j) local[j] = twice(p.a) * j;
        out[i] = weigh(p, local[i & 3]);
    }
}
