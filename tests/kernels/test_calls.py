"""Kernels that call: an mma in a called .func, indirect calls and their call sequences in a cut,
a value passed to an extern function, device-side launches (relocatable code compiled with -c),
virtual calls and printf, mutual recursion, a library of .func only.  Kernels from nvcc
(mma_in_func, devlaunch_rdc, managed_virtual_heap, control_misc, mutual_recursion_local) and by
hand (handwritten_oddities, handwritten_isa_rare, handwritten_linkage_multi,
handwritten/epilogue_call_sequence), read 2026-11-30 and 2026-12-01."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError
from splice.ptx import emit, parse

from .bundled import MODERN, ROOT, cut_of

SPARSE = MODERN / "mma_sparse_int_f64.ptx"
RDC = MODERN / "devlaunch_rdc.ptx"
ODD = MODERN / "handwritten_oddities.ptx"
MANAGED = MODERN / "managed_virtual_heap.ptx"
CALLSEQ = ROOT / "tests" / "data" / "ptx" / "handwritten" / "epilogue_call_sequence.ptx"
ISA_RARE = MODERN / "handwritten_isa_rare.ptx"
CONTROL = MODERN / "control_misc.ptx"
RECURSE = "_Z22recurse_print_indirectPiPf"


def test_mma_in_a_called_function_is_named(capsys):

    path = MODERN / "mma_in_func.ptx"
    assert main(["spec", str(path), "--entry", "via_func", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["entries"][0]
    assert info["phases"] == []
    [f] = info["mma_in_calls"]["functions"]
    assert f["func"] == "_Z4tilePfjjjjjj" and f["mma"] == 1 and len(f["called_at"]) >= 2
    assert main(["extract", str(path), "--entry", "via_func", "--phase", "1"]) == 2
    err = capsys.readouterr().err
    assert "0 phases" in err and "mma in .func _Z4tilePfjjjjjj" in err and "entry bodies only" in err
    inl = Kernel.load(path, "inline_mma")         # the same tile inlined: phases, nothing to say
    from splice.analysis.calls import mma_in_calls

    assert inl.phases and mma_in_calls(inl)["functions"] == []


def test_indirect_call_is_named_when_a_phase_is_asked_for(capsys):

    assert main(["extract", str(MODERN / "control_misc.ptx"), "--entry", "recurse", "--phase", "1"]) == 2
    assert "1 indirect call: its target is unknown to splice" in capsys.readouterr().err


def test_comments_are_not_calls():
    """``// indirect call with .calltargets`` above a ``{`` was read as a second indirect call."""
    from splice.analysis.calls import mma_in_calls

    k = Kernel.load(ODD, "oddities")
    assert "// indirect call" in ODD.read_text()
    assert mma_in_calls(k)["indirect_calls"] == 1


@pytest.mark.needs("ptxas", "nvdisasm")
def test_sass_views_of_relocatable_code(capsys):
    """Dynamic parallelism calls ``cudaLaunchDeviceV2`` (an extern resolved at device link):
    ``sass-mix`` and ``spec --pressure`` used to fail with "Unresolved extern function"."""
    assert main(["sass-mix", str(RDC), "--entry", "parent", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["registers"] > 0
    assert main(["spec", str(RDC), "--entry", "parent", "--pressure", "--png", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["ptxas"]["registers"] > 0


@pytest.mark.needs("ptxas")
def test_compile_any_adds_c_only_for_unresolved_externs():
    from splice.ptx.sass import PtxasError, compile_any, compile_ptx

    with pytest.raises(PtxasError) as exc:
        compile_ptx(RDC, "sm_90")
    assert "Unresolved extern function" in exc.value.stderr
    assert "-c" in compile_any(RDC, "sm_90").command
    assert "-c" not in compile_any(SPARSE, "sm_90").command
    broken = SPARSE.read_text().replace("mma.sp::ordered_metadata", "mma.sp::nonsense", 1)
    with pytest.raises(PtxasError):      # any other error is still an error
        compile_any(broken, "sm_90")


def test_spec_json_of_the_managed_module(capsys):
    """Virtual calls through a vtable (an indirect call) and assert/malloc/printf calls: spec
    answers for every entry, in JSON."""
    assert main(["spec", str(MANAGED), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert len(info["entries"]) == 3 and all(e["phases"] == [] for e in info["entries"])


def test_a_native_keeps_a_call_sequences_param_declarations(tmp_path, capsys):
    """An epilogue holding ``{ .param .b64 param0; …; call.uni (retval0), vprintf, …; }``
    (CUTLASS's tail with ``__assertfail``): apply refused the extracted native, "only .reg
    declarations are allowed in a native phase, not .param".  Inside a nested scope they are a
    call's argument slots and stay; at a native's top level they are still refused."""
    native, out = tmp_path / "e1.ptx", tmp_path / "sp.ptx"
    assert main(["extract", str(CALLSEQ), "--epilogue", "1", "-o", str(native)]) == 0
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"module: {CALLSEQ}\noutput: {out}\ncuts:\n  - epilogue: 1\n    native: {native}\n")
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 0
    text = out.read_text()
    assert ".param .b64 param0;" in text and "call.uni (retval0), vprintf, (param0, param1);" in text
    capsys.readouterr()
    lines = native.read_text().splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("add.f32"))
    native.write_text("\n".join(lines[:top] + [".param .b64 stray;"] + lines[top:]) + "\n")
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 2
    assert "not .param (outside a { } call sequence)" in capsys.readouterr().err


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_identity_cut_of_an_epilogue_with_a_call():
    from splice.cut.identity import run_module

    trials = run_module(str(CALLSEQ), "sm_90", 3, (), epilogues=True)
    assert [(t.kind, t.identical) for t in trials] == [("phase", True), ("epilogue", True)]


def test_a_value_passed_to_an_extern_function_is_said():
    """A pointer handed only to an ``.extern .func`` (its body is linked in later) was "read as a
    value, never dereferenced here"; the call is not followed, and the skeleton says so."""
    from splice.probe.language.init import skeleton

    src = """.version 8.0
.target sm_80
.address_size 64
.extern .func lib_fn(.param .b64 p);
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  {
  .param .b64 a0;
  st.param.b64 [a0], %rd2;
  call.uni lib_fn, (a0);
  }
  ret;
}
"""
    text, rows = skeleton(src, "t.ptx")
    assert rows[0]["kind"] == "scalar"
    assert "TODO: passed to lib_fn, whose body is not in this module (not followed)" in text
    assert "never dereferenced" not in text


def test_an_indirect_call_is_named_as_one():
    """``call (cr), %fp, (ca), $Ltargets;``: the target is the register, not the
    ``.calltargets`` label after the arguments."""
    from splice.analysis.param_trace import _call_args, _taint

    k = Kernel.load(ISA_RARE, entry="rare_ctl")
    assert [c for c, _a in _call_args(k, _taint(k)[0])] == ["an indirect call"]
    k = Kernel.load(ISA_RARE, entry="rare_mma")
    assert [c for c, _a in _call_args(k, _taint(k)[0])] == ["pair_of"]


def test_index_of_a_module_without_entries_says_so(tmp_path, capsys):
    """A library of ``.func`` only (nvcc -rdc): ``index`` printed nothing and exit 0, as if the
    module had an entry without statements; ``spec``/``notes``/``sass-mix`` said "no .entry"."""
    p = tmp_path / "lib.ptx"
    p.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                 ".visible .func (.param .b32 r) lib_add(.param .b32 a)\n{\n\t.reg .b32 %r<3>;\n"
                 "\tld.param.b32 %r1, [a];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n")
    assert main(["index", str(p)]) == 2
    assert "no .entry in the module" in capsys.readouterr().err


def test_an_indirect_call_sequence_in_a_native(tmp_path):
    """extract of a range holding an indirect call sequence writes its ``.callprototype`` inside
    the call's ``{ }`` (as nvcc does); apply refused its own extract: "directive .callprototype
    is not allowed in a native phase".  Kept where a nested scope holds it, like the call's
    ``.param`` slots; a prototype label of the native's own is renamed with its call."""
    p = cut_of(tmp_path, CONTROL, RECURSE, 2, 48)
    assert ".callprototype" in (tmp_path / "n.ptx").read_text()
    assert p.text.count(".callprototype") == CONTROL.read_text().count(".callprototype")
    from splice.cut.native import parse_native

    with pytest.raises(SpliceError, match="directive .callprototype is not allowed"):
        parse_native("proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n", "n.ptx")


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_the_indirect_call_range_gives_the_original_sass(tmp_path):
    from splice.ptx.sass import compile_ptx, normalized_sass

    p = cut_of(tmp_path, CONTROL, RECURSE, 2, 48)
    assert normalized_sass(compile_ptx(p.text, "sm_90").cubin) == normalized_sass(compile_ptx(CONTROL, "sm_90").cubin)


def test_a_call_target_list_stays_with_its_call(tmp_path):
    """``ptarget: .calltargets twice, thrice;`` inside the indirect call's scope is kept by a native
    as ``.callprototype`` is (a range holding it was refused for that directive)."""
    p = cut_of(tmp_path, ODD, "oddities", 22, 30)
    cut = p.text.split("// splice: cut 1")[1].split("// splice: end cut 1")[0]
    assert ".calltargets twice, thrice;" in cut and ", ptarget;" in cut


def test_mutual_recursion_and_linkage_modules_round_trip():

    for name in ("mutual_recursion_local", "handwritten_linkage_multi"):
        path = MODERN / f"{name}.ptx"
        assert emit(parse(path.read_text(), str(path))) == path.read_text()


def test_an_entry_without_mma_says_so_and_how_to_cut_it(capsys):
    """Two empty tables (phases, epilogues) said nothing about a kernel with no tensor-core work;
    the report now says there is none and that any statement range is still a cut."""
    assert main(["spec", str(CONTROL), "--entry", "switch_table"]) == 0
    out = capsys.readouterr().out
    assert "0 phases, 0 mma" in out and "no phases and no epilogues" in out
    assert "statements: sA-sB" in out and "--abi s1-s" in out
    assert "epilogues" not in out.replace("no epilogues", "")        # no empty tables
