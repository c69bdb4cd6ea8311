// Dynamic parallelism (-rdc=true): a parent kernel launches a child grid from the device
// (cudaGetParameterBufferV2 / cudaLaunchDeviceV2 extern calls), a recursive device function,
// a switch through a jump table, __nanosleep back-off loop, and printf.
#include <cstdio>
extern "C" __global__ void child(float* x, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ float pick(int k, float v) {
  switch (k & 7) {
    case 0: return v + 1; case 1: return v * 3; case 2: return v - 7; case 3: return v * v;
    case 4: return -v; case 5: return v * 0.5f; case 6: return v + 11; default: return 2 * v + 1;
  }
}
extern "C" __global__ void parent(float* x, int n, int* flag) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    child<<<(n + 127) / 128, 128>>>(x, n, 2.0f);
    child<<<(n + 127) / 128, 128, 0, cudaStreamFireAndForget>>>(x, n, 0.5f);
    unsigned ns = 8;
    while (atomicAdd(flag, 0) == 0 && ns < 4096) { __nanosleep(ns); ns *= 2; }
    printf("parent: n=%d fib=%d pick=%f\n", n, fib(n & 15), pick(n, x[0]));
  }
}
