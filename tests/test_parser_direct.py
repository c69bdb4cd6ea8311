"""The direct instruction reader (``splice.ptx.direct``) builds exactly Lark's model or declines.

It is the shape cache's path for shapes not compiled yet (a cold parse of a small module meets
mostly those), so it must agree with Lark on every statement it accepts: the same node, span
and line, and it must never accept what Lark rejects.  Checked on every distinct statement of
the bundled files (and, with ``-m corpus``, of the shared corpus), on hand-made edge cases, and
through whole-module parses (fast path == plain Lark, errors at the same place)."""
from __future__ import annotations

import pytest

from splice.ptx import PtxSyntaxError, direct, parse, parser
from splice.ptx.direct import Reader
from splice.ptx.shapes import COMPILE_AT, _detokenize

from .conftest import bundled_files, external_files
from .test_parser_fuzz import _agree


def _plain_reader():
    from splice.ptx import model as m
    from splice.ptx.shapes import _Intern

    return Reader(False, _Intern(m.Reg), _Intern(m.Sym), _Intern(m.Imm))


def _statements(path):
    """Distinct one-statement lines of a file's bodies (what the line cutter hands over)."""
    seen = set()
    for raw in path.read_text(errors="surrogateescape").split("\n"):
        s = raw.strip(" \t\f\r")
        if s.endswith(";") and s.count(";") == 1 and "/" not in s and '"' not in s and s not in seen:
            seen.add(s)
            yield s


def _lark_items(s):
    return parser._lark(s, "body_items", s, "t.ptx", 0, base_line=7)


def _check_file(path):
    plain, tokens = _plain_reader(), Reader(True, None, None, None)
    accepted = 0
    for s in _statements(path):
        node = plain.instruction(s, (0, len(s)), 7)
        if node is None:
            continue
        accepted += 1
        try:
            items = _lark_items(s)
        except PtxSyntaxError as exc:
            raise AssertionError(f"direct reader accepted what Lark rejects: {s!r}: {exc}")
        assert items == (node,), s
        assert (items[0].span, items[0].line) == (node.span, node.line) == ((0, len(s)), 7), s
        kept = tokens.instruction(s, (0, len(s)), 7)
        assert _detokenize(kept) == node and kept.span == node.span, s
    return accepted


@pytest.mark.parametrize("path", [p for p in bundled_files() if p.stat().st_size < 400_000],
                         ids=lambda p: p.name)
def test_direct_reader_equals_lark_on_every_statement(path):
    _check_file(path)


def test_direct_reader_accepts_the_common_forms():
    """Not vacuous: the reader takes the instructions real modules are made of."""
    total = sum(_check_file(p) for p in bundled_files() if p.name in (
        "cp_async_pipeline.ptx", "ldmatrix_stmatrix_mma.ptx", "tex_surf_objects.ptx"))
    assert total >= 100
    plain = _plain_reader()
    for s in ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];",
              "sust.b.3d.v2.b64.trap [surf_A, {%r0, %r1, %r2, %r3}], {%rl0, %rl1};",
              "call.uni (%fd2), _Z_f, (%rl1, %fd1);", "call.uni _Z_g, ();"):
        assert direct.read_plain(plain, s, (0, len(s)), 1) == _lark_items(s)[0]   # by regex, not tokens


@pytest.mark.corpus
@pytest.mark.parametrize("path", external_files(), ids=lambda p: p.name)
def test_direct_reader_equals_lark_on_the_shared_corpus(path):
    _check_file(path)


# ---- edge cases, each as the first, the compiled and a templated statement of its shape ------

_EDGES = [
    "add.s32 %r1, %r2, 0x1F;", "add.s32 %r1, %r2, 10x1F;", "add.s32 %r1, %r2, 00x1F;",
    "mov.f32 %f1, 0f3F800000;", "mov.f32 %f1, 0f3F80000;", "mov.f32 %f1, 0f3F800000x;",
    "mov.f64 %fd1, 0d3FF0000000000000;", "mov.f64 %fd1, 0d3FF000000000000;",
    "mov.b32 %r1, 0b101;", "mov.b32 %r1, 0b12;", "mov.u32 %r1, 12U;", "mov.u32 %r1, 12u3;",
    "mov.f32 %f1, 1.5;", "mov.f32 %f1, 1.5e3;", "mov.f32 %f1, 1.5e;", "mov.f32 %f1, 1.;",
    "mov.s32 %r1, -1;", "mov.s32 %r1, - 1;", "mov.s32 %r1, 1.5.3;",
    "ld.global.u32 %r1, [%rd1+4];", "ld.global.u32 %r1, [%rd1+-4];", "ld.global.u32 %r1, [%rd1+1.5];",
    "ld.global.u32 %r1, [%rd1-4];", "ld.global.u32 %r1, [];", "ld.global.u32 %r1, [%rd1+4+4];",
    "ld.global .u32 %r1, [%rd1];", "st.shared::cta.b32 [%r1], %r2;", "ld.param.u64 %rd1, [p+0x10];",
    "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];", "mov.b64 %rd1, {%r1, %r2};",
    "setp.lt.s32 %p1|%p2, %r1, %r2;", "vote.ballot.b32 {%r1, %r2}|%p1, %p2;", "not.pred %p1, !%p2;",
    "not.pred %p1, !{%r1};", "not.pred %p1, !!%p2;", "mov.b32 %r1, %r2|{%r3};",
    "call.uni (retval0), foo, (param0, param1);", "call.uni (), foo, ();", "call (%r1+4), f;",
    "@!%p1 bra $L__BB0_1;", "@ %p1 bra L;", "@!p bra L;", "@%p1;", "@%p1 @%p2 bra L;", "@1 bra L;",
    "mov.u32 %r1, %tid.x;", "foo.x %r1;", "foo.x.y %r1;", "mov.b32 %r1, sym.y;", "mov.b32 %r1, sym.xy;",
    "mov.u32 %r1, $x;", "mov.u32 %r1, %;", "ret ;", "ret\t;", "exit;", "bar.sync 0;", "ret",
    "add.s32 %r1,\n\t\t%r2, %r3;", "add.s32 %r1, %r2 %r3;", "add.s32 %r1, , %r3;", "add.s32 %r1, %r2,;",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};",
    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
    "ld.global.v4.u32 {%r1, %r2, _, %r4}, [%rd1];", "mov.u32 %r1, function_name;", "mov.u32 %r1, .x;",
    "add.s32 %r1, %r2, %r3; ", "mov.u32 %r1, 1 2;", "mov.u32 %r1, {};", "mov.u32 %r1, ();", "a.b.c;",
    "function_name %r1;", "inlined_at;", "@function_name bra L;", "mov.u32 inlined_at, %r1;",
    "mov.b32 %r1, {%r2,%r3.x};", "st.global.v2.f32 [%rd1+-8], {%f1, %f2};", "ld.u32 %r1, [sym.x+4];",
    "ld.global.v4.u32 {%r1 , %r2}, [%rd1 + 4];", "mov.u32 %r1 ,%r2 ;", "mov.u32 %r1, 0f3F800000 ;",
    "add.s32 %r1,%r2,1.5e3;", "add.s32-1;", "mov.u32%r1, %r2;", "@%p1 bra.uni $L__BB0_2;", "@!%p1 ret;",
    "foo.x;", "foo.x.y;", "foo.xy %r1;", "foo.x::a %r1;", "foo.x1 %r1;", "foo.y_ %r1;", "foo.w$ %r1;",
    "st.shared::cta.v2.b32 [%r1+0x10], {%r2, %r3};",
    "mov.u32 %r1, [%r2 + 4];", "mov.u32 %r1, [4];", "mov.u32 %r1, {%r2};", "mov.u32 %r1, { %r2 , _ };",
    "mov.u32 %r1, 1.5.3;", "mov.u32 %r1, 12u;", "mov.u32 %r1, 0x1Fu;", "mov.u32 %r1, 0b2;", "a %r1; ",
    "mov.u32 %r1, {%r2},;", "mov.u32 %r1, [%r2+4],;", "mov.u32 %r1, %r2 %r3;", "mov.u32 %r1, [%r2+%r3];",
    "mov.u32 %r1, {%r2, {%r3}};", "mov.u32 %r1, [{%r2}];", "mov.u32 %r1, [%r2|%r3];", "mov.u32 %r1, (%r2|%r3);",
    # ZLUDA's pass-test IR markers, and `<`/`>` where the grammar has none
    "<Trap>;", "<Call> %r7, %r1, %r6;", "<Call> %r7, [a+4], {%r1, %r2}, !%p1;", "< Trap > ;", "<a.x> %r1;",
    "<Call>.x %r1;", "<1> %r1;", "<%r1> %r1;", "<Trap>", "<Trap> %r1,;", "<> %r1;", "<<Trap>>;", "@%p1 <Trap>;",
    "mov.u32 %r1, <a>;", "mov.u32 %r1, %r2>;", "<Trap><Trap>;", "<function_name>;", "<Call> (%r1), f;",
    # texture and surface addresses `[tex, {coordinates}]`, and forms near them
    "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [tex0,{%f5,%f6}];", "sust.b.1d.b32.trap [s , { %r1 } ], %r2;",
    "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [tex0, {%f5, 1}];", "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [%rd1, {%r1}];",
    "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t, {}];", "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t, {%r1}, {%r2}];",
    "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t+4, {%r1}];", "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t, %r1];",
    "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [{%r1}, t];", "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t, {%r1},];",
    "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t, {%r1.x}];", "tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [t.x, {a}];",
    "suld.b.2d.v2.b64.trap {%rl0, %rl1}, [surf_A, {%r0, %r1}];", "sured.b.add.2d.u32.trap [s, {%r0, %r1}], %r2;",
    # call lists
    "call.uni (%fd2), f, (%rl1, %fd1);", "call.uni f, ( );", "call.uni (  ), f;", "call (%r1, ), f;", "call (,), f;",
    "call (1), f;", "call ((%r1)), f;", "call (%r1) , f , (a.x, $b);", "call (%r1)(%r2), f;", "call (%r1.b0), f;",
]

_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"


@pytest.mark.parametrize("stmt", _EDGES)
def test_fast_path_agrees_with_lark_on_edge_cases(stmt):
    """The statement alone, then after COMPILE_AT+1 well-formed statements of the same key (so
    it meets a compiled template), then once more after that: model and spans, or error
    place, equal to plain Lark's every time."""
    _agree(_HEAD + "\t" + stmt + "\n\tret;\n}\n")
    good = {"0x1F": "0x1F", "10x1F": "0x2A", "00x1F": "0x2A", "0f3F80000;": "0f3F800001;",
            "0d3FF000000000000;": "0d3FF0000000000001;", "0b12": "0b10", "12u3": "12U",
            "0f3F800000x": "0f3F800000"}
    twin = stmt
    for bad, ok in good.items():
        twin = twin.replace(bad, ok)
    body = "".join(f"\t{twin}\n" for _ in range(COMPILE_AT + 2))
    _agree(_HEAD + body + "\t" + stmt + "\n\t" + stmt + "\n\tret;\n}\n")


def test_digit_collapsed_number_spellings_do_not_take_a_template():
    """``10x1F`` has the key of ``0x1F`` (digit runs collapse); it used to reuse that
    template and come out as ``Imm('10x1F')`` where Lark rejects it."""
    body = "\tadd.s32 %r1, %r2, 0x1F;\n" * (COMPILE_AT + 2) + "\tadd.s32 %r1, %r2, 10x1F;\n"
    with pytest.raises(PtxSyntaxError) as err:
        parse(_HEAD + body + "\tret;\n}\n", "t.ptx", cache=False)
    assert (err.value.line, err.value.column) == (6 + COMPILE_AT + 2, 20)


def test_shapes_are_read_directly_then_compiled():
    """A shape's first COMPILE_AT statements are read directly, the next compiles a template
    from the direct reader's tokens, and the rest are template hits: no Lark at all."""
    from splice.ptx.shapes import ShapeCache

    cache = ShapeCache(lambda *a: pytest.fail("Lark was asked"))
    # a pair operand (`%p|%q`) is not one of the plain forms: the shape goes through templates
    src = "".join(f"setp.lt.s32 %p{k}|%p{k + 1}, %r{k}, {k};\n" for k in range(COMPILE_AT + 4))
    pos, nodes = 0, []
    for k, line in enumerate(src.split("\n")[:-1]):
        nodes += cache.statement(src, pos, pos + len(line), k + 1, "t.ptx")
        pos += len(line) + 1
    assert cache.stats() == {"shapes": 1, "hits": 3, "direct": COMPILE_AT, "misses": 0}
    assert [n.span for n in nodes] == [(a, a + len(x)) for a, x in _offsets(src)]
    assert all(n == _lark_items(x)[0] for n, (_a, x) in zip(nodes, _offsets(src)))


def _offsets(src):
    pos = 0
    for line in src.split("\n")[:-1]:
        yield pos, line
        pos += len(line) + 1


# ---- the rest of the cold path -----------------------------------------------------------------

def test_verbatim_repeats_take_the_memo_and_keep_their_own_spans():
    """A statement repeated verbatim is rebuilt from the memo: equal to Lark's node, with the
    span and line of where it stands."""
    from splice.ptx.shapes import ShapeCache

    cache = ShapeCache(lambda *a: pytest.fail("Lark was asked"))
    stmt = "setp.lt.s32 %p1|%p2, %r1, 16;"
    src = "\n".join([stmt] * (COMPILE_AT + 5)) + "\n"
    nodes = [cache.statement(src, a, a + len(x), k + 1, "t.ptx")[0]
             for k, (a, x) in enumerate(_offsets(src))]
    # COMPILE_AT read directly, one compiles, one template hit fills the memo, three from it
    assert cache.stats()["hits"] == 4 and len(cache._again) == 1
    assert all(n == _lark_items(stmt)[0] for n in nodes)
    assert [(n.span, n.line) for n in nodes] == [((a, a + len(x)), k + 1)
                                                 for k, (a, x) in enumerate(_offsets(src))]


def test_plain_statements_skip_the_templates_and_repeat_from_the_memo():
    """Plain statements (registers, symbols, numbers, addresses, vectors) are read by the regex
    reader, nothing compiled; a verbatim repeat is rebuilt from the memo at its own place."""
    from splice.ptx.shapes import ShapeCache

    cache = ShapeCache(lambda *a: pytest.fail("Lark was asked"))
    stmts = ["ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16];", "@!%p1 bra.uni $L__BB0_2;",
             "add.s32 %r1, %r2, -4;", "mov.f32 %f1, 0f3F800000;"]
    src = "\n".join(stmts * 3) + "\n"
    nodes = [cache.statement(src, a, a + len(x), k + 1, "t.ptx")[0]
             for k, (a, x) in enumerate(_offsets(src))]
    assert cache.stats() == {"shapes": 0, "hits": 8, "direct": 4, "misses": 0}
    assert all(n == _lark_items(x)[0] for n, (_a, x) in zip(nodes, _offsets(src)))
    assert [(n.span, n.line) for n in nodes] == [((a, a + len(x)), k + 1)
                                                 for k, (a, x) in enumerate(_offsets(src))]


def test_the_garbage_collector_is_restored_after_a_parse():
    import gc

    text = _HEAD + "\tret;\n}\n"
    assert gc.isenabled()
    parse(text, "t.ptx", cache=False)
    assert gc.isenabled()
    with pytest.raises(PtxSyntaxError):
        parse(_HEAD + "\tret\n}\n", "t.ptx", cache=False)
    assert gc.isenabled()
    gc.disable()
    try:
        parse(text, "t.ptx", cache=False)
        assert not gc.isenabled()   # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_build_grammar_compiles_every_lexer():
    """No regex compile is left for the first parse to pay (Lark builds them lazily)."""
    lexer = parser.build_grammar().parser.lexer
    assert lexer.lexers and all(x._scanner is not None for x in lexer.lexers.values())


def test_a_module_the_readers_take_whole_never_loads_lark():
    """Lark is imported and the grammar built only when a statement needs them: a fresh
    process parsing a module whose statements the readers take (plain ones read directly,
    guarded and vector ones templated from the direct reader's own tokens) never imports
    ``lark``; a statement only Lark decides on does."""
    import subprocess
    import sys

    body = "".join(f"\tst.shared.v2.u32 [%rd1+{4 * k}], {{%r{k}, 0}};\n\tmov.b64 %rd{k}, {{%r{k},%r{k}}};\n"
                   f"\t@!%p1 bra $L__BB{k};\n" for k in range(40))
    text = _HEAD + body + "\tret;\n}\n"
    probe = ("import sys; from splice.ptx import parse, emit, parser; t = sys.stdin.read(); "
             "m = parse(t, 'x.ptx', cache=False); assert emit(m) == t; "
             "assert parser.shape_stats()['hits'] > 0; print('lark' in sys.modules)")

    def lark_loaded(t):
        return subprocess.run([sys.executable, "-c", probe], input=t, text=True, capture_output=True,
                              check=True).stdout.strip()

    assert lark_loaded(text) == "False"
    # a statement no reader takes (here one the grammar refuses: Lark, the authority on what is
    # PTX, gives the message) is Lark's
    bad = text.replace("\tret;", '\tmov.b32 %r1, "x";\n\tret;', 1)
    refused = ("import sys; from splice.ptx import parse, PtxSyntaxError; t = sys.stdin.read()\n"
               "try:\n    parse(t, 'x.ptx', cache=False)\nexcept PtxSyntaxError:\n"
               "    print('lark' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", refused], input=bad, text=True, capture_output=True,
                          check=True).stdout.strip() == "True"


def test_dwarf_section_lines_with_notes_stay_on_the_fast_path(monkeypatch):
    """`.b8 17   // DW_TAG_compile_unit`: the note is cut off as in bodies, the item goes
    through the shape cache; equal to plain Lark, spans included."""
    from splice.ptx import emit
    from splice.ptx.model import Section

    sec = ("\t.section\t.debug_abbrev\n\t{\n.b8 1                // Abbreviation Code\n"
           ".b8 17 // DW_TAG_compile_unit\n$L__info_string0:   // label\n.b32 .debug_abbrev // off\n"
           ".b8 0\n\t}\n")
    text = _HEAD + "\tret;\n}\n" + sec
    whole = []
    real = parser._lark

    def spy(text, start, *a, **k):
        if start == "section_items" and not k.get("keep_tokens"):
            whole.append(text)   # the whole section handed to Lark
        return real(text, start, *a, **k)

    monkeypatch.setattr(parser, "_lark", spy)
    fast = parse(text, "t.ptx", cache=False)
    assert whole == []
    slow = parse(text, "t.ptx", fast=False, cache=False)
    assert fast == slow and emit(fast) == text
    (fs,), (ss,) = [[it for it in mod.items if isinstance(it, Section)] for mod in (fast, slow)]
    assert [(type(i).__name__, getattr(i, "span", None)) for i in fs.items] == \
        [(type(i).__name__, getattr(i, "span", None)) for i in ss.items]


_CONTINUED = [
    # hand-written PTX (ZLUDA's tests) names registers without `%`: continuation lines open
    # with `{d0` and are vectors, not scopes
    "\tmma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32\n\t\t{d0, d1, d2, d3},\n\t\t{a0, a1, a2, a3},\n"
    "\t\t{b0, b1},\n\t\t{c0, c1, c2, c3};\n",
    "\tmov.v4.u16 input,\n\t\t{in0, in1, in2, in3};\n",
    "\tst.global.v2.u32 [p],\n\t{\n\t\tx, y\n\t};\n",
    "\tadd.s32 %r1, %r2, %r3\n\t{\n\t\tmov.u32 %r4, 1;\n\t}\n",      # a missing `;`: Lark's error
    "\tmov.b32 %r1,\n\t}\n",                                             # a `}` inside a statement
]


@pytest.mark.parametrize("body", _CONTINUED)
def test_continuation_lines_opening_with_a_brace(body, monkeypatch):
    """A line that opens with ``{`` inside a statement spanning lines is part of it (a vector or
    an initializer): the model equals Lark's, errors land where Lark puts them, and a
    well-formed body stays on the line cutter (no whole-body Lark parse)."""
    text = _HEAD + body + "\tret;\n}\n"
    _agree(text)
    fell_back = []
    real = parser._BodyParser._cut

    def cut(self, *a):
        try:
            return real(self, *a)
        except parser._Fallback:
            fell_back.append(a)
            raise

    monkeypatch.setattr(parser._BodyParser, "_cut", cut)
    try:
        parse(text, "t.ptx", cache=False)
    except PtxSyntaxError:
        return
    assert not fell_back


def test_only_a_big_model_is_promoted_past_the_young_generation(monkeypatch):
    """Promoting asks ``gc.get_freeze_count``, which walks every frozen object (a forked
    ``roundtrip --jobs`` worker's whole inherited heap): small modules skip it, big ones
    (where the young pass it saves costs milliseconds) still take it."""
    calls = []
    monkeypatch.setattr(parser, "_promote_young", lambda: calls.append(1))
    small = _HEAD + "\tret;\n}\n"
    parse(small, "s.ptx", cache=False)
    assert calls == []
    big = _HEAD + "\tadd.s32 %r1, %r2, 1;\n" * (parser.PROMOTE_AT // 20) + "\tret;\n}\n"
    assert len(big) >= parser.PROMOTE_AT
    parse(big, "b.ptx", cache=False)
    assert calls == [1]
