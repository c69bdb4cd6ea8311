// The WMMA API's sub-byte and double forms: s4 / u4 m8n8k32, b1 m8n8k128 (xor.popc and
// and.popc), f64 m8n8k4, bf16 m16n16k16.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
namespace ex = nvcuda::wmma::experimental;
extern "C" __global__ void wmma_s4(const void* a, const void* b, int* c) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, ex::precision::s4, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, ex::precision::s4, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> fc;
  wmma::fill_fragment(fc, 0);
  wmma::load_matrix_sync(fa, a, 32);
  wmma::load_matrix_sync(fb, b, 32);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}
extern "C" __global__ void wmma_u4(const void* a, const void* b, int* c) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, ex::precision::u4, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, ex::precision::u4, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> fc;
  wmma::fill_fragment(fc, 0);
  wmma::load_matrix_sync(fa, a, 32);
  wmma::load_matrix_sync(fb, b, 32);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}
extern "C" __global__ void wmma_b1(const void* a, const void* b, int* c) {
  wmma::fragment<wmma::matrix_a, 8, 8, 128, ex::precision::b1, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 128, ex::precision::b1, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 128, int> fc;
  wmma::fill_fragment(fc, 0);
  wmma::load_matrix_sync(fa, a, 128);
  wmma::load_matrix_sync(fb, b, 128);
  wmma::bmma_sync(fc, fa, fb, fc, ex::bmmaBitOpXOR, ex::bmmaAccumulateOpPOPC);
  wmma::bmma_sync(fc, fa, fb, fc, ex::bmmaBitOpAND, ex::bmmaAccumulateOpPOPC);
  wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}
extern "C" __global__ void wmma_f64(const double* a, const double* b, double* c) {
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> fc;
  wmma::fill_fragment(fc, 0.0);
  for (int k = 0; k < 4; ++k) {
    wmma::load_matrix_sync(fa, a + k * 4, 16);
    wmma::load_matrix_sync(fb, b + k * 4, 16);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}
extern "C" __global__ void wmma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
