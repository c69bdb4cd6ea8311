"""How the statements of unusual producers are numbered and cut: a statement made of labels and a
multi-line .branchtargets list (Triton's warp-specialised kernel), a guarded definition (the old
value is an input), old nvcc's several instructions joined into one statement by a comment.
Kernels triton_matmul_ws_persistent_sm100a, triton_softmax_sm90a, triton_attn_bwd_sm80 and
gpuocelot's kernels.ptx, read 2026-11-30."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import attach, parse_file
from splice.ptx import model as m

from .bundled import MODERN, ROOT

TRITON_WS = MODERN / "triton_matmul_ws_persistent_sm100a.ptx"
SOFTMAX = MODERN / "triton_softmax_sm90a.ptx"
OCELOT = (ROOT / "tests" / "data" / "ptx" / "thirdparty" / "gpuocelot" / "ocelot" / "ocelot" / "executive"
          / "test" / "kernels.ptx")
NUMBERED = ["managed_virtual_heap.ptx", "many_params.ptx", "handwritten_texref_inits.ptx", "llvm_mma_loop.ptx",
          "triton_attn_causal_sm80.ptx", "triton_attn_bwd_sm80.ptx", "triton_dot_fp64_sm80.ptx",
          "triton_dot_tf32x3_sm80.ptx", "triton_assert_argmax_asm_sm90a.ptx", "triton_matmul_ws_persistent_sm100a.ptx"]


def test_labels_before_a_branchtargets_list_carry_statement_1():
    """Triton's warp-specialised kernel opens with ``$L__func_begin0:``, ``JTI0_0:`` and a
    ``.branchtargets`` list over four lines: the notes' rules make them statement s1, which no
    node carried (nodes were numbered by the statement ending on their last line only), so
    ``spec --abi s1-s5`` and ``sass-mix`` of the module said "no statement s1"."""
    k = Kernel.load(TRITON_WS)
    first = k.stmt(1)
    assert type(first.node) is m.Label and first.node.name in ("$L__func_begin0", "JTI0_0")
    assert k.text(1).startswith(") $L__func_begin0: JTI0_0: $L__BB0_")
    abi = k.abi(1, 5)
    assert {r.reg for r in abi.live_out} >= {"%r28", "%r29"}      # the two ld.param of s2-s3


@pytest.mark.parametrize("name", NUMBERED + ["triton_softmax_sm90a.ptx", "triton_matmul_tma_sm90a.ptx"])
def test_kernel_numbering_is_attach(name):
    """``Kernel`` numbers nodes as ``attach`` does (the statement whose lines hold the node's end),
    and every statement of the index is carried by a node."""
    mod = parse_file(str(MODERN / name))
    for fn in mod.entries():
        if fn.body is None:
            continue
        k = Kernel(mod, fn.name)
        assert [s.n for s in k.stmts] == [s.n for s in attach(mod, fn.name)]
        assert set(range(1, k.last_number + 1)) <= {s.n for s in k.stmts}


def test_a_guarded_load_in_a_cut_reads_the_old_value():
    """``mov.u32 %r7, %r2; @%p6 ld.global.b32 {%r7}, …``: a cut of the load (s43-s47) left %r7
    out of its live-ins (it was only "written" there), but when %p6 is false %r7 keeps the
    value from before the cut; the extracted native named it an output only."""
    k = Kernel.load(SOFTMAX)
    assert k.text(43).startswith("@%p6 ld.global.b32 { %r7 }")
    abi = k.abi(43, 47)
    ins = {r.reg: (r.role, r.index) for r in abi.live_in}
    assert ins["%r7"] == ("io", 0) and "%r7" in {r.reg for r in abi.live_out}
    assert "%r8" not in ins and "%r9" not in ins        # written unguarded first inside the cut


def test_a_guarded_def_nobody_reads_is_no_input():
    """The same rule is liveness' business: an ``@%p atom`` result never read is no input."""
    k = Kernel.load(MODERN / "triton_attn_bwd_sm80.ptx")
    atoms = [s for s in k.stmts if getattr(s.node, "opcode", None) == "atom" and s.node.guard is not None]
    assert len(atoms) == 8
    n = atoms[0].n
    dest = atoms[0].node.operands[0].name
    assert dest not in {r.reg for r in k.abi(n, n).live_in}


def test_extract_names_the_guarded_register_in_and_out(tmp_path, capsys):

    out = tmp_path / "n.ptx"
    assert main(["extract", str(SOFTMAX), "--statements", "s43-s47", "-o", str(out)]) == 0
    head = out.read_text()
    assert "io0=%r7" in head and "@%in0 ld.global.b32 {%io0}" in head


def test_a_range_starts_at_the_first_instruction_of_its_statement(tmp_path):
    """Old nvcc writes ``mov.f32 %f3, 0f7f800000; // ((1.0F)/(0.0F))``: the comment joins the
    next line (``setp.eq.f32 %p1, %f2, %f3;``) into statement s5.  A range s5-… started at its
    last node, so the cut held the setp alone and reported %f3 — written by s5 itself — as a
    live-in."""
    if not OCELOT.exists():
        pytest.skip("gpuocelot kernels.ptx not in this checkout")
    k = Kernel.load(OCELOT, "_Z17k_sequenceLoopingPfi")
    abi = k.abi(5, 5)
    assert [r.reg for r in abi.live_in] == ["%f2"] and "%f3" in abi.defs

    out = tmp_path / "n.ptx"
    assert main(["extract", str(OCELOT), "--entry", "_Z17k_sequenceLoopingPfi", "--statements", "s5-s5",
                 "-o", str(out)]) == 0
    body = [ln for ln in out.read_text().splitlines() if ln and not ln.startswith("//")]
    assert [ln.split()[0] for ln in body if not ln.startswith(".")] == ["mov.f32", "setp.eq.f32"]
