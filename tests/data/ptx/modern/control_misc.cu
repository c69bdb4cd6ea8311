// Control-flow and ABI features a hand-written stand-in never has: brx.idx jump tables (dense
// switch), recursion, printf (vprintf), indirect calls, a kernel with many scalar params, a
// by-value struct param with 16-byte alignment, .weak device functions, mbarrier, atomics.
#include <cstdio>
#include <cuda/barrier>
struct __align__(16) Cfg { float4 scale; int n; int mode; double eps; char tag[24]; };

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef float (*op_t)(float, float);
__device__ __noinline__ float op_add(float a, float b) { return a + b; }
__device__ __noinline__ float op_mul(float a, float b) { return a * b; }
__device__ op_t ops[2] = {op_add, op_mul};

__global__ void switch_table(const int* __restrict__ sel, float* out, float x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r;
  switch (sel[i]) {
    case 0: r = x + 1.f; break;
    case 1: r = x * 3.f; break;
    case 2: r = __sinf(x); break;
    case 3: r = __expf(x); break;
    case 4: r = x - 7.f; break;
    case 5: r = __fdividef(1.f, x); break;
    case 6: r = sqrtf(x); break;
    case 7: r = x * x * x; break;
    default: r = 0.f;
  }
  out[i] = r;
}

__global__ void many_params(float* out, const float* in, int a0, int a1, int a2, int a3, float f0, float f1,
                            float f2, float f3, double d0, long long l0, unsigned short h0, char c0,
                            bool b0, int a4, int a5, int a6, int a7, Cfg cfg) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= cfg.n) return;
  float v = in[i] * cfg.scale.x + cfg.scale.y;
  v = v * f0 + f1 * a0 - f2 * a1 + f3 * (a2 ^ a3) + (float)d0 + (float)l0 + h0 + c0 + (b0 ? 1.f : 2.f);
  v += (a4 + a5 * a6 - a7) + (float)cfg.eps + cfg.tag[i & 15] + cfg.mode;
  out[i] = v;
}

__global__ void recurse_print_indirect(int* out, float* fo, int n, int which) {
  int i = threadIdx.x;
  int f = fib(n + (i & 3));
  if (i == 0) printf("fib(%d)=%d block %d\n", n, f, blockIdx.x);
  fo[i] = ops[which & 1]((float)f, 2.f);
  atomicAdd(out, f);
  atomicMax(out + 1, i);
  atomicCAS(out + 2, 0, f);
}

__global__ void mbarrier_wait(float* out, const float* in) {
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float buf[256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  buf[threadIdx.x] = in[threadIdx.x];
  bar.arrive_and_wait();
  out[threadIdx.x] = buf[255 - threadIdx.x];
}
