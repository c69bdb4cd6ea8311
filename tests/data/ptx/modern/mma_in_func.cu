// mma.sync in a __noinline__ device function called by the entry (not a phase of the entry: splice says so), and the same tile inlined in a second entry.
__device__ __noinline__ void tile(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__global__ void via_func(const unsigned* a, const unsigned* b, float* c, int n) {
  unsigned lane = threadIdx.x & 31;
  float d[4] = {0, 0, 0, 0};
  for (int t = 0; t < n; ++t)
    tile(d, a[t * 128 + lane], a[t * 128 + 32 + lane], a[t * 128 + 64 + lane], a[t * 128 + 96 + lane], b[t * 64 + lane], b[t * 64 + 32 + lane]);
  for (int i = 0; i < 4; ++i) c[lane * 4 + i] = d[i];
}
__global__ void inline_mma(const unsigned* a, const unsigned* b, float* c, int n) {
  unsigned lane = threadIdx.x & 31;
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int t = 0; t < n; ++t) {
    unsigned a0 = a[t * 128 + lane], a1 = a[t * 128 + 32 + lane], a2 = a[t * 128 + 64 + lane], a3 = a[t * 128 + 96 + lane];
    unsigned b0 = b[t * 64 + lane], b1 = b[t * 64 + 32 + lane], b2 = b[t * 64 + 64 + lane], b3 = b[t * 64 + 96 + lane];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b2), "r"(b3));
  }
  for (int i = 0; i < 8; ++i) c[lane * 8 + i] = d[i];
}
