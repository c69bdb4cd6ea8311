"""LLVM's NVPTX output: mma intrinsics in a loop (accumulators carried by phis), parameters that
point into the kernel's own shared and const spaces, its older wmma spelling, a packed by-value
struct.  Kernels llvm_mma_loop, llvm_ptr_spaces, llvm_wmma_ptx61, llvm_packed_byval (made from
their .ll with llc; regen.sh), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel

from .bundled import MODERN

LLVM_MMA = MODERN / "llvm_mma_loop.ptx"
LLVM_PTRS = MODERN / "llvm_ptr_spaces.ptx"
WMMA61 = MODERN / "llvm_wmma_ptx61.ptx"


def test_llvm_mma_intrinsic_loop():
    """LLVM 14's ``llvm.nvvm.mma.m16n8k16`` in a loop: f16x2 fragments in ``.b32 %hh`` registers,
    accumulators carried by phis (``%f15``-``%f18`` are both C and D)."""
    k = Kernel.load(LLVM_MMA, "mma_loop")
    [p] = k.phases
    assert p.shape == (16, 8, 16) and p.regular
    abi = k.phase_abi(1)
    assert [r.reg for r in abi.live_in if r.role in ("a", "b")] == [f"%hh{i}" for i in range(1, 7)]
    assert [r.reg for r in abi.live_out] == ["%f15", "%f16", "%f17", "%f18"]
    assert all(r.role.startswith("acc") for r in abi.live_out)


def test_probe_init_names_pointers_into_shared_and_const():
    """LLVM_PTRS's ``float addrspace(3)*`` / ``i32 addrspace(4)*`` kernel parameters are dereferenced
    by ``ld.shared`` / ``ld.const``: the skeleton said "read as a value, never dereferenced
    here", which is false and hides that the probe cannot fill that memory."""
    from splice.probe.language.init import skeleton

    text, rows = skeleton(LLVM_PTRS.read_text(), str(LLVM_PTRS))
    lines = {ln.split("name: ")[1].split(",")[0]: ln for ln in text.splitlines() if "{name: param_" in ln}
    assert "own .shared space (ld.shared.f32 s11)" in lines["param_1"]
    assert "own .const space (ld.const.u32 s14)" in lines["param_2"]
    assert "never dereferenced" not in text
    kinds = {r["name"].rsplit("_", 1)[1]: r["kind"] for r in rows}
    assert kinds["0"] == "buffer" and kinds["6"] == "buffer" and kinds["1"] == "scalar"


def test_llvm_old_wmma_spelling():
    """LLVM 14 writes ``wmma.load.a.sync.row.m16n16k16.global.f16`` (no ``.aligned``, layout
    before shape) and an m32n8k16 tile: phases with their true shapes."""
    assert [p.shape for p in Kernel.load(WMMA61, "wmma_loop").phases] == [(16, 16, 16)]
    assert [p.shape for p in Kernel.load(WMMA61, "wmma_m32n8k16").phases] == [(32, 8, 16)]


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cuts_of_the_mma_intrinsic_loop():
    """Every phase and epilogue: extract -> apply gives ptxas' original SASS."""
    from splice.cut.identity import run_module

    trials = run_module(str(LLVM_MMA), "sm_80", 3, (), epilogues=True)
    assert trials
    assert not [(t.entry, t.kind, t.target, t.stage, t.reason) for t in trials if not t.identical]


ROUND_TRIP = ["llvm_packed_byval"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
