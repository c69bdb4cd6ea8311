// prmt/bfe/bfi/lop3-heavy integer code: a bit-sliced S-box step written with lop3 immediates,
// every prmt mode (.f4e .b4e .rc8 .ecl .ecr .rc16), bfe/bfi with run-time positions, mul24,
// sad, bmsk, szext, dp2a, testp on a float, and a Hacker's-Delight popcount via lop3.
#include <cstdint>

template <int LUT>
__device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
  return d;
}

__global__ void bitslice_sbox(const uint4* __restrict__ in, uint4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint4 v = in[i];
#pragma unroll 4
  for (int r = 0; r < 8; ++r) {
    uint32_t t0 = lop3<0x96>(v.x, v.y, v.z);   // a ^ b ^ c
    uint32_t t1 = lop3<0xE8>(v.x, v.y, v.z);   // majority
    uint32_t t2 = lop3<0xCA>(v.y, v.z, v.w);   // a ? b : c (mux)
    uint32_t t3 = lop3<0x1E>(t0, t1, t2);      // a ^ (b | c)
    v = make_uint4(t3, t0 ^ v.w, t1 + r, __funnelshift_l(t2, t2, 7));
  }
  out[i] = v;
}

__global__ void byte_ops(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b,
                         uint32_t* __restrict__ out, int n, uint32_t sel, uint32_t pos, uint32_t len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t x = a[i], y = b[i], r[12];
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[0]) : "r"(x), "r"(y), "r"(sel));
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[1]) : "r"(x), "r"(y), "r"(sel));
  asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r[2]) : "r"(x), "r"(y), "r"(sel));
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(sel));
  asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r[4]) : "r"(x), "r"(y), "r"(sel));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(y), "r"(sel));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(x), "r"(pos), "r"(len));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[7]) : "r"(y), "r"(x), "r"(pos), "r"(len));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(r[8]) : "r"(pos), "r"(len));
  asm("szext.clamp.s32 %0, %1, %2;" : "=r"(r[9]) : "r"(x), "r"(len));
  asm("mul24.hi.u32 %0, %1, %2;" : "=r"(r[10]) : "r"(x), "r"(y));
  asm("sad.u32 %0, %1, %2, %3;" : "=r"(r[11]) : "r"(x), "r"(y), "r"(r[10]));
  uint32_t acc = 0;
#pragma unroll
  for (int k = 0; k < 12; ++k) acc = lop3<0x6A>(acc, r[k], 0x5A5A5A5Au);
  out[i] = acc;
}

__global__ void popc_lop3_dp2a(const uint32_t* __restrict__ a, const float* __restrict__ f,
                               int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t x = a[i];
  x = x - ((x >> 1) & 0x55555555u);
  x = lop3<0xF8>(x & 0x33333333u, x >> 2, 0x33333333u);  // (a) + ... : and/or mix
  uint32_t c = ((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u >> 24;
  int d;
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a[i]), "r"(c), "r"(7));
  uint32_t fin, sub;
  asm("{\n\t.reg .pred p, q;\n\ttestp.finite.f32 p, %2;\n\ttestp.subnormal.f32 q, %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\tselp.u32 %1, 1, 0, q;\n\t}" : "=r"(fin), "=r"(sub) : "f"(f[i]));
  out[i] = d + (int)(fin << 1 | sub);
}
