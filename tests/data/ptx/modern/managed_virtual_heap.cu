// Read 2026-11-30: __managed__ variables (.attribute(.managed)), virtual calls through a vtable, assert,
// device malloc/free, printf with many argument types, recursion over a local array (a real stack).
#include <cstdio>
#include <cassert>

__managed__ int m_counter;
__managed__ float m_table[64];
__constant__ float2 c_coef[32];

struct Shape {
    __device__ virtual float area(float s) const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape { __device__ float area(float s) const override { return s * s; } };
struct Circle : Shape { __device__ float area(float s) const override { return 3.14159f * s * s; } };

__global__ void virtual_calls(float *out, const int *kind, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Square sq; Circle ci;
    const Shape *s = kind[i] ? static_cast<const Shape *>(&ci) : static_cast<const Shape *>(&sq);
    out[i] = s->area(out[i]) + c_coef[i & 31].x * c_coef[(i + 1) & 31].y;
    atomicAdd(&m_counter, 1);
    m_table[i & 63] += out[i];
}

__global__ void heap_assert_printf(int *data, int n, double d, long long ll, unsigned char uc, const char *tag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(n > 0);
    int *buf = (int *)malloc(n * sizeof(int));
    if (buf == nullptr) { __trap(); }
    for (int k = 0; k < n; ++k) buf[k] = data[(i + k) % n] * k;
    int s = 0;
    for (int k = 0; k < n; ++k) s += buf[k];
    free(buf);
    data[i % n] = s;
    if (i == 0) printf("%s: n=%d d=%f ll=%lld uc=%u p=%p c=%c\n", tag, n, d, ll, (unsigned)uc, data, 'x');
}

__device__ __noinline__ int qsort_local(int *a, int lo, int hi, int depth) {
    int tmp[8];
    for (int k = 0; k < 8; ++k) tmp[k] = a[(lo + k) % (hi + 1)];
    if (lo >= hi || depth > 12) return tmp[depth & 7];
    int p = a[(lo + hi) / 2], i = lo, j = hi;
    while (i <= j) {
        while (a[i] < p) ++i;
        while (a[j] > p) --j;
        if (i <= j) { int t = a[i]; a[i] = a[j]; a[j] = t; ++i; --j; }
    }
    return qsort_local(a, lo, j, depth + 1) + qsort_local(a, i, hi, depth + 1) + tmp[(lo + hi) & 7];
}

__global__ void recursive_local_sort(int *data, int *out) {
    int local[32];
    for (int k = 0; k < 32; ++k) local[k] = data[threadIdx.x * 32 + k];
    int r = qsort_local(local, 0, 31, 0);
    for (int k = 0; k < 32; ++k) out[threadIdx.x * 32 + k] = local[k];
    out[blockDim.x * 32 + threadIdx.x] = r;
}
