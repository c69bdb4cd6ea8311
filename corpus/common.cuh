// corpus/common.cuh -- shared helpers of the stand-in Swin layers enc5/dec1.
//
// Everything here is ordinary CUDA except where NVVM would not emit the
// instruction NVIDIA's PTX shows; those are inline asm (all `asm volatile`, so
// NVVM keeps them in source order and a phase's mma stay adjacent).
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

typedef unsigned int u32;
typedef unsigned short u16;

// The by-value parameter block (144 bytes), field offsets as in the notes.
struct DldnParamsLayout {
  uint2 extents;               // +0   (ex, ey)
  const u32* input;            // +8   input plane (8 u32 per pixel)
  const void* reserved16;      // +16
  const u32* skip;             // +24  skip input (dec1)
  const void* reserved32;      // +32
  const unsigned char* W;      // +40  prepared weight image
  u32* arena;                  // +48  plane arena
  const void* reserved56;      // +56
  const void* reserved64;      // +64
  const void* reserved72;      // +72
  ushort2 blockoff;            // +80  block offsets (origin shift)
  u32 pad84;                   // +84
  unsigned long long tex88;    // +88  colour texture
  unsigned long long tex96;    // +96  texture #2
  unsigned long long tex104;   // +104 texture #3
  unsigned long long surf112;  // +112 output surface (RGBA16F)
  unsigned long long reserved120;  // +120
  unsigned long long reserved128;  // +128
  float2 scale136;             // +136 two f32 texture-coordinate scales
};

#define DLDN_PARAMS_BODY                                   \
  uint2 extents;                                           \
  const u32* input;                                        \
  const void* reserved16;                                  \
  const u32* skip;                                         \
  const void* reserved32;                                  \
  const unsigned char* W;                                  \
  u32* arena;                                              \
  const void* reserved56;                                  \
  const void* reserved64;                                  \
  const void* reserved72;                                  \
  ushort2 blockoff;                                        \
  u32 pad84;                                               \
  unsigned long long tex88;                                \
  unsigned long long tex96;                                \
  unsigned long long tex104;                               \
  unsigned long long surf112;                              \
  unsigned long long reserved120;                          \
  unsigned long long reserved128;                          \
  float2 scale136;

static_assert(sizeof(DldnParamsLayout) == 144, "param block must be 144 bytes");

// ---------------------------------------------------------------- lane ids
__device__ __forceinline__ u32 lane_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// ---------------------------------------------------------------- mma
// NVIDIA's 4-line form: opcode, then D, A, B, C brace lists on their own lines.
__device__ __forceinline__ void mma_e4m3(u32& d0, u32& d1, const uint4& a, u32 b0, u32 b1, u32 c0,
                                         u32 c1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16\n\t"
      "{%0, %1},\n\t"
      "{%2, %3, %4, %5},\n\t"
      "{%6, %7},\n\t"
      "{%8, %9};"
      : "=r"(d0), "=r"(d1)
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
}

// ---------------------------------------------------------------- loads
// Weight fragment load: ld.weak.global.ca.v4.u32 at a global address.
__device__ __forceinline__ uint4 ldw(const unsigned char* p) {
  uint4 v;
  asm volatile("ld.weak.global.ca.v4.u32 {%0,%1,%2,%3},[%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Per-column table loads at W + ((laneid<<2)&12) + off (plain loads -> ld.global).
__device__ __forceinline__ const unsigned char* table_base(const unsigned char* W) {
  u32 l = lane_id();
  return W + (((unsigned long long)(l << 2)) & 12ull);
}
__device__ __forceinline__ u32 ldt_u32(const unsigned char* tb, int off) {
  return *reinterpret_cast<const u32*>(tb + off);
}
__device__ __forceinline__ u32 ldt_v2u16(const unsigned char* tb, int off) {
  ushort2 v = *reinterpret_cast<const ushort2*>(tb + off);
  return (u32)v.x | ((u32)v.y << 16);
}

// ---------------------------------------------------------------- packs
__device__ __forceinline__ u16 cvt_e4m3x2(u32 f16x2) {
  u16 r;
  asm volatile("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r) : "r"(f16x2));
  return r;
}
__device__ __forceinline__ u32 mov_b32(u16 lo, u16 hi) {
  u32 r;
  asm volatile("mov.b32 %0, {%1, %2};" : "=r"(r) : "h"(lo), "h"(hi));
  return r;
}
// Pack two f16x2 registers (x = k pair 0/1, y = k pair 2/3) into one e4m3x4 register.
__device__ __forceinline__ u32 pack4(u32 x, u32 y) {
  u16 a = cvt_e4m3x2(x);
  u16 b = cvt_e4m3x2(y);
  return mov_b32(a, b);
}
__device__ __forceinline__ u32 unpack_e4m3x2(u16 v) {
  u32 r;
  asm volatile("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(v));
  return r;
}
__device__ __forceinline__ u32 movmatrix_t(u32 v) {
  u32 r;
  asm volatile("movmatrix.sync.trans.aligned.m8n8.b16 %0, %1;" : "=r"(r) : "r"(v));
  return r;
}

// ---------------------------------------------------------------- f16 helpers
__device__ __forceinline__ __half2 H2(u32 v) { return *reinterpret_cast<__half2*>(&v); }
__device__ __forceinline__ u32 U(__half2 h) { return *reinterpret_cast<u32*>(&h); }
__device__ __forceinline__ __half lo_h(u32 v) { return __low2half(H2(v)); }
__device__ __forceinline__ __half hi_h(u32 v) { return __high2half(H2(v)); }
__device__ __forceinline__ u32 mk2(__half lo, __half hi) { return U(__halves2half2(lo, hi)); }

// Rounded-through-f16 approximations (cvt.f32.f16 -> op -> cvt.rn.f16.f32).
__device__ __forceinline__ __half rcp_h(__half x) {
  float f = __half2float(x), r;
  asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(f));
  return __float2half_rn(r);
}
__device__ __forceinline__ __half rsqrt_h(__half x) {
  float f = __half2float(x), r;
  asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(f));
  return __float2half_rn(r);
}

// Butterfly over the two t bits (lanes with equal laneid>>2).
__device__ __forceinline__ u32 bfly_sum_f16x2(u32 v) {
  v = U(__hadd2(H2(v), H2(__shfl_xor_sync(0xffffffffu, v, 1))));
  v = U(__hadd2(H2(v), H2(__shfl_xor_sync(0xffffffffu, v, 2))));
  return v;
}

// ---------------------------------------------------------------- E11/E6 cubic exponent
// m = clamp(f16(x*0.017181396484375), -0.55615234375, +0.55615234375)
// t = f16(m*(-m) + 0.92724609375); u = f16(m*t + 1.375)
// expval = f16 bits ((u_bits << 5) & 0x7FE07FE0)
__device__ __forceinline__ u32 cubic_exp(u32 x, __half2 kscale, __half2 klo, __half2 khi,
                                         __half2 kc, __half2 kb) {
  __half2 m = __hmul2(H2(x), kscale);
  m = __hmax2(m, klo);
  m = __hmin2(m, khi);
  __half2 t = __hfma2(m, __hneg2(m), kc);
  __half2 u = __hfma2(m, t, kb);
  u32 ub = U(u);
  return (ub << 5) & 0x7FE07FE0u;
}

// ---------------------------------------------------------------- clamped cubic activation
// y = clamp(x,-2,2); g = 0.5 + y*(0.412109375 - 0.0810546875*|y|); out = x*g
struct ActK {
  __half2 c1, c2, half_, two;
};
__device__ __forceinline__ ActK act_consts(float f1, float f2, float f3, float f4) {
  ActK k;
  k.c1 = __float2half2_rn(f1);
  k.c2 = __float2half2_rn(f2);
  k.half_ = __float2half2_rn(f3);
  k.two = __float2half2_rn(f4);
  return k;
}
__device__ __forceinline__ u32 act(u32 xv, const ActK& k) {
  __half2 x = H2(xv);
  __half2 y = __hmax2(x, __hneg2(k.two));
  y = __hmin2(y, k.two);
  __half2 ay = __habs2(y);
  __half2 g = __hsub2(k.c1, __hmul2(k.c2, ay));
  g = __hadd2(k.half_, __hmul2(y, g));
  return U(__hmul2(x, g));
}

// ---------------------------------------------------------------- textures / surface
__device__ __forceinline__ void tex_s32(unsigned long long t, int x, int y, u16& r, u16& g, u16& b,
                                        u16& a) {
  asm volatile("tex.base.2d.v4.f16.s32 {%0,%1,%2,%3}, [%4, {%5,%6}];"
               : "=h"(r), "=h"(g), "=h"(b), "=h"(a)
               : "l"(t), "r"(x), "r"(y));
}
__device__ __forceinline__ void tex_f32(unsigned long long t, float x, float y, u16& r, u16& g,
                                        u16& b, u16& a) {
  asm volatile("tex.base.2d.v4.f16.f32 {%0,%1,%2,%3}, [%4, {%5,%6}];"
               : "=h"(r), "=h"(g), "=h"(b), "=h"(a)
               : "l"(t), "f"(x), "f"(y));
}
__device__ __forceinline__ void sust4(unsigned long long s, int xbytes, int y, u16 r, u16 g, u16 b,
                                      u16 a) {
  asm volatile("sust.b.2d.v4.b16.zero [%0, {%1, %2}], {%3, %4, %5, %6};" ::"l"(s), "r"(xbytes),
               "r"(y), "h"(r), "h"(g), "h"(b), "h"(a)
               : "memory");
}
__device__ __forceinline__ u16 hb(__half h) { return __half_as_ushort(h); }
__device__ __forceinline__ __half bh(u16 v) { return __ushort_as_half(v); }

// Opaque literals: NVIDIA's PTX materialises the epilogue constants with mov.f32/mov.f64
// and rounds them to f16 with cvt (NVVM would otherwise fold them).
#define KF32(lit)                                       \
  ({                                                    \
    float _f;                                           \
    asm volatile("mov.f32 %0, " lit ";" : "=f"(_f));    \
    _f;                                                 \
  })
#define KF64(lit)                                       \
  ({                                                    \
    double _d;                                          \
    asm volatile("mov.f64 %0, " lit ";" : "=d"(_d));    \
    _d;                                                 \
  })
__device__ __forceinline__ __half2 bc2(__half h) { return __halves2half2(h, h); }

// ---------------------------------------------------------------- shared phase shapes
// One 96x32x32 phase (P1..P10): 6 A quads x 4 B pairs, C = 0 or the chain's D.
__device__ __forceinline__ void phase_qkv(u32 (&D)[6][4][2], const uint4* A, const uint4& b0,
                                          const uint4& b1, bool first, u32 zero) {
  u32 B[4][2] = {{b0.x, b0.y}, {b0.z, b0.w}, {b1.x, b1.y}, {b1.z, b1.w}};
#pragma unroll
  for (int m = 0; m < 6; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
      mma_e4m3(D[m][n][0], D[m][n][1], A[m], B[n][0], B[n][1], first ? zero : D[m][n][0],
               first ? zero : D[m][n][1]);
}

// next-B weight loads: two 512-byte tiles at base + 16*laneid + off.
__device__ __forceinline__ void load_b2(const unsigned char* base, int off, uint4& b0, uint4& b1) {
  const unsigned char* wl = base + (unsigned long long)lane_id() * 16ull;
  b0 = ldw(wl + off);
  b1 = ldw(wl + off + 512);
}
template <int N>
__device__ __forceinline__ void load_bn(const unsigned char* base, int off, uint4 (&b)[N]) {
  const unsigned char* wl = base + (unsigned long long)lane_id() * 16ull;
#pragma unroll
  for (int i = 0; i < N; ++i) b[i] = ldw(wl + off + 512 * i);
}


// Q.K^T operands from one 96x32 projection (E10 / dec1 E5): 80 packs.
// A (64x32, m-tiles 0..3) and B (K^T, 12 n-tiles = the 96 rows); the k order of
// both is the register order of the D fragment, so the product is exact.
__device__ __forceinline__ void pack_qk(const u32 (&Dq)[6][4][2], u32 (&a)[4][4], u32 (&b)[12][2]) {
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    a[m][0] = pack4(Dq[m][0][0], Dq[m][1][0]);
    a[m][1] = pack4(Dq[m][0][1], Dq[m][1][1]);
    a[m][2] = pack4(Dq[m][2][0], Dq[m][3][0]);
    a[m][3] = pack4(Dq[m][2][1], Dq[m][3][1]);
  }
#pragma unroll
  for (int n = 0; n < 12; ++n) {
    b[n][0] = pack4(Dq[n >> 1][0][n & 1], Dq[n >> 1][1][n & 1]);
    b[n][1] = pack4(Dq[n >> 1][2][n & 1], Dq[n >> 1][3][n & 1]);
  }
}

// Scores 64x96x32: 4 A x 12 B, C = the 12288-byte score bias (24 tiles, tile 4*(n>>1)+m).
__device__ __forceinline__ void phase_scores(u32 (&S)[4][12][2], const u32 (&a)[4][4],
                                             const u32 (&b)[12][2], const uint4 (&cs)[24]) {
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 12; ++n) {
      const uint4& c = cs[4 * (n >> 1) + m];
      mma_e4m3(S[m][n][0], S[m][n][1], make_uint4(a[m][0], a[m][1], a[m][2], a[m][3]), b[n][0],
               b[n][1], (n & 1) ? c.z : c.x, (n & 1) ? c.w : c.y);
    }
}

// E11 / dec1 E6: cubic-exponent softmax over the 96 columns (no row max),
// 16 shfl.bfly row sums, rcp, probabilities; V-transpose by movmatrix; 144 packs.
__device__ __forceinline__ void softmax_cubic_pack(u32 (&S)[4][12][2], const u32 (&Dv)[6][4][2],
                                                   uint4 (&a12)[4][3], u32 (&b12)[3][4][2]) {
  const __half2 kscale = bc2(__float2half_rn(KF32("0f3C8CCB50")));
  const __half2 klo = bc2(__double2half(KF64("0dBFE1CC0000000000")));
  const __half2 khi = bc2(__double2half(KF64("0d3FE1CC0000000000")));
  const __half2 kc = bc2(__float2half_rn(KF32("0f3F6D6000")));
  const __half2 kb = bc2(__float2half_rn(KF32("0f3FB00000")));
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 12; ++n)
#pragma unroll
      for (int r = 0; r < 2; ++r) S[m][n][r] = cubic_exp(S[m][n][r], kscale, klo, khi, kc, kb);
  __half rs[4][2];
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      __half2 a = H2(S[m][0][r]);
#pragma unroll
      for (int n = 1; n < 12; ++n) a = __hadd2(a, H2(S[m][n][r]));
      u32 v = bfly_sum_f16x2(U(a));
      rs[m][r] = __hadd(lo_h(v), hi_h(v));
    }
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 12; ++n)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const __half il = rcp_h(rs[m][r]), ih = rcp_h(rs[m][r]);
        S[m][n][r] = mk2(__hmul(lo_h(S[m][n][r]), il), __hmul(hi_h(S[m][n][r]), ih));
      }
  u32 Tv[6][4][2];
#pragma unroll
  for (int m = 0; m < 6; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int r = 0; r < 2; ++r) Tv[m][n][r] = movmatrix_t(Dv[m][n][r]);
#pragma unroll
  for (int s = 0; s < 3; ++s)
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      b12[s][n][0] = pack4(Tv[2 * s][n][0], Tv[2 * s][n][1]);
      b12[s][n][1] = pack4(Tv[2 * s + 1][n][0], Tv[2 * s + 1][n][1]);
    }
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int s = 0; s < 3; ++s)
      a12[m][s] = make_uint4(pack4(S[m][4 * s][0], S[m][4 * s + 1][0]),
                             pack4(S[m][4 * s][1], S[m][4 * s + 1][1]),
                             pack4(S[m][4 * s + 2][0], S[m][4 * s + 3][0]),
                             pack4(S[m][4 * s + 2][1], S[m][4 * s + 3][1]));
}

// P.V 64x32x96: 16 chains of 3 (k = 0/32/64 slices of one tile), C0 = 0.
__device__ __forceinline__ void phase_pv(u32 (&O)[4][4][2], const uint4 (&a12)[4][3],
                                         const u32 (&b12)[3][4][2], u32 zero) {
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int s = 0; s < 3; ++s)
        mma_e4m3(O[m][n][0], O[m][n][1], a12[m][s], b12[s][n][0], b12[s][n][1],
                 s == 0 ? zero : O[m][n][0], s == 0 ? zero : O[m][n][1]);
}

// A banded phase: M m-tiles x N n-tiles, each an S-step k chain (the notes' "chains of S").
// B pairs come from 512-byte weight tiles holding two n-tiles (.x/.y, then .z/.w) per k-step;
// chain n starts from the C seed c[n].  The mma run stays adjacent (nothing between them).
template <int M, int N, int S>
__device__ __forceinline__ void mma_band(u32 (&D)[M][N][2], const uint4 (&a)[M][S], const uint4* b,
                                         const u32* c) {
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const uint4& bb = b[S * (n >> 1) + s];
        mma_e4m3(D[m][n][0], D[m][n][1], a[m][s], (n & 1) ? bb.z : bb.x, (n & 1) ? bb.w : bb.y,
                 s == 0 ? c[n] : D[m][n][0], s == 0 ? c[n] : D[m][n][1]);
      }
}

// One k-step accumulated into D in place (C = D): M m-tiles x N n-tiles, B pairs from 512-byte
// weight tiles holding two n-tiles each.
template <int M, int N>
__device__ __forceinline__ void mma_acc(u32 (&D)[M][N][2], const uint4 (&a)[M], const uint4* b) {
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const uint4& bb = b[n >> 1];
      mma_e4m3(D[m][n][0], D[m][n][1], a[m], (n & 1) ? bb.z : bb.x, (n & 1) ? bb.w : bb.y, D[m][n][0],
               D[m][n][1]);
    }
}

// Pack a 64x32 D (4 m-tiles) into four A quads (K = the 32 columns).
__device__ __forceinline__ uint4 pack_quad(const u32 (&D)[4][2]) {
  return make_uint4(pack4(D[0][0], D[1][0]), pack4(D[0][1], D[1][1]), pack4(D[2][0], D[3][0]),
                    pack4(D[2][1], D[3][1]));
}

// The final epilogue's textbook f32 softmax over the 5-word shared window (E61 / E26 (c)):
// row max (max.f16x2, max.f16), x - max, 2^((x - max)·log2 e) through ex2.approx, an f32 row
// sum, one div.approx and five mul.f16x2.  Both layers use it for their last step; the row
// max is returned because dec1's sigmoid gate reads it.
__device__ __forceinline__ __half softmax5_window(const u32* win, __half pw[10]) {
  u32 v[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) v[i] = win[i];
  __half2 mx2 = __hmax2(H2(v[0]), H2(v[1]));
  mx2 = __hmax2(mx2, H2(v[2]));
  mx2 = __hmax2(mx2, H2(v[3]));
  mx2 = __hmax2(mx2, H2(v[4]));
  const __half mx = __hmax(__low2half(mx2), __high2half(mx2));
  float e[10], sum = 0.f;
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    const __half2 d = __hsub2(H2(v[i]), bc2(mx));
    e[2 * i] = __expf(__low2float(d));
    e[2 * i + 1] = __expf(__high2float(d));
    sum += e[2 * i] + e[2 * i + 1];
  }
  const float rinv = __fdividef(1.0f, sum);
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    const __half2 q = __hmul2(__floats2half2_rn(e[2 * i], e[2 * i + 1]), __float2half2_rn(rinv));
    pw[2 * i] = __low2half(q);
    pw[2 * i + 1] = __high2half(q);
  }
  return mx;
}
