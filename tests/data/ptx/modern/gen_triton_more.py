"""More Triton kernels, compiled without a GPU (triton 3.9.0, PTX ISA pinned to 9.0 as in
gen_triton.py), from the unseen-kernel sweep: flash-attention forward, layernorm, a generic
matmul (fp8 e4m3 on sm_89, int8 / tf32 on sm_80, bf16 on sm_90a), a persistent TMA matmul and a
kernel with many scalar parameters.  Two ship here: the sm_80 flash-attention forward (LLVM zeroes
each accumulator just before its first mma) and the int8 matmul (its epilogue moves int8 values
through ``ld.shared.b8`` into ``.b16`` registers); the others are written by editing ``main``
(the sweep's settings are in docs/results/unseen-kernels.md).

Usage: TRITON_PTXAS_PATH=$(which ptxas) TRITON_DEFAULT_FP_FUSION=1 python gen_triton_more.py [OUTDIR]
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_qm, stride_kn, stride_vn, stride_om, N_CTX,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = off_hz * N_CTX * HEAD_DIM
    q = tl.load(Q + base + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def layernorm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    tl.store(Y + row * stride + cols, (xc * rstd * w + b).to(tl.float16), mask=mask)


@triton.jit
def matmul_generic(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC_INT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    if ACC_INT:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_persistent_tma(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    start = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(start, n_m * n_n, NUM_SMS, flatten=True):
        pid_m = tile // n_n
        pid_n = tile % n_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def many_scalars(out, x, a0, a1, a2, a3, a4, a5, a6, a7, f0, f1, f2, f3, f4, f5, i64a, i64b, h0, u8a,
                 n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    v = v * f0 + f1 * a0 - f2 * a1 + f3 * (a2 ^ a3) + f4 * (a4 + a5) - f5 * (a6 * a7)
    v += (i64a - i64b).to(tl.float32) + h0.to(tl.float32) + u8a.to(tl.float32)
    tl.store(out + offs, v, mask=m)


def _compile(out_dir, fn, signature, constexprs, name, cap, div16=(), **options):
    opts = {"ptx_version": 90}
    opts.update(options)
    names = list(signature)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in div16}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=opts)
    with open(os.path.join(out_dir, name), "w") as f:
        f.write(k.asm["ptx"])
    print("wrote", name)


def main(out_dir):
    attn_sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
                "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32", "stride_om": "i32", "N_CTX": "i32",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"}
    d16 = ("Q", "K", "V", "Out", "stride_qm", "stride_kn", "stride_vn", "stride_om", "N_CTX")
    _compile(out_dir, attn_fwd, attn_sig, {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": 32},
             "triton_attn_fwd_sm80.ptx", 80, d16, num_warps=4, num_stages=2)
    mm = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "ACC_INT": "constexpr"}
    md16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    _compile(out_dir, matmul_generic, mm, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "ACC_INT": True},
             "triton_matmul_int8_sm80.ptx", 80, md16, num_warps=4, num_stages=2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
