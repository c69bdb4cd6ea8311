"""Triton kernels of the second unseen-kernel sweep (triton 3.9.0, no GPU, PTX ISA pinned to 9.0
as in gen_triton.py): split-K matmul reducing with atomics, a layernorm backward with an
atomic_cas spin lock, tl.device_print (vprintf), tl.inline_asm_elementwise, tl.cumsum / tl.sort,
a Blackwell (sm_100a, tcgen05) matmul, a two-warpgroup bf16 wgmma matmul and dot_scaled.

Usage: TRITON_PTXAS_PATH=$(which ptxas) python gen_triton_round2.py [OUTDIR] [NAME...]
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def matmul_splitk(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    c = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.atomic_add(c, acc, sem="relaxed")


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
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def matmul_ptr(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


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


def _compile(out_dir, fn, signature, constexprs, name, cap, div16=(), **options):
    opts = {"ptx_version": 90}
    opts.update(options)
    names = list(signature)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in div16}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=opts)
    with open(os.path.join(out_dir, name), "w") as f:
        f.write(k.asm["ptx"])
    print("wrote", name, len(k.asm["ptx"]))


def jobs():
    mm = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "SPLIT_K": "constexpr"}
    d16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    yield ("triton_matmul_splitk_atomic_sm80.ptx", matmul_splitk, mm,
           {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "SPLIT_K": 4}, 80, d16, dict(num_warps=4, num_stages=2))
    ln = {"DX": "*fp32", "DY": "*fp16", "DW": "*fp32", "DB": "*fp32", "X": "*fp16", "W": "*fp32",
          "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32",
          "GROUP": "constexpr", "BLOCK": "constexpr"}
    yield ("triton_layernorm_bwd_lock_sm90.ptx", layernorm_bwd_dwdb, ln, {"GROUP": 32, "BLOCK": 1024}, 90,
           ("DX", "DY", "DW", "DB", "X", "W", "stride"), dict(num_warps=8))
    ps = {"x_ptr": "*fp32", "y_ptr": "*fp32", "idx_ptr": "*i32", "n": "i32", "scale": "fp32", "BLOCK": "constexpr"}
    yield ("triton_print_asm_scan_sm90.ptx", print_asm_scan, ps, {"BLOCK": 256}, 90, (), dict(num_warps=4))
    tma = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield ("triton_matmul_tcgen05_sm100a.ptx", matmul_tma_blackwell, tma,
           {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 100, (), dict(num_warps=4, num_stages=3))
    mp = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "K": "i32", "stride_am": "i32",
          "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
          "BLOCK_K": "constexpr"}
    yield ("triton_matmul_bf16_2wg_sm90a.ptx", matmul_ptr, mp, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
           90, ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm"), dict(num_warps=8, num_stages=3))
    ds = {"a_ptr": "*fp8e4nv", "a_scale": "*u8", "b_ptr": "*fp8e4nv", "b_scale": "*u8", "out_ptr": "*fp32",
          "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    yield ("triton_dot_scaled_sm90a.ptx", dot_scaled_mx, ds, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128},
           90, ("a_ptr", "a_scale", "b_ptr", "b_scale", "out_ptr"), dict(num_warps=4))
    yield ("triton_dot_scaled_sm100a.ptx", dot_scaled_mx, ds, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128},
           100, ("a_ptr", "a_scale", "b_ptr", "b_scale", "out_ptr"), dict(num_warps=4))


def main(out_dir, only=()):
    for name, fn, sig, ce, cap, d16, opts in jobs():
        if only and name not in only:
            continue
        try:
            _compile(out_dir, fn, sig, ce, name, cap, d16, **opts)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print("FAILED", name, type(exc).__name__, str(exc)[:300])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), sys.argv[2:])
