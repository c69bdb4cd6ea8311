; LLVM 14 llc -march=nvptx64 -mcpu=sm_70 -mattr=+ptx61: .version 6.1 / .target sm_70 (older PTX
; headers than every other file), the LLVM NVVM wmma intrinsics (m16n16k16 f16 -> f32 in a K loop
; that must not unroll: .pragma "nounroll"; an m32n8k16 tile once), and nvvm.annotations
; maxntid / minctasm / maxnreg on the kernel.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%h8 = type { <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half> }
%f8 = type { float, float, float, float, float, float, float, float }

declare %h8 @llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16.p1i8(i8 addrspace(1)*, i32)
declare %h8 @llvm.nvvm.wmma.m16n16k16.load.b.col.stride.f16.p1i8(i8 addrspace(1)*, i32)
declare %f8 @llvm.nvvm.wmma.m16n16k16.mma.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float, float, float, float, float)
declare void @llvm.nvvm.wmma.m16n16k16.store.d.row.stride.f32.p1i8(i8 addrspace(1)*, float, float, float, float, float, float, float, float, i32)
declare %h8 @llvm.nvvm.wmma.m32n8k16.load.a.row.stride.f16.p1i8(i8 addrspace(1)*, i32)
declare %h8 @llvm.nvvm.wmma.m32n8k16.load.b.col.stride.f16.p1i8(i8 addrspace(1)*, i32)
declare %f8 @llvm.nvvm.wmma.m32n8k16.mma.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float, float, float, float, float)
declare void @llvm.nvvm.wmma.m32n8k16.store.d.row.stride.f32.p1i8(i8 addrspace(1)*, float, float, float, float, float, float, float, float, i32)

define void @wmma_loop(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i32 %ksteps) {
entry:
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %c0 = phi float [ 0.0, %entry ], [ %d0, %loop ]
  %c1 = phi float [ 0.0, %entry ], [ %d1, %loop ]
  %c2 = phi float [ 0.0, %entry ], [ %d2, %loop ]
  %c3 = phi float [ 0.0, %entry ], [ %d3, %loop ]
  %c4 = phi float [ 0.0, %entry ], [ %d4, %loop ]
  %c5 = phi float [ 0.0, %entry ], [ %d5, %loop ]
  %c6 = phi float [ 0.0, %entry ], [ %d6, %loop ]
  %c7 = phi float [ 0.0, %entry ], [ %d7, %loop ]
  %off = mul i32 %k, 32
  %offw = sext i32 %off to i64
  %pa = getelementptr i8, i8 addrspace(1)* %a, i64 %offw
  %pb = getelementptr i8, i8 addrspace(1)* %b, i64 %offw
  %fa = call %h8 @llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16.p1i8(i8 addrspace(1)* %pa, i32 64)
  %fb = call %h8 @llvm.nvvm.wmma.m16n16k16.load.b.col.stride.f16.p1i8(i8 addrspace(1)* %pb, i32 64)
  %a0 = extractvalue %h8 %fa, 0
  %a1 = extractvalue %h8 %fa, 1
  %a2 = extractvalue %h8 %fa, 2
  %a3 = extractvalue %h8 %fa, 3
  %a4 = extractvalue %h8 %fa, 4
  %a5 = extractvalue %h8 %fa, 5
  %a6 = extractvalue %h8 %fa, 6
  %a7 = extractvalue %h8 %fa, 7
  %b0 = extractvalue %h8 %fb, 0
  %b1 = extractvalue %h8 %fb, 1
  %b2 = extractvalue %h8 %fb, 2
  %b3 = extractvalue %h8 %fb, 3
  %b4 = extractvalue %h8 %fb, 4
  %b5 = extractvalue %h8 %fb, 5
  %b6 = extractvalue %h8 %fb, 6
  %b7 = extractvalue %h8 %fb, 7
  %d = call %f8 @llvm.nvvm.wmma.m16n16k16.mma.row.col.f32.f32(<2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %a4, <2 x half> %a5, <2 x half> %a6, <2 x half> %a7, <2 x half> %b0, <2 x half> %b1, <2 x half> %b2, <2 x half> %b3, <2 x half> %b4, <2 x half> %b5, <2 x half> %b6, <2 x half> %b7, float %c0, float %c1, float %c2, float %c3, float %c4, float %c5, float %c6, float %c7)
  %d0 = extractvalue %f8 %d, 0
  %d1 = extractvalue %f8 %d, 1
  %d2 = extractvalue %f8 %d, 2
  %d3 = extractvalue %f8 %d, 3
  %d4 = extractvalue %f8 %d, 4
  %d5 = extractvalue %f8 %d, 5
  %d6 = extractvalue %f8 %d, 6
  %d7 = extractvalue %f8 %d, 7
  %k1 = add i32 %k, 1
  %more = icmp slt i32 %k1, %ksteps
  br i1 %more, label %loop, label %done, !llvm.loop !10
done:
  call void @llvm.nvvm.wmma.m16n16k16.store.d.row.stride.f32.p1i8(i8 addrspace(1)* %c, float %d0, float %d1, float %d2, float %d3, float %d4, float %d5, float %d6, float %d7, i32 16)
  ret void
}

define void @wmma_m32n8k16(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c) {
  %fa = call %h8 @llvm.nvvm.wmma.m32n8k16.load.a.row.stride.f16.p1i8(i8 addrspace(1)* %a, i32 16)
  %fb = call %h8 @llvm.nvvm.wmma.m32n8k16.load.b.col.stride.f16.p1i8(i8 addrspace(1)* %b, i32 16)
  %a0 = extractvalue %h8 %fa, 0
  %a1 = extractvalue %h8 %fa, 1
  %a2 = extractvalue %h8 %fa, 2
  %a3 = extractvalue %h8 %fa, 3
  %a4 = extractvalue %h8 %fa, 4
  %a5 = extractvalue %h8 %fa, 5
  %a6 = extractvalue %h8 %fa, 6
  %a7 = extractvalue %h8 %fa, 7
  %b0 = extractvalue %h8 %fb, 0
  %b1 = extractvalue %h8 %fb, 1
  %b2 = extractvalue %h8 %fb, 2
  %b3 = extractvalue %h8 %fb, 3
  %b4 = extractvalue %h8 %fb, 4
  %b5 = extractvalue %h8 %fb, 5
  %b6 = extractvalue %h8 %fb, 6
  %b7 = extractvalue %h8 %fb, 7
  %d = call %f8 @llvm.nvvm.wmma.m32n8k16.mma.row.col.f32.f32(<2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %a4, <2 x half> %a5, <2 x half> %a6, <2 x half> %a7, <2 x half> %b0, <2 x half> %b1, <2 x half> %b2, <2 x half> %b3, <2 x half> %b4, <2 x half> %b5, <2 x half> %b6, <2 x half> %b7, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0, float 0.0)
  %d0 = extractvalue %f8 %d, 0
  %d1 = extractvalue %f8 %d, 1
  %d2 = extractvalue %f8 %d, 2
  %d3 = extractvalue %f8 %d, 3
  %d4 = extractvalue %f8 %d, 4
  %d5 = extractvalue %f8 %d, 5
  %d6 = extractvalue %f8 %d, 6
  %d7 = extractvalue %f8 %d, 7
  call void @llvm.nvvm.wmma.m32n8k16.store.d.row.stride.f32.p1i8(i8 addrspace(1)* %c, float %d0, float %d1, float %d2, float %d3, float %d4, float %d5, float %d6, float %d7, i32 8)
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5}
!0 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*, i32)* @wmma_loop, !"kernel", i32 1}
!1 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*, i32)* @wmma_loop, !"maxntidx", i32 128}
!2 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*, i32)* @wmma_loop, !"minctasm", i32 2}
!3 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*, i32)* @wmma_loop, !"maxnreg", i32 64}
!4 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*)* @wmma_m32n8k16, !"kernel", i32 1}
!5 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i8 addrspace(1)*)* @wmma_m32n8k16, !"reqntidx", i32 32}
!10 = distinct !{!10, !11}
!11 = !{!"llvm.loop.unroll.disable"}
