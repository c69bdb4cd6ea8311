"""The roles table: one hand-made instruction per operand-role family."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.analysis.roles import NONE, RW0, WRITE0, CALL, MMA, access_bytes, mma_shape, role_of
from splice.ptx import Instruction, parse

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
  .reg .pred %p<8>;
  .reg .b16 %rs<8>;
  .reg .b32 %r<40>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  .reg .b32 hand;
"""


def du_of(line: str):
    k = Kernel(parse(HEAD + "  " + line + "\n  ret;\n}\n"))
    node = next(s.node for s in k.stmts if isinstance(s.node, Instruction) and s.node.opcode != "ret")
    d, u = k.defs_uses(node)
    return d, u


@pytest.mark.parametrize("line, defs, uses", [
    ("add.s32 %r1, %r2, %r3;", ["%r1"], ["%r2", "%r3"]),
    ("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r1, %r2}, {%r3, %r4, %r5, %r6}, "
     "{%r7, %r8}, {%r9, %r9};", ["%r1", "%r2"], ["%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%r9"]),
    ("setp.lt.s32 %p1|%p2, %r1, %r2;", ["%p1", "%p2"], ["%r1", "%r2"]),
    ("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", ["%r1", "%p1"], ["%r2"]),
    ("st.global.u32 [%rd1+16], %r2;", [], ["%rd1", "%r2"]),
    ("st.shared.v4.u32 [%r1], {%r2, %r3, %r4, %r5};", [], ["%r1", "%r2", "%r3", "%r4", "%r5"]),
    ("atom.global.add.u32 %r1, [%rd1], %r2;", ["%r1"], ["%rd1", "%r2"]),
    ("red.global.add.u32 [%rd1], %r2;", [], ["%rd1", "%r2"]),
    ("ld.weak.global.ca.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];", ["%r1", "%r2", "%r3", "%r4"], ["%rd2"]),
    ("ld.global.v2.u16 {%rs1, %rs2}, [%rd2+8];", ["%rs1", "%rs2"], ["%rd2"]),
    ("mov.b32 {%rs1, %rs2}, %r1;", ["%rs1", "%rs2"], ["%r1"]),
    ("mov.b32 %r1, {%rs1, %rs2};", ["%r1"], ["%rs1", "%rs2"]),
    ("@%p1 bra $L1;", [], ["%p1"]),
    ("@!%p2 add.s32 %r1, %r1, 1;", ["%r1"], ["%p2", "%r1"]),
    ("tex.base.2d.v4.f16.s32 {%rs1, %rs2, %rs3, %rs4}, [%rd1, {%r1, %r2}];",
     ["%rs1", "%rs2", "%rs3", "%rs4"], ["%rd1", "%r1", "%r2"]),
    ("sust.b.2d.v4.b16.zero [%rd1, {%r1, %r2}], {%rs1, %rs2, %rs3, %rs4};", [],
     ["%rd1", "%r1", "%r2", "%rs1", "%rs2", "%rs3", "%rs4"]),
    ("mov.u32 %r1, %laneid;", ["%r1"], []),
    ("add.s32 hand, hand, %r2;", ["hand"], ["hand", "%r2"]),
    ("bar.sync 0;", [], []),
    ("cp.async.ca.shared.global [%r1], [%rd1], 16;", [], ["%r1", "%rd1"]),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", ["%r1"], ["%r2"]),
    ("ld.param.u64 %rd1, [k_param_0+8];", ["%rd1"], []),
])
def test_family(line, defs, uses):
    d, u = du_of(line)
    assert d == defs
    assert u == uses


def test_call_returns_and_args():
    src = """.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 r) f(.param .b32 a) { ret; }
.visible .entry k()
{
  .reg .b32 %r<4>;
  call.uni (%r1), f, (%r2);
  ret;
}
"""
    k = Kernel(parse(src), "k")
    node = k.stmts[1].node
    assert k.defs_uses(node) == (["%r1"], ["%r2"])


def test_table_lookups():
    assert role_of("st.global.u32") == NONE
    assert role_of("sust.b.2d.v4.b16.zero") == NONE
    assert role_of("bar.red.popc.u32") == WRITE0
    assert role_of("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == RW0
    assert role_of("call.uni") == CALL
    assert role_of("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16") == MMA
    assert role_of("stacksave.u64") == WRITE0
    assert role_of("redux.sync.add.u32") == WRITE0
    assert mma_shape("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16") == (16, 8, 32)
    assert access_bytes("ld.weak.global.ca.v4.u32") == 16
    assert access_bytes("ld.global.v2.u16") == 4
    assert access_bytes("ld.global.u32") == 4


def test_wgmma_reads_accumulator():
    d, u = du_of("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, "
                 "%rd1, %rd2, 1, 1, 1, 0, 0;")
    assert d == ["%f1", "%f2", "%f3", "%f4"]
    assert u[:4] == ["%f1", "%f2", "%f3", "%f4"] and "%rd1" in u


def test_reg_types():
    k = Kernel(parse(HEAD + "  ret;\n}\n"))
    assert k.reg_type("%r39") == ".b32"
    assert k.reg_type("%r40") is None
    assert k.reg_type("%p3") == ".pred"
    assert k.reg_type("%rd2") == ".b64"
    assert k.reg_type("hand") == ".b32"
