"""splice probe without a GPU: PNG writer, frame comparison, debug-stage plan and instrumentation
(ptxas accepts it; everything else byte-identical), phase-harness generation, timing statistics,
the roofline micro-kernel, and the CLI's user errors."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest


ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- png / compare

def test_png_roundtrip_and_heat():
    from splice.report.png import decode, encode, heat

    rgb = np.random.default_rng(1).integers(0, 256, (9, 13, 3), dtype=np.uint8)
    assert (decode(encode(rgb)) == rgb).all()
    g = np.arange(60, dtype=np.uint8).reshape(6, 10)
    assert (decode(encode(g)) == g).all()
    assert encode(g)[:8] == b"\x89PNG\r\n\x1a\n"
    h = heat(np.array([[0, 1], [10, 1000]]))
    assert h.shape == (2, 2, 3) and (h[0, 0] == 0).all() and (h[1, 1] == 255).all()
    with pytest.raises(ValueError):
        encode(np.zeros((2, 2, 4), dtype=np.uint8))


def test_f16_ulp_distance():
    from splice.probe.run.compare import ulp_distance

    f = np.array([1.0, -0.0, 0.0, 65504.0], dtype=np.float16).view(np.uint16)
    g = np.array([np.nextafter(np.float16(1.0), np.float16(2.0)), 0.0, -0.0, 65504.0],
                 dtype=np.float16).view(np.uint16)
    assert list(ulp_distance(f, g)) == [1, 0, 0, 0]
    a = np.array([np.float16(1e-7)], dtype=np.float16).view(np.uint16)      # across zero
    b = np.array([-np.float16(1e-7)], dtype=np.float16).view(np.uint16)
    assert ulp_distance(a, b)[0] == 2 * int(a[0])


def test_compare_frames_reports_first_xy_and_bytes(tmp_path):
    from splice.commands.probe import write_maps
    from splice.probe.run.compare import compare_frames, coverage

    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, (8, 16, 4)).astype(np.float16).view(np.uint16)
    assert compare_frames(a, a.copy())["identical"]
    b = a.copy()
    b[3, 5, 1] += 7          # 7 ULP
    b[6, 2, 0] += 1
    r = compare_frames(a, b)
    assert not r["identical"] and r["pixels_differ"] == 2 and r["max_ulp"] == 7
    assert r["first_xy"] == [5, 3] and r["bytes_differ"] in (2, 3, 4)
    assert r["ulp_map"].shape == (8, 16) and r["ulp_map"][3, 5] == 7
    p = write_maps({"frame": r["ulp_map"]}, tmp_path, "d")["frame"]     # the command layer writes PNGs
    assert Path(p).read_bytes()[:4] == b"\x89PNG"
    c = a.copy()
    c[1, 1] = 0xFFFF
    assert coverage(c, 0xFFFF)["uncovered"] == 1 and coverage(c, 0xFFFF)["first_uncovered"] == [1, 1]


# ---------------------------------------------------------------------------- stages

@pytest.fixture(scope="module")
def enc5_pair():
    from splice.analysis import Kernel
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    pair = resolve(str(ROOT / "tests/data/recipes/enc5_p8_call.yaml"))
    return pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path)


def test_resolve_recipe_finds_spec(enc5_pair):
    pair, _, spec = enc5_pair
    assert pair.spec_path.name == "enc5.yaml" and spec.entry == pair.entry
    assert pair.spliced != pair.original and len(pair.cuts) == 1 and pair.cuts[0].phase == 8


def test_stage_plan_layout_is_aligned_and_injective(enc5_pair):
    from splice.probe.instrument.stages import ALIGN, parse_selection, plan_stages

    pair, k, spec = enc5_pair
    assert parse_selection("cut", 61, {8}) == [7, 8, 9]
    assert parse_selection("1-3,61", 61, set()) == [1, 2, 3, 61]
    sp = plan_stages(k, pair, "all", spec, budget=1 << 30)
    assert len(sp.stages) == 61
    names = [s.name for s in sp.stages]
    assert names[7] == "cut 1 (phase 8)" and names[6] == "phase 7" and names[8] == "phase 9"
    assert sp.stages[7].regs == [r.reg for r in pair.cuts[0].abi.live_out]
    assert sp.total <= 1 << 30 and sp.stride >= 1
    assert sp.sampled * sp.stride >= sp.blocks > (sp.sampled - 1) * sp.stride
    end = 0
    for s in sp.stages:
        assert s.offset % ALIGN == 0 and s.offset >= end       # disjoint, in order
        assert s.size == sp.sampled * sp.threads * s.slot_bytes
        end = s.offset + s.size
    assert end <= sp.total
    # program order, and each insertion point maps into the spliced output
    assert [s.line_orig for s in sp.stages] == sorted(s.line_orig for s in sp.stages)
    for s in sp.stages:
        if s.cut is None:
            o = pair.original.splitlines()[s.line_orig - 1]
            t = pair.spliced.splitlines()[s.line_spl - 1]
            assert o == t, s.name


def test_instrument_keeps_every_original_line(enc5_pair):
    from splice.probe.instrument.stages import PTR, instrument, plan_stages

    pair, k, spec = enc5_pair
    sp = plan_stages(k, pair, "7,8,9", spec)
    for text, which in ((pair.original, "orig"), (pair.spliced, "spl")):
        inst = instrument(text, sp, which)
        assert inst.count(f"[{PTR}]") == 3
        # removing the inserted blocks gives the module back byte for byte
        stripped = re.sub(r"\t\{ // splice probe: stage .*?\n\t\}\n", "", inst, flags=re.S)
        stripped = stripped.replace(f"\n// splice probe: debug-stage buffer (set by the host)\n"
                                    f".global .align 8 .u64 {PTR};\n", "")
        assert stripped == text


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_instrumented_dec1_compiles():
    from splice.analysis import Kernel
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec
    from splice.probe.instrument.stages import instrument, plan_stages
    from splice.ptx.sass import compile_ptx

    pair = resolve(str(ROOT / "recipes/dec1_p8.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    sp = plan_stages(k, pair, "cut", spec=load_spec(pair.spec_path))
    assert [s.name for s in sp.stages] == ["phase 7", "cut 1 (phase 8)", "phase 9"]
    for text, which in ((pair.original, "orig"), (pair.spliced, "spl")):
        c = compile_ptx(instrument(text, sp, which), "sm_90", 3)
        assert c.cubin


def test_stage_compare_names_first_divergence():
    from splice.probe.instrument.stages import Stage, StagePlan, compare, first_divergence

    s1 = Stage(1, "phase 1", 1, ["%r1", "%r2"], [".b32"] * 2, 10, 10, offset=0, size=2 * 64 * 8)
    s2 = Stage(2, "cut 1 (phase 2)", 2, ["%r3"], [".b32"], 20, 20, offset=1024, size=2 * 64 * 4, cut=1)
    sp = StagePlan([s1, s2], threads=64, blocks=4, stride=2, sampled=2, total=2048)
    a = np.random.default_rng(3).integers(0, 255, 2048, dtype=np.uint8)
    b = a.copy()
    b[1024 + 4 * 70] ^= 1                 # stage 2, slot 70 = sampled block 1 (block 2), thread 6
    rows = compare(sp, a, b)
    assert rows[0]["equal"] and not rows[1]["equal"]
    fd = first_divergence(rows)
    assert fd["name"] == "cut 1 (phase 2)"
    assert fd["first"]["block"] == 2 and fd["first"]["thread"] == 6 and fd["first"]["register"] == "%r3"


# ---------------------------------------------------------------------------- harness

@pytest.mark.slow
@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("recipe", ["recipes/enc5_p8.yaml", "tests/data/recipes/enc5_p8_call_shared.yaml",
                                    "tests/data/recipes/enc5_p8_wrong.yaml"])
def test_harness_modules_compile(recipe):
    from splice.analysis import Kernel
    from splice.probe.instrument.harness import ENTRY, cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec
    from splice.ptx.sass import compile_ptx

    pair = resolve(str(ROOT / recipe))
    k = Kernel.load(str(pair.original_path), pair.entry)
    (hc,) = cases(pair, k, load_spec(pair.spec_path), blocks=2)
    assert hc.skipped is None and len(hc.live_in) == 80 and len(hc.live_out) == 48
    for text in (hc.orig_ptx, hc.spl_ptx):
        assert f".entry {ENTRY}(" in text
        assert compile_ptx(text, "sm_90", 3).resources[ENTRY].registers


def test_harness_binds_memory_cuts():
    """Cuts that touch memory (the qkv wave loads its own B) used to be skipped; they run in the
    bound harness now, with the original's loaded B live-ins read again from W."""
    from splice.analysis import Kernel
    from splice.probe.instrument.harness import cases
    from splice.probe.instrument.harness_code import memory_ops
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    assert memory_ops("\tld.global.u32 %r1, [%rd1];\n\tmma.sync.x {%r2};") == ["ld.global.u32"]
    assert memory_ops("st.param.b32 [p], %r1;\n// ld.global in a comment\n", allow_call_abi=True) == []
    # the roles memory table decides: every family that addresses memory, none that does not
    bad = ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1}, [%rd1], %r2;",
           "mbarrier.arrive.shared::cta.b64 %rd2, [%r1];", "multimem.st.global.f32 [%rd1], %f1;",
           "discard.global.L2 [%rd1], 128;", "prefetchu.L1 [%rd1];", "@%p1 bra $L1;",
           "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;",
           "txq.width.b32 %r1, [tex];", "cp.async.ca.shared.global [%r1], [%rd1], 4;", "bar.sync 0;")
    for stmt in bad:
        word = stmt.split()[1 if stmt.startswith("@") else 0]
        assert memory_ops("\t" + stmt + "\n") == [word], stmt
    fine = ("shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;", "cvta.to.global.u64 %rd1, %rd2;", "L1:",
            "mov.u32 %r1, %tid.x;", "isspacep.shared %p1, %rd1;", "@!%p2 add.s32 %r1, %r1, 1;")
    assert memory_ops("\n".join(fine)) == []
    # a prelude is module-level: its functions' instructions count, its parameter lists do not
    prelude = ".func (.param .b32 r) f(.param .b32 param0)\n{\n\tst.param.b32 [r], 1;\n\tret;\n}\n"
    assert memory_ops(prelude, allow_call_abi=True, module=True) == []
    assert memory_ops(prelude, module=True) == ["st.param.b32", "ret"]
    pair = resolve(str(ROOT / "recipes/enc5_qkv_wave.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    cs = cases(pair, k, load_spec(pair.spec_path))
    assert len(cs) == 8 and all(c.skipped is None and c.bound and len(c.reloaded) == 8 for c in cs)


def test_harness_live_ins_are_finite_and_compare():
    from splice.probe.instrument.harness import HarnessCase, compare_outs, random_live_ins

    li = [("%r1", ".b32", "a"), ("%r2", ".b32", "c"), ("%f1", ".f32", "v"), ("%p1", ".pred", "v")]
    x = random_live_ins(li, 64, seed=4)
    e4 = x[0].astype(np.uint32).view(np.uint8)
    assert not np.isin(e4, [0x7F, 0xFF]).any()
    assert np.isfinite(x[1].astype(np.uint32).view(np.float16)).all()
    assert set(np.unique(x[3])) <= {0, 1}
    hc = HarnessCase(1, "t", 8, li, [("%r9", ".b32", "d"), ("%r10", ".b32", "d")])
    a = np.zeros((2, 64), dtype=np.uint64)
    b = a.copy()
    b[1, 5] = 3
    r = compare_outs(hc, a, b)
    assert not r["equal"] and r["live_outs_differ"] == 1 and r["first"]["register"] == "%r10"
    b[1, 5] = 3 << 32        # beyond a 32-bit register's bytes: not a difference
    assert compare_outs(hc, a, b)["equal"]


# ---------------------------------------------------------------------------- timing

def test_stats_and_roofline():
    from splice.probe.timing import frame_work, roofline, stats
    from splice.probe.language.document import load_spec

    s = stats([2.0, 1.0, 3.0, 2.0])
    assert s["median_ms"] == 2.0 and s["min_ms"] == 1.0 and s["spread"] == 1.0 and s["fps"] == 500.0
    spec = load_spec(ROOT / "probes/enc5.yaml")
    w = frame_work((ROOT / "corpus/enc5.ptx").read_text(), spec.entry, spec)
    assert w["mma_static"] == 1306 and w["warps"] == 120 * 270 * 4
    dev = {"mma": {"mma_per_s": 1e11}, "copy": {"bytes_per_s": 1e13}}
    r = roofline(10.0, w, dev)
    assert r["bound"] == "mma" and abs(r["mma_ms"] - w["mma"] / 1e8) < 1e-9
    assert r["floor_ms"] == max(r["mma_ms"], r["memory_ms"])


@pytest.mark.needs("ptxas")
def test_mma_bench_keeps_its_mma():
    from splice.probe.timing import mma_bench_ptx
    from splice.ptx.sass import compile_ptx

    c = compile_ptx(mma_bench_ptx(), "sm_90", 3)
    assert c.resources["splice_mma_bench"].registers >= 32     # 16 accumulators + A/B live


# ---------------------------------------------------------------------------- CLI

def test_cli_user_errors(capsys):
    from splice.cli import main

    assert main(["probe", str(ROOT / "probes/enc5.yaml")]) == 2
    assert "needs a module" in capsys.readouterr().err
    assert main(["probe", str(ROOT / "nope.yaml")]) == 2
    assert main(["probe", str(ROOT / "probes/enc5.yaml"), str(ROOT / "nope.ptx")]) == 2


def test_stage_selection_errors():
    from splice.errors import SpliceError
    from splice.probe.instrument.stages import parse_selection

    with pytest.raises(SpliceError):
        parse_selection("cut", 10, set())
    with pytest.raises(SpliceError):
        parse_selection("0-3", 10, set())
    with pytest.raises(SpliceError):
        parse_selection("x", 10, set())


@pytest.mark.needs("ptxas", "cuobjdump")
def test_mma_bench_is_not_folded_by_ptxas():
    """The roofline's mma rate is only meaningful if ptxas keeps every mma of the micro-kernel:
    count the MMA instructions in the SASS (each fp8 m16n8k32 lowers to 2 HMMA.16816 on sm_90;
    the first version, with loop-invariant operands, was folded to 4 HMMA per 32 mma)."""
    from splice.probe.timing import CHAINS, UNROLL, mma_bench_ptx
    from splice.ptx import sass

    cubin = sass.compile_ptx(mma_bench_ptx(), "sm_90").cubin
    n = len(re.findall(r"\b[HQI]MMA\.", sass.disassemble(cubin)))
    assert n >= 2 * CHAINS * UNROLL, n
