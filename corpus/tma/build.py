#!/usr/bin/env python3
"""Regenerate corpus/tma/tma_wgmma_gemm_sm90a.ptx from tma_wgmma_gemm.cu.

    python corpus/tma/build.py            # rewrite the committed PTX
    python corpus/tma/build.py --check    # exit 1 if a fresh build differs

nvcc -arch=sm_90a -ptx -O3 (wgmma and TMA need the arch-specific sm_90a); nothing is edited
after nvcc.  Tested with nvcc 13.0.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "tma_wgmma_gemm.cu"
OUT = HERE / "tma_wgmma_gemm_sm90a.ptx"


def build(nvcc: str) -> str:
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "k.ptx"
        subprocess.run([nvcc, "-arch=sm_90a", "-ptx", "-O3", "-o", str(out), str(SOURCE)], check=True)
        return out.read_text()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc not on PATH", file=sys.stderr)
        return 2
    text = build(nvcc)
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print(f"{OUT.name}: {'identical' if same else 'DIFFERS'}")
        return int(not same)
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
