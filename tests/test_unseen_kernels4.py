"""Regressions from the fourth unseen-kernel sweep (docs/results/unseen-kernels.md, "Round 4"):
vector registers (``.reg .v4 .f32 %v`` and their ``%v.x`` elements), a guarded mma, LLVM kernel
parameters that point into the kernel's own shared/const spaces, and the element type of an
``int*`` read only as ``.u32`` (how its values are used).  Each test names the cause it pins; the
kernels are checked in under tests/data/ptx/modern (manifest.yaml) and none of these tests needs
Triton, CUTLASS, LLVM or a GPU."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.errors import SpliceError

ROOT = Path(__file__).resolve().parents[1]
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
RARE = MODERN / "handwritten_isa_rare.ptx"
LLVM = MODERN / "llvm_ptr_spaces.ptx"

VEC = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .v4 .f32 %v;
  .reg .f32 %f<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.f32 %v, [%rd2];
  add.f32 %f1, %v.x, %v.w;
  mov.f32 %v.y, %f1;
  st.global.v4.f32 [%rd2], %v;
  ret;
}
"""


def _write(tmp_path, text, name="vec.ptx"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ---- vector registers ------------------------------------------------------------------------------

def test_vector_register_elements_are_the_register(tmp_path):
    """``%v.x`` is an element of the vector register ``%v``: it was no declared name, so def-use
    dropped it (s4-s6 read ``%v`` only through the store; the write of ``%v.y`` was invisible).
    A write of one element keeps the others: ``%v`` is live into s4-s5 and out of it."""
    k = Kernel.load(_write(tmp_path, VEC))
    assert k.vectors["%v"][0] == ".v4 .f32"
    abi = k.abi(4, 5)
    assert [r.reg for r in abi.live_in] == ["%v"] and [r.reg for r in abi.live_out] == ["%v"]
    assert "%v" in k.abi(4, 4).live_in[0].reg


def test_a_cut_over_a_vector_register_is_refused_not_dropped(tmp_path, capsys):
    """extract + apply of s4-s6 wrote a native whose ``%v.x``/``%v.w`` became unset scratch and
    whose ``mov %v.y`` went to a scratch; apply bound ``%v`` as one ``.f32``; verify said "proved
    equal" and the spliced kernel stored the old vector.  Now both refuse at the first statement
    naming the vector register, with its declaration."""
    from splice.cli import main

    p = _write(tmp_path, VEC)
    assert main(["extract", str(p), "--statements", "s4-s6", "-o", str(tmp_path / "n.ptx")]) == 2
    err = capsys.readouterr().err
    assert "vec.ptx:12" in err and "vector register %v (.reg .v4 .f32, declared at line 6)" in err
    (tmp_path / "n.ptx").write_text("add.f32 %t0, %t1, %t2;\n")
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {p}\nentry: k\noutput: {tmp_path / 'o.ptx'}\ncuts:\n  - statements: s4-s6\n"
                 "    native: n.ptx\n")
    for cmd in ("apply", "verify"):
        assert main([cmd, str(r)]) == 2
        assert "names the vector register %v" in capsys.readouterr().err
    assert not (tmp_path / "o.ptx").exists()
    assert main(["extract", str(p), "--statements", "s1-s2", "-o", str(tmp_path / "m.ptx")]) == 0


def test_the_rare_kernel_phase_cuts_and_its_vector_epilogue():
    """handwritten_isa_rare's phase holds no vector register (identity cut SASS-identical in
    bench/roundtrip_cuts.py); its epilogue writes ``%acc.x``… and is refused with the line."""
    from splice.cut.extract import extract

    k = Kernel.load(RARE, entry="rare_mma")
    assert extract(k, phase=1, source_name=str(RARE))["facts"]["mma"] == 3
    with pytest.raises(SpliceError) as ei:
        extract(k, epilogue=1, source_name=str(RARE))
    assert "vector register %acc" in str(ei.value) and ei.value.line == 90


# ---- a guarded mma ---------------------------------------------------------------------------------

def test_a_guarded_mma_gives_the_phase_no_shape():
    """``@!%p1 mma…`` runs only where the guard holds: the phase was "regular 16×8×48" (three
    k-steps), claiming a product the lanes may not make.  Now irregular, the guard named."""
    ph = Kernel.load(RARE, entry="rare_mma").phases[0]
    assert len(ph.mma) == 3 and ph.shape is None and not ph.regular
    assert any("guarded by @!%p1" in n for n in ph.notes)


def test_spec_json_of_the_guarded_phase(capsys):
    from splice.cli import main

    assert main(["spec", str(RARE), "--entry", "rare_mma", "--json"]) == 0
    ph = json.loads(capsys.readouterr().out)["entries"][0]["phases"][0]
    assert ph["shape"] is None and ph["tiles"] == [1, 1, 3]


# ---- probe init: parameters into the kernel's own spaces -------------------------------------------

def test_probe_init_names_pointers_into_shared_and_const():
    """LLVM's ``float addrspace(3)*`` / ``i32 addrspace(4)*`` kernel parameters are dereferenced
    by ``ld.shared`` / ``ld.const``: the skeleton said "read as a value, never dereferenced
    here", which is false and hides that the probe cannot fill that memory."""
    from splice.probe.language.init import skeleton

    text, rows = skeleton(LLVM.read_text(), str(LLVM))
    lines = {ln.split("name: ")[1].split(",")[0]: ln for ln in text.splitlines() if "{name: param_" in ln}
    assert "own .shared space (ld.shared.f32 s11)" in lines["param_1"]
    assert "own .const space (ld.const.u32 s14)" in lines["param_2"]
    assert "never dereferenced" not in text
    kinds = {r["name"].rsplit("_", 1)[1]: r["kind"] for r in rows}
    assert kinds["0"] == "buffer" and kinds["6"] == "buffer" and kinds["1"] == "scalar"


# ---- probe init: an int* read as .u32, typed by how its values are used ----------------------------

def _dtype_line(path, entry, param_index):
    from splice.probe.language.init import skeleton

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
    """Round 3's leftover: ``ld.global.u32`` of an ``int*`` gave "f32, guessed" from the index
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
    from splice.probe.language.init import skeleton

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


# ---- probe init: a struct copied to local memory, a pointer picked at run time ---------------------

STRUCT = MODERN / "struct_params_dynsmem.ptx"


def test_pointer_fields_picked_from_a_local_copy_are_listed():
    """nvcc copies ``Layer L`` to the local frame (``st.local.u64 [%rd1+8], %rd11``…) and reads
    ``L.src[(pick + blockIdx.x) & 3]`` back with ``ld.local.u64 [%rd19]``: the skeleton listed
    no field under "pointers this kernel dereferences" (the taint stopped at the local store),
    so a spec filled from it passes null pointers.  Now every pointer parked there is a field,
    with a check that role and dtype are the union; the pointer read as two ``ld.param.u32``
    halves joined by ``bfi.b64`` is field 0, not fields 0 and 4."""
    from splice.probe.language.init import skeleton

    text, rows = skeleton(STRUCT.read_text(), str(STRUCT), "struct_params")
    assert rows[0]["kind"] == "struct" and rows[0]["fields"] == 6       # src[4] and dst[2]
    for off in (0, 8, 16, 24, 32, 40):
        assert f"- name: field_{off}\n" in text
    assert "- name: field_4\n" not in text
    assert text.count("picks a pointer from it at") == 6


def test_a_scalar_read_into_a_64_bit_register_stays_a_scalar(tmp_path):
    """``ld.param.u32 %rd1, [n]`` of a scalar ``int`` (a 64-bit register) added to a pointer is
    index arithmetic: only a struct's bytes read in halves make a pointer."""
    from splice.probe.language.init import skeleton

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


# ---- probe init: layered and cube images ----------------------------------------------------------

def test_layered_and_cube_images_are_named_not_bound_as_2d():
    """``tex.a2d`` / ``tex.cube`` / ``tex.acube`` / ``suld.b.a2d`` / ``sust.b.a1d`` on object
    parameters: the skeleton offered plain 2-D textures and surfaces (width, height), which the
    probe would bind, giving the kernel an image of the wrong kind.  It now says so per image."""
    from splice.probe.language.init import skeleton

    path = MODERN / "tex_layered_cube.ptx"
    text, rows = skeleton(path.read_text(), str(path))
    assert [r["kind"] for r in rows[:5]] == ["texture"] * 3 + ["surface"] * 2
    # (since the image geometries: a1d/a2d are bound, cube maps refused, two geometries named)
    for word in ("used with 2 geometries, a2d (layered 2-D), 2d (2-D)", "used as cube (a cube map), which the probe",
                 "used as acube (a layered cube map)", "geometry: a2d", "geometry: a1d"):
        assert word in text
    plain = MODERN / "tex_surf_objects.ptx"
    assert "TODO: used" not in skeleton(plain.read_text(), str(plain))[0]   # its first entry: 2-D only


# ---- video instructions' operand selectors --------------------------------------------------------

SELECTORS = MODERN / "video_selectors.ptx"


def test_video_operand_selectors_parse():
    """``vabsdiff… %r1.b0``, ``vmad… %r1.h0``, the SIMD forms' ``%r1.b3210`` / ``%r1.h10`` and a
    ``.mask`` destination ``%r7.b10`` (PTX ISA video instructions; ptxas accepts them) are
    register tokens: round 4 refused the module at 21:35."""
    from splice.ptx import emit, parse, parse_file

    text = SELECTORS.read_text()
    mod = parse_file(str(SELECTORS))
    assert emit(mod) == text and mod == parse(text, "v.ptx", fast=False, cache=False)
    ops = {i.opcode: [o.name for o in i.operands] for i in mod.functions()[0].body.items
           if getattr(i, "opcode", "").startswith("v")}
    assert ops["vabsdiff"] == ["%r4", "%r1.b0", "%r2.b2", "%r3"] and ops["vsub4"][0] == "%r7.b10"
    assert ops["vadd4"][1:3] == ["%r1.b3210", "%r2.b7654"] and ops["vmax2"][1:3] == ["%r1.h10", "%r2.h32"]


def test_a_selector_reads_its_register_and_a_mask_writes_part_of_it():
    """``%r1.b0`` reads ``%r1``; ``vsub4 %r7.b10, …`` writes two bytes of ``%r7`` and keeps the
    others (a partial write, like a guarded one): the store reads both definitions."""
    k = Kernel.load(SELECTORS)
    defs, uses, guarded = k.du()
    at = {getattr(st.node, "opcode", None): i for i, st in enumerate(k.stmts)}
    assert uses[at["vabsdiff"]] == ("%r1", "%r2", "%r3") and defs[at["vsub4"]] == ("%r7",)
    assert guarded[at["vsub4"]] and not guarded[at["vmax2"]]
    from splice.analysis.reaching import Reaching

    assert Reaching(k).defs("%r7", at["st"]) == (at["vmax2"], at["vsub4"])


@pytest.mark.parametrize("cmd", [["stats"], ["index"], ["spec"], ["notes"], ["canonical"], ["roundtrip"]])
def test_every_command_reads_video_selectors(cmd, capsys):
    from splice.cli import main

    assert main(cmd + [str(SELECTORS)]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_cut_over_a_selector_is_refused_at_its_line(tmp_path, capsys):
    """A cut binds whole registers: ``%r1.b0`` in a native would be a byte of a slot."""
    from splice.cli import main

    k = Kernel.load(SELECTORS)
    n = next(st.n for st in k.stmts if getattr(st.node, "opcode", None) == "vabsdiff")
    assert main(["extract", str(SELECTORS), "--statements", f"s{n}-s{n}", "-o", str(tmp_path / "n.ptx")]) == 2
    err = capsys.readouterr().err
    assert f"video_selectors.ptx:21: s{n} names %r1.b0, a byte or half of %r1" in err
    assert main(["extract", str(SELECTORS), "--statements", "s1-s4", "-o", str(tmp_path / "n.ptx")]) == 0


# ---- probe init: CUTLASS's Params struct ----------------------------------------------------------

CUTLASS_FP8 = MODERN / "cutlass_fp8_gemm_sm89.ptx"


def _fields(text: str) -> dict:
    """{offset: the field's YAML block} of the skeleton's first struct."""
    out = {}
    for block in text.split("    - name: field_")[1:]:
        off, rest = block.split("\n", 1)
        out[int(off)] = rest.split("\n- ")[0]
    return out


def test_cutlass_params_fields_at_their_true_offsets():
    """The Params offsets are CUTLASS's own (``offsetof`` on the host for this instantiation:
    ref_A.data 64, ref_B.data 112, ref_C.data 192, ref_D.data 272; params_A/B/D, the iterator
    increments, at 32/80/208).  nvcc reads them as ``add.s64 %rd1, <param>, 24`` then
    ``ld.param.u64 [%rd1+40]``: the +24 was dropped, so every field read that way was named 24
    bytes early (A's pointer as field_40, "field_16"… for increments); a probe spec filled from it
    puts the pointers at the wrong bytes.  The 64-bit increments were also listed as buffers
    like the pointers they are added to; they now carry a check saying so."""
    from splice.probe.language.init import skeleton

    text, _rows = skeleton(CUTLASS_FP8.read_text(), str(CUTLASS_FP8))
    f = _fields(text)
    for off, role in ((64, "input"), (112, "input"), (192, "input"), (272, "output")):
        assert f"role: {role}" in f[off] and "may be a byte offset" not in f[off], off
    for off in (40, 48, 56, 88, 96, 104, 240):          # params_A/B/D increments
        assert "may be a byte offset" in f[off], off
    assert 16 not in f and 24 not in f


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


def test_param_address_plus_a_constant_and_a_multiplied_stride():
    """``add %rd2, <param address>, 24`` moves the address: ``[%rd2+16]`` is byte 40.  A 64-bit
    stride multiplied into an offset (``mul.lo.s64``) is index arithmetic, not a buffer."""
    from splice.probe.language.init import skeleton

    text, rows = skeleton(PARAM_ADDR.replace(".reg .f32 %f<3>;", ".reg .f32 %f<3>;\n  .reg .b32 %r<2>;"), "t.ptx")
    f = _fields(text)
    assert sorted(f) == [8, 40]
    assert "role: input" in f[40] and "role: output" in f[8]


def test_triton_int64_strides_are_scalars_not_buffers():
    """Triton with int64 indexing multiplies its ``i64`` strides into offsets
    (``mul.lo.s64 %rd, %rd_stride, %rd_row``) and adds them to the pointers: the strides were
    "buffers" of f16 (6 buffers for a kernel with 3 pointers), so a spec filled from the skeleton
    passes device pointers as strides."""
    from splice.probe.language.init import skeleton

    path = MODERN / "triton_dot_1warp_i64_sm80.ptx"
    _text, rows = skeleton(path.read_text(), str(path))
    assert [r["param"] for r in rows if r["kind"] == "buffer"] == [0, 1, 2]
    assert [r["kind"] for r in rows[6:9]] == ["scalar"] * 3          # stride_am, stride_bk, stride_cm


# ---- probe init: tables of pointers ---------------------------------------------------------------

def test_pointer_tables_are_said_not_filled_with_floats():
    """``const float* const* ptr_a`` / ``float* const* ptr_d`` (grouped and batched kernels) were
    "f64 input buffers, uniform [-1, 1]": the probe would fill them with floats the kernel then
    dereferences, and ``ptr_d``'s writes (the only output) were invisible, so nothing was
    compared.  A table of pointers then said so and left ``fill: null``; now (probe tables,
    docs/probe-spec.md) it is a ``kind: table`` whose entries are typed and roled by the accesses
    through its pointers, with ``count: null`` (the spec refuses to load there until it is given)."""
    from splice.probe.language.init import skeleton

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


def test_cutlass_alpha_beta_pointer_arrays_are_tables():
    """LinearCombination's ``alpha_ptr_array`` / ``beta_ptr_array`` (Params bytes 312 and 320,
    ``offsetof`` on the host) are loaded and dereferenced; ``alpha_ptr`` / ``beta_ptr`` (296,
    304) are plain pointers."""
    from splice.probe.language.init import skeleton

    f = _fields(skeleton(CUTLASS_FP8.read_text(), str(CUTLASS_FP8))[0])
    assert "kind: table" in f[312] and "kind: table" in f[320]
    assert "kind: table" not in f[296] and "kind: table" not in f[304]


# ---- probe init on nvcc -G builds: calls and the %SP frame ----------------------------------------

def test_g_build_follows_handles_into_the_fetch_helpers():
    """nvcc -G does not inline ``tex2DLayered``…: the entry passes each texture/surface handle to a
    helper ``.func`` (``st.param.b64 [param0+0], %rd7; call.uni (retval0), _ZN…tex2DLayered…``)
    and the fetch is there.  The skeleton said "read as a value, never dereferenced here" for all
    handles; values passed to a called function are now followed into it."""
    from splice.probe.language.init import skeleton

    path = MODERN / "tex_layered_cube_G.ptx"      # a reduced tex_layered_cube.cu: a2d, cube, a1d surface
    text, rows = skeleton(path.read_text(), str(path))
    assert [r["kind"] for r in rows] == ["texture", "texture", "surface", "buffer", "scalar"]
    assert text.count("TODO: used as") == 1 and "never dereferenced" not in text     # the cube map
    for geometry in ("geometry: a2d", "cube (a cube map)", "geometry: a1d"):
        assert geometry in text


def test_g_build_struct_copy_through_the_sp_frame():
    """At -G the struct goes through ``st.u64 [%SP+8], %rd3`` (generic addressing of the local
    depot) and comes back with ``ld.u64 [%SP+dynamic]``: the frame is followed like ``.local``
    (constant offsets slot by slot, a run-time offset as any parked value), so the -G build lists
    the same six pointer fields as the -O3 one, not the shared-memory views also parked there."""
    from splice.probe.language.init import skeleton

    for name in ("struct_params_dynsmem_G.ptx", "struct_params_dynsmem.ptx"):
        path = MODERN / name
        text, rows = skeleton(path.read_text(), str(path), "struct_params")
        f = _fields(text)
        assert sorted(f) == [0, 8, 16, 24, 32, 40], name
        assert all("accessed as .f32, .u16" in b for b in f.values()), name


def test_a_value_passed_to_an_extern_function_is_said():
    """A pointer handed only to an ``.extern .func`` (its body is linked in later) was "read as a
    value, never dereferenced here"; the call is not followed, and the skeleton says so."""
    from splice.probe.language.init import skeleton

    src = """.version 8.0
.target sm_80
.address_size 64
.extern .func helper(.param .b64 p);
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  {
  .param .b64 a0;
  st.param.b64 [a0], %rd2;
  call.uni helper, (a0);
  }
  ret;
}
"""
    text, rows = skeleton(src, "t.ptx")
    assert rows[0]["kind"] == "scalar"
    assert "TODO: passed to helper, whose body is not in this module (not followed)" in text
    assert "never dereferenced" not in text


def test_cutlass_grouped_gemm_params():
    """CUTLASS's grouped GEMM (offsets from ``offsetof`` on the host): problem_sizes 0 (a
    GemmCoord array), alpha_ptr/beta_ptr 48/56, alpha/beta_ptr_array 64/72, ptr_A/B/C/D 80-104
    (``T**``), lda…ldd 112-136 (``int64_t*``).  The skeleton made ptr_A…ptr_D and lda…ldd "f64
    input buffers" (ptr_D, the only output, included) and problem_sizes f32."""
    from splice.probe.language.init import skeleton

    path = MODERN / "cutlass_grouped_sm80.ptx"
    f = _fields(skeleton(path.read_text(), str(path))[0])
    assert sorted(f) == [0, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136]
    for off in (64, 72, 80, 88, 96, 104):
        assert "kind: table" in f[off] and "count: null" in f[off], off
    assert "role: output" in f[104] and "role: input" in f[80]            # ptr_D written, ptr_A read
    for off in (112, 120, 128, 136):
        assert "dtype: u64" in f[off] and "guessed" not in f[off] and "mul.lo.s64" in f[off], off
    assert "dtype: s32" in f[0] and "dtype: f32" in f[48] and "dtype: f32" in f[56]


# ---- probe init: module-scope variables -----------------------------------------------------------

GLOBALS_ONLY = """.version 8.0
.target sm_90
.address_size 64
.global .align 4 .b8 g_in[1024];
.global .align 4 .b8 g_out[1024];
.const .align 4 .b8 c_scale[16];
.global .align 4 .u32 g_table[2] = {1, 2};
.visible .entry globals_only()
{
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd1, %r1, 4;
  mov.u64 %rd2, g_in;
  add.s64 %rd3, %rd2, %rd1;
  ld.global.f32 %f1, [%rd3];
  ld.const.f32 %f2, [c_scale+4];
  ld.global.u32 %r2, [g_table+4];
  mul.f32 %f3, %f1, %f2;
  mov.u64 %rd4, g_out;
  add.s64 %rd5, %rd4, %rd1;
  st.global.f32 [%rd5], %f3;
  ret;
}
"""


def test_module_variables_are_named_and_an_empty_frame_said():
    """A kernel with no parameters working on ``__device__`` / ``__constant__`` data (nvcc's
    ``globals_only()``, reduced here) got a skeleton with ``params:`` empty and ``frame: all``: a
    probe of it compared nothing and passed any splice.  The skeleton then named the variables
    in a NOTE; now (probe globals, docs/probe-spec.md) it lists them under ``globals:``, each
    sized from its declaration and roled by the entry's accesses, and the spec loads and
    compares ``g_out``."""
    from splice.analysis.global_uses import module_variable_refs
    from splice.probe.language.init import skeleton
    from splice.probe.language.document import parse_spec
    from splice.analysis import Kernel
    from splice.ptx import parse
    import yaml

    variables: list = []
    text, rows = skeleton(GLOBALS_ONLY, "g.ptx", None, variables)
    assert rows == [] and "params: []" in text
    assert [(v["name"], v["role"], v["fill"]) for v in variables] == [
        ("g_in", "input", "seeded"), ("g_out", "output", "poisoned"), ("c_scale", "input", "seeded"),
        ("g_table", "input", "module")]
    assert module_variable_refs(Kernel(parse(GLOBALS_ONLY, "g.ptx"))) == ["g_in", "g_out", "c_scale"]
    data = yaml.safe_load(text.replace("grid: null", "grid: [1]").replace("block: null", "block: [256]"))
    spec = parse_spec(data, "g.yaml")
    assert spec.frames == ("g_out",) and spec.field("g_out").shape == (256,)
    path = MODERN / "calls_params_globals.ptx"       # __constant__ Params c_params, __device__ g_counter
    v2: list = []
    t2, _ = skeleton(path.read_text(), str(path), "_Z17dyn_shared_kernelPKfPfi", v2)
    assert [v["name"] for v in v2] == ["c_params", "g_counter"] and "globals:" in t2


def test_verify_of_a_timer_read_says_timer_without_an_address(tmp_path, capsys):
    """The identity cut of ``mov.u64 %rd6, %globaltimer`` (handwritten_isa_rare s8-s10) is not
    provable (each read is a new value); the reason was "('%globaltimer', 139906194452944, 1) is
    read before it is written": an evaluator's id() (different on every run) in a sentence that
    called a timer read an undefined register."""
    import re

    from splice.cli import main

    native = tmp_path / "n.ptx"
    assert main(["extract", str(RARE), "--entry", "rare_mma", "--statements", "s8-s10", "-o", str(native)]) == 0
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {RARE}\nentry: rare_mma\noutput: {tmp_path / 'o.ptx'}\ncuts:\n"
                 "  - statements: s8-s10\n    native: n.ptx\n")
    capsys.readouterr()
    assert main(["verify", str(r)]) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "%globaltimer is a timer: each read is a new value" in out
    assert "read before it is written" not in out and not re.search(r"\d{9,}", out)


def test_a_32_bit_field_widened_for_an_index_is_not_a_pointer_half():
    """A by-value struct's 32-bit field read with ``ld.param.u32 %rd`` (zero-extended for 64-bit
    index arithmetic) and added to a pointer is an index, not half of a pointer: only halves
    joined by ``bfi.b64`` / ``shl.b64 …, 32`` + ``or.b64`` make one."""
    from splice.probe.language.init import skeleton

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
    f = _fields(skeleton(src, "t.ptx")[0])
    assert sorted(f) == [0]


def test_an_indirect_call_is_named_as_one():
    """``call (cr), %fp, (ca), $Ltargets;``: the target is the register, not the
    ``.calltargets`` label after the arguments."""
    from splice.analysis.param_trace import _call_args, _taint

    k = Kernel.load(RARE, entry="rare_ctl")
    assert [c for c, _a in _call_args(k, _taint(k)[0])] == ["an indirect call"]
    k = Kernel.load(RARE, entry="rare_mma")
    assert [c for c, _a in _call_args(k, _taint(k)[0])] == ["pair_of"]


def test_index_of_a_module_without_entries_says_so(tmp_path, capsys):
    """A library of ``.func`` only (nvcc -rdc): ``index`` printed nothing and exit 0, as if the
    module had an entry without statements; ``spec``/``notes``/``sass-mix`` said "no .entry"."""
    from splice.cli import main

    p = tmp_path / "lib.ptx"
    p.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                 ".visible .func (.param .b32 r) lib_add(.param .b32 a)\n{\n\t.reg .b32 %r<3>;\n"
                 "\tld.param.b32 %r1, [a];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n")
    assert main(["index", str(p)]) == 2
    assert "no .entry in the module" in capsys.readouterr().err
