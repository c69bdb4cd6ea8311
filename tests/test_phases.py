"""Phases from hand-made PTX: runs, D->C chains, true vs naive shape, weight/bias bytes, slots."""
from __future__ import annotations

from splice.analysis import Kernel
from splice.ptx import parse

MMA = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"

SRC = f""".version 8.0
.target sm_90
.address_size 64
.visible .entry g(.param .align 8 .b8 g_param_0[144])
{{
  .reg .b32 %r<200>;
  .reg .b64 %rd<20>;
  mov.b64 %rd1, g_param_0;
  ld.param.u64 %rd2, [g_param_0+40];
  cvta.to.global.u64 %rd3, %rd2;
  mov.u32 %r1, %laneid;
  mov.u32 %r2, %tid.z;
  mul.wide.u32 %rd4, %r1, 16;
  mul.lo.s32 %r3, %r2, 13824;
  mul.wide.u32 %rd5, %r3, 2;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd6, %rd4;
  ld.weak.global.ca.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd7+320];
  ld.weak.global.ca.v4.u32 {{%r14, %r15, %r16, %r17}}, [%rd7+832];
  mov.u32 %r9, 0;
  {MMA} {{%r20, %r21}}, {{%r30, %r31, %r32, %r33}}, {{%r10, %r11}}, {{%r9, %r9}};
  {MMA} {{%r22, %r23}}, {{%r30, %r31, %r32, %r33}}, {{%r12, %r13}}, {{%r9, %r9}};
  {MMA} {{%r24, %r25}}, {{%r30, %r31, %r32, %r33}}, {{%r14, %r15}}, {{%r9, %r9}};
  {MMA} {{%r26, %r27}}, {{%r30, %r31, %r32, %r33}}, {{%r16, %r17}}, {{%r9, %r9}};
  shl.b32 %r40, %r1, 2;
  and.b32 %r41, %r40, 12;
  cvt.u64.u32 %rd8, %r41;
  add.s64 %rd9, %rd3, %rd8;
  ld.global.u32 %r50, [%rd9+1000];
  ld.global.u32 %r51, [%rd9+1016];
  add.s64 %rd10, %rd3, %rd4;
  ld.weak.global.ca.v4.u32 {{%r60, %r61, %r62, %r63}}, [%rd10+2048];
  ld.weak.global.ca.v4.u32 {{%r64, %r65, %r66, %r67}}, [%rd10+2560];
  {MMA} {{%r70, %r71}}, {{%r20, %r21, %r22, %r23}}, {{%r60, %r61}}, {{%r50, %r51}};
  {MMA} {{%r72, %r73}}, {{%r20, %r21, %r22, %r23}}, {{%r62, %r63}}, {{%r50, %r51}};
  {MMA} {{%r70, %r71}}, {{%r24, %r25, %r26, %r27}}, {{%r64, %r65}}, {{%r70, %r71}};
  {MMA} {{%r72, %r73}}, {{%r24, %r25, %r26, %r27}}, {{%r66, %r67}}, {{%r72, %r73}};
  st.global.v4.u32 [%rd3], {{%r70, %r71, %r72, %r73}};
  ret;
}}
"""


def kernel():
    return Kernel(parse(SRC))


def test_runs_and_ranges():
    k = kernel()
    ph = k.phases
    assert [(p.index, p.first, p.last, len(p.mma)) for p in ph] == [(1, 14, 17, 4), (2, 27, 30, 4)]
    assert ph[0].epilogue == (18, 26)
    assert ph[1].epilogue == (31, 32)


def test_dense_phase():
    p = kernel().phase(1)
    assert p.chains == [[14], [15], [16], [17]]
    assert p.tiles == (1, 4, 1)
    assert p.shape == (16, 32, 32) and p.naive_shape == (16, 32, 32)
    assert p.grid == "full" and p.consistent


def test_band_phase_chains():
    p = kernel().phase(2)
    assert p.chains == [[27, 29], [28, 30]]
    assert p.tiles == (1, 2, 2)
    assert p.shape == (16, 16, 64)
    assert p.naive_shape == (32, 32, 64)
    assert p.grid == "band" and p.consistent
    assert p.c_regs == ["%r50", "%r51"]           # chain links are not inputs
    assert p.d_regs == ["%r70", "%r71", "%r72", "%r73"]


def test_weight_bias_slot():
    k = kernel()
    p1, p2 = k.phases
    assert p1.weight_bytes == (320, 844) and p1.slot_stride == 27648
    assert p1.b_source == "W" and p1.c_source == "zero" and p1.bias_bytes is None
    assert p2.weight_bytes == (2048, 2572) and p2.slot_stride is None
    assert p2.bias_bytes == (1000, 1016) and p2.c_source == "W"


def test_phase_abi_roles():
    k = kernel()
    abi = k.phase_abi(2)
    roles = [(r.role, r.reg) for r in abi.live_in]
    assert roles == [("a", r) for r in ["%r20", "%r21", "%r22", "%r23", "%r24", "%r25", "%r26", "%r27"]] \
        + [("b", f"%r6{i}") for i in range(8)] + [("c", "%r50"), ("c", "%r51")]
    assert [(r.role, r.index, r.reg) for r in abi.live_out] == \
        [("d", 0, "%r70"), ("d", 1, "%r71"), ("d", 2, "%r72"), ("d", 3, "%r73")]
    # phase 1: only D registers read later are outputs
    a1 = k.phase_abi(1)
    assert [r.reg for r in a1.live_out] == ["%r20", "%r21", "%r22", "%r23", "%r24", "%r25", "%r26", "%r27"]
    assert a1.values["%r10"] == "ld.global [W + 27648·tid.z + 16·laneid + 320]"
