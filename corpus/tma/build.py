#!/usr/bin/env python3
"""Regenerate corpus/tma/tma_wgmma_gemm_sm90a.ptx from tma_wgmma_gemm.cu.

    python corpus/tma/build.py            # rewrite the committed PTX
    python corpus/tma/build.py --check    # exit 1 if a fresh build differs

nvcc -arch=sm_90a -ptx -O3 (wgmma and TMA need the arch-specific sm_90a); nothing is edited
after nvcc.  Tested with nvcc 13.0.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from regenerate import main, nvcc_ptx  # noqa: E402 -- corpus/regenerate.py, beside this folder


def build(nvcc: str) -> dict:
    return {HERE / "tma_wgmma_gemm_sm90a.ptx": nvcc_ptx(nvcc, ["-arch=sm_90a", "-O3"], HERE / "tma_wgmma_gemm.cu")}


if __name__ == "__main__":
    sys.exit(main(__doc__, build))
