// Read 2026-12-01: wgmma with N values no earlier kernel had (n8, n24, n64 int8, n8 tf32), an f16
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// accumulator (.f16.f16.f16: N/4 .b32 registers), A from registers (bf16 RS) and a K loop.
#include <cstdint>

__device__ __forceinline__ uint64_t desc(const void* p) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return (uint64_t)((a & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32);
}

__global__ void __launch_bounds__(128) wg_f16acc_n8(const __half* A, const __half* B, uint32_t* out, int ksteps) {
  __shared__ __align__(1024) __half sa[64 * 64];
  __shared__ __align__(1024) __half sb[64 * 8];
  for (int i = threadIdx.x; i < 64 * 64; i += 128) sa[i] = A[i];
  for (int i = threadIdx.x; i < 64 * 8; i += 128) sb[i] = B[i];
  __syncthreads();
  uint32_t d0 = 0, d1 = 0;
  asm volatile("wgmma.fence.sync.aligned;\n");
  for (int k = 0; k < ksteps; ++k) {
    uint64_t da = desc(sa + 16 * k), db = desc(sb + 16 * k);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0, %1}, %2, %3, p, 1, 1, 0, 1;\n}\n"
                 : "+r"(d0), "+r"(d1) : "l"(da), "l"(db), "r"(k));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 2] = d0;
  out[threadIdx.x * 2 + 1] = d1;
}

// the same K loop kept rolled: one wgmma in a loop that lies inside its fence..commit group
__global__ void __launch_bounds__(128) wg_f16acc_n8_rolled(const __half* A, const __half* B, uint32_t* out, int ksteps) {
  __shared__ __align__(1024) __half sa[64 * 64];
  __shared__ __align__(1024) __half sb[64 * 8];
  for (int i = threadIdx.x; i < 64 * 64; i += 128) sa[i] = A[i];
  for (int i = threadIdx.x; i < 64 * 8; i += 128) sb[i] = B[i];
  __syncthreads();
  uint32_t d0 = 0, d1 = 0;
  asm volatile("wgmma.fence.sync.aligned;\n");
#pragma unroll 1
  for (int k = 0; k < ksteps; ++k) {
    uint64_t da = desc(sa + 16 * k), db = desc(sb + 16 * k);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0, %1}, %2, %3, p, 1, 1, 0, 1;\n}\n"
                 : "+r"(d0), "+r"(d1) : "l"(da), "l"(db), "r"(k));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 2] = d0;
  out[threadIdx.x * 2 + 1] = d1;
}

__global__ void __launch_bounds__(128) wg_bf16_rs_n24(const uint32_t* Afrag, const __nv_bfloat16* B, float* out) {
  __shared__ __align__(1024) __nv_bfloat16 sb[64 * 24];
  for (int i = threadIdx.x; i < 64 * 24; i += 128) sb[i] = B[i];
  __syncthreads();
  float d[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n");
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint32_t a0 = Afrag[(k * 4 + 0) * 128 + threadIdx.x], a1 = Afrag[(k * 4 + 1) * 128 + threadIdx.x];
    uint32_t a2 = Afrag[(k * 4 + 2) * 128 + threadIdx.x], a3 = Afrag[(k * 4 + 3) * 128 + threadIdx.x];
    uint64_t db = desc(sb + 16 * k);
    asm volatile("wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, 1, 1, 1, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 12; ++i) out[i * 128 + threadIdx.x] = d[i];
}

__global__ void __launch_bounds__(128) wg_s8u8_n64(const int8_t* A, const uint8_t* B, int* out) {
  __shared__ __align__(1024) int8_t sa[64 * 64];
  __shared__ __align__(1024) uint8_t sb[64 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += 128) { sa[i] = A[i]; sb[i] = B[i]; }
  __syncthreads();
  int d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0;
  asm volatile("wgmma.fence.sync.aligned;\n");
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    uint64_t da = desc(sa + 32 * k), db = desc(sb + 32 * k);
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.u8.satfinite "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, 1;\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                   "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "l"(da), "l"(db));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) out[i * 128 + threadIdx.x] = d[i];
}

__global__ void __launch_bounds__(128) wg_tf32_n8(const float* A, const float* B, float* out) {
  __shared__ __align__(1024) float sa[64 * 32];
  __shared__ __align__(1024) float sb[8 * 32];
  for (int i = threadIdx.x; i < 64 * 32; i += 128) sa[i] = A[i];
  for (int i = threadIdx.x; i < 8 * 32; i += 128) sb[i] = B[i];
  __syncthreads();
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n");
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint64_t da = desc(sa + 8 * k), db = desc(sb + 8 * k);
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, %4, %5, 1, 1, -1;\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 4 + 0] = d0; out[threadIdx.x * 4 + 1] = d1;
  out[threadIdx.x * 4 + 2] = d2; out[threadIdx.x * 4 + 3] = d3;
}
