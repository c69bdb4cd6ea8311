target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

define void @llvm_gemm_epi(<2 x half> addrspace(1)* %a, <2 x half> addrspace(1)* %b, float addrspace(1)* %out, i32 %k_iters, float %scale) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %bid, 128
  %idx = add i32 %base, %tid
  br label %loop

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %c0 = phi float [ 0.0, %entry ], [ %d0, %loop ]
  %c1 = phi float [ 0.0, %entry ], [ %d1, %loop ]
  %c2 = phi float [ 0.0, %entry ], [ %d2, %loop ]
  %c3 = phi float [ 0.0, %entry ], [ %d3, %loop ]
  %off = mul i32 %i, 512
  %ai = add i32 %idx, %off
  %pa0 = getelementptr <2 x half>, <2 x half> addrspace(1)* %a, i32 %ai
  %a0 = load <2 x half>, <2 x half> addrspace(1)* %pa0
  %pa1 = getelementptr <2 x half>, <2 x half> addrspace(1)* %pa0, i32 32
  %a1 = load <2 x half>, <2 x half> addrspace(1)* %pa1
  %pa2 = getelementptr <2 x half>, <2 x half> addrspace(1)* %pa0, i32 64
  %a2 = load <2 x half>, <2 x half> addrspace(1)* %pa2
  %pa3 = getelementptr <2 x half>, <2 x half> addrspace(1)* %pa0, i32 96
  %a3 = load <2 x half>, <2 x half> addrspace(1)* %pa3
  %pb0 = getelementptr <2 x half>, <2 x half> addrspace(1)* %b, i32 %ai
  %b0 = load <2 x half>, <2 x half> addrspace(1)* %pb0
  %pb1 = getelementptr <2 x half>, <2 x half> addrspace(1)* %pb0, i32 32
  %b1 = load <2 x half>, <2 x half> addrspace(1)* %pb1
  %r = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %b0, <2 x half> %b1, float %c0, float %c1, float %c2, float %c3)
  %d0 = extractvalue { float, float, float, float } %r, 0
  %d1 = extractvalue { float, float, float, float } %r, 1
  %d2 = extractvalue { float, float, float, float } %r, 2
  %d3 = extractvalue { float, float, float, float } %r, 3
  %inext = add i32 %i, 1
  %cont = icmp slt i32 %inext, %k_iters
  br i1 %cont, label %loop, label %epi

epi:
  %s0 = fmul float %d0, %scale
  %s1 = fmul float %d1, %scale
  %s2 = fmul float %d2, %scale
  %s3 = fmul float %d3, %scale
  %m0 = call float @llvm.maxnum.f32(float %s0, float 0.0)
  %m1 = call float @llvm.maxnum.f32(float %s1, float 0.0)
  %m2 = call float @llvm.maxnum.f32(float %s2, float 0.0)
  %m3 = call float @llvm.maxnum.f32(float %s3, float 0.0)
  %o = mul i32 %idx, 4
  %po0 = getelementptr float, float addrspace(1)* %out, i32 %o
  store float %m0, float addrspace(1)* %po0
  %po1 = getelementptr float, float addrspace(1)* %po0, i32 1
  store float %m1, float addrspace(1)* %po1
  %po2 = getelementptr float, float addrspace(1)* %po0, i32 2
  store float %m2, float addrspace(1)* %po2
  %po3 = getelementptr float, float addrspace(1)* %po0, i32 3
  store float %m3, float addrspace(1)* %po3
  ret void
}
declare float @llvm.maxnum.f32(float, float)

!nvvm.annotations = !{!0}
!0 = !{void (<2 x half> addrspace(1)*, <2 x half> addrspace(1)*, float addrspace(1)*, i32, float)* @llvm_gemm_epi, !"kernel", i32 1}
