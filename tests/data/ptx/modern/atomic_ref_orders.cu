// cuda::atomic_ref with memory orders and scopes, half/bfloat16 atomics, fences, a 64-bit CAS loop
// on a double (atomicMax for double), and a release/acquire flag handshake between blocks.
#include <cuda/atomic>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void orders(int* __restrict__ ctr, unsigned long long* __restrict__ big, float* __restrict__ f,
                       unsigned* __restrict__ flag, int* __restrict__ seen) {
  cuda::atomic_ref<int, cuda::thread_scope_device> c(*ctr);
  int old = c.fetch_add(1, cuda::memory_order_relaxed);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> b(*big);
  b.fetch_max((unsigned long long)old << 20, cuda::memory_order_acq_rel);
  cuda::atomic_ref<float, cuda::thread_scope_block> fa(f[threadIdx.x & 31]);
  fa.fetch_add(1.5f, cuda::memory_order_release);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> fl(*flag);
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) fl.store(1u, cuda::memory_order_release);
    else while (fl.load(cuda::memory_order_acquire) == 0u) {}
    seen[blockIdx.x] = fl.load(cuda::memory_order_relaxed);
  }
  int expected = 0;
  c.compare_exchange_strong(expected, -1, cuda::memory_order_acq_rel, cuda::memory_order_acquire);
}
__device__ double atomic_max_d(double* a, double v) {
  unsigned long long* p = reinterpret_cast<unsigned long long*>(a);
  unsigned long long old = *p, assumed;
  do {
    assumed = old;
    if (__longlong_as_double(assumed) >= v) break;
    old = atomicCAS(p, assumed, __double_as_longlong(v));
  } while (old != assumed);
  return __longlong_as_double(old);
}
__global__ void half_atomics(__half* __restrict__ h, __half2* __restrict__ h2, __nv_bfloat16* __restrict__ b,
                             __nv_bfloat162* __restrict__ b2, double* __restrict__ dmax, const float* __restrict__ x) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  atomicAdd(h + (threadIdx.x & 7), __float2half(v));
  atomicAdd(h2 + (threadIdx.x & 7), __floats2half2_rn(v, -v));
  atomicAdd(b + (threadIdx.x & 7), __float2bfloat16(v));
  atomicAdd(b2 + (threadIdx.x & 7), __floats2bfloat162_rn(v, 2.f * v));
  atomic_max_d(dmax, (double)v);
}
