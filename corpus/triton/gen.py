"""Generate the Triton matmul PTX of corpus/triton/ without a GPU.

Triton compiles ahead of time for an explicit target (GPUTarget("cuda", 80, 32) -> sm_80,
("cuda", 90, 32) -> sm_90a); no device or driver is needed.  PTX ISA pinned to 8.7
(ptx_version=87) so ptxas 13.0 and the H200's driver accept it; TRITON_PTXAS_PATH points
Triton's own cubin step at the system ptxas.

    pip install triton==3.9.0
    TRITON_PTXAS_PATH=$(which ptxas) python corpus/triton/gen.py

The kernel is the tutorial matmul with every stride a run-time int32: 12 arguments, plus the two
scratch pointers Triton 3.9 appends (global and profile scratch; null when unused): 14 .params.
BLOCK 32 x 32 x 32 with 4 warps keeps each K-loop phase small enough to schedule by hand
(recipes/triton_matmul_p1.yaml).
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, c,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
             "K": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
             "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32", "BLOCK_M": "constexpr",
             "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
CONSTEXPRS = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8}
DIV16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")


def compile_for(cc: int) -> str:
    names = list(SIGNATURE)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in DIV16}
    src = ASTSource(fn=matmul_kernel, signature=SIGNATURE, constexprs=CONSTEXPRS, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", cc, 32),
                       options={"ptx_version": 87, "num_warps": 4, "num_stages": 2})
    out = f"matmul_sm{cc}.ptx"
    with open(os.path.join(HERE, out), "w") as f:
        f.write(k.asm["ptx"])
    # the launch needs Triton's dynamic shared memory (probes/triton_matmul.yaml: launch.shared)
    return f"{out} (dynamic shared {k.metadata.shared} bytes, {k.metadata.num_warps} warps)"


def main():
    for cc in (80, 90):
        print("wrote", compile_for(cc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
