"""Generate the Triton mma.sync matmuls in this folder without a GPU (sm_80: mma.sync, not wgmma).

Same recipe as ../modern/gen_triton.py (ahead-of-time for an explicit GPUTarget, PTX ISA pinned to
9.0 for ptxas 13.0).  Two variants of the same matmul: K a runtime argument (the K loop has no
static trip count) and K a constexpr (512 = 8 K-blocks of 64: the loop is counted).

Usage:  TRITON_PTXAS_PATH=$(which ptxas) TRITON_DEFAULT_FP_FUSION=1 python gen_triton_sm80.py      (tested with triton 3.9.0)
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = GPUTarget("cuda", 80, 32)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], acc.to(tl.float16))


def _compile(signature, constexprs, out_name, **options):
    opts = {"ptx_version": 90}
    opts.update(options)
    names = list(signature)
    div16 = [a for a in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
             if signature.get(a) != "constexpr"]
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in div16}
    src = ASTSource(fn=matmul_kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=TARGET, options=opts)
    with open(os.path.join(HERE, out_name), "w") as f:
        f.write(k.asm["ptx"])
    return out_name


def main():
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    blocks = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    made = [_compile(sig, blocks, "triton_matmul_mma_sm80.ptx", num_warps=4, num_stages=1)]
    sig_k = dict(sig, K="constexpr")
    made.append(_compile(sig_k, dict(blocks, K=256), "triton_matmul_mma_k256_sm80.ptx", num_warps=4,
                         num_stages=1))
    return made


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
