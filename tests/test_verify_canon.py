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
# %rd stands for a parameter pointer: the same in every thread (rule mem-commute needs that of
# a base; %ra is a per-thread address)
UNIFORM = ("%rd",)


def _eval(g, text):
    from splice.verify.lanes import Lanes

    body = parse(HEAD + text + "\n}\n", "<t>", cache=False).function("k").body.items
    ev = Evaluator(g, lambda s: ("n", "<t>", s.line), lanes=Lanes(g, UNIFORM))
    return ev, ev.run(body)


def same(a: str, b: str, outs=("%o",)) -> bool:
    g = Graph()
    ea, sa = _eval(g, a)
    eb, sb = _eval(g, b)
    if (sa is None) != (sb is None) or ea.outcome(sa) != eb.outcome(sb):
        return False
    return sa is None or all(ea.read(sa, r) == eb.read(sb, r) for r in outs)


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
    ("st.global.v2.u32 [%rd], {%x, %y}; ld.global.u32 %o, [%rd+8];", "ld.global.u32 %o, [%rd+8]; st.global.v2.u32 [%rd], {%x, %y};"),
    # .local is the thread's own: any base
    ("st.local.u32 [%ra], %x; ld.local.u32 %o, [%ra+4];", "ld.local.u32 %o, [%ra+4]; st.local.u32 [%ra], %x;"),
    ("movmatrix.sync.trans.aligned.m8n8.b16 %o, %x;", "movmatrix.sync.aligned.m8n8.trans.b16 %o, %x;"),
    ("mov.u32 %i, %tid.x; mov.u32 %n, %ntid.x; setp.ge.u32 %p, %i, %n; @%p st.global.u32 [%rd], %x; mov.b32 %o, %y;",
     "mov.b32 %o, %y;"),
    ("setp.gt.s32 %p, %ntid.z, %tid.z; selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %x;"),
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
    # mem-commute needs a base the same in every thread: %ra (a live-in of unknown provenance)
    # and tid-based addresses may put another lane's bytes under this lane's disjoint range
    ("st.global.u32 [%ra], %x; st.global.u32 [%ra+4], %y;", "st.global.u32 [%ra+4], %y; st.global.u32 [%ra], %x;"),
    ("st.shared.u32 [%ra+4], %x; ld.shared.u32 %o, [%ra];", "ld.shared.u32 %o, [%ra]; st.shared.u32 [%ra+4], %x;"),
    ("mov.u32 %i, %tid.x; shl.b32 %j, %i, 2; cvt.u64.u32 %q, %j; st.shared.u32 [%q+4], %x; ld.shared.u32 %o, [%q];",
     "mov.u32 %i, %tid.x; shl.b32 %j, %i, 2; cvt.u64.u32 %q, %j; ld.shared.u32 %o, [%q]; st.shared.u32 [%q+4], %x;"),
    # collective and non-coherent accesses never pass a store, whatever their type suffix says
    ("st.shared.u32 [%rd+4], %x; ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%o, %a, %b, %c}, [%rd];",
     "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%o, %a, %b, %c}, [%rd]; st.shared.u32 [%rd+4], %x;"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd], {%x}; ld.shared.u32 %o, [%rd+4];",
     "ld.shared.u32 %o, [%rd+4]; stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd], {%x};"),
    ("st.global.u32 [%rd+4], %x; ld.global.nc.u32 %o, [%rd];", "ld.global.nc.u32 %o, [%rd]; st.global.u32 [%rd+4], %x;"),
    ("st.shared.u32 [%rd+64], %x; wgmma.fence.sync.aligned; ld.shared.u32 %o, [%rd];",
     "wgmma.fence.sync.aligned; st.shared.u32 [%rd+64], %x; ld.shared.u32 %o, [%rd];"),
    ("setp.lt.u32 %p, %x, %y; selp.b32 %o, %x, %z, %p;", "setp.lt.u32 %p, %x, %y; selp.b32 %o, %z, %x, %p;"),
    # positional qualifiers keep their order: layouts of A and B, cvt's destination and source
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%o, %u}, {%a, %b, %c, %d}, {%e, %f}, {%g, %h};",
     "mma.sync.aligned.m16n8k16.col.row.f16.f16.f16.f16 {%o, %u}, {%a, %b, %c, %d}, {%e, %f}, {%g, %h};"),
    ("cvt.u16.u32 %o, %x;", "cvt.u32.u16 %o, %x;"),
    # tid.x against ntid.y, or a combining predicate: no rule
    ("setp.ge.u32 %p, %tid.x, %ntid.y; selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %y;"),
    ("setp.ge.and.u32 %p, %tid.x, %ntid.x, %q; selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %y;"),
    ("setp.ge.u32 %p, %laneid, %ntid.x; selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %y;"),
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
    ev, st = _eval(Graph(), "@%p bra ELSEWHERE; add.s32 %o, %o, 1;")     # a side exit, not the end
    [(target, [x])] = ev.side_exits().items()
    assert target == "ELSEWHERE" and x.reach == ev.read(x, "%p") and st.reach != ev.true
    with pytest.raises(Unsupported):
        _eval(Graph(), "add.s32 %o, %o, 1; trap;")


def test_inlined_func_returning_before_a_branch_target_is_refused():
    from splice.verify.dataflow import State

    mod = parse(".version 8.0\n.target sm_90\n.address_size 64\n.func f()\n{\n.reg .pred %p;\n"
                "@%p bra L;\nret;\nL:\nret;\n}\n", "<f>", cache=False)
    ev = Evaluator(Graph(), lambda s: None)
    ev.in_func = True
    with pytest.raises(Unsupported, match="branches still to merge"):
        ev.run(mod.function("f").body.items, State({}, ev.g.leaf("mem0", None), ev.true))


def test_ret_inside_a_cut_leaves_only_memory():
    early = "st.global.u32 [%rd], %x; setp.lt.u32 %p, %x, %y; @%p ret; st.global.u32 [%rd+4], %y;"
    assert same(early, early.replace("%p", "%q"))
    assert not same(early, early.replace("@%p ret", "@!%p ret"))
    assert not same(early, early.replace("@%p ret;", ""))
    # after an unconditional ret only the memory counts: registers are dead
    assert same("add.s32 %o, %x, 1; st.global.u32 [%rd], %x; ret;", "st.global.u32 [%rd], %x; ret;")


def test_every_table_rule_has_gpu_forms_or_is_structural():
    structural = {"splice-private", "if-convert", "provenance"}
    assert set(RULE_IDS) - structural == set(GPU_FORMS)


@pytest.mark.parametrize("ka,kb,definite", [
    ("add.rn.f32", "add.rz.f32", True),
    ("mul.rn.f32", "mul.rn.ftz.f32", True),
    ("add.rn.sat.f16x2", "add.rn.f16x2", True),
    ("cvt.rn.f16.f32", "cvt.rz.f16.f32", True),
    ("setp.lt.s32", "setp.lt.u32", True),
    ("setp.lt.u32", "setp.le.u32", True),
    ("shfl.sync.bfly.b32", "shfl.sync.down.b32", True),
    ("add.rn.f16x2", "add.rn.bf16x2", True),
    ("add.s32", "sub.s32", True),
    ("mul.lo.s32", "mul.lo.u32", False),          # the low half ignores signedness
    ("setp.eq.s32", "setp.eq.u32", False),
    ("ld.global.f32", "ld.global.u32", False),
    ("cvt.ftz.f32.f16", "cvt.f32.f16", False),    # an f16 subnormal is an f32 normal
    ("cvt.rzi.sat.s32.f32", "cvt.rzi.s32.f32", False),   # float -> int always saturates
    ("mul.f32", "mul.rn.f32", False),             # default rounding (contraction aside)
    ("mad.rn.f32", "fma.rn.f32", False),          # synonyms on sm_20+
    ("ld.global.ca.u32", "ld.global.cg.u32", False),
])
def test_opcode_change_definite_only_where_the_isa_says(ka, kb, definite):
    from splice.verify.explain import opcode_change

    assert opcode_change(ka, kb)[0] is definite


def _verdict(a: str, b: str, out="%o"):
    from splice.verify.explain import first_difference

    g = Graph()
    ea, sa = _eval(g, a)
    eb, sb = _eval(g, b)
    va, vb = ea.read(sa, out), eb.read(sb, out)
    return None if va == vb else first_difference(g, va, vb).definite


def test_masking_operations_stop_a_definite_difference():
    # the shifted-out bits never reach a 16-bit truncation: not "different"
    assert _verdict("shl.b32 %t, %x, 16; cvt.u16.u32 %o, %t;", "shl.b32 %t, %x, 17; cvt.u16.u32 %o, %t;") is False
    assert _verdict("sub.s32 %t, %x, %y; and.b32 %o, %t, 0;", "sub.s32 %t, %y, %x; and.b32 %o, %t, 0;") is False
    # through operations that pass a difference on, it stays definite
    assert _verdict("sub.s32 %t, %x, %y; add.s32 %o, %t, %z;", "sub.s32 %t, %y, %x; add.s32 %o, %t, %z;") is True
    assert _verdict("shfl.sync.bfly.b32 %o, %x, 16, 31, -1;", "shfl.sync.bfly.b32 %o, %x, 15, 31, -1;") is True
    # a register here, a loaded value there: the load may hold it
    assert _verdict("mov.b32 %o, %x;", "ld.global.u32 %o, [%rd];") is False


@pytest.mark.parametrize("a,b", [
    ("ld.volatile.global.u32 %t, [%rd]; ld.volatile.global.u32 %u, [%rd]; add.s32 %o, %t, %u;",
     "ld.volatile.global.u32 %t, [%rd]; add.s32 %o, %t, %t;"),
    ("atom.global.add.u32 %t, [%rd], 1; atom.global.add.u32 %u, [%rd], 1; add.s32 %o, %t, %u;",
     "atom.global.add.u32 %t, [%rd], 1; add.s32 %o, %t, %t;"),
    ("bar.red.popc.u32 %t, 0, %p; bar.red.popc.u32 %u, 0, %p; add.s32 %o, %t, %u;",
     "bar.red.popc.u32 %t, 0, %p; add.s32 %o, %t, %t;"),
    ("mov.u32 %t, %clock; mov.u32 %u, %clock; sub.s32 %o, %u, %t;", "mov.u32 %t, %clock; sub.s32 %o, %t, %t;"),
    ("mov.u32 %t, %clock; mov.b32 %o, %t;", "mov.u32 %o, %clock;"),
])
def test_reads_that_are_events_are_never_merged(a, b):
    assert not same(a, b)


def test_weak_loads_of_one_state_are_one_value():
    assert same("ld.global.u32 %t, [%rd]; ld.global.u32 %u, [%rd]; add.s32 %o, %t, %u;",
                "ld.global.u32 %t, [%rd]; add.s32 %o, %t, %t;")


def _memory_verdict(a: str, b: str):
    from splice.verify.compare import _memory_difference

    g = Graph()
    ea, sa = _eval(g, a)
    eb, sb = _eval(g, b)
    d = _memory_difference(g, sa.mem, sb.mem)
    return None if d is None else d.what


@pytest.mark.parametrize("a,b,what", [
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd+4], %y;", "st.global.u32 [%rd+4], %y;", "dropped"),
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd], %y;", "st.global.u32 [%rd], %y; st.global.u32 [%rd], %x;", "reordered"),
    ("st.global.u32 [%rd], %x;", "st.global.u32 [%rd], %y;", "stored"),
    # hidden by a later store to the same address: the final memory is the same
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd], %y;", "st.global.u32 [%rd], %y;", None),
    ("st.global.u32 [%rd], %x; st.global.u32 [%rd], %y; st.global.u32 [%rd], %z;",
     "st.global.u32 [%rd], %y; st.global.u32 [%rd], %x; st.global.u32 [%rd], %z;", None),
    # storing back what was loaded from the same place
    ("ld.global.u32 %t, [%rd]; st.global.u32 [%rd], %t;", "ld.global.u32 %t, [%rd];", None),
    # a guarded store underneath that differs: nothing definite above it
    ("@%p st.global.u32 [%rd], %x; st.global.u32 [%rd+4], %y;", "@!%p st.global.u32 [%rd], %x;", None),
])
def test_memory_differences_only_when_nothing_hides_them(a, b, what):
    assert _memory_verdict(a, b) == what


def test_every_rule_names_its_ptx_isa_sections_in_the_docs():
    from pathlib import Path

    from splice.verify.table import RULES

    text = (Path(__file__).resolve().parents[1] / "docs" / "verify.md").read_text()
    rows = {ln.split("|")[1].strip(" `"): ln for ln in text.splitlines() if ln.startswith("| `")}
    for rule in RULES:
        assert rule.section and rows[rule.id].rstrip().endswith(f"| {rule.section} |"), rule.id
