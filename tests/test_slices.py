"""analysis.slices: which values the harness can recompute by replaying the kernel's own
statements (Triton's grouped program ids, CUTLASS swizzles), and why the others cannot be."""
from __future__ import annotations

import pytest

PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 k_p0, .param .u32 k_m)
{
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<8>;
\t.reg .pred %p<3>;
\tld.param.u32 %r1, [k_m];
\tmov.u32 %r2, %ctaid.x;
\tdiv.u32 %r3, %r2, 8;
\trem.u32 %r4, %r2, 8;
\tmov.u32 %r5, %tid.x;
\tshr.u32 %r6, %r5, 1;
\tand.b32 %r7, %r6, 16;
\tmad.lo.s32 %r8, %r3, %r1, %r4;
\tor.b32 %r9, %r8, %r7;
\tsetp.lt.s32 %p1, %r9, %r1;
\tld.param.u64 %rd1, [k_p0];
\tld.global.u32 %r10, [%rd1];
\tadd.s32 %r11, %r10, %r9;
\t@%p1 mov.u32 %r12, 7;
\tmov.u32 %r13, 0;
$L_loop:
\tadd.s32 %r13, %r13, 1;
\tsetp.lt.u32 %p2, %r13, %r9;
\t@%p2 bra $L_loop;
\tmov.u32 %r14, %clock;
\tadd.s32 %r15, %r9, %r11;
\tadd.s32 %r16, %r12, %r13;
\tadd.s32 %r17, %r14, %r9;
\tret;
}
"""


@pytest.fixture(scope="module")
def k():
    from splice.analysis import Kernel
    from splice.ptx import parse

    return Kernel(parse(PTX, "s.ptx"), "k")


def _at(k, text):
    return next(i for i, st in enumerate(k.stmts) if text in str(st.node))


def _src(k, ps):
    return [k.module.source[k.stmts[p].node.span[0]:k.stmts[p].node.span[1]].split()[0] for p in ps]


def test_div_rem_swizzle_and_param_replay_in_order(k):
    from splice.analysis.slices import replay_slice

    pos = _at(k, "'%r15'")
    ps, why = replay_slice(k, "%r9", pos)
    assert why is None and ps == sorted(ps)
    assert _src(k, ps) == ["ld.param.u32", "mov.u32", "div.u32", "rem.u32", "mov.u32", "shr.u32",
                           "and.b32", "mad.lo.s32", "or.b32"]


def test_values_that_are_not_a_function_of_the_position(k):
    from splice.analysis.slices import replay_slice

    ps, why = replay_slice(k, "%r11", _at(k, "'%r15'"))
    assert ps is None and "ld.global.u32 reads memory" in why
    ps, why = replay_slice(k, "%r12", _at(k, "'%r16'"))
    assert ps is None and "guarded" in why
    ps, why = replay_slice(k, "%r13", _at(k, "'%r16'"))
    assert ps is None and ("cycle" in why or "no single reaching definition" in why)
    ps, why = replay_slice(k, "%r14", _at(k, "'%r17'"))
    assert ps is None and "%clock" in why
