// Read 2026-12-01: the carry flag (add.cc / addc / sub.cc / subc / mad.lo.cc / madc.hi), which no
// register names: multi-precision arithmetic in inline asm; volatile loads/stores, fns.b32,
// cvt.pack.sat, tanh.approx.f16x2 / ex2.approx.ftz.bf16x2.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void add256(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b, uint32_t* __restrict__ c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t* x = a + 8 * i; const uint32_t* y = b + 8 * i;
  uint32_t r[8];
  asm("add.cc.u32 %0, %8, %16;\n\t"
      "addc.cc.u32 %1, %9, %17;\n\t"
      "addc.cc.u32 %2, %10, %18;\n\t"
      "addc.cc.u32 %3, %11, %19;\n\t"
      "addc.cc.u32 %4, %12, %20;\n\t"
      "addc.cc.u32 %5, %13, %21;\n\t"
      "addc.cc.u32 %6, %14, %22;\n\t"
      "addc.u32 %7, %15, %23;"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
        "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
  for (int j = 0; j < 8; ++j) c[8 * i + j] = r[j];
}

__global__ void mul64x64(const uint64_t* __restrict__ a, const uint64_t* __restrict__ b, uint64_t* __restrict__ lo_hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t a0 = (uint32_t)a[i], a1 = (uint32_t)(a[i] >> 32), b0 = (uint32_t)b[i], b1 = (uint32_t)(b[i] >> 32);
  uint32_t r0, r1, r2, r3;
  asm("mul.lo.u32 %0, %4, %6;\n\t"
      "mul.hi.u32 %1, %4, %6;\n\t"
      "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
      "madc.hi.u32 %2, %5, %6, 0;\n\t"
      "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
      "madc.hi.cc.u32 %2, %4, %7, %2;\n\t"
      "addc.u32 %3, 0, 0;\n\t"
      "mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
      "madc.hi.u32 %3, %5, %7, %3;"
      : "=&r"(r0), "=&r"(r1), "=&r"(r2), "=&r"(r3) : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  lo_hi[2 * i] = ((uint64_t)r1 << 32) | r0;
  lo_hi[2 * i + 1] = ((uint64_t)r3 << 32) | r2;
}

__global__ void sub_borrow(const uint64_t* __restrict__ a, const uint64_t* __restrict__ b, uint64_t* __restrict__ d, int* __restrict__ neg) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t lo, hi, br;
  asm("sub.cc.u32 %0, %3, %5;\n\t"
      "subc.cc.u32 %1, %4, %6;\n\t"
      "subc.u32 %2, 0, 0;"
      : "=r"(lo), "=r"(hi), "=r"(br)
      : "r"((uint32_t)a[i]), "r"((uint32_t)(a[i] >> 32)), "r"((uint32_t)b[i]), "r"((uint32_t)(b[i] >> 32)));
  d[i] = ((uint64_t)hi << 32) | lo;
  neg[i] = (int)br;
}

__global__ void misc_ops(volatile int* flag, const unsigned* __restrict__ m, __half2* h, __nv_bfloat162* bf, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (flag[0] == 0) { }
  unsigned nth;
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(nth) : "r"(m[i]), "r"(0u), "r"(3));
  unsigned packed;
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(packed) : "r"((int)m[i] - 100), "r"((int)nth), "r"(0u));
  __half2 t; asm("tanh.approx.f16x2 %0, %1;" : "=r"(*(unsigned*)&t) : "r"(*(unsigned*)&h[i]));
  h[i] = t;
  __nv_bfloat162 e; asm("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(*(unsigned*)&e) : "r"(*(unsigned*)&bf[i]));
  bf[i] = e;
  out[i] = packed ^ nth;
  flag[1 + i] = (int)packed;
}
