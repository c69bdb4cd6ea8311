"""Epilogue cuts: selectors, expected facts, extract --epilogue, and extract → apply giving SASS
identical to the original (skipped without ptxas and a disassembler)."""
import tempfile
from pathlib import Path

import pytest

from splice.cut.kernel import load_kernel
from splice.cut.recipe import _phase_list, load_recipe
from splice.cut.splice import plan as make_plan
from splice.errors import SpliceError

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "recipes" / "tiny.ptx"
ENC5 = ROOT / "corpus" / "enc5.ptx"
DEC1 = ROOT / "corpus" / "dec1.ptx"
RECIPES = ROOT / "recipes"
ENTRY5 = "cuda_dldn_engine_swin_enc5_kernel"


@pytest.fixture(scope="module")
def enc5():
    return load_kernel(str(ENC5))


def _recipe(tmp_path, cut_yaml, module=ENC5, native="// splice-native:\n//   params: {}\n"):
    (tmp_path / "n.ptx").write_text(native)
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {module}\noutput: out.ptx\ncuts:\n{cut_yaml}")
    return load_recipe(r, search_path=[])


def test_step_and_list_forms():
    assert _phase_list("23-59/2", "r", (1, 1)) == tuple(range(23, 60, 2))
    assert _phase_list("23,25,27", "r", (1, 1)) == (23, 25, 27)
    assert _phase_list("1-3,7-11/2", "r", (1, 1)) == (1, 2, 3, 7, 9, 11)
    with pytest.raises(SpliceError, match="step like 23-59/2"):
        _phase_list("23-59/0", "r", (1, 1))


def test_selector_parse_and_errors(tmp_path):
    rec = _recipe(tmp_path, "  - epilogues: 23-27/2\n    native: n.ptx\n")
    assert rec.cuts[0].select == "epilogues" and rec.cuts[0].targets == (23, 25, 27)
    rec = _recipe(tmp_path, "  - phase+epilogue: 21\n    native: n.ptx\n")
    assert rec.cuts[0].select == "phase+epilogue" and rec.cuts[0].targets == (21,)
    with pytest.raises(SpliceError) as ei:
        _recipe(tmp_path, "  - epilogue: x21\n    native: n.ptx\n")
    assert "epilogue: expected an epilogue number" in str(ei.value) and "r.yaml:4:15:" in str(ei.value)
    with pytest.raises(SpliceError, match="exactly one of"):
        _recipe(tmp_path, "  - epilogue: 21\n    phase: 21\n    native: n.ptx\n")


def test_missing_epilogue_named(tmp_path, enc5):
    rec = _recipe(tmp_path, "  - epilogue: 99\n    native: n.ptx\n")
    with pytest.raises(SpliceError, match=r"epilogue 99 does not exist .*E1…E61"):
        make_plan(rec, enc5)


def test_template_instantiated_per_epilogue(enc5):
    """One template, 19 cuts; each instantiation loads its own next phase's B, at exactly the
    offsets the original epilogue loads (read from the original by the analysis)."""
    from splice.analysis.notes_facts import Facts

    p = make_plan(load_recipe(RECIPES / "enc5_act_epilogues.yaml"), enc5)
    assert [c.title.split()[0] for c in p.cuts] == [f"E{n}" for n in range(23, 60, 2)]
    F = Facts(enc5)
    for c in p.cuts:
        (g,) = [g for g in F.memory(c.first, c.last) if g["kind"] == "ld"]
        site = "\n".join(c.binding.site)
        for off in g["offs"]:
            assert f"+{off}]" in site, (c.title, off)
        assert c.facts["kind"] == "next-B loads + packs + clamped-cubic activation"


def test_expect_mismatch_table_nothing_written(tmp_path, enc5):
    exp = ("    expect:\n      statement_count: 100\n      kind: packs\n      live_in: {.b32: 13}\n"
           "      constants: [0f3F800000]\n      memory: {loads: 9, shared: 0}\n")
    rec = _recipe(tmp_path, "  - epilogue: 23\n    native: n.ptx\n" + exp)
    with pytest.raises(SpliceError) as ei:
        make_plan(rec, enc5)
    text = str(ei.value) + "\n" + (ei.value.detail or "")
    assert "5 mismatches" in text
    for fact, found in (("statement_count", "107"), ("kind", "clamped-cubic activation"),
                        ("live_in", ".b64=1"), ("constants", "0f40000000"), ("memory", "loads=10")):
        assert fact in text and found in text, fact
    assert "1 (E23)" in text
    assert not (tmp_path / "out.ptx").exists()


def test_expect_matches_shipped(enc5):
    p = make_plan(load_recipe(RECIPES / "enc5_e21.yaml"), enc5)
    f = p.cuts[0].facts
    assert f["statement_count"] == 607 and f["memory"]["loads"] == 30
    assert f["constants"] == ["0f3DA60DD6", "0f3ED306EB", "0f3F000000", "0f40000000"]


def test_extract_epilogue_header(enc5):
    from splice.cut.extract import extract

    r = extract(enc5, epilogue=23, source_name="enc5.ptx")
    t = r["text"]
    assert t.startswith("// splice native epilogue E23 extracted from enc5.ptx s6014-s6120")
    assert "//   kind: next-B loads + packs + clamped-cubic activation" in t
    assert "0f40000000 = 2 (f16 0x4000 = 2)" in t
    assert "in1    %r11247    .b32   <- P23's mma (D) s5998" in t
    assert "in0    %r10452    .b32   <- E21: mov.b32 s5299  [constant 0f40000000]" in t
    assert "out0   %r11608    .b32   -> P24's mma as B s6121" in t
    assert "out40  %r11650    .b32   -> P24's mma as A s6121" in t
    assert "ld.weak.global.ca.v4.u32 [W + 16·laneid] +237952 … +242560 step 512 ×10" in t
    assert r["epilogue"] == 23 and r["facts"]["statement_count"] == 107


def test_extract_e61_contract_and_labels(enc5):
    from splice.cut.extract import extract

    t = extract(enc5, epilogue=61, source_name="enc5.ptx")["text"]
    assert "block-level contract" in t and "texture 9" in t and "surface 1" in t
    assert "$L__BB0_" in t           # the loop's labels travel with the code


def test_fused_phase_epilogue_roles(tmp_path):
    from splice.cut.extract import extract

    k = load_kernel(str(TINY), "tiny")
    r = extract(k, epilogue=1, fused=True, source_name="tiny.ptx")
    assert [x["symbol"] for x in r["live_in"]][:5] == ["%a0", "%a1", "%a2", "%a3", "%b0"]
    (tmp_path / "n.ptx").write_text(r["text"])
    (tmp_path / "r.yaml").write_text(f"module: {TINY}\noutput: o.ptx\ncuts:\n  - phase+epilogue: 1\n"
                                     "    native: n.ptx\n    expect: {mma: 2, statement_count: 5}\n")
    p = make_plan(load_recipe(tmp_path / "r.yaml", search_path=[]), k)
    assert p.cuts[0].title.startswith("phase 1+E1") and p.cuts[0].removed == 5


def test_cli_extract_epilogue(tmp_path, capsys):
    from splice.cli import main

    out = tmp_path / "e.ptx"
    assert main(["extract", str(TINY), "--epilogue", "1", "-o", str(out)]) == 0
    assert out.read_text().startswith("// splice native epilogue E1")
    assert main(["extract", str(TINY), "--epilogue", "7"]) == 2
    assert "epilogue 7 does not exist" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("module,indices", [(ENC5, [1, 21, 23, 61]), (DEC1, [6, 12, 26])])
def test_extract_apply_sass_identical(module, indices):
    """A sample (loads only; activation + C build; the template's target; shared + barriers +
    loop + tex + sust; the softmax; dec1's last) extracted and applied back at once."""
    from splice.cut.epilogue_roundtrip import roundtrip_text
    from splice.ptx import sass

    k = load_kernel(str(module))
    with tempfile.TemporaryDirectory() as d:
        text = roundtrip_text(module, k.name, indices, Path(d), k)
    assert text != module.read_text()
    ok, diff = sass.sass_equal(module, text, "sm_90", timeout=1800)   # a loaded machine is slow
    assert ok, diff


# ---- binding checks for what native epilogues use -------------------------------------------

def _epi_abi():
    from dataclasses import dataclass, field

    @dataclass
    class R:
        reg: str
        type: str
        role: str
        index: int

    @dataclass
    class ABI:
        live_in: list
        live_out: list
        named: dict = field(default_factory=dict)
        value_types: dict = field(default_factory=dict)

    ins = [R("%r1", ".b32", "v", 0), R("%r2", ".b32", "v", 1), R("%rs3", ".b16", "v", 2),
           R("%p1", ".pred", "v", 3)]
    outs = [R("%r9", ".b32", "v", 0), R("%rs9", ".b16", "v", 1)]
    return ABI(ins, outs)


GOOD = """// splice-native:
//   scratch: {h<2>: .b16, x: .b32, f: .f32, q: .pred}
cvt.rn.satfinite.e4m3x2.f16x2 %h0, %in0;
cvt.rn.satfinite.e4m3x2.f16x2 %h1, %in1;
mov.b32 %x, {%h0, %h1};
shfl.sync.bfly.b32 %x|%q, %x, 1, 31, 0xffffffff;
cvt.f32.f16 %f, %in2;
setp.gt.f32 %q, %f, 0f00000000;
@%q bra $skip;
movmatrix.sync.aligned.m8n8.trans.b16 %x, %x;
$skip:
selp.b32 %out0, %x, %in1, %in3;
cvt.rn.f16.f32 %out1, %f;
"""


@pytest.mark.parametrize("bad,message", [
    ("cvt.rn.satfinite.e4m3x2.f16x2 %h0, %in0;", None),
    ("cvt.rn.satfinite.e4m3x2.f16x2 %x, %in0;", "%x is .b32 but cvt.rn.satfinite.e4m3x2.f16x2 uses it as a 16-bit destination"),
    # ptxas takes cvt.f32.f16 from a .b32 (a wider register, PTX ISA 5.2.3) but not cvt.f32.bf16
    ("cvt.f32.f16 %f, %in0;", None),
    ("cvt.f32.bf16 %f, %in0;", "%in0 is .b32 but cvt.f32.bf16 uses it as a 16-bit source"),
    ("setp.gt.f32 %x, %f, 0f00000000;", "%x is .b32 but setp.gt.f32 needs a predicate as destination"),
    ("@%x bra $skip;", "%x is .b32 but bra needs a predicate as guard"),
    ("selp.b32 %out0, %x, %in1, %x;", "needs a predicate as selector"),
    ("shfl.sync.bfly.b32 %h0, %x, 1, 31, 0xffffffff;", "%h0 is .b16 but shfl.sync.bfly.b32 uses it as a 32-bit operand"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %x, %in2;", "%in2 is .b16 but movmatrix"),
    ("mov.b32 %x, {%h0, %x};", "the vector {%h0 .b16, %x .b32} is 48 bits, not 32"),
])
def test_operand_checks_name_the_native_line(bad, message):
    from splice.cut.binding import Namer, bind
    from splice.cut.native import parse_native

    text = GOOD.replace("mov.b32 %x, {%h0, %h1};", bad + "\nmov.b32 %x, {%h0, %h1};")
    n = parse_native(text, "e.ptx")
    if message is None:
        b = bind(n, _epi_abi(), "inline", Namer(), 3)
        assert any("$Lsplice3_skip" in ln for ln in b.site)    # labels unique per instantiation
        return
    with pytest.raises(SpliceError) as ei:
        bind(n, _epi_abi(), "inline", Namer(), 1)
    assert message in str(ei.value) and "e.ptx:5" in str(ei.value)


def test_cut_widened_to_whole_blocks(tmp_path):
    """A block wholly inside the cut's statements is removed with them (NVVM's inline-asm
    scopes); its statements are gone from the output, the rest is byte-identical."""
    src = TINY.read_text().replace("\tld.global.v4.u32", "\t{\n\tld.global.v4.u32", 1).replace(
        "\tmov.u32 \t%r10, 0;", "\t}\n\tmov.u32 \t%r10, 0;")
    (tmp_path / "m.ptx").write_text(src)
    k = load_kernel(str(tmp_path / "m.ptx"))
    from splice.cut.extract import extract

    r = extract(k, statements=(8, 10), source_name="m.ptx")
    (tmp_path / "n.ptx").write_text(r["text"])
    (tmp_path / "r.yaml").write_text("module: m.ptx\noutput: o.ptx\ncuts:\n  - statements: s8-s10\n"
                                     "    native: n.ptx\n")
    p = make_plan(load_recipe(tmp_path / "r.yaml", search_path=[]), k)
    s, e = p.cuts[0].region
    assert src[s:e].lstrip().startswith("{") and src[:s] == p.text[:s]
    assert p.text.count("{") - p.text.count("}") == src.count("{") - src.count("}")


SHIPPED = {                      # recipe -> (cuts, statements removed in all)
    "enc5_e21.yaml": (1, 607), "enc5_act_epilogues.yaml": (19, 19 * 107),
    "dec1_e9.yaml": (1, 287), "enc5_e61.yaml": (1, 242), "enc5_e11.yaml": (1, 2457),
    "enc5_all_epilogues.yaml": (57, 9 * 7 + 2457 + 7 * 24 + 607 + 19 * 87 + 19 * 107 + 242),
}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_epilogue_recipes_bind(name):
    """Every hand-written epilogue passes its expectations and the binding checks; the text
    outside the cuts is the module's own."""
    p = make_plan(load_recipe(RECIPES / name))
    n, removed = SHIPPED[name]
    assert len(p.cuts) == n and sum(c.removed for c in p.cuts) == removed
    assert all(c.title.startswith("E") for c in p.cuts)
    first = min(c.region[0] for c in p.cuts)
    assert p.text[:first] == p.source[:first]


@pytest.mark.parametrize("name", ["dec1_e9_wrong_rounding.yaml", "dec1_e9_wrong_shuffle.yaml"])
def test_wrong_epilogues_pass_static_checks(name):
    p = make_plan(load_recipe(ROOT / "tests" / "data" / "recipes" / name))
    site = "\n".join(p.cuts[0].binding.site)
    assert ("cvt.rz.f16.f32" in site) == ("rounding" in name)
    good = "\n".join(make_plan(load_recipe(ROOT / "recipes" / "dec1_e9.yaml")).cuts[0].binding.site)
    # the shuffle mutant: one butterfly reads lane^1 where the correct E9 reads lane^2
    moved = (site.count(", 1, 31,") - good.count(", 1, 31,"), good.count(", 2, 31,") - site.count(", 2, 31,"))
    assert moved == ((1, 1) if "shuffle" in name else (0, 0))


@pytest.mark.slow
@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("name", ["enc5_e21.yaml", "dec1_e9.yaml", "enc5_e61.yaml"])
def test_shipped_epilogue_recipes_assemble(name, tmp_path):
    from splice.ptx.sass import compile_ptx

    p = make_plan(load_recipe(RECIPES / name, output=str(tmp_path / "o.ptx")))
    assert compile_ptx(p.text, "sm_90", 3).cubin
