"""recipes/perf/reorder.py: re-scheduling a native's statements keeps every dependence; roots
come just in time; rematerialised loads get fresh registers; repeats are merged; fences go where
asked."""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PERF = ROOT / "recipes" / "perf"


@pytest.fixture(scope="module")
def RO():
    sys.path.insert(0, str(PERF))
    try:
        spec = importlib.util.spec_from_file_location("_perf_reorder", PERF / "reorder.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_perf_reorder"] = mod      # dataclasses look their module up by name
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(PERF))


NATIVE = """\
// splice-native:
//   params: {}
//   scratch: {a: .b32, b: .b32, c: .b32, d: .b32, e: .b32, p0: .b16, p1: .b16, q: .b32, r: .b32, x: .b64}
add.s64 %x, %in0, 512;
ld.shared.u32 %a, [%in1];
ld.shared.u32 %b, [%in1+4];
add.f16x2 %c, %a, %b;
cvt.rn.satfinite.e4m3x2.f16x2 %p0, %c;
cvt.rn.satfinite.e4m3x2.f16x2 %p1, %c;
mov.b32 %q, {%p0, %p1};
st.shared.u32 [%in1+8], %q;
ld.shared.u32 %d, [%in1+8];
mul.f16x2 %e, %d, %a;
ld.global.u32 %r, [%x];
add.f16x2 %out0, %e, %r;
"""


def prog(RO, text=NATIVE):
    return RO.load(text, "<t>", {"%in0": ".b64", "%in1": ".b32", "%out0": ".b32"})


def order_ok(RO, p, em) -> None:
    """Every dependence of the original order holds in the emitted order."""
    pos = {}
    for k, e in enumerate(em):
        pos.setdefault(e.stmt.i, k)
    preds = RO.dependences(p.stmts)
    for s in p.stmts:
        for q in preds[s.i]:
            assert pos[q] < pos[s.i], (q, s.i)


def test_dependences_registers_and_memory(RO):
    p = prog(RO)
    d = RO.dependences(p.stmts)
    assert d[3] == {1, 2}              # the add after the loads of its operands
    assert d[7] == {6, 1, 2}           # the store after its value and after the loads before it
    assert d[8] == {7}                 # a load after the store before it
    assert d[10] == {0, 7}             # its address, and the store before it
    assert d[11] == {9, 10}
    assert 7 not in d[9]               # arithmetic is not ordered against memory


def test_schedule_respects_every_dependence(RO):
    p = prog(RO)
    rng = random.Random(3)
    for _ in range(50):
        roots = list(range(len(p.stmts)))
        rng.shuffle(roots)
        em = RO.schedule(p, [roots[:4], roots[4:]])
        assert sorted(e.stmt.i for e in em) == list(range(len(p.stmts)))
        order_ok(RO, p, em)


def test_root_just_in_time(RO):
    """A root comes right after what it needs; the rest keeps its original order after it."""
    p = prog(RO)
    em = RO.schedule(p, [[3]])
    assert [e.stmt.i for e in em] == [1, 2, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11]


def test_remat_clone_in_a_later_group(RO):
    """A load emitted in one group and read in a later one is emitted again, into fresh scratch;
    the later reader reads the clone."""
    p = prog(RO)
    em = RO.schedule(p, [[3], [9]], remat=[1])
    clones = [e for e in em if e.clone]
    assert len(clones) == 1 and clones[0].stmt.i == 1
    text = RO.render_native(p, em)
    body = [ln for ln in text.splitlines() if not ln.startswith("//")]
    fresh = clones[0].renames["%a"]
    assert f"ld.shared.u32 {fresh}, [%in1];" in body
    assert any(ln.startswith("mul.f16x2 %e, %d, " + fresh) for ln in body)
    assert f"{fresh[1:]}: .b32" in text          # declared as scratch


def test_remat_refuses_a_side_effect(RO):
    p = prog(RO)
    with pytest.raises(ValueError):
        RO.Scheduler(p, remat=[7])


def test_merge_repeats_keeps_the_first(RO):
    """The second cvt repeats the first (same opcode, same operand): dropped, its reader reads
    the first's result."""
    p = prog(RO)
    assert RO.merge_repeats(p) == 1 and len(p.stmts) == 11
    body = RO.render_native(p, RO.schedule(p, [])).split("//   scratch:")[1]
    assert "%p1" not in body.split("\n", 1)[1] and "mov.b32 %q, {%p0, %p0};" in body


def test_merge_leaves_loads_and_side_effects(RO):
    text = (NATIVE.replace("x: .b64}", "x: .b64, y: .b32}")
            + "ld.shared.u32 %y, [%in1+4];\nst.shared.u32 [%in1+8], %q;\n")
    p = prog(RO, text)
    RO.merge_repeats(p)
    names = [s.node.name for s in p.stmts if isinstance(s.node, RO.m.Instruction)]
    assert names.count("ld.shared.u32") == 4 and names.count("st.shared.u32") == 2


def test_flush_emits_only_what_is_light(RO):
    p = prog(RO)
    sch = RO.Scheduler(p)
    sch.emit(2)
    n = sch.flush([3, 11], lambda s: s.mem != "load")
    assert n == 0                                  # 3 still needs load 1
    sch.emit(1)
    assert sch.flush([3, 11], lambda s: s.mem != "load") == 1


def test_fences_after_positions(RO):
    p = prog(RO)
    em = RO.schedule(p, [])
    text = RO.render_native(p, em, fences_after=[3, 7])
    body = text.split("//   scratch:")[1].splitlines()[1:]
    assert sum("%clock64" in ln for ln in body) == 2
    assert "wparam: 40" in text and "fq: .pred" in text


def test_nested_block_names_declared_again(RO):
    text = NATIVE.replace("mul.f16x2 %e, %d, %a;", "{\n.reg .f16 low, high;\nmov.b32 {low, high}, %d;\n"
                          "mov.b32 %e, {high, low};\n}")
    p = prog(RO, text)
    out = RO.render_native(p, RO.schedule(p, []))
    assert ".reg .f16 low;" in out and ".reg .f16 high;" in out
