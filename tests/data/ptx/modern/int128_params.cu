// __int128 kernel parameters (by value, in a struct and as a pointer), 128-bit arithmetic, and
// a pointer array passed by value (float* p[6] inside a struct).
struct Wide { __int128 bias; unsigned __int128 mask; int n; };
struct Ptrs { const float* src[6]; float* dst; };
__global__ void i128_math(__int128 a, unsigned __int128 b, Wide w, const __int128* __restrict__ in,
                          __int128* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= w.n) return;
  __int128 x = in[i] * a + w.bias;
  unsigned __int128 y = (unsigned __int128)x ^ (b & w.mask);
  out[i] = (__int128)(y >> 7) - (x / 3);
}
__global__ void ptr_array(Ptrs p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 6; ++k) s += p.src[k][i] * (k + 1);
  p.dst[i] = s;
}
