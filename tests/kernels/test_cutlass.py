"""CUTLASS kernels: the mbarrier wait blocks that repeat their labels in nested scopes (a branch
goes to its own scope's label), the Params struct's fields at CUTLASS's own offsets (from offsetof
on the host), its alpha/beta pointer arrays, the grouped GEMM's parameters.  Kernels built with
CUTLASS's headers (cutlass_fp8_gemm_sm89, cutlass_grouped_sm80) and nvcc's build of its mbarrier
wait (mbarrier_scoped_labels_sm90), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import yaml

from splice.analysis import Kernel
from splice.ptx import model as m

from .bundled import MODERN, identity_recipe, plan_of, skeleton, struct_fields

SCOPED = MODERN / "mbarrier_scoped_labels_sm90.ptx"
CUTLASS_FP8 = MODERN / "cutlass_fp8_gemm_sm89.ptx"


def _branches(k):
    for pos, s in enumerate(k.stmts):
        nd = s.node
        if isinstance(nd, m.Instruction) and nd.opcode == "bra" and nd.operands[0].name in ("DONE", "LAB_WAIT"):
            yield pos, s, nd.operands[0].name


def test_a_branch_goes_to_the_label_of_its_own_scope():
    """Every wait block defines LAB_WAIT:/DONE:; the control flow used to send every branch to
    the last definition, skipping the code between the waits."""
    k = Kernel.load(SCOPED)
    b = k.blocks
    seen = 0
    for pos, s, name in _branches(k):
        want = s.line + 2 if name == "DONE" else s.line - 3     # this scope's DONE: / LAB_WAIT:
        targets = {k.stmts[b.starts[t]].line for t in b.succ[b.block_of[pos]]}
        assert want in targets and all(abs(t - s.line) <= 3 for t in targets), (s.line, name, targets)
        seen += 1
    assert seen >= 20


def test_liveness_across_scoped_waits():
    """The loop body between two waits: what it reads before the first wait and writes after the
    second is in the ABI (it used to miss %r4, read between the waits, and two live-outs)."""
    k = Kernel.load(SCOPED)
    first = next(s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "$L__BB0_5")
    dones = [s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "DONE"]
    abi = k.abi(first + 1, dones[1])
    between = k.stmt(dones[0] + 1).node          # ld.shared.f32 %f13, [%r4]: between the waits
    _d, used = k.defs_uses(between)
    live_in = {r.reg for r in abi.live_in}
    assert set(used) <= live_in | abi.defs
    later = k.stmt(dones[0] + 2).node            # add.f32 %f14, …: read after the cut
    defs, _u = k.defs_uses(later)
    assert set(defs) <= {r.reg for r in abi.live_out}


def test_verify_sees_the_wait_loops(tmp_path):
    """verify flattens nested scopes: a wait's ``bra LAB_WAIT`` is a loop of its own scope, not a
    forward jump to the next scope's label of that name."""
    from splice.cut.extract import extract
    from splice.verify.compare import verify_plan

    k = Kernel.load(SCOPED)
    first = next(s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "$L__BB0_5")
    dones = [s.n for s in k.stmts if isinstance(s.node, m.Label) and s.node.name == "DONE"]
    text = extract(k, statements=(first + 1, dones[1]))["text"]
    rec = identity_recipe(tmp_path, SCOPED, k.name, f"statements: s{first + 1}-s{dones[1]}", text)
    [r] = verify_plan(plan_of(rec))
    assert r.verdict == "not proven" and r.reason.startswith("loop"), (r.verdict, r.reason)


def test_cutlass_params_fields_at_their_true_offsets():
    """The Params offsets are CUTLASS's own (``offsetof`` on the host for this instantiation:
    ref_A.data 64, ref_B.data 112, ref_C.data 192, ref_D.data 272; params_A/B/D, the iterator
    increments, at 32/80/208).  nvcc reads them as ``add.s64 %rd1, <param>, 24`` then
    ``ld.param.u64 [%rd1+40]``: the +24 was dropped, so every field read that way was named 24
    bytes early (A's pointer as field_40, "field_16"… for increments); a probe spec filled from it
    puts the pointers at the wrong bytes.  The 64-bit increments were also listed as buffers
    like the pointers they are added to; they now carry a check saying so."""
    from splice.probe.init import skeleton

    text, _rows = skeleton(CUTLASS_FP8.read_text(), str(CUTLASS_FP8))
    f = struct_fields(text)
    for off, role in ((64, "input"), (112, "input"), (192, "input"), (272, "output")):
        assert f"role: {role}" in f[off] and "may be a byte offset" not in f[off], off
    for off in (40, 48, 56, 88, 96, 104, 240):          # params_A/B/D increments
        assert "may be a byte offset" in f[off], off
    assert 16 not in f and 24 not in f


def test_cutlass_alpha_beta_pointer_arrays_are_tables():
    """LinearCombination's ``alpha_ptr_array`` / ``beta_ptr_array`` (Params bytes 312 and 320,
    ``offsetof`` on the host) are loaded and dereferenced; ``alpha_ptr`` / ``beta_ptr`` (296,
    304) are plain pointers."""
    from splice.probe.init import skeleton

    f = struct_fields(skeleton(CUTLASS_FP8.read_text(), str(CUTLASS_FP8))[0])
    assert "kind: table" in f[312] and "kind: table" in f[320]
    assert "kind: table" not in f[296] and "kind: table" not in f[304]


def test_cutlass_grouped_gemm_params():
    """CUTLASS's grouped GEMM (offsets from ``offsetof`` on the host): problem_sizes 0 (a
    GemmCoord array), alpha_ptr/beta_ptr 48/56, alpha/beta_ptr_array 64/72, ptr_A/B/C/D 80-104
    (``T**``), lda…ldd 112-136 (``int64_t*``).  The skeleton made ptr_A…ptr_D and lda…ldd "f64
    input buffers" (ptr_D, the only output, included) and problem_sizes f32."""
    from splice.probe.init import skeleton

    path = MODERN / "cutlass_grouped_sm80.ptx"
    f = struct_fields(skeleton(path.read_text(), str(path))[0])
    assert sorted(f) == [0, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136]
    for off in (64, 72, 80, 88, 96, 104):
        assert "kind: table" in f[off] and "count: null" in f[off], off
    assert "role: output" in f[104] and "role: input" in f[80]            # ptr_D written, ptr_A read
    for off in (112, 120, 128, 136):
        assert "dtype: u64" in f[off] and "guessed" not in f[off] and "mul.lo.s64" in f[off], off
    assert "dtype: s32" in f[0] and "dtype: f32" in f[48] and "dtype: f32" in f[56]


def test_cutlass_params_scalars_are_listed():
    """CUTLASS 2.x's 368-byte ``Params``: the pointers were listed, the problem size (0/4/8), the
    swizzled grid (12/16), the strides, alpha/beta (288/292) and the k-iterations (336) were
    not, so a filled-in skeleton ran a GEMM of size 0."""
    params = yaml.safe_load(skeleton(MODERN / "cutlass_fp8_gemm_sm89.ptx")[0])["params"]
    scalars = {f["offset"]: f["dtype"] for f in params[0]["fields"] if f["kind"] == "scalar"}
    assert {0: "u32", 4: "u32", 8: "u32", 288: "f32", 292: "f32", 336: "u32"}.items() <= scalars.items()
    assert not set(scalars) & {64, 112, 192, 272}          # the A/B/C/D pointers stay buffers
