"""tcgen05 (Blackwell, sm_100) kernels: tensor-memory MMA that is no phase of the table is named,
never "0 phases"; tcgen05.dealloc reads its tensor-memory address; cluster launch control reads
back.  Kernels from Triton (triton_matmul_tcgen05_sm100a) and nvcc (tcgen05_ldsm_b8_sm100a,
clc_persistent_sm100a), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main

from .bundled import MODERN, cut_of

TCGEN05 = MODERN / "triton_matmul_tcgen05_sm100a.ptx"
TCGEN = MODERN / "tcgen05_ldsm_b8_sm100a.ptx"
TC_WS = "_Z10tcgen05_wsmmjPj"


def test_tcgen05_mma_is_named(capsys):

    assert main(["spec", str(TCGEN05), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]
    assert d["phases"] == []
    [u] = d["mma_in_calls"]["not_phases"]
    assert u["opcode"] == "tcgen05.mma" and len(u["statements"]) == 8
    assert main(["spec", str(TCGEN05), "--phases"]) == 0
    assert "8 tcgen05.mma" in capsys.readouterr().out
    assert main(["extract", str(TCGEN05), "--phase", "1", "-o", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "phase 1 does not exist" in err and "tcgen05.mma" in err and "instruction descriptor" in err


def test_notes_say_what_the_phase_table_cannot_show():
    """The notes draft of the tcgen05 matmul was titled "the epilogues of phases 1…0", said
    nothing of its 8 tcgen05.mma, and claimed the 128-byte TMA descriptor param_0 is "never
    read" (its address goes to the TMA unit through a cvt, not to an ld.param)."""
    from splice.analysis.notes import notes_markdown

    md = notes_markdown(Kernel.load(TCGEN05))
    assert md.splitlines()[0] == "# `matmul_tma_blackwell` — no phases"
    assert "Not in the table: 8 tcgen05.mma" in md
    unc = md[md.index("## 4. Uncharacterised"):]
    assert "`param_0` (128 bytes) has its address taken" in unc
    assert "`param_0` is declared 128 bytes" not in unc


def test_tcgen05_dealloc_reads_its_tensor_memory_address(tmp_path):
    """``tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128`` frees the columns at %r2: the
    roles table had no tcgen05 row, so operand 0 was a destination and a cut ending before the
    dealloc did not export %r2 (the identity cut of s10-s33 compiled to other SASS)."""
    from splice.analysis.roles import raw_defs_uses

    k = Kernel.load(TCGEN, TC_WS)
    dealloc = next(s.node for s in k.stmts if getattr(s.node, "name", "").startswith("tcgen05.dealloc"))
    assert raw_defs_uses(dealloc) == ([], ["%r2"])
    assert [r.reg for r in k.abi(10, 33).live_out] == ["%r2", "%p3"]
    ld = next(s.node for s in k.stmts if getattr(s.node, "name", "").startswith("tcgen05.ld."))
    assert raw_defs_uses(ld) == (["%r9"], ["%r2"])      # tcgen05.ld still writes its vector


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_before_the_dealloc_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = cut_of(tmp_path, TCGEN, TC_WS, 10, 33)
    assert normalized_sass(compile_ptx(p.text, "sm_100a").cubin) == \
        normalized_sass(compile_ptx(TCGEN, "sm_100a").cubin)


ROUND_TRIP = ["clc_persistent_sm100a"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
