"""Atomics and multimem: multimem.ld_reduce / red / st reach memory, integer atomics type their
buffer, packed half atomics type theirs, and a .b128 value (nvcc's 128-bit atomics' inline asm) is
never passed through a .b32 slot of a call ABI.  Kernels atomics_b128_hints, warp_atomics_preds,
atomic_ref_orders, read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import pytest
import yaml

from splice.cli import main

from .bundled import MODERN, ROOT, skeleton

MEM = MODERN / "atomics_b128_hints.ptx"
ATOMS = MODERN / "atomic_ref_orders.ptx"
HALF_ATOMS = "_Z12half_atomicsP6__halfP7__half2P13__nv_bfloat16P14__nv_bfloat162PdPKf"
B128 = ROOT / "tests/data/ptx/modern/atomics_b128_hints.ptx"


def test_probe_init_follows_multimem():
    """``multimem.ld_reduce / red / st`` dereference their address: the parameter is an inout
    buffer (it was "read as a value, never dereferenced"), and the skeleton says the probe
    cannot make the multicast object it needs."""
    from splice.probe.init import skeleton

    text, _rows = skeleton(MEM.read_text(), str(MEM), "multimem_ops")
    p0 = yaml.safe_load(text)["params"][0]
    assert (p0["kind"], p0["role"], p0["dtype"]) == ("buffer", "inout", "f32")
    assert "multicast" in text.split("name: param_1")[0]


def test_probe_init_types_memory_by_its_integer_atomics():
    """``atom.global.max.s32`` / ``atom.add.u64`` say what the memory holds; a buffer reached
    only through them and .b32 loads was guessed f32 from its index scaling (an int counter
    filled with floats)."""
    from splice.probe.init import skeleton

    path = MODERN / "warp_atomics_preds.ptx"      # atomics(float*, double*, u64*, int*, int*, unsigned*, …)
    text, _rows = skeleton(path.read_text(), str(path), "_Z7atomicsPfPdPyPiS2_PjS2_PKf")
    got = [(p["dtype"], p["role"]) for p in yaml.safe_load(text)["params"]]
    assert got[:6] == [("f32", "inout"), ("f64", "inout"), ("u64", "inout"), ("u32", "inout"),
                       ("s32", "inout"), ("u32", "inout")], got


def test_packed_half_atomics_type_their_buffer():
    """``atom.add.noftz.f16x2`` / ``.bf16x2`` gave "u8, guessed (accessed as -)", so the probe
    would fill a half2 array with the integers 0-7 as bytes."""
    params = yaml.safe_load(skeleton(ATOMS, HALF_ATOMS)[0])["params"]
    assert [p["dtype"] for p in params[:4]] == ["f16", "f16", "bf16", "bf16"]
    assert "accessed as .f16 x2" in skeleton(ATOMS, HALF_ATOMS)[0]


@pytest.mark.parametrize("abi", ["call", "call-shared"])
@pytest.mark.parametrize("statements, at, sym", [("s13-s14", 11, "%out0"), ("s15-s15", 10, "%in1")])
def test_a_b128_live_value_under_a_call_abi_is_refused(tmp_path, capsys, abi, statements, at, sym):
    """regression: a cut whose live-out (or live-in) is a ``.b128`` register (nvcc's 128-bit
    atomics' inline asm) under ``abi: call``/``call-shared`` was passed through a ``.b32`` slot:
    ``st.param.b32 [ret], %out0`` / ``ld.shared.b32 c, [slot]``, 4 of its 16 bytes, which ptxas
    takes without a word; ``verify`` said "proved equal" and apply exit 0."""
    import shutil

    shutil.copy(B128, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--entry", "cas128", "--statements", statements,
                 "-o", str(tmp_path / "n.ptx")]) == 0
    threads = "    threads: 32\n" if abi == "call-shared" else ""
    (tmp_path / "r.yaml").write_text(f"name: b\nmodule: m.ptx\nentry: cas128\noutput: out.ptx\ncuts:\n"
                                     f"  - statements: {statements}\n    native: n.ptx\n    abi: {abi}\n{threads}")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert f"n.ptx:{at}: abi {abi} cannot pass {sym} (c, .b128) through .param" in err, err
    assert "use abi: inline" in err and "Traceback" not in err
    assert not (tmp_path / "out.ptx").exists()
    (tmp_path / "r.yaml").write_text((tmp_path / "r.yaml").read_text().replace(f"abi: {abi}", "abi: inline")
                                     .replace("    threads: 32\n", ""))
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0
