"""Symbolic address tracking: param fields, laneid/tid/ctaid terms, tables, shared arrays."""
from __future__ import annotations

import subprocess

import pytest

from splice.analysis import Kernel
from splice.analysis.spec import param_fields, shared_arrays, table_loads, weight_image_bytes
from splice.ptx import parse, sass

SRC = """.version 8.0
.target sm_90
.address_size 64
.visible .entry p(.param .align 8 .b8 p_param_0[144])
{
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .shared .align 4 .b8 _ZZ1pE4smem[4096];
  mov.b64 %rd1, p_param_0;
  add.s64 %rd2, %rd1, 80;
  ld.param.u64 %rd3, [%rd2+-40];
  ld.param.u64 %rd4, [%rd2+-72];
  mov.u32 %r1, %laneid;
  mov.u32 %r2, %tid.z;
  mov.u32 %r3, %ctaid.x;
  mul.wide.u32 %rd5, %r1, 16;
  mad.lo.s32 %r4, %r2, 13824, %r3;
  mul.wide.u32 %rd6, %r4, 2;
  add.s64 %rd7, %rd3, %rd6;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd8+8512];
  ld.global.v4.u32 {%r14, %r15, %r16, %r17}, [%rd3+64];
  shl.b32 %r5, %r1, 2;
  and.b32 %r6, %r5, 12;
  cvt.u64.u32 %rd9, %r6;
  add.s64 %rd10, %rd3, %rd9;
  ld.global.v2.u16 {%r20, %r21}, [%rd10+100];
  mov.u32 %r7, _ZZ1pE4smem;
  shl.b32 %r8, %r1, 4;
  add.s32 %r9, %r7, %r8;
  st.shared.v4.u32 [%r9+512], {%r10, %r11, %r12, %r13};
  ld.shared.u32 %r22, [%r9];
  ld.global.u32 %r23, [%rd4];
  ret;
}
"""


def k():
    return Kernel(parse(SRC))


def texts(kk):
    return {a.n: a.text for a in kk.provenance.accesses}


def test_weight_field_and_terms():
    kk = k()
    assert kk.provenance.weight_atom == "param_0+40"
    t = texts(kk)
    assert t[13] == "W + 27648·tid.z + 2·ctaid.x + 16·laneid + 8512"
    assert t[14] == "W + 64"
    assert t[19] == "W + ((laneid<<2)&12) + 100"
    assert t[23] == "smem + 16·laneid + 512"
    assert t[24] == "smem + 16·laneid"
    assert t[25] == "param_0+8"


def test_param_fields_through_negative_offsets():
    from splice.analysis.vocab import Profile, field_names

    kk = k()
    fields = {(f["offset"], f["name"]) for f in param_fields(kk)}
    assert fields == {(40, None), (8, None)}       # neutral: no profile asks for W
    named = field_names(kk, Profile("p.yaml", ("*",), {}, ("weight-image",)))
    assert {(f["offset"], f["name"]) for f in param_fields(kk, named)} == {(40, "W"), (8, None)}


def test_extent_tables_shared():
    kk = k()
    assert weight_image_bytes(kk) == 8512 + 16
    tabs = table_loads(kk)
    assert [(t["bytes"], t["loads"]) for t in tabs] == [([100, 100], 1)]
    sh = shared_arrays(kk)
    assert sh["smem"]["bytes"] == 4096
    assert sh["smem"]["stores"] == [23] and sh["smem"]["loads"] == [24]


def test_values_in_abi():
    kk = k()
    abi = kk.abi(13, 13)
    assert abi.values["%rd8"] == "W + 27648·tid.z + 2·ctaid.x + 16·laneid"


CU = r"""
extern "C" __global__ void w(const unsigned char* __restrict__ W, unsigned* out) {
  unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  const unsigned char* base = W + threadIdx.z * 27648u + lane * 16u;
  unsigned a, b, c, d, e, f;
  asm volatile("ld.weak.global.ca.v4.u32 {%0,%1,%2,%3},[%4];"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(base + 8512));
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%2,%2,%2}, {%3,%4}, {%5,%5};"
               : "=r"(e), "=r"(f) : "r"(lane), "r"(a), "r"(b), "r"(0u));
  out[lane] = e + f + c + d;
}
"""


@pytest.mark.needs("nvcc")
def test_nvcc_compiled_weight_address(tmp_path):
    cu = tmp_path / "w.cu"
    cu.write_text(CU)
    ptx = tmp_path / "w.ptx"
    subprocess.run([sass.require_tool("nvcc"), "-arch=sm_90", "-ptx", str(cu), "-o", str(ptx)], check=True)
    kk = Kernel.load(ptx)
    p = kk.phase(1)
    assert p.weight_bytes == (8512, 8512 + 12)
    assert p.slot_stride == 27648
    ld = [a for a in kk.provenance.accesses if a.space == "global" and a.kind == "ld"]
    assert ld and ld[0].text == "W + 27648·tid.z + 16·laneid + 8512"
    assert kk.provenance.weight_atom == "param_0+0"


# ---- no state shared between kernels: analysing A first never changes B's result ----------

_B = """.version 8.0
.target sm_90
.address_size 64
.visible .entry b(.param .u64 b_param_0)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [b_param_0];
  mov.u32 %r1, %clock;
  mov.u32 %r2, %laneid;
  shl.b32 %r3, %r2, 4;
  add.s32 %r4, %r3, %r1;
  cvt.u64.u32 %rd2, %r4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  and.b32 %r6, %r5, 255;
  or.b32 %r7, %r6, 256;
  st.global.u32 [%rd3+4], %r7;
  ret;
}
"""
# A's shared array is spelled like a special register (``clock``): with process-global
# "pointer" state, analysing A first reordered B's terms.
_A = """.version 8.0
.target sm_90
.address_size 64
.visible .entry a(.param .u64 a_param_0)
{
  .shared .align 4 .b8 _ZZ1aE5clock[64];
  .reg .b32 %r<4>;
  mov.u32 %r1, _ZZ1aE5clock;
  mov.u32 %r2, %laneid;
  and.b32 %r3, %r2, 3;
  st.shared.u32 [%r1], %r3;
  ret;
}
"""


def _b_result():
    from splice.analysis.spec import build_spec

    kb = Kernel(parse(_B, "b.ptx", cache=False))
    return texts(kb), build_spec(kb, phases=True, epilogues=True)


def test_analysing_a_first_does_not_change_b():
    alone = _b_result()
    assert alone[0][8] == "param_0+0 + 16·laneid + clock"
    Kernel(parse(_A, "a.ptx", cache=False)).provenance.accesses
    assert _b_result() == alone


def test_stand_in_layer_then_modern_module_same_spec():
    """The issue's check on real modules: dec1 analysed before a modern file leaves the modern
    file's spec (phases, provenance, epilogues) exactly as it is when analysed alone."""
    from pathlib import Path

    from splice.analysis.spec import build_spec

    root = Path(__file__).resolve().parents[1]
    dec1 = root / "corpus" / "dec1.ptx"
    modern = root / "tests" / "data" / "ptx" / "modern" / "calls_params_globals.ptx"
    if not dec1.exists() or not modern.exists():
        pytest.skip("corpus/dec1.ptx or the modern sample is missing")

    def spec_of(path):
        return [build_spec(Kernel(parse(path.read_text(), str(path), cache=False), f.name),
                           phases=True, epilogues=True)
                for f in parse(path.read_text(), str(path)).entries() if f.body is not None]

    alone = spec_of(modern)
    k = Kernel(parse(dec1.read_text(), str(dec1)))
    k.provenance.accesses
    k.phases
    assert spec_of(modern) == alone
