"""Generate the CUTLASS Python DSL (CuTe DSL) PTX files in this folder without a GPU.

CuTe DSL compiles ahead of time when the architecture is given (CUTE_DSL_ARCH=sm_90a) and the
arguments are fake tensors (cute.runtime.make_fake_compact_tensor): no device or driver is used.
CUTE_DSL_KEEP=ptx with CUTE_DSL_DUMP_DIR makes it write the PTX, which is copied here under a short
name. Its bundled NVVM (CUDA 13.4) writes PTX ISA 8.8, which ptxas 13.0 accepts.

Usage:  python gen_cutlass_dsl.py        (tested with nvidia-cutlass-dsl 4.8.1)

The kernels are written for this corpus (not copied from CUTLASS examples):
  * softmax_kernel: one CTA per row of 1024 f32, warp_reduction (shfl.sync.bfly) + smem
    cross-warp reduction, fast exp2, rcp.approx.
  * gemm_kernel: 128x128x64 f16 tiles, single-stage TMA loads (cp.async.bulk.tensor + mbarrier)
    into 128B-swizzled smem, one warpgroup issuing wgmma.mma_async m64n128k16, f16 epilogue.
"""
import glob
import operator
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_DUMP = tempfile.mkdtemp(prefix="splice-cute-dump-")
os.environ["CUTE_DSL_ARCH"] = "sm_90a"
os.environ["CUTE_DSL_KEEP"] = "ptx"
os.environ["CUTE_DSL_DUMP_DIR"] = _DUMP

import cutlass  # noqa: E402  (environment must be set first)
import cutlass.cute as cute  # noqa: E402
import cutlass.utils.hopper_helpers as sm90_utils  # noqa: E402
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, warpgroup  # noqa: E402
from cutlass.cute.runtime import make_fake_compact_tensor  # noqa: E402
from cutlass.tensor_utils import LayoutEnum  # noqa: E402

N = 1024
THREADS = 128
PER = N // THREADS

@cute.kernel
def softmax_kernel(gX: cute.Tensor, gY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    red = smem.allocate_tensor(cutlass.Float32, cute.make_layout(THREADS // 32))
    vals = cute.make_rmem_tensor(cute.make_layout(PER), cutlass.Float32)
    m = -cutlass.Float32.inf
    for i in cutlass.range_constexpr(PER):
        v = gX[row, tidx + i * THREADS]
        vals[i] = v
        m = cute.arch.fmax(m, v)
    m = cute.arch.warp_reduction(m, cute.arch.fmax)
    warp = tidx // 32
    lane = tidx % 32
    if lane == 0:
        red[warp] = m
    cute.arch.barrier()
    m = red[0]
    for w in cutlass.range_constexpr(1, THREADS // 32):
        m = cute.arch.fmax(m, red[w])
    cute.arch.barrier()
    s = cutlass.Float32(0.0)
    for i in cutlass.range_constexpr(PER):
        e = cute.math.exp(vals[i] - m, fastmath=True)
        vals[i] = e
        s = s + e
    s = cute.arch.warp_reduction(s, operator.add)
    if lane == 0:
        red[warp] = s
    cute.arch.barrier()
    s = red[0]
    for w in cutlass.range_constexpr(1, THREADS // 32):
        s = s + red[w]
    inv = cute.arch.rcp_approx(s)
    for i in cutlass.range_constexpr(PER):
        gY[row, tidx + i * THREADS] = vals[i] * inv

@cute.jit
def softmax(mX: cute.Tensor, mY: cute.Tensor):
    rows = cute.size(mX, mode=[0])
    softmax_kernel(mX, mY).launch(grid=(rows, 1, 1), block=(THREADS, 1, 1), smem=64)


BM, BN, BK = 128, 128, 64

@cute.kernel
def gemm_kernel(tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor, mC: cute.Tensor,
                tiled_mma: cute.TiledMma, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    bm, bn, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, a_layout.outer, byte_alignment=1024, swizzle=a_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, b_layout.outer, byte_alignment=1024, swizzle=b_layout.inner)
    bar = smem.allocate_array(cutlass.Int64, 1)
    gA = cute.local_tile(mA, (BM, BK), (bm, None))
    gB = cute.local_tile(mB, (BN, BK), (bn, None))
    gC = cute.local_tile(mC, (BM, BN), (bm, bn))
    tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
    tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if warp == 0:
        cpasync.prefetch_descriptor(tma_a)
        cpasync.prefetch_descriptor(tma_b)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.barrier()
    thr_mma = tiled_mma.get_slice(tidx)
    tCsA = thr_mma.partition_A(sA)
    tCsB = thr_mma.partition_B(sB)
    tCgC = thr_mma.partition_C(gC)
    tCrA = tiled_mma.make_fragment_A(tCsA)
    tCrB = tiled_mma.make_fragment_B(tCsB)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    acc.fill(0.0)
    k_tiles = cute.size(gA, mode=[2])
    phase = cutlass.Int32(0)
    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
    for kt in cutlass.range(k_tiles, unroll=1):
        if tidx == 0:
            cute.arch.mbarrier_arrive_and_expect_tx(bar, (BM + BN) * BK * 2)
            cute.copy(tma_a, tAgA[(None, kt)], tAsA[(None, 0)], tma_bar_ptr=bar)
            cute.copy(tma_b, tBgB[(None, kt)], tBsB[(None, 0)], tma_bar_ptr=bar)
        cute.arch.mbarrier_wait(bar, phase)
        phase = phase ^ 1
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, 0)], tCrB[(None, None, kb, 0)], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(0)
        cute.arch.barrier()
    out = cute.make_rmem_tensor(acc.shape, cutlass.Float16)
    out.store(acc.load().to(cutlass.Float16))
    cute.autovec_copy(out, tCgC)

@cute.jit
def gemm(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tiled_mma = sm90_utils.make_trivial_tiled_mma(cutlass.Float16, cutlass.Float16, OperandMajorMode.K,
                                                  OperandMajorMode.K, cutlass.Float32, (1, 1, 1), (64, BN))
    a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (BM, BN, BK), cutlass.Float16, 1)
    b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, (BM, BN, BK), cutlass.Float16, 1)
    tma_a, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mA, cute.slice_(a_layout, (None, None, 0)), (BM, BK))
    tma_b, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mB, cute.slice_(b_layout, (None, None, 0)), (BN, BK))
    m = cute.size(mA, mode=[0]); n = cute.size(mB, mode=[0])
    gemm_kernel(tma_a, tA, tma_b, tB, mC, tiled_mma, a_layout, b_layout).launch(
        grid=(m // BM, n // BN, 1), block=(128, 1, 1))


def _emit(out_name: str) -> str:
    """Move the single PTX file the last compile dumped to out_name."""
    ptx = glob.glob(os.path.join(_DUMP, "*.ptx"))
    assert len(ptx) == 1, ptx
    shutil.move(ptx[0], os.path.join(HERE, out_name))
    return out_name


def main():
    made = []
    x = make_fake_compact_tensor(cutlass.Float32, (4096, N))
    y = make_fake_compact_tensor(cutlass.Float32, (4096, N))
    cute.compile(softmax, x, y)
    made.append(_emit("cutlass_dsl_softmax_sm90a.ptx"))
    a = make_fake_compact_tensor(cutlass.Float16, (4096, 4096))
    b = make_fake_compact_tensor(cutlass.Float16, (4096, 4096))
    c = make_fake_compact_tensor(cutlass.Float16, (4096, 4096))
    cute.compile(gemm, a, b, c)
    made.append(_emit("cutlass_dsl_gemm_tma_wgmma_sm90a.ptx"))
    shutil.rmtree(_DUMP, ignore_errors=True)
    return made


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
