#!/usr/bin/env python3
"""Regenerate corpus/cutlass/cutlass_tma_gemm_sm90a.ptx and its metadata from cutlass_tma_gemm.cu.

    python corpus/cutlass/build.py            # rewrite the committed PTX and JSON
    python corpus/cutlass/build.py --check    # exit 1 if a fresh build differs

The CUTLASS headers come from the nvidia-cutlass wheel (``pip install nvidia-cutlass``: its
cutlass_library/source/include and tools/util/include), the compiler is nvcc (tested: nvcc 13.0,
nvidia-cutlass 4.2).  Two builds of the one source:

* the kernel: ``nvcc -arch=sm_90a -std=c++17 -O3 -DNDEBUG -ptx`` (wgmma and TMA need the
  arch-specific sm_90a; NDEBUG drops CUTLASS's device asserts, whose __assertfail call would
  serialise the wgmma pipeline);
* the metadata: the same file with ``-DSPLICE_METADATA`` built as a host program and run here
  (no GPU: it records the tensor-map arguments instead of calling the driver) -- its JSON says
  where the kernel's Params hold the two tensor maps, the pointers and the scalars, and which
  arguments CUTLASS encodes each map with; the probe spec is filled from it.

Nothing is edited after nvcc.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from regenerate import main, nvcc_ptx  # noqa: E402 -- corpus/regenerate.py, beside this folder

SOURCE = HERE / "cutlass_tma_gemm.cu"
PTX = HERE / "cutlass_tma_gemm_sm90a.ptx"
META = HERE / "cutlass_tma_gemm_params.json"
FLAGS = ["-arch=sm_90a", "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr"]


def cutlass_includes() -> list[str]:
    """The nvidia-cutlass wheel's header folders, as -I flags."""
    import cutlass_library  # noqa: PLC0415 -- the wheel is needed only to rebuild the corpus

    root = Path(cutlass_library.__file__).resolve().parent / "source"
    return [f"-I{root / 'include'}", f"-I{root / 'tools' / 'util' / 'include'}"]


def build(nvcc: str) -> dict:
    """The kernel's PTX and the metadata JSON (one line per key group, as the program prints)."""
    inc = cutlass_includes()
    with tempfile.TemporaryDirectory() as td:
        exe = Path(td) / "meta"
        subprocess.run([nvcc, *FLAGS, *inc, "-DSPLICE_METADATA", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1",
                        "-o", str(exe), str(SOURCE)], check=True)
        meta = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    json.loads(meta)  # the program's output is JSON or the build fails here
    return {PTX: nvcc_ptx(nvcc, [*FLAGS, *inc], SOURCE), META: meta}


if __name__ == "__main__":
    sys.exit(main(__doc__, build))
