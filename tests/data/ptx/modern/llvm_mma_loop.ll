; Read 2026-11-30: LLVM-NVPTX (llc 14) from hand-written IR: an mma.sync m16n8k16 K loop whose
; accumulators are phis, A/B fragments from ldmatrix on an addrspace(3) tile, <4 x float>
; and <2 x half> vectors, a select-based epilogue, and a second kernel with a switch in a loop.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [1024 x i32] zeroinitializer, align 16

declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
declare { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(i8 addrspace(3)*)
declare { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(i8 addrspace(3)*)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()

define void @mma_loop(<4 x i32> addrspace(1)* %a, <4 x float> addrspace(1)* %out, i32 %ktiles, float %alpha) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = getelementptr [1024 x i32], [1024 x i32] addrspace(3)* @tile, i32 0, i32 0
  %lane8 = and i32 %tid, 31
  %soff = shl i32 %lane8, 2
  %sp = getelementptr i32, i32 addrspace(3)* %base, i32 %soff
  %sp8 = bitcast i32 addrspace(3)* %sp to i8 addrspace(3)*
  %sp4 = bitcast i32 addrspace(3)* %sp to <4 x i32> addrspace(3)*
  br label %loop

loop:
  %k = phi i32 [ 0, %entry ], [ %k.next, %loop ]
  %c0 = phi float [ 0.0, %entry ], [ %d0, %loop ]
  %c1 = phi float [ 0.0, %entry ], [ %d1, %loop ]
  %c2 = phi float [ 0.0, %entry ], [ %d2, %loop ]
  %c3 = phi float [ 0.0, %entry ], [ %d3, %loop ]
  %gidx = add i32 %k, %tid
  %gp = getelementptr <4 x i32>, <4 x i32> addrspace(1)* %a, i32 %gidx
  %v = load <4 x i32>, <4 x i32> addrspace(1)* %gp, align 16
  store <4 x i32> %v, <4 x i32> addrspace(3)* %sp4, align 16
  call void @llvm.nvvm.barrier0()
  %fa = call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(i8 addrspace(3)* %sp8)
  %fb = call { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(i8 addrspace(3)* %sp8)
  %a0 = extractvalue { i32, i32, i32, i32 } %fa, 0
  %a1 = extractvalue { i32, i32, i32, i32 } %fa, 1
  %a2 = extractvalue { i32, i32, i32, i32 } %fa, 2
  %a3 = extractvalue { i32, i32, i32, i32 } %fa, 3
  %b0 = extractvalue { i32, i32 } %fb, 0
  %b1 = extractvalue { i32, i32 } %fb, 1
  %h0 = bitcast i32 %a0 to <2 x half>
  %h1 = bitcast i32 %a1 to <2 x half>
  %h2 = bitcast i32 %a2 to <2 x half>
  %h3 = bitcast i32 %a3 to <2 x half>
  %g0 = bitcast i32 %b0 to <2 x half>
  %g1 = bitcast i32 %b1 to <2 x half>
  %d = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %h0, <2 x half> %h1, <2 x half> %h2, <2 x half> %h3, <2 x half> %g0, <2 x half> %g1, float %c0, float %c1, float %c2, float %c3)
  %d0 = extractvalue { float, float, float, float } %d, 0
  %d1 = extractvalue { float, float, float, float } %d, 1
  %d2 = extractvalue { float, float, float, float } %d, 2
  %d3 = extractvalue { float, float, float, float } %d, 3
  call void @llvm.nvvm.barrier0()
  %k.next = add i32 %k, 1
  %more = icmp slt i32 %k.next, %ktiles
  br i1 %more, label %loop, label %done

done:
  %e0 = fmul float %d0, %alpha
  %e1 = fmul float %d1, %alpha
  %neg = fcmp olt float %d2, 0.0
  %e2 = select i1 %neg, float 0.0, float %d2
  %e3 = fadd float %d3, %alpha
  %v0 = insertelement <4 x float> undef, float %e0, i32 0
  %v1 = insertelement <4 x float> %v0, float %e1, i32 1
  %v2 = insertelement <4 x float> %v1, float %e2, i32 2
  %v3 = insertelement <4 x float> %v2, float %e3, i32 3
  %oidx = add i32 %tid, %cta
  %op = getelementptr <4 x float>, <4 x float> addrspace(1)* %out, i32 %oidx
  store <4 x float> %v3, <4 x float> addrspace(1)* %op, align 16
  ret void
}

define void @switch_loop(i32 addrspace(1)* %p, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]
  %acc = phi i32 [ %tid, %entry ], [ %acc.next, %latch ]
  %sel = and i32 %i, 7
  switch i32 %sel, label %dflt [ i32 0, label %c0
                                 i32 1, label %c1
                                 i32 2, label %c2
                                 i32 5, label %c5 ]
c0:
  %x0 = mul i32 %acc, 3
  br label %latch
c1:
  %x1 = xor i32 %acc, 1234567
  br label %latch
c2:
  %x2 = lshr i32 %acc, 3
  br label %latch
c5:
  %x5 = sub i32 0, %acc
  br label %latch
dflt:
  %xd = add i32 %acc, %i
  br label %latch
latch:
  %acc.next = phi i32 [ %x0, %c0 ], [ %x1, %c1 ], [ %x2, %c2 ], [ %x5, %c5 ], [ %xd, %dflt ]
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %head, label %exit
exit:
  %q = getelementptr i32, i32 addrspace(1)* %p, i32 %tid
  store i32 %acc.next, i32 addrspace(1)* %q
  ret void
}

!nvvm.annotations = !{!0, !1}
!0 = !{void (<4 x i32> addrspace(1)*, <4 x float> addrspace(1)*, i32, float)* @mma_loop, !"kernel", i32 1}
!1 = !{void (i32 addrspace(1)*, i32)* @switch_loop, !"kernel", i32 1}
