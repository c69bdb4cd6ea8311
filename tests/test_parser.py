"""The front end's contract: every corpus file parses (or fails with a placed error), re-emits
byte-identical, and the fast chunked parser builds exactly the model plain Lark builds."""
from __future__ import annotations

import dataclasses

import pytest

from splice.ptx import (Addr, Decl, Imm, Instruction, Label, Offset,
                        Pair, ParenList, PtxSyntaxError, Raw, Reg, Sym, Vec, canonical, emit,
                        parse, parse_file, walk)

from .conftest import EXPECTED_SYNTAX_ERRORS, THIRDPARTY, bundled_files, external_files

FILES = bundled_files()


def _spans(node, acc):
    if isinstance(node, tuple):
        for x in node:
            _spans(x, acc)
    elif dataclasses.is_dataclass(node):
        if hasattr(node, "span"):
            acc.append((type(node).__name__, node.span, getattr(node, "line", None)))
        for f in dataclasses.fields(node):
            if f.name not in ("span", "line", "source"):
                _spans(getattr(node, f.name), acc)
    return acc


@pytest.mark.corpus
def test_corpus_is_there(ptx_corpus):
    assert len(list(ptx_corpus.rglob("*.ptx"))) >= 300, f"{ptx_corpus} holds too few PTX files"


def test_bare_clone_subset_is_there():
    """Without the external corpus, the bundled third-party subset stands in for it."""
    files = sorted(THIRDPARTY.rglob("*.ptx"))
    assert len(files) >= 40 and {f.name for f in files} >= {"shared_ptr.ptx", "add.ptx", "kernels.ptx"}
    assert (THIRDPARTY / "README.md").is_file()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_roundtrip_and_fast_equals_slow(path):
    _roundtrip_and_fast_equals_slow(path)


@pytest.mark.corpus
@pytest.mark.parametrize("path", external_files(), ids=lambda p: p.name)
def test_external_corpus_roundtrip_and_fast_equals_slow(path):
    _roundtrip_and_fast_equals_slow(path)


def _roundtrip_and_fast_equals_slow(path):
    text = path.read_text()
    if path.name in EXPECTED_SYNTAX_ERRORS:
        line, col = EXPECTED_SYNTAX_ERRORS[path.name]
        for fast in (True, False):
            with pytest.raises(PtxSyntaxError) as err:
                parse(text, str(path), fast=fast, cache=False)
            assert (err.value.line, err.value.column) == (line, col)
        return
    fast = parse(text, str(path), fast=True, cache=False)
    assert emit(fast) == text
    if len(text) < 2_000_000:
        slow = parse(text, str(path), fast=False, cache=False)
        assert fast == slow
        assert _spans(fast.items, []) == _spans(slow.items, [])


def test_model_shapes_of_an_mma_and_loads():
    text = """.version 8.5
.target sm_90
.address_size 64
.visible .entry k(
\t.param .align 8 .b8 k_param_0[144]
)
{
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [k_param_0+40];
\t@!%p1 bra $L__BB0_2;
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t\t{%r1, %r2},
\t\t{%r3, %r4, %r5, %r6},
\t\t{%r7, %r8},
\t\t{%r9, %r9};
$L__BB0_2:
\tsetp.gt.u32 %p2|%p3, %r1, 3;
\tsust.b.2d.v4.b16.zero [%rd1, {%r1, %r2}], {%rs1, %rs2, %rs3, %rs4};
\tmov.f32 %f1, 0f3F800000;
\tcall.uni (retval0), fn, (param0, param1);
\tret;
}
"""
    mod = parse(text, cache=False)
    fn = mod.function("k")
    assert fn.params[0].declarator.dims == (144,)
    assert fn.params[0].attrs == (".align", "8", ".b8")
    body = list(walk(fn.body.items))
    decl = body[0]
    assert isinstance(decl, Decl) and decl.declarators[0].count == 20 and decl.type == ".b32"
    ld = body[2]
    assert ld.name == "ld.param.u64"
    assert ld.operands[1] == Addr((Offset(Sym("k_param_0"), "40"),))
    assert ld.operands[1].offset == 40
    bra = body[3]
    assert bra.guard.pred == "%p1" and bra.guard.negated
    mma = body[4]
    assert mma.opcode == "mma" and mma.modifiers[2] == ".m16n8k32"
    assert [len(v.items) for v in mma.operands] == [2, 4, 2, 2]
    assert mma.line == 12 and text[mma.span[0]:mma.span[1]].count("\n") == 4
    assert isinstance(body[5], Label) and body[5].name == "$L__BB0_2"
    assert body[6].operands[0] == Pair(Reg("%p2"), Reg("%p3"))
    assert body[7].operands[0] == Addr((Reg("%rd1"), Vec((Reg("%r1"), Reg("%r2")))))
    assert body[8].operands[1] == Imm("0f3F800000") and body[8].operands[1].value == 1.0
    assert isinstance(body[9].operands[0], ParenList)


def test_edit_re_emits_only_what_changed():
    text = ".version 8.5\n.target sm_90\n.address_size 64\n.entry k()\n{\n\t.reg .b32 %r<3>;\n\tmov.u32 %r1, 1; // one\n\tadd.s32 %r2, %r1, 2;\n\tret;\n}\n"
    mod = parse(text, cache=False)
    fn = mod.function("k")
    items = list(fn.body.items)
    add = items[2]
    items[2] = dataclasses.replace(add, opcode="sub", span=None)
    items.insert(3, Raw("mul.lo.s32 %r2, %r2, 3;"))
    new_fn = dataclasses.replace(fn, body=dataclasses.replace(fn.body, items=tuple(items)))
    new_mod = dataclasses.replace(mod, items=tuple(new_fn if i is fn else i for i in mod.items))
    out = emit(new_mod)
    assert out == text.replace("add.s32 %r2, %r1, 2;", "sub.s32 %r2, %r1, 2;\n\tmul.lo.s32 %r2, %r2, 3;")
    # the untouched comment and spacing survive; the edited module parses back
    assert parse(out, cache=False).function("k").body.items[2].opcode == "sub"


def test_canonical_reparses_to_the_same_model():
    for path in FILES[:: max(1, len(FILES) // 60)]:
        if path.name in EXPECTED_SYNTAX_ERRORS:
            continue
        mod = parse_file(path)
        again = parse(canonical(mod), cache=False)
        assert again == mod, path


@pytest.mark.parametrize("text,where,expect", [
    (".version 8.5\n.target sm_90\n.entry k()\n{\n\tadd.s32 %r1, %r2 %r3;\n}\n", (5, 19), "expected"),
    (".version 8.5\n.target sm_90\n.entry k()\n{\n\tmov.u32 %r1, #3;\n}\n", (5, 15), "unexpected character"),
    (".version 8.5\n.target sm_90\nextern .shared .b32 x[];\n", (3, 1), "expected"),
    (".version 8.5\n.target sm_90\n.entry k()\n{\n\tret;\n", (6, 1), "end of input"),
])
def test_errors_are_placed(text, where, expect):
    for fast in (True, False):
        with pytest.raises(PtxSyntaxError) as err:
            parse(text, "x.ptx", fast=fast, cache=False)
        e = err.value
        assert (e.line, e.column) == where, (fast, e)
        assert expect in e.message
        rendered = e.render()
        assert rendered.startswith(f"x.ptx:{where[0]}:{where[1]}: ")
        assert rendered.splitlines()[-1].strip() == "^"


def test_content_hash_cache_returns_the_same_model():
    text = FILES[0].read_text()
    a = parse(text, "a.ptx")
    b = parse(text, "a.ptx")
    assert a is b


@pytest.mark.parametrize("name", ["lineinfo_inlined.ptx", "debug_full_G.ptx", "tex_surf_objects.ptx"])
def test_every_statement_shape_is_templated(name):
    """The speed claim rests on the shape cache: once every shape had its chance to compile, a
    parse of the same text must not need Lark for any statement (a shape that silently stays
    'exact only' would regress to Lark)."""
    from splice.ptx import parser
    from splice.ptx.shapes import COMPILE_ITEM_AT

    from .conftest import MODERN

    text = (MODERN / name).read_text()
    for _ in range(COMPILE_ITEM_AT + 1):  # a shape is read directly until its COMPILE_(ITEM_)AT-th
        parser.parse(text, name, cache=False)
    before = parser.shape_stats()["misses"]
    parser.parse(text, name, cache=False)
    assert parser.shape_stats()["misses"] == before


def test_stand_in_layers_parse_without_lark_on_repeat():
    from splice.ptx import parser

    from .conftest import STANDIN

    for name in ("enc5.ptx", "dec1.ptx"):
        text = (STANDIN / name).read_text()
        parser.parse(text, name, cache=False)
        before = parser.shape_stats()["misses"]
        parser.parse(text, name, cache=False)
        assert parser.shape_stats()["misses"] == before, name


def test_operand_spans_on_demand():
    from splice.ptx.locate import operand_spans

    text = (".version 8.5\n.target sm_90\n.entry k()\n{\n"
            "\t@!%p1 mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16\n\t\t{%r1, %r2},\n"
            "\t\t{%r3, %r4, %r5, %r6},\n\t\t{%r7, %r8},\n\t\t{%r9, %r9};\n"
            "\ttex.base.2d.v4.f16.s32 {%rs1, %rs2, %rs3, %rs4}, [%rd448, {%r549, %r550}];\n"
            "\tcall.uni (retval0), fn, (param0, param1);\n\tret;\n}\n")
    mod = parse(text, cache=False)
    mma, tex, call, ret = mod.function("k").body.items
    got = [text[a:b] for a, b in operand_spans(text, mma)]
    assert got == ["{%r1, %r2}", "{%r3, %r4, %r5, %r6}", "{%r7, %r8}", "{%r9, %r9}"]
    assert [text[a:b] for a, b in operand_spans(text, tex)] == [
        "{%rs1, %rs2, %rs3, %rs4}", "[%rd448, {%r549, %r550}]"]
    assert [text[a:b] for a, b in operand_spans(text, call)] == ["(retval0)", "fn", "(param0, param1)"]
    assert operand_spans(text, ret) == ()
    # every instruction of a stand-in layer splits into as many spans as it has operands
    from .conftest import STANDIN

    big = (STANDIN / "dec1.ptx").read_text()
    bm = parse(big, "dec1.ptx")
    n = 0
    for fn in bm.functions():
        for st in walk(fn.body.items):
            if isinstance(st, Instruction):
                assert len(operand_spans(big, st)) == len(st.operands)
                n += 1
    assert n > 8000


def test_a_jump_table_after_its_label():
    """``$L_tbl: .branchtargets …;`` (the PTX ISA's ``brx.idx`` form, LLVM's dense switches):
    after a label a DOTNAME may also follow (a section's data line), and the keyword used to
    lose that tie in Lark's lexer; on its own line the fast path read it and Lark did not."""
    head = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 i)\n{\n"
    tail = "\tbrx.idx %r1, $L_tbl;\n$L_c0:\n$L_c1:\n\tret;\n}\n"
    for table in ("$L_tbl: .branchtargets $L_c0, $L_c1;\n", "$L_tbl:\n\t.branchtargets $L_c0, $L_c1;\n"):
        text = head + "\t.reg .b32 %r<2>;\n" + table + tail
        for fast in (True, False):
            items = parse(text, "t.ptx", fast=fast, cache=False).items[-1].body.items
            assert items[1] == Label("$L_tbl") and items[2].name == ".branchtargets"
            assert items[2].args == ("$L_c0", ",", "$L_c1")
        assert emit(parse(text, "t.ptx")) == text
