// A CUTLASS 3.x GEMM for Hopper: D = alpha A B + beta C, A (f16, M x K, row-major), B (f16, K x N,
// column-major: N x K with K contiguous), C and D (f32, M x N, row-major), built from CUTLASS's
// collective builders -- TMA loads of A and B into a multi-stage shared pipeline, warp-specialised
// producer and consumer warpgroups (KernelTmaWarpSpecialized), wgmma, tile 128 x 128 x 64,
// cluster 1 x 1 x 1 -- and a plain epilogue (no shared staging).  The kernel takes one by-value
// Params struct: the problem shape, the two TMA tensor maps with their transaction byte counts,
// the epilogue's scalars, pointers and strides.
//
// Built by corpus/cutlass/build.py: nvcc -arch=sm_90a -ptx of the kernel, and a host program
// (this file with -DSPLICE_METADATA, run on the CPU) that builds the kernel's Params through
// CUTLASS's own to_underlying_arguments for the bundled problem size and prints them as JSON:
// the struct's size, where each tensor map sits and the arguments CUTLASS encodes it with
// (cuTensorMapEncodeTiled is answered by a recorder here: no GPU, no driver), and the offset
// and bytes of each named member the kernel reads (the padding between them is not printed:
// it holds whatever the stack held).  probe init's skeleton is filled from that JSON.
#include <cstdio>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <cuda.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

using namespace cute;

using ElementA = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
using ElementB = cutlass::half_t;
using LayoutB = cutlass::layout::ColumnMajor;
using ElementC = float;
using LayoutC = cutlass::layout::RowMajor;
using ElementAccumulator = float;
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
    ElementC, LayoutC, 4, ElementC, LayoutC, 4,
    cutlass::epilogue::NoSmemWarpSpecialized>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, 8, ElementB, LayoutB, 8,
    ElementAccumulator, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecialized>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue>;

// the kernel itself, by its C name: what the PTX's .entry is called
extern "C" __global__ void __launch_bounds__(GemmKernel::MaxThreadsPerBlock, GemmKernel::MinBlocksPerMultiprocessor)
splice_cutlass_tma_gemm(const __grid_constant__ typename GemmKernel::Params params) {
    extern __shared__ char smem[];
    GemmKernel op;
    op(params, smem);
}

#ifdef SPLICE_METADATA
// ---- host side: the kernel's Params for the bundled problem, as JSON ----------------------

struct Encoded {
    int dtype, rank;
    uint64_t address, dims[5], strides[5];
    uint32_t box[5], elem[5];
    int interleave, swizzle, l2, oob;
};
static Encoded encoded[8];
static int n_encoded = 0;

// CUTLASS encodes its tensor maps with the driver; here the call is recorded (the map's bytes
// stay zero: the probe encodes its own on the GPU from the recorded arguments)
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank,
                                           void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                           const cuuint32_t* box, const cuuint32_t* elem,
                                           CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                           CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    Encoded& e = encoded[n_encoded++];
    e.dtype = dtype; e.rank = rank; e.address = reinterpret_cast<uint64_t>(address);
    for (cuuint32_t i = 0; i < rank; ++i) {
        e.dims[i] = dims[i]; e.box[i] = box[i]; e.elem[i] = elem[i];
        if (i + 1 < rank) e.strides[i] = strides[i];
    }
    e.interleave = interleave; e.swizzle = swizzle; e.l2 = l2; e.oob = oob;
    *map = CUtensorMap{};
    return CUDA_SUCCESS;
}

// a type as the probe spec names it
template <class T> constexpr const char* spec_dtype() {
    if constexpr (cute::is_same_v<T, cutlass::half_t>) return "f16";
    else if constexpr (cute::is_same_v<T, cutlass::bfloat16_t>) return "bf16";
    else if constexpr (cute::is_same_v<T, float>) return "f32";
    else return "?";
}

int main() {
    const int M = 512, N = 512, K = 512;
    // fake device addresses: the recorder sees which tensor each map is over by its address
    auto* A = reinterpret_cast<ElementA*>(uintptr_t(0xA0000000));
    auto* B = reinterpret_cast<ElementB*>(uintptr_t(0xB0000000));
    auto* C = reinterpret_cast<ElementC*>(uintptr_t(0xC0000000));
    auto* D = reinterpret_cast<ElementC*>(uintptr_t(0xD0000000));
    auto sa = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, make_shape(M, K, 1));
    auto sb = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, make_shape(N, K, 1));
    auto sc = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, make_shape(M, N, 1));
    auto sd = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, make_shape(M, N, 1));
    cutlass::KernelHardwareInfo hw{0, 132};
    typename GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
                                        {A, sa, B, sb}, {{1.0f, 0.0f}, C, sc, D, sd}, hw};
    typename GemmKernel::Params params = GemmKernel::to_underlying_arguments(args, nullptr);
    const unsigned char* raw = reinterpret_cast<const unsigned char*>(&params);
    std::printf("{\"entry\": \"splice_cutlass_tma_gemm\", \"params_size\": %zu, \"params_align\": %zu,\n",
                sizeof(params), alignof(typename GemmKernel::Params));
    std::printf(" \"problem\": [%d, %d, %d], \"block\": [%d, 1, 1], \"shared_bytes\": %d,\n", M, N, K,
                int(GemmKernel::MaxThreadsPerBlock), int(GemmKernel::SharedStorageSize));
    dim3 grid = GemmKernel::get_grid_shape(params);
    std::printf(" \"grid\": [%u, %u, %u],\n", grid.x, grid.y, grid.z);
    std::printf(" \"elements\": {\"A\": \"%s\", \"B\": \"%s\", \"C\": \"%s\", \"D\": \"%s\"},\n",
                spec_dtype<ElementA>(), spec_dtype<ElementB>(), spec_dtype<ElementC>(), spec_dtype<ElementC>());
    std::printf(" \"tma\": [\n");
    const unsigned char* maps[2] = {
        reinterpret_cast<const unsigned char*>(params.mainloop.tma_load_a.get_tma_descriptor()),
        reinterpret_cast<const unsigned char*>(params.mainloop.tma_load_b.get_tma_descriptor())};
    for (int t = 0; t < n_encoded && t < 2; ++t) {
        const Encoded& e = encoded[t];
        std::printf("  {\"offset\": %td, \"address\": \"0x%llx\", \"dtype\": %d, \"dims\": [", maps[t] - raw,
                    (unsigned long long)e.address, e.dtype);
        for (int i = 0; i < e.rank; ++i) std::printf("%s%llu", i ? ", " : "", (unsigned long long)e.dims[i]);
        std::printf("], \"strides\": [");
        for (int i = 0; i + 1 < e.rank; ++i) std::printf("%s%llu", i ? ", " : "", (unsigned long long)e.strides[i]);
        std::printf("], \"box\": [");
        for (int i = 0; i < e.rank; ++i) std::printf("%s%u", i ? ", " : "", e.box[i]);
        std::printf("], \"element_strides\": [");
        for (int i = 0; i < e.rank; ++i) std::printf("%s%u", i ? ", " : "", e.elem[i]);
        std::printf("], \"interleave\": %d, \"swizzle\": %d, \"l2_promotion\": %d, \"oob_fill\": %d}%s\n",
                    e.interleave, e.swizzle, e.l2, e.oob, t + 1 < n_encoded && t < 1 ? "," : "");
    }
    std::printf(" ],\n \"fields\": [\n");  // the named members the kernel reads, by offset
    auto field = [&](const char* name, const void* at, size_t size, bool last = false) {
        const unsigned char* b = static_cast<const unsigned char*>(at);
        std::printf("  {\"name\": \"%s\", \"offset\": %td, \"bytes\": \"", name, b - raw);
        for (size_t i = 0; i < size; ++i) std::printf("%02x", b[i]);   // memory order
        std::printf("\"}%s\n", last ? "" : ",");
    };
    auto& ml = params.mainloop;
    auto& ep = params.epilogue;
    field("problem_shape", &params.problem_shape, sizeof(params.problem_shape));
    field("tma_transaction_bytes", &ml.tma_transaction_bytes, 4);
    field("tma_transaction_bytes_mk", &ml.tma_transaction_bytes_mk, 4);
    field("tma_transaction_bytes_nk", &ml.tma_transaction_bytes_nk, 4);
    field("alpha", &ep.thread.alpha, 4);
    field("beta", &ep.thread.beta, 4);
    field("alpha_ptr", &ep.thread.alpha_ptr, 8);
    field("beta_ptr", &ep.thread.beta_ptr, 8);
    field("alpha_ptr_array", &ep.thread.alpha_ptr_array, 8);
    field("beta_ptr_array", &ep.thread.beta_ptr_array, 8);
    field("ptr_C", &ep.ptr_C, 8);
    field("dC", &ep.dC, sizeof(ep.dC));
    field("ptr_D", &ep.ptr_D, 8);
    field("dD", &ep.dD, sizeof(ep.dD), true);
    std::printf(" ]}\n");
    return 0;
}
#endif
