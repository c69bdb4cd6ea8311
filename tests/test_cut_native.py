"""Native phase files: header, template parameters, syntax errors at the native file's line."""
import pytest

from splice.cut.native import eval_expr, parse_native
from splice.errors import SpliceError
from splice.ptx.errors import PtxSyntaxError

SRC = """// a native phase
// splice-native:
//   params: {woff: 8512, step: 512}
//   scratch: {w: .b64, q<2>: .b32, p: .pred}
ld.weak.global.ca.v4.u32 {%q0, %q1, %d0, %d1}, [%w+{{woff + step}}];
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t{%d0, %d1},
\t{%a0, %a1, %a2, %a3},
\t{%b0, %b1},
\t{%c0, %c1};
"""


def test_header_params_scratch_and_lines():
    n = parse_native(SRC, "n.ptx")
    assert n.params == {"woff": 8512, "step": 512}
    assert n.scratch == {"%w": ".b64", "%q0": ".b32", "%q1": ".b32", "%p": ".pred"}
    assert [n.line(s) for s in n.body] == [5, 6]
    assert "[%w+9024]" in n.text
    assert n.used["%a0"] == 6


def test_recipe_params_override_and_context_expressions():
    n = parse_native(SRC.replace("8512", "weight_lo"), "n.ptx", {"step": 16}, {"weight_lo": 100})
    assert "[%w+116]" in n.text


def test_unknown_template_parameter_names_line():
    with pytest.raises(SpliceError) as ei:
        parse_native("// x\nadd.s32 %d0, %a0, {{nope}};\n", "n.ptx")
    assert ei.value.path == "n.ptx" and ei.value.line == 2 and "nope" in ei.value.message


def test_syntax_error_maps_to_native_line():
    with pytest.raises(PtxSyntaxError) as ei:
        parse_native("// one\n// two\nadd.s32 %d0, %a0 %a1;\n", "n.ptx")
    e = ei.value
    assert (e.path, e.line) == ("n.ptx", 3)
    assert "add.s32 %d0, %a0 %a1;" in e.render()


def test_body_reg_declarations_are_scratch():
    n = parse_native(".reg .b32 %t<3>;\n.reg .pred %pp;\nmov.b32 %d0, %a0;\n", "n.ptx")
    assert n.scratch == {"%t0": ".b32", "%t1": ".b32", "%t2": ".b32", "%pp": ".pred"}
    assert len(n.body) == 1


def test_yaml_boolean_scratch_name_is_an_error():
    with pytest.raises(SpliceError) as ei:
        parse_native("// splice-native: {scratch: {off: .b64}}\nmov.b32 %d0, %a0;\n", "n.ptx")
    assert "quote" in ei.value.message and ei.value.line == 1


def test_bad_header_key():
    with pytest.raises(SpliceError) as ei:
        parse_native("// splice-native: {parms: {}}\n", "n.ptx")
    assert "parms" in ei.value.message


def test_eval_expr_is_arithmetic_only():
    assert eval_expr("a * 2 + 512", {"a": 3}) == 518
    with pytest.raises(ValueError):
        eval_expr("__import__('os')", {})


@pytest.mark.parametrize("body,line,col,says", [
    ("add.u32 %d0, %a0, {{1+2\n}};\n", 2, 19, "this {{ has no }} on its line"),
    ("add.u32 %d0, %a0, {{1+2}};\nadd.u32 %d0, %d0, 3}};\n", 3, 20, "this }} closes no {{"),
    ("add.u32 %d0, %a0, 1; /* {{ */ add.u32 %d0, %d0, {{2\n}};\n", 2, 49, "this {{ has no }}"),
    ("add.u32 %d0, %a0, {{ {{1}} }};\n", 2, 19, "not an expression"),
], ids=["split-across-lines", "stray-close", "after-a-comment", "nested"])
def test_an_unexpanded_template_is_an_error_at_its_place(body, line, col, says):
    """regression: ``add.u32 %r11, %r11, {{1+2`` / ``}};`` (a template split across two lines)
    was written into the spliced module as it stood, ``--no-ptxas`` exit 0.  Every ``{{``/``}}``
    is a template's, on one line, or an error at the native's line and column."""
    with pytest.raises(SpliceError) as ei:
        parse_native("// x\n" + body, "n.ptx")
    e = ei.value
    assert (e.path, e.line, e.column) == ("n.ptx", line, col) and says in e.message, e.render()


def test_braces_in_comments_are_no_templates():
    """Comments are not emitted: the header's one-line YAML ends in ``}}``, a remark may show one."""
    n = parse_native("// splice-native: {params: {k: 3}}\n// }} alone\nadd.u32 %d0, %a0, {{k}}; // {{\n",
                     "n.ptx")
    assert "add.u32 %d0, %a0, 3;" in n.text


def test_a_split_template_writes_nothing(tmp_path, monkeypatch, capsys):
    from splice.cli import main

    from .conftest import DATA, TINY_SWAPPED

    (tmp_path / "tiny.ptx").write_bytes((DATA / "recipes" / "tiny.ptx").read_bytes())
    (tmp_path / "n.ptx").write_text(TINY_SWAPPED + ".reg .b32 %r11;\nmov.u32 %r11, 0;\nadd.u32 %r11, %r11, {{1+2\n}};\n")
    (tmp_path / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]) == 2
    err = capsys.readouterr().err
    assert "n.ptx:13:21: unexpanded template: this {{ has no }} on its line" in err and "^" in err
    assert not (tmp_path / "o.ptx").exists()
