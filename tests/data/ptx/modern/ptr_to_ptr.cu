// Pointer arrays in global memory (grouped / batched GEMM style: const T* const* ptr_A), and a
// device-side linked structure: the kernel loads pointers from a buffer and dereferences them
// (unseen kernels, 2026-12-01).
struct Problem { const float* a; float* d; int n; };
__global__ void batched_ptrs(const float* const* ptr_a, float* const* ptr_d, const int* sizes, int groups) {
    int g = blockIdx.y;
    if (g >= groups) return;
    const float* a = ptr_a[g];
    float* d = ptr_d[g];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < sizes[g]) d[i] = a[i] * 2.0f;
}
__global__ void problems(const Problem* probs, int count) {
    int g = blockIdx.y;
    if (g >= count) return;
    Problem p = probs[g];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) p.d[i] = p.a[i] + 1.0f;
}
