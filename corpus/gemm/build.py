#!/usr/bin/env python3
"""Regenerate corpus/gemm/gemm_sm80.ptx and gemm_sm90.ptx from gemm.cu.

    python corpus/gemm/build.py            # rewrite the committed PTX
    python corpus/gemm/build.py --check    # exit 1 if a fresh build differs

nvcc -arch=sm_80|sm_90 -ptx -O3; nothing is edited after nvcc.  Tested with nvcc 13.0.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from regenerate import main, nvcc_ptx  # noqa: E402 -- corpus/regenerate.py, beside this folder

ARCHS = ("sm_80", "sm_90")


def build(nvcc: str) -> dict:
    return {HERE / f"gemm_{arch.replace('_', '')}.ptx": nvcc_ptx(nvcc, [f"-arch={arch}", "-O3"], HERE / "gemm.cu")
            for arch in ARCHS}


if __name__ == "__main__":
    sys.exit(main(__doc__, build))
