"""Liveness across labels, branches, guarded definitions, loops, ret/exit; the cut ABI."""
from __future__ import annotations

from splice.analysis import Kernel
from splice.ptx import attach, parse

SRC = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [k_param_0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 7;
  mov.u32 %r3, 9;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_else;
  add.s32 %r4, %r2, 1;
  bra $L_join;
$L_else:
  add.s32 %r4, %r3, 2;
$L_join:
  mov.u32 %r5, 0;
$L_loop:
  add.s32 %r5, %r5, %r4;
  setp.lt.s32 %p2, %r5, 100;
  @%p2 bra $L_loop;
  @%p1 mov.u32 %r5, 1;
  st.global.u32 [%rd1], %r5;
  mov.u32 %r6, 5;
  ret;
}
"""


def k():
    return Kernel(parse(SRC))


def test_stmts_equal_attach():
    kk = k()
    assert kk.stmts == attach(kk.module, "k")


def test_numbers_and_types():
    kk = k()
    assert kk.stmt(1).node.opcode == "ld"
    assert kk.reg_type("%r4") == ".b32" and kk.reg_type("%p1") == ".pred"


def test_both_branch_arms_keep_their_inputs_live():
    kk = k()
    lv = kk.liveness
    pos_bra = kk.pos_of(6)        # @%p1 bra $L_else
    assert lv.live_after("%r2", pos_bra) and lv.live_after("%r3", pos_bra)
    # after the then-arm's add, %r3 is dead on that path (bra $L_join skips the else arm)
    assert not lv.live_after("%r3", kk.pos_of(7))
    assert lv.live_after("%r4", kk.pos_of(7))


def test_loop_carries_liveness():
    kk = k()
    lv = kk.liveness
    loop_add = kk.pos_of(14)      # add.s32 %r5, %r5, %r4
    assert lv.live_before("%r4", loop_add)
    assert lv.live_after("%r4", kk.pos_of(16))   # the back edge keeps %r4 live
    assert lv.live_after("%p1", kk.pos_of(16))   # used by the guarded mov after the loop
    assert not lv.live_after("%r4", kk.pos_of(17))


def test_guarded_def_does_not_kill():
    kk = k()
    assert kk.liveness.live_before("%r5", kk.pos_of(17))  # @%p1 mov.u32 %r5, 1 may not happen


def test_dead_after_ret():
    kk = k()
    assert not kk.liveness.live_after("%r6", kk.pos_of(19))


def test_abi_of_branchy_range_counts_side_entries():
    kk = k()
    abi = kk.abi(7, 12)           # then-arm, bra, $L_else (entered from s6), else-arm, join
    assert {r.reg for r in abi.live_in} == {"%r2", "%r3"}
    assert {r.reg for r in abi.live_out} == {"%r4", "%r5"}
    assert all(r.type == ".b32" for r in abi.live_in)


def test_abi_defined_before_use_is_not_input():
    kk = k()
    abi = kk.abi(2, 5)            # mov %r1, %tid.x ... setp %p1, %r1, 0
    assert abi.live_in == []
    assert [r.reg for r in abi.live_out] == ["%r2", "%r3", "%p1"]   # %r1 is dead after s5
    assert [r.type for r in abi.live_out] == [".b32", ".b32", ".pred"]


def test_guard_address_and_guarded_def_in_abi():
    kk = k()
    abi = kk.abi(17, 19)          # @%p1 mov %r5, 1; st.global [%rd1], %r5; mov %r6, 5
    assert [r.reg for r in abi.live_in] == ["%p1", "%rd1", "%r5"]
    assert abi.live_out == []
    assert abi.values["%rd1"] == "param_0+0"


SCOPED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry s(.param .u64 s_param_0)
{
  .reg .b32 %r<4>;
  .reg .b16 lo;
  mov.b16 lo, 3;
  {
  .reg .b16 lo, hi;
  mov.b32 {lo, hi}, %r1;
  mov.b32 %r2, {hi, lo};
  }
  cvt.u32.u16 %r3, lo;
  st.global.u32 [%r3], %r2;
  ret;
}
"""


def test_nested_scope_registers_are_distinct():
    kk = Kernel(parse(SCOPED))
    lv = kk.liveness
    # the outer `lo` stays live across the block that declares its own `lo`
    first = kk.pos_of(1)
    assert lv.live_after("lo", first)
    abi = kk.abi(2, 3)
    assert [r.reg for r in abi.live_in] == ["%r1"]
    assert [r.reg for r in abi.live_out] == ["%r2"]
    assert kk.reg_type("hi") == ".b16"
