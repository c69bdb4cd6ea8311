"""splice.tune.natives: a variant's native generated from the recipe's own, through the model --
templates kept as written, schedule fences from the builder, and every generated native still
proved equal by splice verify."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.cut.native import parse_native
from splice.errors import SpliceError
from splice.tune.natives import Shape, fence_nodes, generate, hold_templates, restore_templates

ROOT = Path(__file__).resolve().parents[1]
QKV = ROOT / "recipes/native/qkv_wave.ptx"
K5 = ROOT / "recipes/tune/native/enc5_16x32x160_c.ptx"


def test_templates_survive_a_reorder():
    src = QKV.read_text()
    out = generate(src, str(QKV), Shape("k-major", "start", "sunk"))
    for tpl in ("{{param0}}", "{{wparam}}", "{{woff}}", "{{woff + 512}}", "{{slot}}"):
        assert tpl in out
    assert "params: {woff: weight_lo, slot: 27648, wparam: 40}" in out
    held, holes = hold_templates(src)
    assert "{{" not in held and restore_templates(held, holes) == src


def test_holes_never_collide_with_the_text():
    src = "mov.u32 %out0, 7100000000000000000;\nadd.u32 %out0, %out0, {{k}};\n"
    held, holes = hold_templates(src)
    assert len(holes) == 1 and next(iter(holes)) not in src


def test_the_identity_is_the_same_statements():
    src = K5.read_text()
    out = generate(src, str(K5), Shape())
    a = parse_native(src, "a").body
    b = parse_native(out, "b").body
    assert a == b


def test_fence_is_builder_code_with_its_own_registers():
    nodes, scratch = fence_nodes(set())
    assert [n.opcode for n in nodes] == ["mov", "mov", "mov", "setp", "st"]
    assert nodes[-1].guard is not None and nodes[1].operands[1].name == "%tid.x"
    assert set(scratch.values()) == {".b64", ".b32", ".pred"}
    with pytest.raises(SpliceError, match="schedule fence"):
        fence_nodes({next(iter(scratch))})


def test_every_k_fences_each_k_step():
    out = generate(K5.read_text(), str(K5), Shape("k-major", "every-k"))
    assert out.count("%clock64") == 5
    assert "tunefence" in out.split("splice-native:")[1].split("\n")[2]     # scratch line


def test_a_native_with_a_label_is_refused_at_its_line(tmp_path):
    p = tmp_path / "loop.ptx"
    p.write_text("// splice-native:\n//   params: {}\n//   scratch: {}\nmov.u32 %out0, 0;\n$l:\nadd.u32 %out0, %out0, 1;\n"
                 "bra $l;\n")
    with pytest.raises(SpliceError) as err:
        generate(p.read_text(), str(p), Shape("k-major"))
    assert err.value.line == 5 and "control flow" in err.value.message


@pytest.mark.parametrize("shape", [Shape("k-major", "every-k"), Shape("chain-major", "both"),
                                   Shape("original", "start")])
def test_generated_natives_are_proved_equal(tmp_path, shape):
    """The Triton K-loop phase (in-place accumulators) in three generated forms: splice verify
    proves each equal to the original statements."""
    from splice.cut.pipeline import run_apply
    from splice.verify.compare import EQUAL, verify_plan

    src = (ROOT / "recipes/native/triton_matmul_p1.ptx").read_text()
    (tmp_path / "native").mkdir()
    (tmp_path / "native/p1.ptx").write_text(generate(src, "p1", shape))
    module = ROOT / "corpus/triton/matmul_sm80.ptx"
    (tmp_path / "r.yaml").write_text(f"module: {module}\nentry: matmul_kernel\narch: sm_80\n"
                                     "cuts:\n  - phase: 1\n    native: native/p1.ptx\n")
    plan = run_apply(str(tmp_path / "r.yaml"), ptxas=False)[0]
    assert [r.verdict for r in verify_plan(plan)] == [EQUAL]


SCOPED = """// splice-native:
//   scratch: {t0: .b32}
mov.b32 %t0, %in0;
{
\t.reg .f16 low;
\t.reg .f16 high;
\tmov.b32 {low, high}, %t0;
\tmov.b16 %out0, low;
}
{
\t.reg .f16 low;
\t.reg .f16 high;
\tmov.b32 {low, high}, %t0;
\tmov.b16 %out1, high;
}
"""


@pytest.mark.parametrize("fence", ["none", "start", "end"])
def test_registers_of_nested_scopes_keep_their_declarations(fence):
    """A scope's `.reg .f16 low;` (no %: the streamed natives have them) is declared by a .reg
    line, not in the header (which would name it %low): the generated native parses to the same
    statements and registers, the fences aside."""
    out = generate(SCOPED, "n.ptx", Shape(fence=fence))
    a, b = parse_native(SCOPED, "a"), parse_native(out, "b")
    fence_regs = {r for r in b.scratch if r.startswith("%tunefence")}
    assert {r: t for r, t in b.scratch.items() if r not in fence_regs} == a.scratch
    assert {"low", "high", "low_s1", "high_s1"} <= set(b.scratch) and "%low" not in b.scratch
    fence_stmts = len(fence_nodes(set())[0])
    body = list(b.body)
    if fence in ("start",):
        body = body[fence_stmts:]
    if fence == "end":
        body = body[:-fence_stmts]
    assert body == list(a.body)


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["enc5", "dec1"])
def test_phase_natives_regenerate_byte_for_byte(tmp_path, layer):
    """recipes/tune/native/*.ptx are what recipes/tune/make_phase_natives.py writes."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("_mk_phase", root / "recipes" / "tune" / "make_phase_natives.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    files = mod.main(str(root / "corpus" / f"{layer}.ptx"), layer, out=tmp_path)
    assert files
    for name in files:
        assert (tmp_path / name).read_text() == (root / "recipes" / "tune" / "native" / name).read_text(), name


def test_phase_templates_group_the_phases_by_their_extracted_body():
    """Every phase is in exactly one template, in phase order; phases of one template extract to
    one body; two templates never share a body."""
    from splice.analysis import Kernel
    from splice.cut.extract import extract, phase_templates

    k = Kernel.load(str(Path(__file__).resolve().parents[1] / "corpus" / "dec1.ptx"))
    templates = phase_templates(k)
    seen = [p.index for _b, _s, phs in templates for p in phs]
    assert sorted(seen) == [p.index for p in k.phases]
    assert len({b for b, _s, _p in templates}) == len(templates)
    for body, scratch, phs in templates:
        assert all(p.shape == phs[0].shape for p in phs)
        for p in phs[:2]:
            text = extract(k, phase=p.index)["text"]
            assert body in text and f"//   scratch: {{{scratch}}}" in text
