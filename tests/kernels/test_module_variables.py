"""Module-scope variables: nvcc's __managed__ (.attribute(.managed)), a kernel of no parameters
working on __device__ / __constant__ data (the skeleton's globals:), a variable touched only in a
called function.  Kernels managed_virtual_heap, calls_params_globals, handwritten_linkage_multi
and a globals_only kernel written here, read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import yaml

from splice.analysis import Kernel
from splice.cli import main
from splice.ptx import emit, parse, parse_file
from splice.ptx import model as m

from .bundled import MODERN, skeleton

MANAGED = MODERN / "managed_virtual_heap.ptx"
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


def test_managed_variables_parse_and_round_trip():
    """``.global .attribute(.managed) .align 4 .u32 m_counter;`` was a parse error ("expected
    ')' … got '('") at line 80, so every command refused the module."""
    text = MANAGED.read_text()
    mod = parse(text, str(MANAGED))
    assert emit(mod) == text
    decls = {d.declarators[0].name: d for d in mod.items if type(d) is m.Decl}
    assert decls["m_counter"].attrs[0] == ".attribute(.managed)" and decls["m_counter"].type == ".u32"
    assert decls["m_table"].type == ".b8" and decls["m_table"].align == 4
    src = (".version 8.0\n.target sm_90\n.address_size 64\n"
           ".global .attribute(.unified(19,95)) .f32 u[4];\n")
    assert parse(src).items[-1].attrs[0] == ".attribute(.unified(19,95))"


def test_canonical_form_of_a_managed_variable_reparses(capsys):

    assert main(["canonical", str(MANAGED)]) == 0
    out = capsys.readouterr().out
    assert ".global .attribute(.managed) .align 4 .u32 m_counter;" in out
    assert parse(out).items == parse_file(str(MANAGED)).items


def test_module_variables_are_named_and_an_empty_frame_said():
    """A kernel with no parameters working on ``__device__`` / ``__constant__`` data (nvcc's
    ``globals_only()``, reduced here) got a skeleton with ``params:`` empty and ``frame: all``: a
    probe of it compared nothing and passed any splice.  The skeleton then named the variables
    in a NOTE; now (probe globals, docs/probe-spec.md) it lists them under ``globals:``, each
    sized from its declaration and roled by the entry's accesses, and the spec loads and
    compares ``g_out``."""
    from splice.probe.init import module_variable_refs, skeleton
    from splice.probe.spec import parse_spec

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


def test_a_variable_touched_only_in_a_called_function_is_named():
    """``hits`` (a ``.common .global`` counter, no initialiser) is bumped only inside ``bump``,
    which both entries call: neither skeleton said the entry writes a module-scope variable
    the probe does not compare."""
    path = MODERN / "handwritten_linkage_multi.ptx"
    for entry in ("first", "second"):
        text, _ = skeleton(path, entry)
        (hits,) = [g for g in yaml.safe_load(text)["globals"] if g["name"] == "hits"]
        assert hits["role"] == "inout"            # listed, so compared (the spec's globals:)
        assert "- name: hits" in text and "named only in a function the entry calls" in text
