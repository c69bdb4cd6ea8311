"""Kernel parameters as probe init reads them: by-value structs (fields at their offsets, scalars
among pointers, bytes put together, a struct copied to the local frame or the -G %SP frame),
128 parameters, pointers typed by how their values are used, tables of pointers, `.ptr` parameters
by state space, and the filled skeletons that load (and run on a GPU).  Kernels from nvcc
(many_params, struct_params_dynsmem*, int128_params, ptr_to_ptr, control_misc), LLVM and numba,
and by hand (handwritten_ptr_params), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from splice.cli import main

from .bundled import MODERN, ROOT, VEC, skeleton, struct_fields

PARAMS = MODERN / "many_params.ptx"
STRUCT = MODERN / "struct_params_dynsmem.ptx"
PARAM_ADDR = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .align 8 .b8 k_param_0[64])
{
  .reg .b64 %rd<12>;
  .reg .f32 %f<3>;
  mov.b64 %rd1, k_param_0;
  add.s64 %rd2, %rd1, 24;
  ld.param.u64 %rd3, [%rd2+16];
  ld.param.u64 %rd4, [%rd2+24];
  ld.param.u64 %rd5, [%rd1+8];
  cvta.to.global.u64 %rd6, %rd3;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd7, %r1;
  mul.lo.s64 %rd8, %rd7, %rd4;
  add.s64 %rd9, %rd6, %rd8;
  ld.global.f32 %f1, [%rd9];
  cvta.to.global.u64 %rd10, %rd5;
  st.global.f32 [%rd10], %f1;
  ret;
}
"""
I128 = MODERN / "int128_params.ptx"
NUMBA = MODERN / "numba_saxpy2d_sm80.ptx"
PTRS = MODERN / "handwritten_ptr_params.ptx"
PACKED = MODERN / "llvm_packed_byval.ptx"
SPECS = [("probes/numba_saxpy2d_sm80.yaml", NUMBA), ("probes/llvm_packed_byval.yaml", PACKED)]


def test_probe_init_passes_0_only_for_parameters_never_read():
    """``many_params`` reads a ``.f64`` and a ``.u64`` as values (never dereferenced): they need
    values (``null``, TODO), not the 0 the skeleton gives a parameter nothing reads."""
    from splice.probe.init import skeleton

    path = MODERN / "control_misc.ptx"
    text, _rows = skeleton(path.read_text(), str(path), "many_params")
    params = {p["name"]: p for p in yaml.safe_load(text)["params"]}
    assert params["param_10"]["dtype"] == "f64" and params["param_10"]["value"] is None
    assert params["param_11"]["dtype"] == "u64" and params["param_11"]["value"] is None
    assert params["param_19"]["kind"] == "struct" and params["param_19"]["align"] == 16
    tri = MODERN / "triton_attn_fwd_sm80.ptx"        # Triton's two scratch pointers: never read
    text, _rows = skeleton(tri.read_text(), str(tri), None)
    zero = [p["name"] for p in yaml.safe_load(text)["params"] if p.get("value") == 0]
    assert zero == ["param_10", "param_11"]


def test_probe_init_of_128_parameters():
    """128 parameters: bools never read are passed as 0, the read ones are TODO; structs by value
    keep their sizes and alignments (3/1, 12/4, 32/16)."""
    from splice.probe.init import skeleton

    text, _rows = skeleton(PARAMS.read_text(), str(PARAMS))
    params = yaml.safe_load(text)["params"]
    assert len(params) == 128
    by = {p["name"]: p for p in params}
    assert by["param_0"]["role"] == "output" and by["param_0"]["dtype"] == "f32"
    sizes = [(by[f"param_{i}"]["size"], by[f"param_{i}"]["align"]) for i in (113, 115, 117)]
    assert sizes == [(3, 1), (12, 4), (32, 16)]
    read_bools = [i for i in range(118, 126) if by[f"param_{i}"]["value"] is None]
    assert read_bools == [118, 121, 125]                      # t0, t3, t7
    assert by["param_126"]["kind"] == "struct"                # the __grid_constant__ S32


def _dtype_line(path, entry, param_index):
    from splice.probe.init import skeleton

    text, _rows = skeleton(Path(path).read_text(), str(path), entry)
    blocks = text.split("\n- ")
    return next(b for b in blocks[1:] if b.startswith(f"name: param_{param_index}") or
                f"_param_{param_index}\n" in b.split("\n", 1)[0] + "\n").split("dtype: ")[1].split("\n")[0]


@pytest.mark.parametrize("path, entry, param, expect", [
    # const int* compared with setp.eq.s32 / setp.lt.s32 (a switch): an integer, signed
    ("control_misc.ptx", "_Z12switch_tablePKiPffi", 0, "s32"),
    # const uint32_t* fed to bfe.u32 / bfind.u32 / dp4a.u32 / setp.gt.u32: unsigned
    ("coop_groups_misc.ptx", "_Z18barriers_and_hintsPKjPjPxi", 0, "u32"),
])
def test_int_pointer_typed_by_its_uses(path, entry, param, expect):
    """Left open on 2026-11-30: ``ld.global.u32`` of an ``int*`` gave "f32, guessed" from the index
    scaling alone.  Integer arithmetic/compares on every typed use make it an integer, said."""
    line = _dtype_line(MODERN / path, entry, param)
    assert line.startswith(expect) and "guessed" not in line and "values used by" in line


@pytest.mark.parametrize("path, entry, param", [
    ("half_bf16_math.ptx", "_Z11packed_halfPK7__half2S1_PS_PK14__nv_bfloat162PS3_i", 0),   # .f16x2 uses
    ("wgmma_sm90a.ptx", "_Z13wgmma_rs_bf16PKjPK13__nv_bfloat16Pf", 0),     # a wgmma fragment: silent
])
def test_packed_or_fragment_values_stay_guessed(path, entry, param):
    """``half2`` pairs copied with ``.u32`` (used by ``fma.rn.f16x2``) and bf16 pairs fed to a
    wgmma say nothing of a 4-byte element: still guessed, as before."""
    assert "guessed" in _dtype_line(MODERN / path, entry, param)


def test_disagreeing_uses_stay_guessed(tmp_path):
    """A ``.b32`` load used both as a float and as an integer is not typed by its uses."""
    from splice.probe.init import skeleton

    src = VEC.replace(".reg .v4 .f32 %v;", ".reg .b32 %r<4>;").replace(
        "ld.global.v4.f32 %v, [%rd2];\n  add.f32 %f1, %v.x, %v.w;\n  mov.f32 %v.y, %f1;\n"
        "  st.global.v4.f32 [%rd2], %v;",
        "ld.global.b32 %r1, [%rd2];\n  add.f32 %f1, %r1, %r1;\n  add.s32 %r2, %r1, 1;\n"
        "  st.global.f32 [%rd2+4], %f1;\n  st.global.u32 [%rd2+8], %r2;")
    text, _ = skeleton(src, "t.ptx")
    assert "dtype: f32" in text and "guessed" not in text      # the f32 store types it, as before
    src2 = src.replace("st.global.f32 [%rd2+4], %f1;", "").replace("st.global.u32 [%rd2+8], %r2;", "")
    src2 = src2.replace("ret;", "st.global.b32 [%rd2+8], %r2;\n  st.global.b32 [%rd2+12], %f1;\n  ret;")
    text2, _ = skeleton(src2, "t.ptx")
    assert "guessed" in text2


def test_pointer_fields_picked_from_a_local_copy_are_listed():
    """nvcc copies ``Layer L`` to the local frame (``st.local.u64 [%rd1+8], %rd11``…) and reads
    ``L.src[(pick + blockIdx.x) & 3]`` back with ``ld.local.u64 [%rd19]``: the skeleton listed
    no field under "pointers this kernel dereferences" (the taint stopped at the local store),
    so a spec filled from it passes null pointers.  Now every pointer parked there is a field,
    with a check that role and dtype are the union; the pointer read as two ``ld.param.u32``
    halves joined by ``bfi.b64`` is field 0, not fields 0 and 4."""
    from splice.probe.init import skeleton

    text, rows = skeleton(STRUCT.read_text(), str(STRUCT), "struct_params")
    assert rows[0]["kind"] == "struct" and rows[0]["fields"] == 6       # src[4] and dst[2]
    for off in (0, 8, 16, 24, 32, 40):
        assert f"- name: field_{off}\n" in text
    assert "- name: field_4\n" not in text
    assert text.count("picks a pointer from it at") == 6


def test_a_scalar_read_into_a_64_bit_register_stays_a_scalar(tmp_path):
    """``ld.param.u32 %rd1, [n]`` of a scalar ``int`` (a 64-bit register) added to a pointer is
    index arithmetic: only a struct's bytes read in halves make a pointer."""
    from splice.probe.init import skeleton

    src = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{
  .reg .b64 %rd<5>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %rd2, [n];
  cvta.to.global.u64 %rd3, %rd1;
  shl.b64 %rd2, %rd2, 2;
  add.s64 %rd4, %rd3, %rd2;
  ld.global.f32 %f1, [%rd4];
  st.global.f32 [%rd4+4], %f1;
  ret;
}
"""
    text, rows = skeleton(src, "t.ptx")
    assert [r["kind"] for r in rows] == ["buffer", "scalar"]


def test_param_address_plus_a_constant_and_a_multiplied_stride():
    """``add %rd2, <param address>, 24`` moves the address: ``[%rd2+16]`` is byte 40.  A 64-bit
    stride multiplied into an offset (``mul.lo.s64``) is index arithmetic, not a buffer."""
    from splice.probe.init import skeleton

    text, rows = skeleton(PARAM_ADDR.replace(".reg .f32 %f<3>;", ".reg .f32 %f<3>;\n  .reg .b32 %r<2>;"), "t.ptx")
    f = struct_fields(text)
    assert sorted(f) == [8, 40]
    assert "role: input" in f[40] and "role: output" in f[8]


def test_pointer_tables_are_said_not_filled_with_floats():
    """``const float* const* ptr_a`` / ``float* const* ptr_d`` (grouped and batched kernels) were
    "f64 input buffers, uniform [-1, 1]": the probe would fill them with floats the kernel then
    dereferences, and ``ptr_d``'s writes (the only output) were invisible, so nothing was
    compared.  A table of pointers then said so and left ``fill: null``; now (probe tables,
    docs/probe-spec.md) it is a ``kind: table`` whose entries are typed and roled by the accesses
    through its pointers, with ``count: null`` (the spec refuses to load there until it is given)."""
    from splice.probe.init import skeleton

    path = MODERN / "ptr_to_ptr.ptx"
    text, rows = skeleton(path.read_text(), str(path), "_Z12batched_ptrsPKPKfPKPfPKii")
    blocks = text.split("\n- name: ")
    for b in blocks[1:3]:
        assert "kind: table" in b and "count: null" in b and "dtype: f32" in b
    assert "ld.global.f32" in blocks[1] and "role: input" in blocks[1]
    assert "st.global.f32" in blocks[2] and "role: output" in blocks[2]
    assert "kind: table" not in blocks[3]                              # sizes: plain s32 buffer
    assert [r["kind"] for r in rows] == ["table", "table", "buffer", "scalar"]
    text2, _ = skeleton(path.read_text(), str(path), "_Z8problemsPK7Problemi")
    assert "kind: table" in text2 and "ld.global.f32" in text2 and "st.global.f32" in text2
    # an array of structs holding pointers (Problem {a, d, n}): not a table; said, and refused
    assert "index is scaled by 24; it also loads .u32 values" in text2 and "each: null" in text2


def test_g_build_struct_copy_through_the_sp_frame():
    """At -G the struct goes through ``st.u64 [%SP+8], %rd3`` (generic addressing of the local
    depot) and comes back with ``ld.u64 [%SP+dynamic]``: the frame is followed like ``.local``
    (constant offsets slot by slot, a run-time offset as any parked value), so the -G build lists
    the same six pointer fields as the -O3 one, not the shared-memory views also parked there."""
    from splice.probe.init import skeleton

    for name in ("struct_params_dynsmem_G.ptx", "struct_params_dynsmem.ptx"):
        path = MODERN / name
        text, rows = skeleton(path.read_text(), str(path), "struct_params")
        f = struct_fields(text)
        assert sorted(f) == [0, 8, 16, 24, 32, 40], name
        assert all("accessed as .f32, .u16" in b for b in f.values()), name


def test_a_32_bit_field_widened_for_an_index_is_not_a_pointer_half():
    """A by-value struct's 32-bit field read with ``ld.param.u32 %rd`` (zero-extended for 64-bit
    index arithmetic) and added to a pointer is an index, not half of a pointer: only halves
    joined by ``bfi.b64`` / ``shl.b64 …, 32`` + ``or.b64`` make one."""
    from splice.probe.init import skeleton

    src = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .align 8 .b8 k_param_0[16])
{
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [k_param_0];
  ld.param.u32 %rd2, [k_param_0+12];
  cvta.to.global.u64 %rd3, %rd1;
  add.s64 %rd4, %rd3, %rd2;
  ld.global.f32 %f1, [%rd4];
  st.global.f32 [%rd4+4], %f1;
  ret;
}
"""
    f = struct_fields(skeleton(src, "t.ptx")[0])
    assert sorted(f) == [0]


def test_struct_scalars_are_fields_to_fill_in():
    """``__int128 a`` (``.param .align 16 .b8 a[16]``, read by ``ld.param.v2.u64``) and a struct
    whose ``int n`` the kernel compares with its index were structs with no field (the filled-in
    spec refused "expected a non-empty list"); next to pointer fields such scalars were left out
    and passed as zeros, so ``if (i >= n) return`` made every thread return, comparing nothing."""
    text, rows = skeleton(I128, "_Z9i128_mathno4WidePKnPn")
    params = yaml.safe_load(text)["params"]
    a, _b, w = params[0], params[1], params[2]
    assert [(f["offset"], f["dtype"], f["value"]) for f in a["fields"]] == [(0, "u64", None), (8, "u64", None)]
    assert [f["offset"] for f in w["fields"]] == [0, 8, 16, 24, 32] and w["fields"][-1]["dtype"] == "u32"
    assert rows[2]["scalars"] == 5 and rows[2]["fields"] == 0


def test_pointer_fields_keep_their_bytes():
    """A struct of six pointers read by ``ld.param.u64``: pointer fields only (no scalar at the
    same bytes), and the kernel's ``int n`` parameter stays a top-level scalar."""
    text, rows = skeleton(I128, "_Z9ptr_array4Ptrsi")
    (s, n) = yaml.safe_load(text)["params"]
    assert [f["kind"] for f in s["fields"]] == ["buffer"] * 7 and rows[0]["scalars"] == 0
    assert n["kind"] == "scalar"


def test_filled_struct_scalars_load_and_check(tmp_path):
    """The skeleton with its nulls filled loads and matches the module (struct scalar fields of
    u64/u32 at their offsets are a legal spec)."""
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    text, _ = skeleton(I128, "_Z9i128_mathno4WidePKnPn")
    text = (text.replace("value: null", "value: 3").replace("grid: null", "grid: [1, 1, 1]")
            .replace("block: null", "block: [32, 1, 1]").replace("shape: null", "shape: [64]"))
    (tmp_path / "s.yaml").write_text(text)
    spec = load_spec(str(tmp_path / "s.yaml"))
    assert len(check(spec, I128.read_text(), str(I128)).params) == 5
    assert [f.value for f in spec.params[2].fields] == [(3,)] * 5


def test_bytes_put_together_are_one_field():
    """``blob+8..11`` read by four ``ld.param.u8`` and shl/or into one int (cvt.rn.f32.s32):
    four u8 fields; now one s32 at offset 8 (aligned, so a spec field can hold it)."""
    params = yaml.safe_load(skeleton(PTRS, "ptr_params")[0])["params"]
    blob = next(p for p in params if p["name"] == "blob")
    assert [(f["offset"], f["dtype"]) for f in blob["fields"]] == [(0, "f64"), (8, "s32"), (12, "u8")]


def test_bytes_of_an_unaligned_value_say_which_value():
    """LLVM's packed struct: an int at byte 1, a short at 5, a float at 7, a double at 11.  A spec
    field must be aligned to its size, so the bytes stay, each saying what it is part of."""
    text, _ = skeleton(PACKED, "packed_fields")
    assert "byte 0 of the s32 at bytes 1-4" in text and "byte 3 of the f32 at bytes 7-10" in text
    assert "byte 0 of the f64 at bytes 11-18" in text
    blob = yaml.safe_load(text)["params"][0]
    assert len(blob["fields"]) == 19


def test_ptr_parameters_by_state_space():
    """``.ptr .shared`` / ``.const`` / ``.local`` parameters are addresses in the kernel's own
    memory (named, not filled), ``.ptr .global`` and generic ones buffers."""
    params = {p["name"]: p for p in yaml.safe_load(skeleton(PTRS, "ptr_params")[0])["params"]}
    assert params["out"]["kind"] == "buffer" and params["gen"]["kind"] == "buffer"
    assert all(params[n]["kind"] == "scalar" for n in ("sh", "cst", "loc"))


@pytest.mark.parametrize("spec, module", SPECS)
def test_filled_skeletons_load_and_match(spec, module):
    """numba's skeleton filled from its argument labels; LLVM's packed struct with its byte
    fields filled little-endian: both are legal specs of their modules."""
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    s = load_spec(str(ROOT / spec))
    assert check(s, module.read_text(), str(module)).params


@pytest.mark.gpu
@pytest.mark.parametrize("spec, module", SPECS)
def test_filled_skeletons_run(tmp_path, capsys, spec, module):

    rc = main(["probe", str(ROOT / spec), str(module), "--json", "--report-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"], out


ROUND_TRIP = ["handwritten_ptr_params"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
