"""The numba-cuda kernels of tests/data/ptx/modern (docs/results/unseen-kernels.md, 2026-12-01).

numba passes each array argument as its whole data model, exploded into scalar parameters:
meminfo, parent, nitems, itemsize, data, then one shape and one stride per dimension (a 2-D
``float32[:, :]`` is 9 ``.param``s, only ``data`` a pointer).  Its PTX comes from NVVM (the CUDA
toolkit's libnvvm), with a ``.common .global`` NumbaEnv per kernel and very long mangled names.

Usage:  python gen_numba.py [OUTDIR] [all]   (numba-cuda 0.30.4, numba 0.68.1, libnvvm / nvrtc 13.0;
no GPU needed: ``cuda.compile_ptx`` only compiles).  Without ``all`` it writes the shipped file
only (numba_saxpy2d_sm80.ptx, and numba_3d_tuple_sm80.ptx, read later that day); the other two
were read, not shipped.
"""
import os
import sys

from numba import cuda, float32, float64, int32, int64, types


def saxpy_2d(out, a, x, y, n):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1] and i < n:
        out[i, j] = a * x[i, j] + y[i, j]


def reduce_shared(inp, out, hist):
    sm = cuda.shared.array(256, float32)
    loc = cuda.local.array(4, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    v = inp[i] if i < inp.size else float32(0.0)
    sm[tid] = v
    for q in range(4):
        loc[q] = int32(v * (q + 1)) & 7
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, sm[0])
    cuda.atomic.max(hist, loc[tid & 3], i)


def debug_f64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2.0
    cuda.syncthreads()
    if i < out.size:
        out[i] = x[(i + 1) % x.size] + x[i]


def k3d_tuple(out, x, s, t):
    """Read 2026-12-01: 3-D C-layout arrays (one readonly), an int64 scalar and a UniTuple(float64, 2),
    which numba passes as two parameters."""
    i, j, k = cuda.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = x[i, j, k] * s + t[0] + t[1]


_K3D = (types.Array(float64, 3, "C"), types.Array(float64, 3, "C", readonly=True), int64,
        types.UniTuple(float64, 2))

JOBS = (     # (file, kernel, signature, compile options, shipped)
    ("numba_saxpy2d_sm80.ptx", saxpy_2d, "void(float32[:,:], float32, float32[:,:], float32[:,:], int32)", {}, True),
    ("numba_reduce_local_sm80.ptx", reduce_shared, "void(float32[:], float32[:], int32[:])", {}, False),
    ("numba_debug_f64_sm80.ptx", debug_f64, "void(float64[:], float64[:])", {"debug": True, "opt": False}, False),
    ("numba_3d_tuple_sm80.ptx", k3d_tuple, _K3D, {}, True),
)


def main(out_dir, every=False):
    for name, fn, sig, opts, shipped in JOBS:
        if not (shipped or every):
            continue
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(8, 0), **opts)
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(ptx)
        print("wrote", name, len(ptx))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)),
                  "all" in sys.argv[2:]))
