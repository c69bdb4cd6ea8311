// Tensor-core forms the first kernels did not have: sparse mma.sp (f16, s8 with ordered metadata),
// f64 m16n8k16 (sm_90 DMMA), bf16 m16n8k16 with a K loop, s4 m16n8k64, b1 and.popc m16n8k256,
// u8 x s8 mixed-signedness m16n8k32.
#include <cstdint>
extern "C" __global__ void sp_f16(const uint32_t* a, const uint32_t* b, const uint32_t* meta, float* d, int ksteps) {
  int t = threadIdx.x;
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (int k = 0; k < ksteps; ++k) {
    uint32_t a0 = a[k * 128 + t], a1 = a[k * 128 + 32 + t];
    uint32_t b0 = b[k * 128 + t], b1 = b[k * 128 + 32 + t], b2 = b[k * 128 + 64 + t], b3 = b[k * 128 + 96 + t];
    uint32_t e = meta[k * 32 + t];
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a1), "r"(a0 ^ 1u), "r"(a1 ^ 1u), "r"(b0), "r"(b1), "r"(b2), "r"(b3), "r"(e));
  }
  d[t * 4 + 0] = c0; d[t * 4 + 1] = c1; d[t * 4 + 2] = c2; d[t * 4 + 3] = c3;
}

extern "C" __global__ void sp_s8(const uint32_t* a, const uint32_t* b, const uint32_t* meta, int* d) {
  int t = threadIdx.x;
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  uint32_t a0 = a[t], a1 = a[32 + t], a2 = a[64 + t], a3 = a[96 + t];
  uint32_t b0 = b[t], b1 = b[32 + t], b2 = b[64 + t], b3 = b[96 + t];
  uint32_t e = meta[t];
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.satfinite.s32.s8.s8.s32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(b2), "r"(b3), "r"(e));
  d[t * 4 + 0] = c0; d[t * 4 + 1] = c1; d[t * 4 + 2] = c2; d[t * 4 + 3] = c3;
}

extern "C" __global__ void dmma_k16(const double* a, const double* b, double* d) {
  int t = threadIdx.x;
  double c[4] = {0, 0, 0, 0};
  double av[8], bv[4];
  for (int i = 0; i < 8; ++i) av[i] = a[i * 32 + t];
  for (int i = 0; i < 4; ++i) bv[i] = b[i * 32 + t];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
               : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
               : "d"(av[0]), "d"(av[1]), "d"(av[2]), "d"(av[3]), "d"(av[4]), "d"(av[5]), "d"(av[6]), "d"(av[7]),
                 "d"(bv[0]), "d"(bv[1]), "d"(bv[2]), "d"(bv[3]));
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
               : "d"(av[0]), "d"(av[1]), "d"(av[2]), "d"(av[3]), "d"(bv[0]), "d"(bv[1]));
  for (int i = 0; i < 4; ++i) d[i * 32 + t] = c[i];
}

extern "C" __global__ void int_forms(const uint32_t* a, const uint32_t* b, int* d) {
  int t = threadIdx.x;
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  uint32_t a0 = a[t], a1 = a[32 + t], a2 = a[64 + t], a3 = a[96 + t], b0 = b[t], b1 = b[32 + t];
  asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(b0));
  d[t * 4 + 0] = c0; d[t * 4 + 1] = c1; d[t * 4 + 2] = c2; d[t * 4 + 3] = c3;
}
