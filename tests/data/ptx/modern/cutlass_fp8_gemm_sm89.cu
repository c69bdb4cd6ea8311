// CUTLASS 2.x GEMM on Ada fp8: e4m3 x e4m3 -> f32 accumulate, f16 output, SM89 mma.sync m16n8k32.
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/epilogue/thread/linear_combination.h"
using E4 = cutlass::float_e4m3_t;
using Gemm = cutlass::gemm::device::Gemm<
    E4, cutlass::layout::RowMajor, E4, cutlass::layout::ColumnMajor, cutlass::half_t, cutlass::layout::RowMajor,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm89,
    cutlass::gemm::GemmShape<128, 64, 64>, cutlass::gemm::GemmShape<64, 32, 64>, cutlass::gemm::GemmShape<16, 8, 32>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 16, 16>;
template __global__ void cutlass::Kernel<Gemm::GemmKernel>(Gemm::GemmKernel::Params);
