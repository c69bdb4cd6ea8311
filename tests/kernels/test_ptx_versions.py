"""Modules of old and new PTX ISA versions: 32-bit addressing and sm_13's texture forms (read,
analysed, refused by probe init and by ptxas with the reason), PTX 6.x headers and 9.0's
`.blocksareclusters` / `.abi_preserve` / `st.bulk`.  Kernels under tests/data/ptx/refused and
modern/ (handwritten_ptx90_directives, handwritten_volta_mma_mixed, llvm_wmma_ptx61,
numba_saxpy2d_sm80), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import emit, parse

from .bundled import MODERN, REFUSED

PTX90 = MODERN / "handwritten_ptx90_directives.ptx"
VOLTA = MODERN / "handwritten_volta_mma_mixed.ptx"
WMMA61 = MODERN / "llvm_wmma_ptx61.ptx"
NUMBA = MODERN / "numba_saxpy2d_sm80.ptx"


def test_probe_init_refuses_32_bit_addressing(tmp_path, capsys):
    """``.address_size 32``: the skeleton wrote the pointer parameter as a u32 scalar (0 buffers);
    no probe can run the module, so probe init refuses at the directive."""
    out = tmp_path / "s.yaml"
    assert main(["probe", "init", str(REFUSED / "address_size_32.ptx"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "address_size_32.ptx:5" in err and "32-bit addressing" in err and "--machine 32" in err
    assert not out.exists()


@pytest.mark.parametrize("name", ["address_size_32.ptx", "old_sm13_map_f64.ptx"])
def test_old_modules_round_trip_and_analyse(name):
    text = (REFUSED / name).read_text()
    assert emit(parse(text)) == text
    k = Kernel.load(REFUSED / name)
    assert k.last_number >= 3 and [s for s in k.stmts if getattr(s.node, "opcode", "") in ("ret", "exit")]


def test_old_module_cut_abi_and_texture_note():
    """open64-style statements joined by a ``// 0`` comment: s14 is ``mov.f32 %f2, 0; tex.1d …``
    and a cut through it reads %r3 (the tex coordinates) and exports %f2; the skeleton names the
    ``.tex .u32`` reference."""
    from splice.probe.init import skeleton

    path = REFUSED / "old_sm13_map_f64.ptx"
    k = Kernel.load(path)
    abi = k.abi(14, 16)
    assert [r.reg for r in abi.live_in] == ["%r3", "%f1"]
    assert {"%f2", "%f8"} <= {r.reg for r in abi.live_out}
    assert "module-scope texture/surface references (tex_in)" in skeleton(path.read_text(), str(path))[0]


@pytest.mark.needs("ptxas")
def test_roundtrip_sass_says_why_ptxas_refuses(capsys):

    assert main(["roundtrip", str(REFUSED / "old_sm13_map_f64.ptx"), "--sass", "--json"]) == 0
    out = capsys.readouterr().out
    assert "map_f64_to_f32 is not supported" in out


@pytest.mark.parametrize("path", [PTX90, VOLTA, WMMA61, NUMBA])
def test_old_and_new_headers_round_trip(path):
    """PTX ISA 6.1 (LLVM, sm_70), 6.4 (by hand) and 9.0 (``.blocksareclusters``,
    ``.abi_preserve``, ``st.bulk``, ``%aggr_smem_size``) modules re-emit byte for byte."""
    text = path.read_text()
    assert emit(parse(text, str(path))) == text


def test_spec_json_of_the_ptx90_module(capsys):

    assert main(["spec", str(PTX90), "--json"]) == 0
    (e,) = json.loads(capsys.readouterr().out)["entries"]
    assert e["phases"] == []
