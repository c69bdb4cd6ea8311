// Inline asm with %= unique labels (one per inlined copy, in an unrolled loop), a loop inside an asm
// scope (its own back edge and predicate), and a spin-wait with nanosleep and ld.acquire.
__device__ __forceinline__ unsigned popc_loop(unsigned x) {
  unsigned n;
  asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\tmov.b32 %0, 0;\n\tmov.b32 t, %1;\n"
               "LOOP%=:\n\tsetp.eq.b32 p, t, 0;\n\t@p bra DONE%=;\n"
               "\tand.b32 %0, %0, %0;\n\tadd.u32 %0, %0, 1;\n\tadd.u32 t, t, -1;\n\tbra LOOP%=;\n"
               "DONE%=:\n\t}" : "=r"(n) : "r"(x));
  return n;
}
__device__ __forceinline__ void spin_until(const unsigned* flag, unsigned want) {
  asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 v;\n"
               "WAIT%=:\n\tld.acquire.gpu.global.u32 v, [%0];\n\tsetp.ge.u32 p, v, %1;\n"
               "\t@p bra.uni OK%=;\n\tnanosleep.u32 64;\n\tbra.uni WAIT%=;\n"
               "OK%=:\n\t}" :: "l"(flag), "r"(want) : "memory");
}
__global__ void asm_loops(const unsigned* __restrict__ in, unsigned* __restrict__ out, const unsigned* flag) {
  spin_until(flag, blockIdx.x);
  unsigned s = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) s += popc_loop(in[threadIdx.x * 4 + i] & 7u);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
