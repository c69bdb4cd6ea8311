"""TMA kernels (cp.async.bulk.tensor, bulk copies, mbarriers): a tensor-map parameter is named as
one in the probe skeleton, im2col offsets are live-ins of a cut, the notes say which shared reads
they do not count.  Kernels from nvcc (tma_modes_sm90a, ws_pipeline_tma_wgmma_sm90a,
bulk_dsmem_mbarrier_sm90) and Triton (triton_matmul_tma_sm90a), read 2026-12-01."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel

from .bundled import MODERN, skeleton_text

WS_TMA = MODERN / "ws_pipeline_tma_wgmma_sm90a.ptx"


def test_skeleton_names_tensor_map_params():
    """A ``CUtensorMap`` parameter (its address handed to ``cp.async.bulk.tensor`` through
    ``mov``/``cvta.param``) had ``fields: []`` "no ld.param reads a byte of it": nothing said
    that it is a tensor map the probe cannot build."""
    text = skeleton_text(MODERN / "tma_modes_sm90a.ptx")
    assert text.count("a TMA tensor map (its address goes to s") == 5
    text = skeleton_text(WS_TMA)
    assert text.count("a TMA tensor map") == 3
    # Triton passes the descriptor's 32-bit address (mov.b32 %r, param): the same
    assert skeleton_text(MODERN / "triton_matmul_tma_sm90a.ptx").count("a TMA tensor map") == 3


def test_a_struct_read_through_its_address_is_not_a_tensor_map():
    text = skeleton_text(MODERN / "int128_params.ptx")
    assert "tensor map" not in text


def test_tma_im2col_offsets_are_live_in():
    """The 4-D im2col load reads %rs3 (set before the range) and %rs4 (set inside it)."""
    from splice.analysis.abi import cut_abi

    k = Kernel.load(MODERN / "tma_modes_sm90a.ptx")
    abi = cut_abi(k, 28, 39)
    regs = [r.reg for r in abi.live_in]
    assert "%rs3" in regs and "%rs4" not in regs and "%rs2" not in regs


def test_notes_say_shared_reads_they_do_not_count():
    """``raw`` is read by the wgmma (through descriptors) and by the TMA store's shared source;
    the notes said "14 stores, 0 loads" (``ld``/``ldmatrix`` and the like only) and nothing
    more: a write-only array, read as written."""
    from splice.analysis.notes import notes_markdown

    line = next(ln for ln in notes_markdown(Kernel.load(WS_TMA)).splitlines() if ln.startswith("* `raw`"))
    assert "0 loads" in line and "not counted" in line
    assert "wgmma" in line and "bulk cop" in line, line
    # an entry with no such reader says nothing more
    mm = notes_markdown(Kernel.load(MODERN / "mma_epilogues_sm90.ptx", "_Z14bf16_gemm_reluPKjS0_PjS1_i"))
    assert "not counted" not in mm


ROUND_TRIP = ["bulk_dsmem_mbarrier_sm90", "ws_pipeline_tma_wgmma_sm90a", "tma_modes_sm90a"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
