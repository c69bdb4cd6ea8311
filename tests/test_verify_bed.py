"""The soundness bed's own machinery (bench/mutants_layout.py): the static check of every
address a mutant kernel forms."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module(name)


mm, ma, ml = (_bench(n) for n in ("mutants_memory", "mutants_async", "mutants_layout"))


def _problems(*cut: str, threads: int = 32) -> list:
    mut = mm.Mutant(id="t", form="f", scenario="s", truth="equal", cut=cut, edits=(), threads=threads,
                    prologue=ma.PROLOGUE)
    return ml.check(mm.kernel(mut), threads)


# --- the layout check -----------------------------------------------------------------------------
def test_the_faulting_form_of_2026_12_02_is_caught():
    """The v2 store / v4 load off smem+4T that faulted on the H200: lane 1's addresses are 12 and 4."""
    problems = _problems("st.shared.v2.u32 [%rd11+8], {%r10, %r11};",
                         "ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%rd11];")
    assert len(problems) == 2
    assert "thread 1 address smem+12 is not a multiple of 8" in problems[0]
    assert "thread 1 address smem+4 is not a multiple of 16" in problems[1]
    assert _problems("st.shared.v2.u32 [%rd12+8], {%r10, %r11};",
                     "ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%rd12];") == []


@pytest.mark.parametrize("cut, why", [
    (("st.global.v4.u32 [%rd14], {%r10, %r11, %r12, %r13};",), "not a multiple of 16"),
    (("st.shared.u64 [%rd10+68], %rd1;",), "not a multiple of 8"),
    (("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%rd11];",), "not a multiple of 16"),
    (("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd10+8], {%r10};",), "not a multiple of 16"),
    (("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}, "
      "[%rd10+16], 16;",), "not a multiple of 32"),
    (("wmma.load.c.sync.aligned.row.m16n16k16.shared.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd10], 12;",),
     "stride 12×4 bytes"),
    (("cp.async.cg.shared.global [%rd11], [%rd17], 16;",), "not a multiple of 16"),
    (("cp.async.ca.shared.global [%rd18], [%rd14], 8;",), "not a multiple of 8"),
    (("cp.async.bulk.global.shared::cta.bulk_group [%rd17+1024], [%rd12], 8;",), "not a multiple of 16"),
    (("cp.async.bulk.global.shared::cta.bulk_group [%rd14], [%rd12], 16;",), "not a multiple of 16"),
    (("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd24, {%r42}], [%rd12];",), "not a multiple of 128"),
    (("mbarrier.arrive.shared.b64 %rd30, [%rd10+3076];",), "not a multiple of 8"),
    (("ld.shared.u32 %r20, [%rd10+4096];",), "outside smem"),
    (("ld.local.u32 %r20, [%rd15+64];",), "outside lbuf"),
    (("ld.shared.u32 %r20, [%rd3];",), "through .shared"),
    (("ld.global.u64 %rd39, [%rd3];", "ld.global.u32 %r20, [%rd39];"), "not fixed by the bed's layout"),
    (("tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r20}, [%r10];",), "no alignment rule"),
    (("add.u32 %r36, %r2, 2;", "suld.b.1d.b32.trap {%r20}, [%rd5, {%r36}];"), "coordinate %r36"),
    (("add.u32 %r36, %r1, 256;", "tex.1d.v4.s32.s32 {%r20, %r21, %r22, %r23}, [%rd4, {%r36}];"), "coordinate %r36"),
])
def test_each_rule_refuses_what_it_must(cut, why):
    problems = _problems(*cut)
    assert len(problems) == 1 and why in problems[0], problems


def test_the_rules_accept_the_aligned_forms():
    assert _problems("ld.global.v4.u32 {%r20, %r21, %r22, %r23}, [%rd17];", "st.shared.u64 [%rd18], %rd1;",
                     "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r20, %r21, %r22, %r23}, [%rd12];",
                     "cp.async.cg.shared.global [%rd12], [%rd17], 16;",
                     "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd24, {%r42}], [%rd22];",
                     "atom.global.cas.b32 %r21, [%rd14], %r37, %r10;",
                     "suld.b.1d.b32.trap {%r20}, [%rd5, {%r2}];") == []


def test_a_warpgroup_has_128_threads_of_addresses():
    """Thread 127 of a wgmma kernel stores at smem+508: inside; one more word would not be."""
    assert _problems("st.shared.u32 [%rd11], %r10;", threads=128) == []
    assert "thread 127" in _problems("st.shared.u32 [%rd11+3588], %r10;", threads=128)[0]
