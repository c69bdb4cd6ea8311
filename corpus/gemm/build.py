#!/usr/bin/env python3
"""Regenerate corpus/gemm/gemm_sm80.ptx and gemm_sm90.ptx from gemm.cu.

    python corpus/gemm/build.py            # rewrite the committed PTX
    python corpus/gemm/build.py --check    # exit 1 if a fresh build differs

nvcc -arch=sm_80|sm_90 -ptx -O3; nothing is edited after nvcc.  Tested with nvcc 13.0.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCHS = ("sm_80", "sm_90")


def build(arch: str, nvcc: str) -> str:
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "gemm.ptx"
        subprocess.run([nvcc, f"-arch={arch}", "-ptx", "-O3", "-o", str(out), str(HERE / "gemm.cu")],
                       check=True)
        return out.read_text()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc not on PATH", file=sys.stderr)
        return 2
    bad = 0
    for arch in ARCHS:
        text = build(arch, nvcc)
        dst = HERE / f"gemm_{arch.replace('_', '')}.ptx"
        if args.check:
            same = dst.exists() and dst.read_text() == text
            print(f"{dst.name}: {'identical' if same else 'DIFFERS'}")
            bad |= not same
        else:
            dst.write_text(text)
            print(f"wrote {dst}")
    return int(bad)


if __name__ == "__main__":
    sys.exit(main())
