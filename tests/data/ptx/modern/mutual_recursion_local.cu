// Read 2026-12-01: mutual recursion (even/odd and a recursive-descent evaluator) with a local array
// per frame indexed at run time, a function pointer picked by a kernel argument, and a
// variable-size alloca.
#include <cstdint>
__device__ __noinline__ int is_odd(int n, int* trace);
__device__ __noinline__ int is_even(int n, int* trace) {
  int loc[8];
  for (int i = 0; i < 8; ++i) loc[i] = n * i;
  trace[n & 7] = loc[n & 7];
  return n == 0 ? 1 : is_odd(n - 1, trace);
}
__device__ __noinline__ int is_odd(int n, int* trace) {
  int loc[4];
  for (int i = 0; i < 4; ++i) loc[i] = n + i;
  trace[(n + 1) & 7] += loc[n & 3];
  return n == 0 ? 0 : is_even(n - 1, trace);
}
__device__ __noinline__ float eval(const int* ops, const float* vals, int* pc, int depth) {
  int op = ops[*pc];
  (*pc)++;
  if (op == 0 || depth > 16) return vals[*pc & 15];
  float a = eval(ops, vals, pc, depth + 1);
  float b = eval(ops, vals, pc, depth + 1);
  return op == 1 ? a + b : (op == 2 ? a * b : a - b);
}
typedef float (*unop)(float);
__device__ __noinline__ float sq(float x) { return x * x; }
__device__ __noinline__ float neg(float x) { return -x; }
__global__ void mutual(const int* n, int* parity, int* trace, const int* ops, const float* vals, float* out,
                       int which, int scratch_n) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  parity[t] = is_even(n[t] & 63, trace + 8 * t);
  int pc = 0;
  float v = eval(ops + 32 * t, vals, &pc, 0);
  unop f = which ? sq : neg;
  float* tmp = (float*)alloca(sizeof(float) * (scratch_n & 31));
  for (int i = 0; i < (scratch_n & 31); ++i) tmp[i] = v * i;
  out[t] = f(v) + (scratch_n & 31 ? tmp[t % (scratch_n & 31)] : 0.f);
}
