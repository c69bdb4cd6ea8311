"""Every Triton kernel of tests/data/ptx/modern, compiled without a GPU (one generator for the
files of gen_triton.py, gen_triton_more.py and a second Triton generator, which it replaces, and of
the unseen kernels read since).

Triton compiles ahead of time for an explicit target (``GPUTarget("cuda", 90, 32)`` -> sm_90a,
80 -> sm_80, 100 -> sm_100a); no device or driver is needed.  PTX ISA is pinned to 9.0
(``ptx_version=90``) so ptxas 13.0 accepts it (Triton 3.9 would otherwise write ``.version 9.4``);
TRITON_PTXAS_PATH points Triton's own cubin step at the system ptxas.

Usage:  TRITON_PTXAS_PATH=$(which ptxas) TRITON_DEFAULT_FP_FUSION=1 python gen_triton.py [OUTDIR] [NAME...]

Without NAME it writes the files shipped here (``JOBS`` rows marked shipped); ``all`` writes every
job, the unshipped kernels too.  The PTX holds ``.file`` paths (this script, site-packages)
and ``.loc`` lines of this script, so a file regenerated elsewhere differs in those lines only
(docs/results/unseen-kernels.md, 2026-11-30).  Tested with triton 3.9.0.
"""
import os
import sys
from typing import NamedTuple

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.language.extra.cuda import libdevice


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, c, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, c_desc, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def matmul_fp8_device_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Device-side tensor descriptors (tensormap built in global scratch), fp8 e4m3 inputs.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def _attn_start(Q, stride_qm, N_CTX, start_m, off_hz, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                HEAD_DIM: tl.constexpr):
    """The query block's offsets and tile, and the online softmax's initial state."""
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = off_hz * N_CTX * HEAD_DIM
    q = tl.load(Q + base + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    return offs_m, tl.arange(0, BLOCK_N), offs_d, base, q, m_i, l_i, tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)


@triton.jit
def _attn_block(q, k_ptrs, v_ptrs, m_i, l_i, acc, qk_scale, causal_mask, MASKED: tl.constexpr):
    """One key/value block of flash attention: the online-softmax update of (m_i, l_i, acc);
    MASKED adds the causal mask (the diagonal block of attn_fwd_causal)."""
    qk = tl.dot(q, tl.load(k_ptrs))
    if MASKED:
        qk = qk * qk_scale + tl.where(causal_mask, 0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
    else:
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
    p = tl.math.exp2(qk)
    l_ij = tl.sum(p, 1)
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + l_ij
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(tl.float16), tl.load(v_ptrs), acc)
    return m_ij, l_i, acc


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_qm, stride_kn, stride_vn, stride_om, N_CTX,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offs_m, offs_n, offs_d, base, q, m_i, l_i, acc = _attn_start(Q, stride_qm, N_CTX, start_m, off_hz,
                                                                 BLOCK_M, BLOCK_N, HEAD_DIM)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        m_i, l_i, acc = _attn_block(q, K + base + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None],
                                    V + base + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :],
                                    m_i, l_i, acc, qk_scale, None, False)
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
def _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm, k0, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """This program's A and B tile pointers from K offset k0 (row-major A, B with unit inner
    strides) and its C tile pointers."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = k0 + tl.arange(0, BLOCK_K)
    return (a_ptr + offs_m[:, None] * stride_am + offs_k[None, :],
            b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :],
            c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :])


@triton.jit
def matmul_generic(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC_INT: tl.constexpr):
    a_ptrs, b_ptrs, c_ptrs = _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm, 0,
                                        BLOCK_M, BLOCK_N, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32 if ACC_INT else tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def _tma_tile(a_desc, b_desc, c_desc, pid_m, pid_n, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr):
    """One output tile from TMA descriptors: the K loop of A·Bᵀ, stored as fp16."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def matmul_persistent_tma(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          WS: tl.constexpr):
    """A persistent loop over output tiles (flattened into the K loop); WS asks Triton to
    warp-specialise it (TMA producer, MMA consumers)."""
    n_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * n_n, NUM_SMS, flatten=True, warp_specialize=WS):
        _tma_tile(a_desc, b_desc, c_desc, tile // n_n, tile % n_n, K, BLOCK_M, BLOCK_N, BLOCK_K)


@triton.jit
def many_scalars(out, x, a0, a1, a2, a3, a4, a5, a6, a7, f0, f1, f2, f3, f4, f5, i64a, i64b, h0, u8a,
                 n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    v = v * f0 + f1 * a0 - f2 * a1 + f3 * (a2 ^ a3) + f4 * (a4 + a5) - f5 * (a6 * a7)
    v += (i64a - i64b).to(tl.float32) + h0.to(tl.float32) + u8a.to(tl.float32)
    tl.store(out + offs, v, mask=m)


@triton.jit
def matmul_splitk(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    """Each program sums every SPLIT_K-th K block and adds its partial tile with atomics."""
    a_ptrs, b_ptrs, c_ptrs = _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm,
                                        tl.program_id(2) * BLOCK_K, BLOCK_M, BLOCK_N, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    tl.atomic_add(c_ptrs, acc, sem="relaxed")


@triton.jit
def layernorm_bwd_dwdb(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP: tl.constexpr,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + row * stride + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    lock_id = row % GROUP
    Lock += lock_id
    Count = Lock + GROUP
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def print_asm_scan(x_ptr, y_ptr, idx_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.device_print("x", x)
    y = tl.inline_asm_elementwise("{ .reg .f32 t; mul.f32 t, $1, $2; max.f32 $0, t, 0f00000000; }",
                                  "=r,r,r", [x, tl.full(x.shape, scale, tl.float32)],
                                  dtype=tl.float32, is_pure=True, pack=1)
    c = tl.cumsum(y, axis=0)
    s = tl.sort(c, descending=True)
    tl.store(y_ptr + offs, s, mask=m)
    tl.atomic_max(idx_ptr, tl.max(tl.where(m, offs, 0), axis=0))


@triton.jit
def matmul_tma_blackwell(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    _tma_tile(a_desc, b_desc, c_desc, tl.program_id(0), tl.program_id(1), K, BLOCK_M, BLOCK_N, BLOCK_K)


@triton.jit
def matmul_ptr(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PREC: tl.constexpr):
    """A K loop over pointer tiles; PREC is tl.dot's input_precision (tf32x3 emulates fp32 with
    three tf32 products), the accumulator has C's type (fp64 dots accumulate in fp64)."""
    a_ptrs, b_ptrs, c_ptrs = _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm, 0,
                                        BLOCK_M, BLOCK_N, BLOCK_K)
    c_ty = c_ptr.dtype.element_ty       # fp64 and int32 results accumulate in their own type
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=c_ty if (c_ty == tl.float64 or c_ty == tl.int32) else tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, input_precision=PREC)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def dot_scaled_mx(a_ptr, a_scale, b_ptr, b_scale, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + offs_m[:, None] * BLOCK_K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BLOCK_N + offs_n[None, :])
    offs_s = tl.arange(0, BLOCK_K // 32)
    sa = tl.load(a_scale + offs_m[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    sb = tl.load(b_scale + offs_n[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
    tl.store(out_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], c)


@triton.jit
def attn_fwd_causal(Q, K, V, Out, M_out, sm_scale, stride_qm, stride_kn, stride_vn, stride_om, N_CTX,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Flash attention with a causal mask in two loops (tl.range): the blocks left of the
    diagonal unmasked, then the diagonal block masked; writes the log-sum-exp too."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offs_m, offs_n, offs_d, base, q, m_i, l_i, acc = _attn_start(Q, stride_qm, N_CTX, start_m, off_hz,
                                                                 BLOCK_M, BLOCK_N, HEAD_DIM)
    k_ptrs = K + base + offs_n[None, :] * stride_kn + offs_d[:, None]
    v_ptrs = V + base + offs_n[:, None] * stride_vn + offs_d[None, :]
    for start_n in tl.range(0, start_m * BLOCK_M, BLOCK_N):
        m_i, l_i, acc = _attn_block(q, k_ptrs + start_n * stride_kn, v_ptrs + start_n * stride_vn,
                                    m_i, l_i, acc, sm_scale * 1.44269504, None, False)
    for start_n in tl.range(start_m * BLOCK_M, (start_m + 1) * BLOCK_M, BLOCK_N):
        causal = offs_m[:, None] >= (start_n + offs_n[None, :])
        m_i, l_i, acc = _attn_block(q, k_ptrs + start_n * stride_kn, v_ptrs + start_n * stride_vn,
                                    m_i, l_i, acc, sm_scale * 1.44269504, causal, True)
    tl.store(M_out + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    tl.store(Out + base + offs_m[:, None] * stride_om + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def attn_bwd_dkdv(Q, K, V, DO, DQ, DK, DV, M_in, D_in, sm_scale, stride, N_CTX,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * HEAD_DIM
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + base + offs_n[:, None] * stride + offs_d[None, :])
    v = tl.load(V + base + offs_n[:, None] * stride + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    for start_m in range(0, N_CTX, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        qT = tl.load(Q + base + offs_m[None, :] * stride + offs_d[:, None])
        m = tl.load(M_in + off_hz * N_CTX + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        do = tl.load(DO + base + offs_m[:, None] * stride + offs_d[None, :])
        dv += tl.dot(pT.to(tl.float16), do)
        Di = tl.load(D_in + off_hz * N_CTX + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = (pT * (dpT - Di[None, :])).to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        dq = tl.dot(tl.trans(dsT), k) * sm_scale
        tl.atomic_add(DQ + base + offs_m[:, None] * stride + offs_d[None, :], dq)
    tl.store(DV + base + offs_n[:, None] * stride + offs_d[None, :], dv)
    tl.store(DK + base + offs_n[:, None] * stride + offs_d[None, :], dk * sm_scale)


@triton.jit
def assert_argmax_asm(x_ptr, out_ptr, idx_ptr, hist_ptr, n, BLOCK: tl.constexpr, NBINS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.device_assert(x >= 0, "negative input")
    lo, hi = tl.inline_asm_elementwise(
        "{ .reg .b16 t<2>; mov.b32 {t0, t1}, $2; cvt.u32.u16 $0, t0; cvt.u32.u16 $1, t1; }",
        "=r,=r,r", [x], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(out_ptr + offs, lo + hi, mask=m)
    tl.store(idx_ptr, tl.argmax(tl.where(m, x, -1), axis=0))
    h = tl.histogram(x % NBINS, NBINS)
    tl.atomic_add(hist_ptr + tl.arange(0, NBINS), h)


class Job(NamedTuple):
    """One PTX file: the kernel, its signature and constexprs, the capability (80, 89, 90, 100),
    the arguments promised to be multiples of 16 (what Triton's launcher infers at run time, which
    enables vector loads and cp.async), compile options, and whether the file ships here."""
    name: str
    fn: object
    signature: dict
    constexprs: dict
    cap: int
    div16: tuple
    options: dict
    shipped: bool


def _compile(out_dir, job):
    opts = {"ptx_version": 90}
    opts.update(job.options)
    names = list(job.signature)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in job.div16}
    src = ASTSource(fn=job.fn, signature=job.signature, constexprs=job.constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", job.cap, 32), options=opts)
    with open(os.path.join(out_dir, job.name), "w") as f:
        f.write(k.asm["ptx"])
    print("wrote", job.name, len(k.asm["ptx"]))


def _mm_sig(a, b, c, extra=()):
    sig = {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    sig.update({k: "constexpr" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K") + tuple(extra)})
    return sig


MM_D16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
TMA_SIG = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
BLOCKS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
PERSISTENT_SIG = {**TMA_SIG, "NUM_SMS": "constexpr", "WS": "constexpr"}


def _matmul_softmax_attention():
    """gen_triton.py's four files (sm_90a) and gen_triton_more.py's (sm_80, sm_89, sm_90a)."""
    yield Job("triton_softmax_sm90a.ptx", softmax_kernel,
              {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_cols": "i32",
               "BLOCK": "constexpr"}, {"BLOCK": 1024}, 90, ("out_ptr", "in_ptr", "in_stride", "out_stride"),
              dict(num_warps=4), True)
    mm_sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
              "stride_cm": "i32", "stride_cn": "constexpr",
              "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
    yield Job("triton_matmul_wgmma_sm90a.ptx", matmul_kernel, mm_sig,
              {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, **BLOCKS, "GROUP_M": 8}, 90,
              MM_D16, dict(num_warps=8, num_stages=3), True)
    yield Job("triton_matmul_tma_sm90a.ptx", matmul_tma_kernel, TMA_SIG, BLOCKS, 90, (), dict(num_warps=8), True)
    fp8 = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield Job("triton_matmul_fp8_devtma_sm90a.ptx", matmul_fp8_device_tma_kernel, fp8,
              {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 128}, 90, ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K"),
              dict(num_warps=4), True)
    attn = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
            "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32", "stride_om": "i32", "N_CTX": "i32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"}
    yield Job("triton_attn_fwd_sm80.ptx", attn_fwd, attn, {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": 32}, 80,
              ("Q", "K", "V", "Out", "stride_qm", "stride_kn", "stride_vn", "stride_om", "N_CTX"),
              dict(num_warps=4, num_stages=2), True)
    i8 = _mm_sig("*i8", "*i8", "*i32", ("ACC_INT",))
    yield Job("triton_matmul_int8_sm80.ptx", matmul_generic, i8, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64,
              "ACC_INT": True}, 80, MM_D16, dict(num_warps=4, num_stages=2), True)
    e4 = _mm_sig("*fp8e4nv", "*fp8e4nv", "*fp32", ("ACC_INT",))
    yield Job("triton_matmul_fp8_mma_sm89.ptx", matmul_generic, e4, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64,
              "ACC_INT": False}, 89, MM_D16, dict(num_warps=4, num_stages=2), False)
    ln = {"X": "*fp16", "Y": "*fp16", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32",
          "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK": "constexpr"}
    yield Job("triton_layernorm_sm90a.ptx", layernorm_fwd, ln, {"BLOCK": 1024}, 90, ("X", "Y", "stride"),
              dict(num_warps=4), False)
    yield Job("triton_matmul_persistent_tma_sm90a.ptx", matmul_persistent_tma, PERSISTENT_SIG,
              {**BLOCKS, "NUM_SMS": 132, "WS": False}, 90, (), dict(num_warps=8, num_stages=3), False)
    ms = {"out": "*fp32", "x": "*fp32", **{f"a{i}": "i32" for i in range(8)}, **{f"f{i}": "fp32" for i in range(6)},
          "i64a": "i64", "i64b": "i64", "h0": "fp16", "u8a": "u8", "n": "i32", "BLOCK": "constexpr"}
    yield Job("triton_many_scalars_sm80.ptx", many_scalars, ms, {"BLOCK": 256}, 80, (), dict(num_warps=4), False)


def _splitk_tcgen05_scaled():
    """The kernels read second on 2026-11-30 (formerly a generator of their own)."""
    sk = _mm_sig("*fp16", "*fp16", "*fp32", ("SPLIT_K",))
    yield Job("triton_matmul_splitk_atomic_sm80.ptx", matmul_splitk, sk,
              {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "SPLIT_K": 4}, 80, MM_D16,
              dict(num_warps=4, num_stages=2), False)
    ln = {"DX": "*fp32", "DY": "*fp16", "DW": "*fp32", "DB": "*fp32", "X": "*fp16", "W": "*fp32",
          "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32",
          "GROUP": "constexpr", "BLOCK": "constexpr"}
    yield Job("triton_layernorm_bwd_lock_sm90.ptx", layernorm_bwd_dwdb, ln, {"GROUP": 32, "BLOCK": 1024}, 90,
              ("DX", "DY", "DW", "DB", "X", "W", "stride"), dict(num_warps=8), False)
    ps = {"x_ptr": "*fp32", "y_ptr": "*fp32", "idx_ptr": "*i32", "n": "i32", "scale": "fp32", "BLOCK": "constexpr"}
    yield Job("triton_print_asm_scan_sm90.ptx", print_asm_scan, ps, {"BLOCK": 256}, 90, (), dict(num_warps=4), False)
    tma = {k: v for k, v in TMA_SIG.items() if k not in ("M", "N")}
    yield Job("triton_matmul_tcgen05_sm100a.ptx", matmul_tma_blackwell, tma, BLOCKS, 100, (),
              dict(num_warps=4, num_stages=3), True)
    mp = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "K": "i32", "stride_am": "i32",
          "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
          "BLOCK_K": "constexpr", "PREC": "constexpr"}
    yield Job("triton_matmul_bf16_2wg_sm90a.ptx", matmul_ptr, mp, {**BLOCKS, "PREC": "tf32"}, 90,
              ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm"),
              dict(num_warps=8, num_stages=3), True)
    ds = {"a_ptr": "*fp8e4nv", "a_scale": "*u8", "b_ptr": "*fp8e4nv", "b_scale": "*u8", "out_ptr": "*fp32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    d16 = ("a_ptr", "a_scale", "b_ptr", "b_scale", "out_ptr")
    yield Job("triton_dot_scaled_sm90a.ptx", dot_scaled_mx, ds, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128},
              90, d16, dict(num_warps=4), False)
    yield Job("triton_dot_scaled_sm100a.ptx", dot_scaled_mx, ds, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128},
              100, d16, dict(num_warps=4), False)


def _attention_dots_warp_specialised():
    """The kernels read third on 2026-11-30 (docs/results/unseen-kernels.md)."""
    attn = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "M_out": "*fp32", "sm_scale": "fp32",
            "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32", "stride_om": "i32", "N_CTX": "i32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"}
    ad16 = ("Q", "K", "V", "Out", "M_out", "stride_qm", "stride_kn", "stride_vn", "stride_om", "N_CTX")
    yield Job("triton_attn_causal_sm80.ptx", attn_fwd_causal, attn, {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": 32},
              80, ad16, dict(num_warps=4, num_stages=2), True)
    yield Job("triton_attn_causal_sm90a.ptx", attn_fwd_causal, attn, {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64},
              90, ad16, dict(num_warps=4, num_stages=2), False)
    bwd = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DQ": "*fp32", "DK": "*fp32", "DV": "*fp32",
           "M_in": "*fp32", "D_in": "*fp32", "sm_scale": "fp32", "stride": "i32", "N_CTX": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"}
    yield Job("triton_attn_bwd_sm80.ptx", attn_bwd_dkdv, bwd, {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD_DIM": 32}, 80,
              ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M_in", "D_in", "stride", "N_CTX"),
              dict(num_warps=4, num_stages=1), True)
    dp = {"a_ptr": "*fp64", "b_ptr": "*fp64", "c_ptr": "*fp64", "K": "i32", "stride_am": "i32", "stride_bk": "i32",
          "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
          "PREC": "constexpr"}
    d16 = ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")
    yield Job("triton_dot_fp64_sm80.ptx", matmul_ptr, dp, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16,
              "PREC": "ieee"}, 80, d16, dict(num_warps=4, num_stages=2), True)
    f32 = {**dp, "a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}
    yield Job("triton_dot_tf32x3_sm80.ptx", matmul_ptr, f32, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16,
              "PREC": "tf32x3"}, 80, d16, dict(num_warps=4, num_stages=2), True)
    e5 = {**dp, "a_ptr": "*fp8e5", "b_ptr": "*fp8e5", "c_ptr": "*fp32"}
    yield Job("triton_dot_e5m2_sm89.ptx", matmul_ptr, e5, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64,
              "PREC": "ieee"}, 89, d16, dict(num_warps=4, num_stages=2), False)
    i8 = {**dp, "a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32"}
    yield Job("triton_dot_int8_sm90a.ptx", matmul_ptr, i8, {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64,
              "PREC": "ieee"}, 90, d16, dict(num_warps=4, num_stages=3), False)
    aa = {"x_ptr": "*i32", "out_ptr": "*i32", "idx_ptr": "*i32", "hist_ptr": "*i32", "n": "i32",
          "BLOCK": "constexpr", "NBINS": "constexpr"}
    yield Job("triton_assert_argmax_asm_sm90a.ptx", assert_argmax_asm, aa, {"BLOCK": 256, "NBINS": 16}, 90, (),
              dict(num_warps=4, debug=True), True)
    yield Job("triton_matmul_ws_persistent_sm100a.ptx", matmul_persistent_tma, PERSISTENT_SIG,
              {**BLOCKS, "NUM_SMS": 148, "WS": True}, 100, (), dict(num_warps=4, num_stages=3), True)
    yield Job("triton_matmul_ws_persistent_sm90a.ptx", matmul_persistent_tma, PERSISTENT_SIG,
              {**BLOCKS, "NUM_SMS": 132, "WS": True}, 90, (), dict(num_warps=4, num_stages=3), False)


# ---- read 2026-12-01 (docs/results/unseen-kernels.md); dot_1warp_i64 shipped (its int64 strides were buffers)

@triton.jit
def dot_1warp_i64(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


@triton.jit
def batched_dot3d(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    ok_r = tl.arange(0, K)[None, None, :]
    ok_c = tl.arange(0, K)[None, :, None]
    a = tl.load(a_ptr + ob * M * K + om * K + ok_r)
    b = tl.load(b_ptr + ob * K * N + ok_c * N + on)
    c = tl.dot(a, b)
    tl.store(c_ptr + ob * M * N + om * N + on, c)


@triton.jit
def _argmin_combine(v0, i0, v1, i1):
    take0 = (v0 < v1) | ((v0 == v1) & (i0 < i1))
    return tl.where(take0, v0, v1), tl.where(take0, i0, i1)


@triton.jit
def _mulmax(a, b):
    return tl.maximum(a * 0.5 + b, b)


@triton.jit
def reduce_custom(x_ptr, vout_ptr, iout_ptr, scan_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=float("inf"))
    v, i = tl.reduce((x, offs), 0, _argmin_combine)
    tl.store(vout_ptr + row, v)
    tl.store(iout_ptr + row, i)
    s = tl.associative_scan(x, 0, _mulmax)
    lo, hi = tl.split(tl.reshape(s, (BLOCK // 2, 2)))
    tl.store(scan_ptr + row * n + tl.arange(0, BLOCK // 2), lo + hi)


@triton.jit
def conv3x3_nhwc(x_ptr, w_ptr, y_ptr, H, W, C: tl.constexpr, KOUT: tl.constexpr, BLOCK_P: tl.constexpr):
    # implicit GEMM: pixels x C (one tap) times C x KOUT, 9 taps, bias-free, ReLU
    pid = tl.program_id(0)
    p = pid * BLOCK_P + tl.arange(0, BLOCK_P)
    py = p // W
    px = p % W
    oc = tl.arange(0, C)
    ok = tl.arange(0, KOUT)
    acc = tl.zeros((BLOCK_P, KOUT), dtype=tl.float32)
    for t in tl.static_range(9):
        dy = t // 3 - 1
        dx = t % 3 - 1
        yy = py + dy
        xx = px + dx
        ok_pix = (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
        a = tl.load(x_ptr + ((yy * W + xx) * C)[:, None] + oc[None, :], mask=ok_pix[:, None], other=0.0)
        w = tl.load(w_ptr + (t * C + oc)[:, None] * KOUT + ok[None, :])
        acc = tl.dot(a, w, acc)
    acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + p[:, None] * KOUT + ok[None, :], acc.to(tl.float16), mask=(p < H * W)[:, None])


def _int64_batched_reduce_conv():
    yield Job("triton_dot_1warp_i64_sm80.ptx", dot_1warp_i64,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i64", "N": "i64", "K": "i64",
         "stride_am": "i64", "stride_bk": "i64", "stride_cm": "i64",
         "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, 80, (), dict(num_warps=1, num_stages=1), True)
    yield Job("triton_batched_dot3d_sm80.ptx", batched_dot3d,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "B": "constexpr", "M": "constexpr",
         "N": "constexpr", "K": "constexpr"},
        {"B": 2, "M": 32, "N": 32, "K": 32}, 80, ("a_ptr", "b_ptr", "c_ptr"), dict(num_warps=4), False)
    yield Job("triton_reduce_custom_sm90.ptx", reduce_custom,
        {"x_ptr": "*fp32", "vout_ptr": "*fp32", "iout_ptr": "*i32", "scan_ptr": "*fp32", "n": "i32",
         "BLOCK": "constexpr"}, {"BLOCK": 256}, 90, (), dict(num_warps=4), False)
    yield Job("triton_conv3x3_nhwc_sm80.ptx", conv3x3_nhwc,
        {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "H": "i32", "W": "i32", "C": "constexpr",
         "KOUT": "constexpr", "BLOCK_P": "constexpr"},
        {"C": 32, "KOUT": 32, "BLOCK_P": 64}, 80, ("x_ptr", "w_ptr", "y_ptr"), dict(num_warps=4, num_stages=2), False)


# ---- read 2026-12-01 (docs/results/unseen-kernels.md) ----------------------------------------------------

@triton.jit
def trans_join_gather(a_ptr, b_ptr, c_ptr, idx_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """B stored N-major and transposed in registers (tl.trans), masked K tail, then an epilogue of
    tl.gather (a permutation read from memory), tl.join / tl.interleave of the two halves."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        km = (k0 + ok) < K
        a = tl.load(a_ptr + om[:, None] * stride_am + (k0 + ok)[None, :], mask=km[None, :], other=0.0)
        b = tl.load(b_ptr + on[:, None] * stride_bn + (k0 + ok)[None, :], mask=km[None, :], other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    perm = tl.load(idx_ptr + tl.arange(0, BLOCK_N))
    acc = tl.gather(acc, tl.broadcast_to(perm[None, :], (BLOCK_M, BLOCK_N)), axis=1)
    lo, hi = tl.split(tl.reshape(acc, (BLOCK_M, BLOCK_N // 2, 2)))
    out = tl.interleave(hi, lo)
    tl.store(c_ptr + om[:, None] * stride_cm + on[None, :], out.to(tl.float16))


@triton.jit
def many_args(out, x, i1a, i8a, i16a, u16a, u32a, u64a, f16a, bf16a, f64a,
              p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15,
              s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15,
              g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, n, BLOCK: tl.constexpr):
    """60 parameters: scalars of every Triton width (i1, i8, i16, u16, u32, u64, fp16, bf16, fp64),
    16 input pointers each read at its own offset, 16 i32 scalars and 10 fp32 scalars."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    acc = v * f64a.to(tl.float32) + f16a.to(tl.float32) + bf16a.to(tl.float32)
    acc += (i8a + i16a + u16a).to(tl.float32) + u32a.to(tl.float32) + u64a.to(tl.float32)
    acc = tl.where(i1a, acc, -acc)
    acc += tl.load(p0 + offs + s0, mask=m, other=0.0) * g0 + tl.load(p1 + offs + s1, mask=m, other=0.0) * g1
    acc += tl.load(p2 + offs + s2, mask=m, other=0.0) * g2 + tl.load(p3 + offs + s3, mask=m, other=0.0) * g3
    acc += tl.load(p4 + offs + s4, mask=m, other=0.0) * g4 + tl.load(p5 + offs + s5, mask=m, other=0.0) * g5
    acc += tl.load(p6 + offs + s6, mask=m, other=0.0) * g6 + tl.load(p7 + offs + s7, mask=m, other=0.0) * g7
    acc += tl.load(p8 + offs + s8, mask=m, other=0.0) * g8 + tl.load(p9 + offs + s9, mask=m, other=0.0) * g9
    acc += tl.load(p10 + offs + s10, mask=m, other=0.0) + tl.load(p11 + offs + s11, mask=m, other=0.0)
    acc += tl.load(p12 + offs + s12, mask=m, other=0.0) + tl.load(p13 + offs + s13, mask=m, other=0.0)
    acc += tl.load(p14 + offs + s14, mask=m, other=0.0) + tl.load(p15 + offs + s15, mask=m, other=0.0)
    tl.store(out + offs, acc, mask=m)


@triton.jit
def rand_libdevice_atomics(x_ptr, y_ptr, h_ptr, c64_ptr, cnt_ptr, seed, n, BLOCK: tl.constexpr):
    """Philox tl.rand/randint, libdevice math, umulhi, and atomics with explicit sem/scope on
    fp16, int64 CAS and a cta-scoped counter."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    r = tl.rand(seed, offs)
    ri = tl.randint(seed, offs)
    y = libdevice.erf(x) + libdevice.pow(tl.abs(x), r) + libdevice.tanh(x) + tl.umulhi(ri, ri).to(tl.float32)
    tl.store(y_ptr + offs, y, mask=m)
    tl.atomic_add(h_ptr + (offs % 8), x.to(tl.float16), mask=m, sem="relaxed", scope="gpu")
    tl.atomic_cas(c64_ptr + (offs % 4), offs.to(tl.int64), ri.to(tl.int64), sem="acq_rel", scope="sys")
    tl.atomic_add(cnt_ptr, 1, sem="release", scope="cta")


@triton.jit
def dot_fp8_imprecise(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """fp8 e5m2 x e4m3 with max_num_imprecise_acc=32: the wgmma chain is cut every 32 of K into a
    fresh accumulator that is then added to the running one (Hopper's fp8 split accumulation)."""
    a_ptrs, b_ptrs, c_ptrs = _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm, 0,
                                        BLOCK_M, BLOCK_N, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, max_num_imprecise_acc=32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptrs, acc)


def _gather_args_rand_fp8_sm120():
    bp = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "idx_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield Job("triton_trans_join_gather_sm80.ptx", trans_join_gather, bp, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
              80, ("a_ptr", "b_ptr", "c_ptr", "idx_ptr", "stride_am", "stride_bn", "stride_cm"),
              dict(num_warps=4, num_stages=2), True)
    ma = {"out": "*fp32", "x": "*fp32", "i1a": "i1", "i8a": "i8", "i16a": "i16", "u16a": "u16", "u32a": "u32",
          "u64a": "u64", "f16a": "fp16", "bf16a": "bf16", "f64a": "fp64",
          **{f"p{i}": "*fp32" for i in range(16)}, **{f"s{i}": "i32" for i in range(16)},
          **{f"g{i}": "fp32" for i in range(10)}, "n": "i32", "BLOCK": "constexpr"}
    yield Job("triton_many_args_sm80.ptx", many_args, ma, {"BLOCK": 128}, 80, (), dict(num_warps=4), True)
    rl = {"x_ptr": "*fp32", "y_ptr": "*fp32", "h_ptr": "*fp16", "c64_ptr": "*i64", "cnt_ptr": "*i32",
          "seed": "i32", "n": "i32", "BLOCK": "constexpr"}
    yield Job("triton_rand_libdevice_atomics_sm90a.ptx", rand_libdevice_atomics, rl, {"BLOCK": 256}, 90, (),
              dict(num_warps=4), True)
    fp8 = {"a_ptr": "*fp8e5", "b_ptr": "*fp8e4nv", "c_ptr": "*fp32", "K": "i32", "stride_am": "i32",
           "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
           "BLOCK_K": "constexpr", "PREC": "constexpr"}
    d16 = ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")
    fp8i = {k: v for k, v in fp8.items() if k != "PREC"}
    yield Job("triton_dot_fp8_imprecise_sm90a.ptx", dot_fp8_imprecise, fp8i, {"BLOCK_M": 64, "BLOCK_N": 64,
              "BLOCK_K": 128}, 90, d16, dict(num_warps=4, num_stages=2), True)
    f16 = {**fp8, "a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    yield Job("triton_dot_f16_sm120a.ptx", matmul_ptr, f16, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
              "PREC": "ieee"}, 120, d16, dict(num_warps=4, num_stages=2), True)
    ds = {"a_ptr": "*fp8e4nv", "a_scale": "*u8", "b_ptr": "*fp8e4nv", "b_scale": "*u8", "out_ptr": "*fp32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield Job("triton_dot_scaled_sm120a.ptx", dot_scaled_mx, ds, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128},
              120, ("a_ptr", "a_scale", "b_ptr", "b_scale", "out_ptr"), dict(num_warps=4), True)


@triton.jit
def persistent_fp8(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    """A persistent fp8 (e4m3) matmul on plain pointers: each program walks tiles
    start, start + NUM_SMS, ... with a K loop inside, bf16 output."""
    start = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(start, n_m * n_n, NUM_SMS):
        pid_m = tile // n_n
        pid_n = tile % n_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def grouped_ptr_array(group_a, group_b, group_c, group_size, g_lds, n_groups,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Triton's grouped GEMM: the A/B/C of each group are pointers loaded from device tables
    (``tl.load(group_a + g).to(tl.pointer_type(tl.float16))``), sizes and leading dimensions
    from int32 tables."""
    g = tl.program_id(1)
    pid = tl.program_id(0)
    gm = tl.load(group_size + g * 3)
    gn = tl.load(group_size + g * 3 + 1)
    gk = tl.load(group_size + g * 3 + 2)
    lda = tl.load(g_lds + g * 3)
    ldb = tl.load(g_lds + g * 3 + 1)
    ldc = tl.load(g_lds + g * 3 + 2)
    a_ptr = tl.load(group_a + g).to(tl.pointer_type(tl.float16))
    b_ptr = tl.load(group_b + g).to(tl.pointer_type(tl.float16))
    c_ptr = tl.load(group_c + g).to(tl.pointer_type(tl.float16))
    n_n = tl.cdiv(gn, BLOCK_N)
    rm = (pid // n_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % n_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, gk, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * lda + (k + rk)[None, :], mask=(rm[:, None] < gm) & ((k + rk)[None, :] < gk), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * ldb + rn[None, :], mask=((k + rk)[:, None] < gk) & (rn[None, :] < gn), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < gm) & (rn[None, :] < gn))


@triton.jit
def welford_rmsnorm(x_ptr, w_ptr, y_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: tl.constexpr):
    """A layernorm with a chunked Welford reduction (``tl.reduce`` with a three-value combine) and
    an RMS branch chosen by a run-time flag in the sign of eps."""
    row = tl.program_id(0)
    cnt = tl.zeros((BLOCK,), dtype=tl.float32)
    mean = tl.zeros((BLOCK,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        valid = (cols < N).to(tl.float32)
        cnt_new = cnt + valid
        delta = x - mean
        mean = mean + tl.where(cols < N, delta / tl.maximum(cnt_new, 1.0), 0.0)
        m2 = m2 + tl.where(cols < N, delta * (x - mean), 0.0)
        cnt = cnt_new
    mu, var, n = tl.reduce((mean, m2, cnt), 0, _welford_combine)
    var = var / n
    rms = eps < 0
    mu = tl.where(rms, 0.0, mu)
    rstd = 1 / tl.sqrt(var + tl.abs(eps))
    tl.store(mean_ptr + row, mu)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * stride + cols, ((x - mu) * rstd * w).to(tl.bfloat16), mask=cols < N)


@triton.jit
def _welford_combine(m1, v1, n1, m2, v2, n2):
    n = n1 + n2
    d = m2 - m1
    w = tl.where(n == 0, 0.0, n2 / tl.maximum(n, 1.0))
    return m1 + d * w, v1 + v2 + d * d * n1 * w, n


def _persistent_grouped_welford():
    fp8 = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "NUM_SMS": "constexpr"}
    yield Job("triton_persistent_fp8_sm90a.ptx", persistent_fp8, fp8, {"BLOCK_M": 128, "BLOCK_N": 64,
              "BLOCK_K": 64, "NUM_SMS": 132}, 90, MM_D16, dict(num_warps=4, num_stages=3), True)
    imp = {"a_ptr": "*fp8e5", "b_ptr": "*fp8e4nv", "c_ptr": "*fp32", "K": "i32", "stride_am": "i32",
           "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
           "BLOCK_K": "constexpr"}
    yield Job("triton_dot_fp8_imprecise64_sm90a.ptx", dot_fp8_imprecise64, imp, {"BLOCK_M": 64, "BLOCK_N": 64,
              "BLOCK_K": 128}, 90, ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm"),
              dict(num_warps=4, num_stages=2), True)
    yield Job("triton_dot_fp8_imprecise_m128_sm90a.ptx", dot_fp8_imprecise, imp, {"BLOCK_M": 128, "BLOCK_N": 64,
              "BLOCK_K": 64}, 90, ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm"),
              dict(num_warps=4, num_stages=2), True)
    gp = {"group_a": "*u64", "group_b": "*u64", "group_c": "*u64", "group_size": "*i32", "g_lds": "*i32",
          "n_groups": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield Job("triton_grouped_ptr_array_sm80.ptx", grouped_ptr_array, gp, {"BLOCK_M": 64, "BLOCK_N": 64,
              "BLOCK_K": 32}, 80, (), dict(num_warps=4, num_stages=2), True)
    wf = {"x_ptr": "*fp16", "w_ptr": "*fp32", "y_ptr": "*bf16", "mean_ptr": "*fp32", "rstd_ptr": "*fp32",
          "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK": "constexpr"}
    yield Job("triton_welford_rmsnorm_sm90a.ptx", welford_rmsnorm, wf, {"BLOCK": 512}, 90, (),
              dict(num_warps=4), True)


@triton.jit
def dot_fp8_imprecise64(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """As dot_fp8_imprecise with max_num_imprecise_acc=64: two k32 wgmma chain in each fresh
    accumulator before add.f32 folds it into the running one."""
    a_ptrs, b_ptrs, c_ptrs = _tile_ptrs(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm, 0,
                                        BLOCK_M, BLOCK_N, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, max_num_imprecise_acc=64)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptrs, acc)


@triton.jit
def int8_dot_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, K, stride_am, stride_bk, stride_cm, scale,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """An int8 x int8 -> int32 dot on sm_90a (wgmma m64n64k32.s32.s8.s8, two m64 tiles) with a
    dequantising epilogue: scale, a per-column bias, relu, fp16."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    y = acc.to(tl.float32) * scale + tl.load(bias_ptr + rn)[None, :]
    y = tl.maximum(y, 0.0)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], y.to(tl.float16))


def _int8_dot_bias_relu():
    sig = {"a_ptr": "*i8", "b_ptr": "*i8", "bias_ptr": "*fp32", "c_ptr": "*fp16", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32", "scale": "fp32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield Job("triton_int8_dot_bias_relu_sm90a.ptx", int8_dot_bias_relu, sig, {"BLOCK_M": 128, "BLOCK_N": 64,
              "BLOCK_K": 64}, 90, ("a_ptr", "b_ptr", "bias_ptr", "c_ptr", "K", "stride_am", "stride_bk",
                                   "stride_cm"), dict(num_warps=4, num_stages=3), True)


JOBS = (*_matmul_softmax_attention(), *_splitk_tcgen05_scaled(), *_attention_dots_warp_specialised(),
        *_int64_batched_reduce_conv(), *_gather_args_rand_fp8_sm120(), *_persistent_grouped_welford(),
        *_int8_dot_bias_relu())


def main(out_dir, names=()):
    """Write the named jobs (every shipped one when none is named, every job for ``all``)."""
    unknown = set(names) - {j.name for j in JOBS} - {"all"}
    if unknown:
        print("no such job:", ", ".join(sorted(unknown)))
        return 2
    failed = 0
    for job in JOBS:
        if ("all" in names) or (job.name in names) or (not names and job.shipped):
            try:
                _compile(out_dir, job)
            except Exception as exc:  # noqa: BLE001 - report the kernel and go on with the others
                failed += 1
                print("FAILED", job.name, type(exc).__name__, str(exc)[:300])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), sys.argv[2:]))
