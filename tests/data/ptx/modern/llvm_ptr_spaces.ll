; LLVM-NVPTX kernel with parameters pointing into other state spaces, vector parameters by
; value, addrspacecast, a weak global and a linkonce function (unseen kernels, 2026-12-01).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@wtab = weak addrspace(1) global [4 x float] [float 1.0, float 2.0, float 3.0, float 4.0], align 16
@ctab = internal addrspace(4) constant [4 x i32] [i32 3, i32 1, i32 4, i32 1], align 16
@sbuf = internal addrspace(3) global [256 x float] undef, align 16

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

define linkonce_odr float @scale(float %x, <4 x float> %v) {
  %a = extractelement <4 x float> %v, i32 0
  %b = extractelement <4 x float> %v, i32 3
  %m = fmul float %x, %a
  %r = fadd float %m, %b
  ret float %r
}

; out: global; shared_in: a pointer into shared memory; cst: a pointer into constant memory;
; v: a <4 x float> by value; h: <2 x half> by value; n: i16
define void @ptr_spaces(float addrspace(1)* %out, float addrspace(3)* %shared_in, i32 addrspace(4)* %cst,
                        <4 x float> %v, <2 x half> %h, i16 %n, float* %generic) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %sp = getelementptr float, float addrspace(3)* %shared_in, i64 %t64
  %sv = load float, float addrspace(3)* %sp, align 4
  %cp = getelementptr i32, i32 addrspace(4)* %cst, i64 %t64
  %cv = load i32, i32 addrspace(4)* %cp, align 4
  %cvf = sitofp i32 %cv to float
  %dsp = getelementptr [256 x float], [256 x float] addrspace(3)* @sbuf, i64 0, i64 %t64
  store float %sv, float addrspace(3)* %dsp, align 4
  call void @llvm.nvvm.barrier0()
  %gen = addrspacecast [256 x float] addrspace(3)* @sbuf to [256 x float]*
  %x1 = xor i64 %t64, 1
  %gp = getelementptr [256 x float], [256 x float]* %gen, i64 0, i64 %x1
  %nb = load float, float* %gp, align 4
  %s = call float @scale(float %nb, <4 x float> %v)
  %h0 = extractelement <2 x half> %h, i32 1
  %hf = fpext half %h0 to float
  %n32 = sext i16 %n to i32
  %nf = sitofp i32 %n32 to float
  %w4 = and i64 %t64, 3
  %wp = getelementptr [4 x float], [4 x float] addrspace(1)* @wtab, i64 0, i64 %w4
  %wv = load float, float addrspace(1)* %wp, align 4
  %gq = getelementptr float, float* %generic, i64 %t64
  %gv = load float, float* %gq, align 4
  %a1 = fadd float %s, %hf
  %a2 = fadd float %a1, %nf
  %a3 = fmul float %a2, %wv
  %a4 = fadd float %a3, %cvf
  %a5 = fadd float %a4, %gv
  %op = getelementptr float, float addrspace(1)* %out, i64 %t64
  store float %a5, float addrspace(1)* %op, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2}
!0 = !{void (float addrspace(1)*, float addrspace(3)*, i32 addrspace(4)*, <4 x float>, <2 x half>, i16, float*)* @ptr_spaces, !"kernel", i32 1}
!1 = !{void (float addrspace(1)*, float addrspace(3)*, i32 addrspace(4)*, <4 x float>, <2 x half>, i16, float*)* @ptr_spaces, !"maxntidx", i32 256}
!2 = !{void (float addrspace(1)*, float addrspace(3)*, i32 addrspace(4)*, <4 x float>, <2 x half>, i16, float*)* @ptr_spaces, !"minctasm", i32 2}
