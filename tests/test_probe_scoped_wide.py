"""Cuts inside a ``{ }`` scope and ``.b128`` registers in the probe's harness and stages.

nvcc writes 128-bit atomics as inline asm in a scope of its own (``{ .reg .b128 c, s, r;
mov.b128 c, {..}; atom.global.cas.b128 r, ..; }``), so a cut of those statements (extract
accepts a range inside a scope) has scope-local, 128-bit live-ins and live-outs.  Before:
- the harness declared only the body's registers: ptxas said "Unknown symbol 'c'";
- each ``.b128`` register travelled as one 64-bit row and was stored with ``st.global.b32``
  (ptxas takes a narrower store of a wider register without a word): 4 of its 16 bytes compared;
- a debug stage stored it with ``st.global.b8`` (1 byte of 16), and ``--stages cut`` on a
  kernel without mma phases said "needs a recipe (no cut is known)" though the recipe had one.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "tests" / "data" / "ptx" / "modern" / "atomics_b128_hints.ptx"
SPEC = """name: cas128
ptx: m.ptx
entry: cas128
seed: 1
launch: {grid: [1, 1, 1], block: [32, 1, 1], shared: {dynamic: 0}}
params:
- {name: param_0, kind: buffer, dtype: u8, shape: [1536], role: inout}
- {name: param_1, kind: buffer, dtype: u64, shape: [64], role: input}
- {name: param_2, kind: buffer, dtype: u64, shape: [64], role: output}
frame: all
"""


def _recipe(tmp_path, statements: str, native_edit=None):
    """An identity cut of ``statements`` of cas128 (extract, then apply's recipe), with the
    probe spec beside it; ``native_edit`` changes the extracted native first."""
    shutil.copy(MODULE, tmp_path / "m.ptx")
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "m.yaml").write_text(SPEC)
    assert main(["extract", str(tmp_path / "m.ptx"), "--entry", "cas128", "--statements", statements,
                 "-o", str(tmp_path / "n.ptx")]) == 0
    if native_edit:
        n = tmp_path / "n.ptx"
        n.write_text(native_edit(n.read_text()))
    (tmp_path / "r.yaml").write_text(f"name: b128\nmodule: m.ptx\nentry: cas128\ncuts:\n"
                                     f"  - statements: {statements}\n    native: n.ptx\n")
    from splice.analysis import Kernel
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(tmp_path / "r.yaml"))
    return pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path)


def test_b128_live_outs_travel_as_two_rows_inside_the_cuts_scope(tmp_path):
    from splice.probe.instrument.harness import cases

    pair, k, spec = _recipe(tmp_path, "s13-s14")      # mov.b128 c, {..}; mov.b128 s, {..}
    (hc,) = cases(pair, k, spec)
    assert hc.skipped is None
    assert [t for _r, t, _role in hc.live_out] == [".b128.lo", ".b128.hi"] * 2
    body = hc.orig_ptx
    assert "{ .reg .b128 c, s, r;" in " ".join(body.split())     # the cut's own scope, around it
    assert "mov.b128 {%sphx_w0, %sphx_w1}, c;" in body
    assert "st.global.b64 [%sphx_rd1+2048], %sphx_w1;" in body   # the high half, its own row
    assert "st.global.b32" not in body


def test_a_b128_live_in_is_joined_from_its_two_rows(tmp_path):
    from splice.probe.instrument.harness import cases

    pair, k, spec = _recipe(tmp_path, "s16-s16")      # mov.b128 {%rd1, %rd2}, r;
    (hc,) = cases(pair, k, spec)
    assert [t for _r, t, _role in hc.live_in] == [".b128.lo", ".b128.hi"]
    assert "ld.global.b64 %sphx_w1, [%sphx_rd0+2048]; mov.b128 r, {%sphx_w0, %sphx_w1};" in " ".join(
        hc.orig_ptx.split())


@pytest.mark.needs("ptxas")
def test_the_scoped_b128_harness_compiles(tmp_path):
    from splice.probe.instrument.harness import cases
    from splice.ptx.sass import compile_ptx

    for rng in ("s13-s14", "s16-s16"):
        sub = tmp_path / rng
        sub.mkdir()
        pair, k, spec = _recipe(sub, rng)
        (hc,) = cases(pair, k, spec)
        for text in (hc.orig_ptx, hc.spl_ptx):
            assert compile_ptx(text, "sm_90", 3).cubin


def test_harness_compare_names_the_half_that_differs(tmp_path):
    from splice.probe.instrument.harness import cases, compare_outs

    pair, k, spec = _recipe(tmp_path, "s13-s14")
    (hc,) = cases(pair, k, spec)
    a = np.zeros((4, 8), dtype=np.uint64)
    b = a.copy()
    b[3, 5] = 1 << 40                                 # s, bits 64-127, thread 5
    row = compare_outs(hc, a, b)
    assert not row["equal"] and row["first"]["register"] == "s (bits 64-127)"
    assert row["first"]["thread"] == 5 and row["registers_differ"] == ["s"]


def test_a_b128_stage_is_stored_whole_and_compared_whole(tmp_path):
    from splice.probe.instrument.stages import _stage_code, compare, plan_stages

    pair, k, spec = _recipe(tmp_path, "s13-s14")
    sp = plan_stages(k, pair, "cut", spec)            # no mma phase: the cut's own stage
    (st,) = sp.stages
    assert st.regs == ["c", "s"] and st.width == 16 and st.slot_bytes == 32
    code = _stage_code(st, st.regs, st.types, sp)
    assert "st.global.b128 [%splstg_d1], c;" in code and "st.global.b128 [%splstg_d1+16], s;" in code
    a = np.zeros(sp.total, dtype=np.uint8)
    b = a.copy()
    b[st.offset + 3 * st.slot_bytes + 16 + 15] = 0x80   # thread 3, s, its top byte
    (row,) = compare(sp, a, b)
    assert not row["equal"] and row["first"]["register"] == "s" and row["first"]["thread"] == 3
    assert row["first"]["spliced"] == "0x8" + "0" * 31 and row["values"] == 2 * sp.threads


def test_stages_cut_without_phases_and_without_a_cut_is_still_refused():
    from splice.errors import SpliceError
    from splice.probe.instrument.stages import parse_selection

    assert parse_selection("cut", 0, set(), has_cuts=True) == []
    with pytest.raises(SpliceError, match="no cut is known"):
        parse_selection("cut", 0, set())


def _probe(tmp_path, statements, native_edit=None):
    from splice.probe.run.session import ProbeOptions, run_probe

    pair, _k, _spec = _recipe(tmp_path, statements, native_edit)
    return run_probe(pair, ProbeOptions(runs=3, warmup=1, stages="cut", harness=True,
                                        report_dir=tmp_path)).result


@pytest.mark.gpu
def test_gpu_scoped_b128_identity_cut_is_identical_in_frame_stages_and_harness(tmp_path):
    r = _probe(tmp_path, "s13-s14")
    assert r["identical"], r.get("compare")
    assert r["stages"]["first_divergence"] is None and r["stages"]["rows"][0]["values"] == 64
    (h,) = r["harness"]["rows"]
    assert h["equal"] and h["live_outs"] == 4, h


@pytest.mark.gpu
def test_gpu_a_wrong_high_half_is_caught_by_the_stage_and_the_harness(tmp_path):
    """The native swaps the last two words of s: only bits 64-127 of a .b128 live-out change
    (before, the stage compared 1 byte of it and the harness 4 bytes: both said equal)."""
    def wrong(text):
        return text.replace("mov.b128 %out1, {%in2, %in3};", "mov.b128 %out1, {%in2, %in2};")

    r = _probe(tmp_path, "s13-s14", wrong)
    st = r["stages"]["first_divergence"]
    assert st is not None and st["first"]["register"] == "s", st
    h = r["harness"]["first_divergence"]
    assert h is not None and h["first"]["register"] == "s (bits 64-127)", h


def test_probe_init_sizes_a_buffer_of_128_bit_atomics(tmp_path):
    """``atom.global.cas.b128`` / ``exch.b128`` name no element type the probe knows (there is
    no 16-byte dtype): the access was not recorded and the buffer was written as ``u8``,
    "accessed as -"; it is two 64-bit words an access."""
    import yaml

    from splice.probe.language.init import skeleton

    text, _rows = skeleton(MODULE.read_text(), str(MODULE), "cas128")
    (p0,) = [p for p in yaml.safe_load(text)["params"] if p["name"] == "param_0"]
    assert p0["dtype"] == "u64" and p0["role"] == "inout"
    assert "accessed as .b64 x2" in text


def test_a_module_already_instrumented_is_refused_before_the_gpu():
    """The stage and profile pointers are declared by the probe; a module that already names one
    (instrumented, saved, probed again) was refused by ptxas on the GPU run only."""
    from splice.errors import SpliceError
    from splice.probe.instrument.stages import PTR, insert_code

    text = ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 8 .u64 " + PTR + ";\n"
    with pytest.raises(SpliceError, match="line 4 of the module already names __splice_stage_ptr"):
        insert_code(text, {}, {}, PTR, "debug-stage buffer")
    ok = insert_code(text.replace(PTR, PTR + "_x"), {}, {}, PTR, "debug-stage buffer")
    assert ok.count(PTR + ";") == 1
    # an instruction naming it is found through the model too, and code goes only where a
    # statement ends (a statement written over two lines is not split)
    body = text.replace(".global .align 8 .u64 " + PTR + ";\n", "") + (
        ".visible .entry k()\n{\n\tmov.u64 %rd1,\n\t\t" + PTR + ";\n\tret;\n}\n")
    with pytest.raises(SpliceError, match="line 6 of the module already names"):
        insert_code(body, {}, {}, PTR, "debug-stage buffer")
    two = body.replace(PTR, "x")
    with pytest.raises(SpliceError, match="line 6: inside the statement at line 6"):
        insert_code(two, {}, {6: ["\t// code\n"]}, PTR, "debug-stage buffer")
    done = insert_code(two, {}, {7: ["\t// code\n"]}, PTR, "debug-stage buffer")
    assert done.replace("\t// code\n", "").replace(f"\n// splice probe: debug-stage buffer (set by the host)\n"
                                                   f".global .align 8 .u64 {PTR};\n", "") == two
