// CUTLASS 2.x grouped GEMM, 64x64x32 tile, 32x32x32 warp (per-group problem sizes and pointer arrays ptr_A/ptr_B/ptr_C/ptr_D,
// lda/ldb/... arrays), f16 x f16 -> f32 accumulate, f16 out, Sm80, scheduled on the device.
#include "cutlass/cutlass.h"
#include "cutlass/gemm/kernel/default_gemm_grouped.h"
#include "cutlass/gemm/device/gemm_grouped.h"
#include "cutlass/epilogue/thread/linear_combination.h"
using H = cutlass::half_t;
using Kern = typename cutlass::gemm::kernel::DefaultGemmGrouped<
    H, cutlass::layout::RowMajor, cutlass::ComplexTransform::kNone, 8,
    H, cutlass::layout::ColumnMajor, cutlass::ComplexTransform::kNone, 8,
    H, cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<32, 32, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<H, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, 3>::GemmKernel;
template __global__ void cutlass::Kernel<Kern>(Kern::Params);
