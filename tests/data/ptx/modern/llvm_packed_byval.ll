; Read 2026-12-01: LLVM-NVPTX (llc 14) of a packed byval struct whose fields are not aligned (LLVM reads
; each unaligned field byte by byte: ld.param.u8 + shl/or), kernel pointers with .ptr
; attributes in four state spaces, and an f64 field at an odd offset.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.P = type <{ i8, i32, i16, float, double }>

define void @packed_fields(%struct.P* byval(%struct.P) align 1 %p, float addrspace(1)* align 16 %out,
                           float addrspace(1)* noalias readonly align 8 %in) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %fn = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 1
  %n = load i32, i32* %fn, align 1
  %fs = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 2
  %s = load i16, i16* %fs, align 1
  %fx = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 3
  %x = load float, float* %fx, align 1
  %fd = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 4
  %d = load double, double* %fd, align 1
  %ff = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 0
  %flag = load i8, i8* %ff, align 1
  %inb = icmp slt i32 %tid, %n
  br i1 %inb, label %body, label %exit
body:
  %idx = sext i32 %tid to i64
  %pi = getelementptr inbounds float, float addrspace(1)* %in, i64 %idx
  %v = load float, float addrspace(1)* %pi, align 4
  %sx = sext i16 %s to i32
  %sf = sitofp i32 %sx to float
  %m = fmul float %v, %x
  %a = fadd float %m, %sf
  %df = fptrunc double %d to float
  %a2 = fadd float %a, %df
  %fl = icmp ne i8 %flag, 0
  %r = select i1 %fl, float %a2, float %v
  %po = getelementptr inbounds float, float addrspace(1)* %out, i64 %idx
  store float %r, float addrspace(1)* %po, align 4
  br label %exit
exit:
  ret void
}

define void @ptr_spaces(float addrspace(1)* align 16 %g, float addrspace(3)* align 8 %s,
                        float addrspace(4)* align 4 %c, float* %gen, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %ps = getelementptr inbounds float, float addrspace(3)* %s, i64 %idx
  %vs = load float, float addrspace(3)* %ps, align 4
  %pc = getelementptr inbounds float, float addrspace(4)* %c, i64 %idx
  %vc = load float, float addrspace(4)* %pc, align 4
  %pn = getelementptr inbounds float, float* %gen, i64 %idx
  %vn = load float, float* %pn, align 4
  %sum = fadd float %vs, %vc
  %sum2 = fadd float %sum, %vn
  %pg = getelementptr inbounds float, float addrspace(1)* %g, i64 %idx
  store float %sum2, float addrspace(1)* %pg, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0, !1}
!0 = !{void (%struct.P*, float addrspace(1)*, float addrspace(1)*)* @packed_fields, !"kernel", i32 1}
!1 = !{void (float addrspace(1)*, float addrspace(3)*, float addrspace(4)*, float*, i32)* @ptr_spaces, !"kernel", i32 1}
