"""The bound harness: which addresses a cut forms from random values (analysis.taint), the
device-side memory comparison (probe.memory) and the launch's kernelParams (Device)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

TINY = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 k_p0, .param .u32 k_n)
{
\t.reg .b32 %r<12>;
\t.reg .b64 %rd<12>;
\t.reg .pred %p<3>;
\tld.param.u64 %rd1, [k_p0];
\tld.param.u32 %r10, [k_n];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tld.global.u32 %r3, [%rd3];
\tmul.wide.u32 %rd4, %r3, 4;
\tadd.s64 %rd5, %rd1, %rd4;
\tst.global.u32 [%rd5], %r1;
\tmov.u32 %r5, 0;
\tmov.u32 %r6, 0;
$L_loop:
\tmul.wide.u32 %rd6, %r6, 4;
\tadd.s64 %rd7, %rd1, %rd6;
\tld.global.u32 %r7, [%rd7];
\tadd.s32 %r5, %r5, %r4;
\tmov.u32 %r6, %r5;
\tsetp.lt.u32 %p1, %r5, %r10;
\t@%p1 bra $L_loop;
\tmul.wide.u32 %rd8, %r2, 4;
\tadd.s64 %rd9, %rd1, %rd8;
\tst.global.u32 [%rd9], %r10;
\tret;
}
"""


@pytest.fixture(scope="module")
def tiny():
    from splice.analysis import Kernel
    from splice.ptx import parse

    return Kernel(parse(TINY, "tiny.ptx"), "k")


def _n(k, text: str) -> int:
    return next(st.n for st in k.stmts if text in str(getattr(st.node, "name", "")) + repr(st.node)
                and st.n is not None)


def test_no_seed_no_taint_but_loaded_values_are_not_addresses(tiny):
    from splice.analysis.taint import address_taints

    first, last = tiny.stmts[0].n or 1, max(st.n for st in tiny.stmts if st.n is not None)
    hits = address_taints(tiny, first, last, [])
    # the store through a loaded word is named (the harness fills that word, not the frame)
    assert [h.opcode for h in hits] == ["st.global.u32"]
    assert "memory read by ld.global.u32" in hits[0].text()


def test_a_seed_reaching_an_address_is_named_through_a_loop(tiny):
    from splice.analysis.taint import address_taints

    first, last = tiny.stmts[0].n or 1, max(st.n for st in tiny.stmts if st.n is not None)
    hits = address_taints(tiny, first, last, ["%r4", "%r2"])
    ops = [(h.opcode, h.seed) for h in hits]
    # %r4 feeds %r5, which reaches the loop's address %rd6 only through the back edge (%r6)
    assert ("ld.global.u32", "%r4") in ops
    assert ("st.global.u32", "%r2") in ops
    loop_ld = next(h for h in hits if h.seed == "%r4")
    assert loop_ld.register == "%rd7" and "depends on %r4 (via %rd7)" in loop_ld.text()


def test_param_reads_are_the_specs_not_tainted(tiny):
    from splice.analysis.taint import address_taints

    first, last = tiny.stmts[0].n or 1, max(st.n for st in tiny.stmts if st.n is not None)
    regs = {h.register for h in address_taints(tiny, first, last, [])}
    assert "%rd3" not in regs and "%rd9" not in regs      # from ld.param and %tid.x only


def _spec(buffers):
    from splice.probe.kinds.buffer import Buffer

    fields = [Buffer(name=n, role=r, dtype="u32", bytes=32) for n, r in buffers]
    return SimpleNamespace(fields=fields)


def test_memory_compare_names_the_first_differing_element():
    from splice.probe.run.memory import compare

    spec = _spec([("out", "output"), ("inp", "input")])
    before = {"out": np.full(8, 0xFFFFFFFF, np.uint32), "inp": np.arange(8, dtype=np.uint32)}
    orig = {"out": before["out"].copy(), "inp": before["inp"].copy()}
    orig["out"][2:4] = [7, 8]
    spl = {"out": orig["out"].copy(), "inp": before["inp"].copy()}
    spl["out"][3] = 9
    spl["inp"][5] = 0                     # the spliced cut wrote into an input
    out, inp = compare(np, spec, before, orig, spl)
    assert (out.bytes_written, out.bytes_differ, out.first_index) == (8, 1, [3])
    assert (out.original, out.spliced) == ("0x00000008", "0x00000009")
    assert not inp.identical and inp.first_index == [5] and inp.bytes_written == 0


def test_memory_compare_identical_when_both_wrote_the_same():
    from splice.probe.run.memory import compare

    spec = _spec([("out", "output")])
    before = {"out": np.zeros(4, np.uint32)}
    same = {"out": np.array([1, 2, 3, 4], np.uint32)}
    (w,) = compare(np, spec, before, same, {"out": same["out"].copy()})
    assert w.identical and w.bytes_written == 4 and w.first_byte is None   # changed bytes: the low ones


def test_surface_index_is_x_y_channel():
    from splice.probe.kinds.images import Surface

    f = Surface(name="s", format="rgba16f", width=10, height=4, geometry="2d")
    assert f.place_flat(4 * (2 * 10 + 3) + 1) == [3, 2, 1]
    f3 = Surface(name="s", format="rgba16f", width=10, height=4, depth=3, geometry="3d")
    assert f3.place_flat(4 * (2 * 40 + 2 * 10 + 3) + 1) == [3, 2, 2, 1]      # x, y, z, channel


def test_launch_bound_passes_the_entrys_arguments_then_in_out(tmp_path):
    """The harness kernel gets one kernelParams pointer per entry .param (the spec's own
    argument pack) and then one per extra value."""
    import ctypes

    from splice.probe.run.device import Device
    from splice.probe.language.document import load_spec
    from tests.test_probe_device import FakeCupy, _small_gemm

    seen = {}

    def harness(kp):
        ptrs = (ctypes.c_uint64 * 11).from_address(kp)
        seen["params"] = [int(p) for p in ptrs]
        seen["in"] = ctypes.c_uint64.from_address(ptrs[9]).value
        seen["out"] = ctypes.c_uint64.from_address(ptrs[10]).value

    spec = load_spec(_small_gemm(tmp_path))
    cp = FakeCupy([harness])
    dev = Device(spec, cp)
    dev.load("h", "h.cubin", entry="splice_harness")
    dev.launch_bound("h", 3, (0x1234, 0x5678), 0, dev.stream)
    assert seen["params"][:9] == [int(p) for p in dev.args[0].pointers]
    assert (seen["in"], seen["out"]) == (0x1234, 0x5678)
    assert cp.launches[-1] == ((3, 1, 1), tuple(spec.block), 0)


def test_a_cut_with_a_random_address_is_refused_with_the_statement(tiny):
    from splice.probe.instrument.epilogue_harness import _random_address

    last = max(st.n for st in tiny.stmts if st.n is not None)
    cut = SimpleNamespace(first=tiny.stmts[0].n or 1, last=last)
    why = _random_address(tiny, cut, [("%r4", ".b32", "act"), ("%r9", ".b32", "const:3")])
    assert why.startswith("the address of s") and "depends on" in why and "random address" in why
    assert _random_address(tiny, cut, [("%r9", ".b32", "const:3")]).endswith(
        "a random value would be a random address")        # the loaded word, named too


def _extract_case(tmp_path, module: str, spec: str, arch: str):
    from pathlib import Path

    from splice.analysis import Kernel
    from splice.cli import main
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    root = Path(__file__).resolve().parents[1]
    assert main(["extract", str(root / module), "--epilogue", "1", "-o", str(tmp_path / "e1.ptx")]) == 0
    (tmp_path / "r.yaml").write_text(f"module: {root / module}\narch: {arch}\ncuts:\n"
                                     "  - epilogue: 1\n    native: e1.ptx\n")
    pair = resolve(str(tmp_path / "r.yaml"))
    k = Kernel.load(str(pair.original_path), pair.entry)
    (c,) = cases(pair, k, load_spec(root / spec), blocks=2)
    return c


@pytest.mark.needs("ptxas")
def test_gemm_epilogue_with_its_loop_back_edge_is_bound(tmp_path):
    """The corpus GEMM's E1 holds the K loop's back edge and the C stores: the back edge leaves
    the cut (to the harness's end label), and the row/column indices are recomputed by
    replaying the kernel's own statements (tid/ctaid arithmetic, the ldc parameter)."""
    from splice.ptx.sass import compile_ptx

    c = _extract_case(tmp_path, "corpus/gemm/gemm_sm80.ptx", "probes/gemm_sm80.yaml", "sm_80")
    assert c.skipped is None and c.bound and len(c.replay) > 5
    assert "bra $__splice_harness_end;" in c.orig_ptx
    assert c.orig_ptx.index(c.replay[0].strip()) < c.orig_ptx.rindex("// ---- the cut ----")
    for text in (c.orig_ptx, c.spl_ptx):
        assert compile_ptx(text, "sm_80", 3).resources["splice_harness"].registers


def test_triton_epilogue_refused_for_its_pipeline_stage_index(tmp_path):
    """Triton's E1 stores into the shared ring slot of the K loop's current stage: a
    loop-carried value, not a function of the thread's position, so the harness refuses the
    cut and names the statement whose address depends on it."""
    c = _extract_case(tmp_path, "corpus/triton/matmul_sm80.ptx", "probes/matmul_sm80.yaml", "sm_80")
    assert c.skipped.startswith("the address of s") and "st.shared" in c.skipped


def test_single_exit_keeps_inner_branches_and_redirects_the_rest():
    from splice.probe.instrument.epilogue_harness import END, _single_exit

    body = "$Lin:\n\tadd.s32 %r1, %r1, 1;\n\t@%p1 bra $Lin;\n\t@!%p2 bra.uni $Lout;\n\tret;\n"
    out = _single_exit(body)
    assert "@%p1 bra $Lin;" in out and f"@!%p2 bra {END};" in out and f"\tbra {END};" in out
    assert out.endswith(f"\n{END}:\n") and out.count(f"{END}:") == 1
    assert _single_exit("\tadd.s32 %r1, %r1, 1;\n") == "\tadd.s32 %r1, %r1, 1;\n"


def test_shared_layout_fills_every_array_and_one_dynamic_region():
    from splice.probe.instrument.epilogue_harness import EpilogueCase, _dump_rows, _prologue, _shared_layout
    from splice.ptx.builder import NameScope

    arrays = [("a_smem", 100, "a_smem", ".shared", ""), ("tbl", 64, "tbl", ".global", ""),
              ("b_smem", 4096, "b_smem", ".shared", ""), ("dyn0", 0, "dyn0", ".shared", ""),
              ("dyn1", 0, "dyn1", ".shared", "")]
    layout, dyn = _shared_layout(arrays, 1024)
    assert layout == [("a_smem", "a_smem", 100), ("b_smem", "b_smem", 4096), ("dyn0", "dyn0", 1024)]
    assert dyn == 1024 and _shared_layout(arrays, 0) == ([layout[0], layout[1]], 0)
    ec = EpilogueCase(1, "t", None, [], [], smem_bytes=104 + 4096 + 1024, smem_layout=layout, blocks=2)
    assert _dump_rows(ec, 128) == 1 + 8 + 2
    text = _prologue(ec, 256, 128, None, NameScope("%g"), {})
    assert [ln.split()[-1] for ln in text.splitlines() if ln.strip().startswith("mov.u32") and "smem" in ln
            or "dyn0" in ln] == ["a_smem;", "b_smem;", "dyn0;"]
    assert text.count("+104];") == 8 and text.count("+4200];") == 2   # b_smem after a_smem's 104 bytes, dyn0 after both
    assert text.count("@%g_p") == 2                            # a_smem's 25 words: one guarded ld/st round


def test_parameter_fields_are_read_as_the_kernel_reads_them():
    from pathlib import Path

    from splice.analysis import Kernel

    k = Kernel.load(str(Path(__file__).resolve().parents[1] / "corpus/enc5.ptx"), None)
    t = k.provenance.field_types()
    assert t["param_0+80"] == ".u16" and t["param_0+82"] == ".u16"      # ld.param.v2.u16 or two u16
    assert t["param_0+0"] == ".u32" and t["param_0+88"] == ".u64"        # extents; the texture handle


def test_a_bound_case_runs_every_launch_of_the_sequence(tmp_path):
    """A spec whose frame is a sequence of launches (split-K: K differs per launch) binds the
    harness to each launch in turn, in order, and names the launch of the first difference."""
    import ctypes

    from splice.probe.run.device import Device
    from splice.probe.run.session import _bound_side, _per_launch
    from splice.probe.language.document import load_spec
    from tests.test_probe_device import FakeCupy, _small_gemm

    path = _small_gemm(tmp_path)
    path.write_text(path.read_text().replace("  block: [128]\n", "  block: [128]\n  sequence: [{K: 32}, {K: 64}]\n"))
    spec = load_spec(path)
    assert spec.launch.launches == 2
    seen = []

    def harness(kp):
        ptrs = (ctypes.c_uint64 * 11).from_address(kp)
        seen.append(ctypes.c_int32.from_address(ptrs[5]).value)     # K, the 6th .param

    cp = FakeCupy([harness, harness])
    dev = Device(spec, cp)
    build = SimpleNamespace(modules={"harness0:original": SimpleNamespace(path="h.cubin")})
    hc = SimpleNamespace(live_out=[("%f1", ".f32", "acc")], dynamic_smem=0)
    mem = {}
    outs = _bound_side(spec, build, dev, "harness0:original", hc, cp.zeros(1, np.uint64), 2, 256, mem)
    assert seen == [32, 64] and outs.shape == (1, 2 * 256) and set(mem) == {"before", "original"}
    row = _per_launch({"threads": 512, "first": {"thread": 300}}, 256)
    assert row["launches"] == 2 and row["threads"] == 256 and row["first"] == {"launch": 1, "thread": 44}
    assert _per_launch({"threads": 256}, 256) == {"threads": 256}
