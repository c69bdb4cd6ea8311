"""The equivalence table rule by rule, on small PTX fragments: each rule makes its two forms
one value, and each near miss (a non-commutative swap, a partial pack, an aliasing reorder)
stays two."""
from __future__ import annotations

import pytest

from splice.ptx import parse
from splice.verify.canon import Graph
from splice.verify.dataflow import Evaluator, Unsupported
from splice.verify.table import GPU_FORMS, RULE_IDS

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n"


def _eval(g, text):
    body = parse(HEAD + text + "\n}\n", "<t>", cache=False).function("k").body.items
    ev = Evaluator(g, lambda s: ("n", "<t>", s.line))
    return ev, ev.run(body)


def same(a: str, b: str, outs=("%o",)) -> bool:
    g = Graph()
    ea, sa = _eval(g, a)
    eb, sb = _eval(g, b)
    return all(ea.read(sa, r) == eb.read(sb, r) for r in outs) and sa.mem == sb.mem


@pytest.mark.parametrize("a,b", [
    ("add.s32 %o, %x, %y;", "add.s32 %o, %y, %x;"),
    ("add.rn.f32 %o, %x, %y;", "add.rn.f32 %o, %y, %x;"),
    ("mul.rn.f16x2 %o, %x, %y;", "mul.rn.f16x2 %o, %y, %x;"),
    ("fma.rn.f32 %o, %x, %y, %z;", "fma.rn.f32 %o, %y, %x, %z;"),
    ("mad.lo.s32 %o, %x, %y, %z;", "mad.lo.s32 %o, %y, %x, %z;"),
    ("setp.eq.f32 %p, %x, %y; selp.b32 %o, 1, 0, %p;", "setp.eq.f32 %p, %y, %x; selp.b32 %o, 1, 0, %p;"),
    ("mov.b32 %t, %x; mov.b32 %u, %t; add.s32 %o, %u, 1;", "add.s32 %o, %x, 1;"),
    ("add.s32 %t, %x, 5; sub.u32 %o, %t, 7;", "add.u32 %o, %x, -2;"),
    ("add.s32 %o, %x, 4294967295;", "sub.s32 %o, %x, 1;"),
    ("mov.b32 {%h0, %h1}, %x; mov.b32 %o, {%h0, %h1};", "mov.b32 %o, %x;"),
    ("mov.b32 %t, {%h0, %h1}; mov.b32 {%a, %b}, %t; mov.b32 %o, {%b, %a};", "mov.b32 %o, {%h1, %h0};"),
    ("add.s64 %q, %rd, 8; ld.global.u32 %o, [%q+4];", "ld.weak.global.u32 %o, [%rd+12];"),
    ("st.global.f32 [%rd], %x;", "st.global.b32 [%rd], %x;"),
    ("setp.lt.u32 %p, %x, %y; mov.b32 %o, %z; @%p mov.b32 %o, %x;", "setp.lt.u32 %p, %x, %y; selp.b32 %o, %x, %z, %p;"),
    ("setp.lt.u32 %p, %x, %y; not.pred %q, %p; selp.b32 %o, %x, %z, %q;", "setp.lt.u32 %p, %x, %y; selp.b32 %o, %z, %x, %p;"),
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd+4], %y;", "st.global.u32 [%rd+4], %y; st.global.u32 [%rd], %x;"),
    ("st.global.u32 [%rd], %x; ld.global.u32 %o, [%rd+4];", "ld.global.u32 %o, [%rd+4]; st.global.u32 [%rd], %x;"),
])
def test_rule_makes_forms_equal(a, b):
    assert same(a, b)


@pytest.mark.parametrize("a,b", [
    ("sub.s32 %o, %x, %y;", "sub.s32 %o, %y, %x;"),
    ("fma.rn.f32 %o, %x, %y, %z;", "fma.rn.f32 %o, %z, %y, %x;"),
    ("min.f32 %o, %x, %y;", "min.f32 %o, %y, %x;"),
    ("add.rn.f32 %o, %x, %y;", "add.rz.f32 %o, %x, %y;"),
    ("add.f32 %o, %x, %y;", "add.rn.f32 %o, %x, %y;"),
    ("add.cc.u32 %o, %x, %y;", "add.cc.u32 %o, %y, %x;"),
    ("mul.rn.f32 %t, %x, %y; add.rn.f32 %o, %t, %z;", "fma.rn.f32 %o, %x, %y, %z;"),
    ("add.rn.f32 %t, %x, %y; add.rn.f32 %o, %t, %z;", "add.rn.f32 %t, %y, %z; add.rn.f32 %o, %x, %t;"),
    # a 64-bit register unpacked into four halves: two of them are not the register
    ("mov.b64 {%h0, %h1, %h2, %h3}, %rd; mov.b32 %o, {%h0, %h1};", "mov.b32 %o, %rd;"),
    ("mov.b32 {%h0, %h1}, %x; mov.b32 %o, {%h1, %h0};", "mov.b32 %o, %x;"),
    ("add.s32 %t, %x, 1; ld.shared.u32 %o, [%t];", "ld.shared.u32 %o, [%x+1];"),
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd], %y;", "st.global.u32 [%rd], %y; st.global.u32 [%rd], %x;"),
    ("st.global.u32 [%rd], %x; st.global.u32 [%rq], %y;", "st.global.u32 [%rq], %y; st.global.u32 [%rd], %x;"),
    ("st.global.u32 [%rd], %x; ld.global.u32 %o, [%rd+2];", "ld.global.u32 %o, [%rd+2]; st.global.u32 [%rd], %x;"),
    ("st.shared.u32 [%rd], %x; ld.global.u32 %o, [%rd+4];", "ld.global.u32 %o, [%rd+4]; st.shared.u32 [%rd], %x;"),
    ("st.volatile.global.u32 [%rd], %x; st.global.u32 [%rd+4], %y;", "st.global.u32 [%rd+4], %y; st.volatile.global.u32 [%rd], %x;"),
    ("st.global.u32 [%rd], %x; bar.sync 0; st.global.u32 [%rd+4], %y;", "st.global.u32 [%rd+4], %y; bar.sync 0; st.global.u32 [%rd], %x;"),
    ("st.global.u32 [%rd+4], %y; atom.global.add.u32 %t, [%rq], 1; st.global.u32 [%rd], %x;",
     "st.global.u32 [%rd], %x; atom.global.add.u32 %t, [%rq], 1; st.global.u32 [%rd+4], %y;"),
    ("st.global.u32 [%rd], %x;", ""),
    ("setp.lt.u32 %p, %x, %y; selp.b32 %o, %x, %z, %p;", "setp.lt.u32 %p, %x, %y; selp.b32 %o, %z, %x, %p;"),
])
def test_near_misses_stay_different(a, b):
    assert not same(a, b)


def test_nested_scope_register_is_another_register():
    inner = "mov.b32 %o, %x; { .reg .b32 %o; mov.b32 %o, %y; }"
    assert same(inner, "mov.b32 %o, %x;")
    assert not same(inner, "mov.b32 %o, %y;")


def test_forward_branches_are_if_converted_and_loops_refused():
    branchy = "setp.lt.u32 %p, %x, %y; mov.b32 %o, %x; @%p bra L1; add.s32 %o, %x, %y; L1: add.s32 %o, %o, 1;"
    assert same(branchy, branchy.replace("L1", "L9"))
    assert not same(branchy, branchy.replace("@%p", "@!%p"))
    with pytest.raises(Unsupported, match="loop"):
        _eval(Graph(), "L0: add.s32 %o, %o, 1; setp.lt.u32 %p, %o, %y; @%p bra L0;")
    with pytest.raises(Unsupported, match="outside"):
        _eval(Graph(), "@%p bra ELSEWHERE; add.s32 %o, %o, 1;")
    with pytest.raises(Unsupported):
        _eval(Graph(), "add.s32 %o, %o, 1; ret;")


def test_every_table_rule_has_gpu_forms_or_is_structural():
    structural = {"splice-private", "if-convert", "provenance"}
    assert set(RULE_IDS) - structural == set(GPU_FORMS)
