#!/usr/bin/env python3
"""Regenerate corpus/enc5.ptx and corpus/dec1.ptx from the CUDA sources.

    python corpus/build.py            # rewrite the committed PTX
    python corpus/build.py --check    # exit 1 if a fresh build differs from the committed PTX
    python corpus/build.py --out DIR  # write the fresh PTX to DIR instead
    python corpus/build.py --ptxas    # also run ptxas -arch=sm_90 -O3 -v on the result

The only step after nvcc is a rename of the demoted shared array: NVVM names the
`smem` of an extern "C" kernel `_ZZ<kernel>E4smem`; NVIDIA's PTX carries the C++
local-static name with the parameter type (`_ZZ<kernel><ParamsStruct>E4smem`,
enc5 notes §0), so the build writes that name.  Nothing else is edited.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from regenerate import find_nvcc, nvcc_ptx  # noqa: E402 -- corpus/regenerate.py, beside this script

NVCC_FLAGS = ["-arch=sm_90", "-O3", "--use_fast_math"]

LAYERS = {
    "enc5": ("cuda_dldn_engine_swin_enc5_kernel", "DldnEngineSwinEncParamsStructBase"),
    "dec1": ("cuda_dldn_engine_swin_dec1_kernel", "DldnEngineSwinDecParamsStructBase"),
}


def smem_names(layer: str) -> tuple[str, str]:
    kernel, struct = LAYERS[layer]
    nvvm = f"_ZZ{len(kernel)}{kernel}E4smem"
    nvidia = f"_ZZ{len(kernel)}{kernel}{len(struct)}{struct}E4smem"
    return nvvm, nvidia


def build_one(layer: str, nvcc: str) -> str:
    text = nvcc_ptx(nvcc, NVCC_FLAGS, HERE / f"{layer}.cu", cwd=HERE)
    nvvm, nvidia = smem_names(layer)
    if nvvm not in text:
        raise SystemExit(f"{layer}: expected shared symbol {nvvm} not found in nvcc output")
    return text.replace(nvvm, nvidia)


def run_ptxas(path: Path) -> str:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        raise SystemExit("ptxas not found on PATH")
    with tempfile.TemporaryDirectory() as td:
        res = subprocess.run(
            [ptxas, "-arch=sm_90", "-O3", "-v", str(path), "-o", str(Path(td) / "x.cubin")],
            capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return res.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed PTX")
    ap.add_argument("--out", type=Path, default=None, help="write here instead of corpus/")
    ap.add_argument("--ptxas", action="store_true", help="run ptxas -arch=sm_90 on the result")
    ap.add_argument("layers", nargs="*", default=list(LAYERS))
    args = ap.parse_args(argv)

    nvcc = find_nvcc()
    rc = 0
    for layer in args.layers:
        text = build_one(layer, nvcc)
        committed = HERE / f"{layer}.ptx"
        if args.check:
            same = committed.exists() and committed.read_text() == text
            print(f"{layer}: {'identical' if same else 'DIFFERS'} ({len(text.splitlines())} lines)")
            rc |= 0 if same else 1
            continue
        dest = (args.out or HERE) / f"{layer}.ptx"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
        print(f"{layer}: wrote {os.path.relpath(dest)} ({len(text.splitlines())} lines)")
        if args.ptxas:
            print(run_ptxas(dest).strip())
    return rc


if __name__ == "__main__":
    sys.exit(main())
