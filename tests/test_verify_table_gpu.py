"""The equivalence table confirmed on the GPU: both forms of every entry of
``splice.verify.table.GPU_FORMS`` run over random and special inputs (NaN with different
payloads, ±inf, ±0, subnormals, integer extremes) and their output bits must be identical.

The kernels are checked by ptxas on any machine (``test_forms_assemble``); the comparison
itself needs cupy and a CUDA device (gpu marker)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from splice.verify.table import GPU_FORMS

N = 1 << 16
FORMS = [(rule, i, t, a, b) for rule, forms in GPU_FORMS.items() for i, (t, a, b) in enumerate(forms)]
IDS = [f"{rule}-{i}" for rule, i, _t, _a, _b in FORMS]

_HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry verify_form(.param .u64 px, .param .u64 py, .param .u64 pz, .param .u64 po,
                            .param .u64 pm)
{
\t.reg .b32 %x, %y, %z, %o, %t, %i;
\t.reg .b16 %h0, %h1, %h2, %h3;
\t.reg .pred %p, %q;
\t.reg .b64 %a, %s, %rd<8>;
\tmov.u32 %i, %ctaid.x;
\tmov.u32 %t, %ntid.x;
\tmov.u32 %o, %tid.x;
\tmad.lo.u32 %i, %i, %t, %o;
\tmul.wide.u32 %rd0, %i, 4;
\tld.param.u64 %rd1, [px];
\tadd.s64 %rd1, %rd1, %rd0;
\tld.global.u32 %x, [%rd1];
\tld.param.u64 %rd1, [py];
\tadd.s64 %rd1, %rd1, %rd0;
\tld.global.u32 %y, [%rd1];
\tld.param.u64 %rd1, [pz];
\tadd.s64 %rd1, %rd1, %rd0;
\tld.global.u32 %z, [%rd1];
\tmul.wide.u32 %rd2, %i, 16;
\tld.param.u64 %a, [pm];
\tadd.s64 %a, %a, %rd2;
\tmov.u32 %o, 0;
"""
_TAIL = """
\tld.param.u64 %rd1, [po];
\tadd.s64 %rd1, %rd1, %rd0;
\tst.global.u32 [%rd1], %o;
\tret;
}
"""


def kernel(form: str) -> str:
    body = form.split("ADDR:", 1)[-1]
    return _HEAD + "\t" + body.strip() + _TAIL


def _special(type_: str, rng) -> np.ndarray:
    """N 32-bit words: random bits, then special values of the form's type."""
    words = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    if type_ == ".f32":
        sp = [0x7FC00000, 0x7FC00001, 0xFFC12345, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000,
              0x80000000, 0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x00800000]
    elif type_ == ".b32":   # f16x2 halves
        halves = [0x7E00, 0x7E01, 0xFE55, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x83FF,
                  0x3C00, 0xBC00, 0x7BFF, 0x0400]
        sp = [(h << 16) | l for h in halves for l in halves]
    else:
        sp = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 2, 0xFFFFFFFE]
    sp = np.array(sp, dtype=np.uint32)
    words[: len(sp) * 64] = np.resize(sp, len(sp) * 64)[rng.permutation(len(sp) * 64)]
    return words


@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("rule,i,type_,a,b", FORMS, ids=IDS)
def test_forms_assemble(rule, i, type_, a, b, tmp_path):
    from splice.ptx.sass import require_tool

    for k, form in enumerate((a, b)):
        src = tmp_path / f"f{k}.ptx"
        src.write_text(kernel(form))
        r = subprocess.run([require_tool("ptxas"), "-arch=sm_90", str(src), "-o", str(tmp_path / f"f{k}.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("rule,i,type_,a,b", FORMS, ids=IDS)
def test_forms_give_identical_bits(rule, i, type_, a, b, tmp_path):
    import cupy as cp

    rng = np.random.default_rng(1234 + i)
    ins = [cp.asarray(_special(type_, rng)) for _ in range(3)]
    mem0 = rng.integers(0, 1 << 32, N * 4, dtype=np.uint64).astype(np.uint32)
    outs = []
    for k, form in enumerate((a, b)):
        src = tmp_path / f"form{k}.ptx"
        src.write_text(kernel(form))
        fn = cp.RawModule(path=str(src)).get_function("verify_form")
        out = cp.zeros(N, dtype=cp.uint32)
        mem = cp.asarray(mem0)
        fn((N // 256,), (256,), (ins[0], ins[1], ins[2], out, mem))
        cp.cuda.runtime.deviceSynchronize()
        outs.append((out.get(), mem.get()))
    assert np.array_equal(outs[0][0], outs[1][0]), f"{rule}: outputs differ"
    assert np.array_equal(outs[0][1], outs[1][1]), f"{rule}: memory differs"
