"""The one operand traversal (splice.ptx.operands): children, registers, destinations, mapping."""
from __future__ import annotations

from splice.ptx import model as m
from splice.ptx import operands as ops
from splice.ptx import parse

SRC = """.version 8.7
.target sm_90
.address_size 64
.visible .entry e(.param .u64 p)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  ld.global.v2.u32 {%r1, %r2}, [%rd1+16];
  setp.lt.s32 %p1|%p2, %r1, %tid.x;
  st.global.u32 [%rd2], %r3;
  @!%p1 bra $L;
$L:
  ret;
}
"""


def _instrs():
    fn = parse(SRC).entries()[0]
    return [s for s in m.walk(fn.body.items) if isinstance(s, m.Instruction)]


def test_every_operand_class_has_a_row():
    classes = {m.Reg, m.Sym, m.Imm, m.Offset, m.Not, m.Pair, m.Vec, m.Addr, m.ParenList}
    assert set(ops.SHAPE) == classes
    assert set(ops.LEAVES) == {m.Reg, m.Sym, m.Imm}


def test_registers_and_destinations():
    ld, setp, st, bra, _ret = _instrs()
    assert ops.written_in_dest(ld.operands[0], []) == ["%r1", "%r2"]
    assert ops.read_in_dest(ld.operands[0], []) == []
    assert ops.registers(ld.operands[1]) == ["%rd1"]
    assert ops.written_in_dest(setp.operands[0], []) == ["%p1", "%p2"]
    assert ops.registers(setp.operands[2]) == []          # %tid.x is special
    assert ops.read_in_dest(st.operands[0], []) == ["%rd2"]
    assert ops.written_in_dest(st.operands[0], []) == []
    assert ops.registers(bra.operands[0]) == ["$L"] and ops.registers(bra.operands[0], syms=False) == []


def test_map_operand_rebuilds_only_what_changes():
    ld = _instrs()[0]
    addr = ld.operands[1]
    assert ops.map_operand(addr, lambda x: x) is addr
    ren = ops.map_operand(addr, lambda x: m.Reg("%rd9") if x == m.Reg("%rd1") else x)
    assert ren == m.Addr((m.Offset(m.Reg("%rd9"), "16"),))
    assert ops.children(m.Pair(m.Reg("%p1"), m.Reg("%p2"))) == (m.Reg("%p1"), m.Reg("%p2"))
