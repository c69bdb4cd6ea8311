"""The skeleton reader (``splice.ptx.top``) builds exactly Lark's ``top_chunk`` items or declines.

It reads the masked module skeleton (directives, declarations, function headers, section heads)
on every fast parse, so it must agree with Lark on everything it accepts: the same items, spans
and lines, and it must never accept what Lark rejects.  Checked on the skeleton of every bundled
file (and, with ``-m corpus``, of the shared corpus), on hand-made edge cases, and through
whole-module parses (fast path == plain Lark, errors at the same place)."""
from __future__ import annotations

import pytest

from splice.ptx import PtxSyntaxError, parser, top
from splice.ptx.shapes import COMPILE_ITEM_AT

from .conftest import bundled_files, external_files
from .test_parser import _spans
from .test_parser_fuzz import _agree


def _skeleton(text):
    bodies = parser._function_bodies(text, "t.ptx")
    if bodies is None:
        return None
    masked = parser._mask(text, bodies) if bodies else text
    inits = parser._numeric_inits(text, bodies)
    return parser._mask_inits(masked, inits) if inits else masked


def _check(masked) -> bool:
    """True when the reader accepted ``masked`` (and then equals Lark on it)."""
    got = top.read(masked)
    if got is None:
        return False
    try:
        want = list(parser._lark(masked, "top_chunk", masked, "t.ptx", 0))
    except PtxSyntaxError as exc:
        raise AssertionError(f"skeleton reader accepted what Lark rejects: {exc}") from None
    assert got == want
    assert _spans(got, []) == _spans(want, [])
    return True


def _check_file(path) -> bool:
    masked = _skeleton(path.read_text(errors="surrogateescape"))
    return masked is not None and _check(masked)


@pytest.mark.parametrize("path", [p for p in bundled_files() if p.stat().st_size < 400_000],
                         ids=lambda p: p.name)
def test_skeleton_reader_equals_lark_on_every_bundled_file(path):
    _check_file(path)


def test_skeleton_reader_accepts_the_common_forms():
    """Not vacuous: the reader takes the skeletons of the modern generated modules (Triton,
    CUTLASS DSL, nvcc -G with DWARF sections, rdc linkage)."""
    names = ("triton_matmul_wgmma_sm90a.ptx", "debug_full_G.ptx", "rdc_linkage.ptx",
             "tex_surf_objects.ptx", "cutlass_dsl_gemm_tma_wgmma_sm90a.ptx")
    files = [p for p in bundled_files() if p.name in names]
    assert len(files) == len(names) and all(_check_file(p) for p in files)


@pytest.mark.corpus
@pytest.mark.parametrize("path", external_files(), ids=lambda p: p.name)
def test_skeleton_reader_equals_lark_on_the_shared_corpus(path):
    _check_file(path)


_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
_BODY = "\n{\n\tret;\n}\n"

_EDGES = [
    ".version 8.0", ".version 8", ".version 8.0;", ".target sm_90a, texmode_independent", ".target sm_90,",
    ".target", ".address_size 64", ".address_size 6.4", ".address_size 0x40",
    '.file 1 "a.cu"', '.file 1 "a.cu", 1700000000, 1234', '.file 1 "a.cu",', ".file 1 a.cu",
    '.file "a.cu"', '.file 1 "a//b.cu" // c', ".global .u32 g;", ".global .u32 g", ".global g;",
    ".global .align 4 .b8 t[16];", ".global .align .b8 t[16];", ".global .align 4 .b8 t[];",
    ".global .u32 a, b, c;", ".global .u32 a, ;", ".global .u32 a<4>;", ".global .u32 a<4>[2][3];",
    ".global .u32 a = 5;", ".global .u32 a = -5;", ".global .f32 a = 0f3F800000;", ".global .f32 a = 1.5;",
    ".global .u32 a[2] = {1, 2};", ".global .u32 a[2] = {1, 2,};", ".global .u32 a[2][2] = {{1, 2}, {3, 4}};",
    ".global .u32 a[2] = {};", ".global .u64 a = b;", ".global .u64 a[1] = {b};", ".global .u64 a = b + 4;",
    ".global .u64 a[3] = {f1, f2, f3};", ".global .u64 a[2] = { x, y+8 };", ".global .u64 a = generic(b);",
    ".global .u64 a = generic(b) + 16;", ".global .u64 a[2] = {generic(b)+4, 0};", ".global .u64 a = b +;",
    ".global .u64 a = b + c;", ".global .u64 a = generic(1);", ".global .u64 a = generic();",
    ".global .u64 a = b + -4;", ".global .u64 a = b + 0x10;", ".global .u64 a = b.x;", ".global .u64 a = b.y + 2;",
    ".global .u64 a = function_name;", ".global .u64 a = inlined_at + 4;", ".global .u64 a = g(inlined_at);",
    ".global .u64 a = %r1;", ".global .u64 a = ld.b64 %r3;", ".global .u64 a = {b, {c, 1}};",
    # ZLUDA's pass-test IR (init_op, name_pragma): every `,` after the atoms, keywords, odd atoms
    ".global .u64 a = zluda.constant.b64 1234U;", ".global .u64 a = z.c.b64 -5, 0f3F800000, 0d4000000000000000;",
    ".global .u64 a = z.rep %r1, %r2, b;", ".global .u64 a = z.rep %r1, b = 2;", ".global .u64 a = z.rep %r1, %r<3>;",
    ".global .u64 a = z.rep;", ".global .u64 a = z.rep, b;", ".global .u64 a = z.rep function_name;",
    ".global .u64 a = z.rep %r1 + 4;", ".global .u64 a = z.rep {%r1};", ".global .u64 a = z.x.y %r1;",
    '.entry %4 .pragma "zluda set_mode" ()' + _BODY, '.entry k .pragma "a", "b" ()' + _BODY,
    '.entry k .pragma ()' + _BODY, '.entry k() .pragma "p"' + _BODY,
    # PTX 9.0's ABI directives: one a prefix of the other, and of longer words
    ".func f() .abi_preserve 8 .abi_preserve_control 2" + _BODY, ".func f() .abi_preserve_control" + _BODY,
    ".func f() .abi_preserve8 2" + _BODY, ".func f() .abi_preserve_controlx 2" + _BODY,
    ".func f() .abi_preserve 8, 2" + _BODY, ".func f() .maxntid128" + _BODY, ".func f() .abi_preserve_control_" + _BODY,
    ".extern .shared .align 16 .b8 smem[];", ".visible .global .ptr .u64 p;", ".weak .const .u32 w;",
    ".global .visible .u32 v;", ".global .entry .u32 v;", ".global .texref t;", ".tex .u32 t;",
    ".global .u32 %r1;", ".global .u32 a.x;", ".global .u32 function_name;", ".common .global .u32 c;",
    ".visible .entry k()" + _BODY, ".visible .entry k" + _BODY, ".entry k(.param .u64 a)" + _BODY,
    ".entry k(.param .u64 a, .param .align 8 .b8 b[16])" + _BODY, ".entry k(.param .u64 a,)" + _BODY,
    ".entry k(.param .u64)" + _BODY, ".entry k(.reg .u64 %r)" + _BODY,
    ".entry k(.param .u64 .ptr .global .align 16 a)" + _BODY,
    ".entry k() .maxntid 128, 1, 1 .minnctapersm 2" + _BODY, ".entry k() .maxntid 128," + _BODY,
    ".entry k() .maxnreg 32 .noreturn" + _BODY, ".entry k() .abi_preserve 1" + _BODY,
    ".entry k() .maxntidx 1" + _BODY, '.entry k() .pragma "nounroll";' + _BODY,
    ".func (.param .s32 r) f (.param .u64 p);", ".func (.param .s32 r) f (.param .u64 p)",
    ".extern .func f;", ".weak .func (.reg .b32 r) f ()" + _BODY, ".func f (.param .b32 a) ;;",
    ".entry %k()" + _BODY, ".entry 1k()" + _BODY, ".visible .func .entry k()" + _BODY,
    '.loc 1 2 3', '.pragma "nounroll";', '.pragma "a", "b";', '.pragma "a"', '.pragma;', '.pragma "a",;', ".alias a, b;", ".global .u32 /* c */ g;", "/* a { b } */", "/* a */ /* b */", "/*/ a */", "/* a **/", "/* a", "/**/",
    "/* a // b */ .global .u32 g;", "// a /* b\n.global .u32 g; // */", ".global .u32 g; /* a\n b */",
    "/* a */ .visible .entry k()" + _BODY, ".global .u32 g /* ; */;", ".global .u32 g/**/;", "/* */ */",
    ".global .u32 g; // c\n// d", "// only a comment", ".global .u32 g;\n}", "{\n}",
    ".global .attribute(.managed) .align 8 .b8 x[16];", ".global .attribute( .managed ) .u32 y;",
    ".global .attribute(.managed(1, 2)) .u32 y;", ".global .attribute(.managed .u32 y;", ".global .attribute() .u32 y;",
    ".global .attribute .u32 y;", ".visible .global .attribute(.managed) .u64 z = 5;", ".global .attribute(.managed(1,)) .u32 y;",
]


#: module headers the header regex (``top._header``) reads, or must leave to the tokenizer
_HEADERS = [
    ".version 8.0\n.target sm_90\n.address_size 64\n", ".version 6.5\n.target sm_30, texmode_independent\n",
    ".version 6.5\n.target sm_30 ,debug , map_f64_to_f32\n.address_size 32\n", ".version 8.0 .target sm_90 .address_size 64\n",
    "\n\n// c\n//\n.version 8.0\n// d\n.target sm_90\n\n.address_size 64 // e\n", ".version 8.0//c\n.target sm_90\n",
    ".version 8.0\n.target sm_90//c\n.address_size 64\n", ".version 8.0\n.target sm_90\n.address_size 064\n",
    ".version 8.0\n.target sm_90\n.address_size 0x40\n", ".version 8.0\n.target sm_90\n.address_size 64u\n",
    ".version 8.0\n.version 8.0\n.target sm_90\n", ".version 8.0\n.target sm_90\n.target sm_80\n",
    "/* c */ .version 8.0\n.target sm_90\n", ".version 8.0e1\n.target sm_90\n", ".version 08.00\n.target sm_90\n",
    ".version 8.0\n.target sm_90,\n", ".version 8.0\n.target $t\n", ".version 8.0\n.target sm_90.x\n",
    ".version 8.0\n.target sm_90\n.address_size\n", ".version 8.0\n.target\tsm_90\t,\tdebug\n",
    ".version\t8.0\r\n.target sm_90\r\n.address_size 64\r\n", ".version 8.0\f.target sm_90\n",
    ".target sm_90\n.version 8.0\n", ".version 8.0\n.address_size 64\n.target sm_90\n",
]


@pytest.mark.parametrize("head", _HEADERS)
def test_fast_path_agrees_with_lark_on_module_headers(head):
    """The header regex gives Lark's directives (spans and lines) or leaves the header to the
    tokenizer; a module that opens with it parses as plain Lark parses it."""
    _agree(head + "\n.visible .entry z()\n{\n\tret;\n}\n")
    _agree(head + ".global .u32 g;\n")
    masked = _skeleton(head + "\n.visible .entry z()\n{\n\tret;\n}\n")
    if masked is not None:
        _check(masked)


def test_the_header_regex_reads_the_usual_header():
    """Not vacuous: the common header is read by the regex, to its end."""
    head, at = top._header(_HEAD)
    assert [d.name for d in head] == [".version", ".target", ".address_size"] and at == len(_HEAD) - 1
    assert top._header(".target sm_90\n.version 8.0\n") == ([], 0)


@pytest.mark.parametrize("item", _EDGES)
def test_fast_path_agrees_with_lark_on_skeleton_edge_cases(item):
    """Each item after the header, alone and before a kernel: model and spans, or the error
    place, equal to plain Lark's."""
    _agree(_HEAD + item + "\n")
    _agree(_HEAD + item + "\n.visible .entry z()\n{\n\tret;\n}\n")
    masked = _skeleton(_HEAD + item + "\n")
    if masked is not None:
        _check(masked)


def test_the_skeleton_reader_reads_symbolic_initializers():
    """nvcc's tables of function and array addresses keep the skeleton off Lark."""
    items = top.read(_HEAD + ".global .u64 t[3] = {f, g + 8, generic(h)+4};\n")
    assert items is not None and items[-1].declarators[0].init == ("f", "g+8", "generic(h)+4")


def test_the_skeleton_reader_declines_what_it_does_not_know():
    assert top.read(_HEAD + '.loc 1 2 3\n') is None
    assert top.read(_HEAD + ".global .u64 a = function_name;\n") is None
    assert top.read(_HEAD + "/* c\n") is None                   # unterminated: Lark's error
    assert top.read(_HEAD + ".global .u32 g\n") is None        # Lark reports the error
    assert top.read(_HEAD) is not None and len(top.read(_HEAD)) == 3


# ---- body statements that are not instructions: declarations, labels, .loc -------------------

def _body_lines(path):
    """Distinct lines of a file that hold one item the body reader may take."""
    seen = set()
    for raw in path.read_text(errors="surrogateescape").split("\n"):
        s = raw.strip(" \t\f\r")
        if (s and s not in seen and (s[0] in ".$_%" or s.endswith(":")) and "/" not in s
                and ('"' not in s or s.startswith(".pragma"))):
            seen.add(s)
            yield s


def _check_item(s, quick, node, rule: str) -> bool:
    """``node`` (the reader's item for ``s``, or None) equals ``quick`` (the one-regex path's, or
    None) and Lark's parse of ``s`` under ``rule``, spans and line included; False when the
    reader declined."""
    if quick is not None:
        where = [(getattr(x, "span", None), getattr(x, "line", None)) for x in (node, quick)]
        assert node == quick and where[0] == where[1], s
    if node is None:
        return False
    try:
        items = parser._lark(s, rule, s, "t.ptx", 0, base_line=7)
    except PtxSyntaxError as exc:
        raise AssertionError(f"{rule} reader accepted what Lark rejects: {s!r}: {exc}") from None
    assert items == (node if isinstance(node, tuple) else (node,)), s
    where = [(getattr(x, "span", None), getattr(x, "line", None)) for x in items]
    assert where == [(getattr(x, "span", None), getattr(x, "line", None))
                     for x in (node if isinstance(node, tuple) else (node,))], s
    if hasattr(node, "span"):
        assert (items[0].span, items[0].line) == ((0, len(s)), 7), s
    return True


def _check_body_item(s) -> bool:
    return _check_item(s, top.quick_item(s, (0, len(s)), 7), top.body_item(s, (0, len(s)), 7), "body_items")


def _check_body_file(path) -> int:
    return sum(_check_body_item(s) for s in _body_lines(path))


@pytest.mark.parametrize("path", [p for p in bundled_files() if p.stat().st_size < 400_000],
                         ids=lambda p: p.name)
def test_body_reader_equals_lark_on_every_bundled_file(path):
    _check_body_file(path)


def test_body_reader_accepts_the_common_forms():
    files = [p for p in bundled_files() if p.name in ("triton_matmul_wgmma_sm90a.ptx", "lineinfo_inlined.ptx")]
    assert _check_body_file(files[0]) >= 5 and _check_body_file(files[1]) >= 5


def test_jump_tables_are_read_without_lark():
    """``$tbl: .branchtargets $a, $b;`` (``brx.idx``) and ``.calltargets`` lists used to cost a
    Lark parse each (the first one in a process, half a millisecond)."""
    for s in ("$tbl: .branchtargets $even, $odd;", "ptarget: .calltargets twice, thrice;", ".branchtargets a;"):
        assert _check_body_item(s), s


def test_nvcc_call_prototypes_are_read_without_lark():
    """nvcc writes a labelled prototype before every indirect call; each used to cost a Lark
    parse (two items on one line are never templated)."""
    for s in ("prototype_4 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _);",
              "p: .callprototype _ ();", ".callprototype _ (.param .b32 _);"):
        assert _check_body_item(s), s


@pytest.mark.corpus
@pytest.mark.parametrize("path", external_files(), ids=lambda p: p.name)
def test_body_reader_equals_lark_on_the_shared_corpus(path):
    _check_body_file(path)


_BODY_EDGES = [
    ".reg .b32 %r<10>;", ".reg .b32 %r<10>", ".reg .b32 %r<>;", ".reg .b32 %r<1.5>;", ".reg .pred %p;",
    ".reg .b32 %r1, %r2;", ".shared .align 16 .b8 s[1024];", ".local .align 4 .b8 l[28];", ".reg %r;",
    ".visible .reg .b32 r;", ".visible .func f;", ".entry k;", ".loc 1 2 3", ".loc 1 2 3;", ".loc 1 2",
    ".loc 1 2 3, function_name f", ".loc 1 2 3, function_name f + 4", ".loc 1 2 3, inlined_at 4 5 6",
    ".loc 1 2 3, function_name f, inlined_at 4 5 6", ".loc 1 2 3, function_namef", ".loc 1 2 3, function_name",
    ".loc 1 2 3, inlined_at 4 5", ".loc 1 2 3, inlined_atx 4 5 6", ".loc 1 2 3, foo f", ".loc 1 2 3 4",
    "$L__BB0_1:", "L:", "%l:", "L.x:", "L :", "L::", "L: ret;", "1L:", ".L:", "L", "$L__BB0_1: :",
    ".reg .b32 %r<0x10>;", ".reg .b32 %r<7> ;", ".reg .b32 a.x;", ".shared .b8 s[];", ".param .b32 p[2][3];",
    ".reg .b128 q;", ".reg .b32 %r<007>;", ".reg .b32 %1;", ".reg\t.b32\t%r<3>;", ".reg .b32 function_name;",
    ".shared .align 16 .b8 s[4096];", ".shared .align16 .b8 s[4];", ".local .align 4 .b8 d[];", ".reg .v2 .f32 v;",
    ".reg .b32 %r<>;", ".reg .b32 r[-1];", ".reg .pred %p<4>", ".reg .f16x2 h<2>;", ".sreg .b32 s;",
    "$L_tbl: .branchtargets $L_c0, $L_c1;", ".branchtargets $L_c0;", "t: .calltargets f, g;",
    ".branchtargetsx a;", ".branchtargets;", "L: .branchtargets a,;", "L: .callprototype _ ();",
    '.pragma "nounroll";', '.pragma "nounroll"', '.pragma "a", "b";', '.pragma "a",;', '.pragma ;',
    '.pragma nounroll;', '.pragma "a" "b";', '.pragma\t"used_bytes_mask 15";', '.pragmax "a";',
    "prototype_4 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _);",
    ".callprototype _ (.param .b32 _);", ".callprototype (.param .b32 _) _ (.param .b32 _);",
    "p: .callprototype (.reg .b32 _) _ (.param .align 8 .b8 _[16], .reg .f64 _);", "p: .callprototype _ ()",
    "p: .callprototype (.param .b32 _) (.param .b32 _);", "p:\n .callprototype _ (.param .b32 _)\n;",
    "p: .callprototype (.param .b32 _) %r (.param .b32 _);", "p: .callprototype _ (.param .b32 _), x;",
    "p: .callprototype _ (.param .b32 _) (.param .b32 _);", "p: .callprototype _ (.param .b32 a, .param .u64 b);",
    "p: .callprototype _ (.param .b32 _,);", "p: .callprototype _ (.foo .b32 _);", "p : .callprototype;",
    ".reg .b32 %r<010>;", ".shared .b8 x[010];", ".reg .b32 %r<0>;", ".reg .f32 %f0, %f1, %f2, %f3;",
    ".reg.u64 a;", ".reg .b32 a, b<3>, c[4], d[];", ".shared .align 16 .b8 a[16], b[];", ".reg .b32 a,;",
    ".reg .b32 a b;", ".reg .b32 a ,b;", ".reg .b32 a\t,\tb;", ".reg.align 4.b32 a;", ".reg .b32 %r<1>, %r<2>;",
    "$t: .branchtargets a.x, b;", "$t: .branchtargets function_name;", "$t: .branchtargets %r;",
    "$t: .branchtargets a\n\t\t, b\n\t;", "$t: .calltargets f;", ".calltargets f, g", "$t: .branchtargets a b;",
    "$t: .branchtargets .a;", "$t: .branchtargets 1;", "$t :\t.calltargets\tf ,g ;", "$t: .branchtargets a, inlined_at;",
    ".loc\t16\t151\t0", ".loc 1 2 3u", ".loc 0x1 2 3", ".loc 1 2 -3", ".locx 1 2 3", ".loc  1\t2  3", "%:", "L\t:",
]


@pytest.mark.parametrize("stmt", _BODY_EDGES)
def test_fast_path_agrees_with_lark_on_body_edge_cases(stmt):
    _check_body_item(stmt)
    _agree(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t" + stmt
           + "\n\tret;\n}\n")
    twin = "\n".join(["\t.reg .b32 %r<10>;", "\t.loc 1 2 3", "\t$L__BB0_1:"] * (COMPILE_ITEM_AT + 2))
    _agree(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n" + twin + "\n\t"
           + stmt + "\n\t" + stmt + "\n\tret;\n}\n")


# ---- .section lines (nvcc -G, Triton's DWARF) --------------------------------------------------

def _check_section_item(s) -> bool:
    return _check_item(s, top.quick_section(s), top.section_item(s, (0, len(s)), 7), "section_items")


def _section_lines(path):
    seen, inside = set(), False
    for raw in path.read_text(errors="surrogateescape").split("\n"):
        s = raw.split("//")[0].strip(" \t\f\r")
        if s.startswith(".section"):
            inside = True
        elif s == "}":
            inside = False
        elif inside and s and s not in seen:
            seen.add(s)
            yield s


@pytest.mark.parametrize("path", [p for p in bundled_files() if p.stat().st_size < 400_000],
                         ids=lambda p: p.name)
def test_section_reader_equals_lark_on_every_bundled_file(path):
    for s in _section_lines(path):
        _check_section_item(s)


def test_section_reader_accepts_the_common_forms():
    path = [p for p in bundled_files() if p.name == "triton_matmul_wgmma_sm90a.ptx"][0]
    assert sum(_check_section_item(s) for s in _section_lines(path)) >= 20


@pytest.mark.corpus
@pytest.mark.parametrize("path", external_files(), ids=lambda p: p.name)
def test_section_reader_equals_lark_on_the_shared_corpus(path):
    for s in _section_lines(path):
        _check_section_item(s)


@pytest.mark.parametrize("stmt", [
    ".b8 1", ".b8 1,2,3", ".b8 1,", ".b32 .debug_abbrev", ".b64 $L__func_begin0", ".b64 sym+4", ".b64 sym + 4",
    ".b64 .debug_info+8", ".b64 sym-4", ".b64 a-b", '.b8 "str"', ".b8 0x1F", ".b8 -1", ".b32 1.5", ".b8",
    ".global 1", ".b16 65535", ".b8 1 ", ".b8\t007", ".b8 1u", ".b128 1",
    "$L__info_string0:", "L :", "%r:", ".b8 1 2", ".b64 sym+", ".b64 sym+a", "b8 1"])
def test_fast_path_agrees_with_lark_on_section_edge_cases(stmt):
    _check_section_item(stmt)
    twin = "\n".join(["\t.b8 1", "\t.b32 .debug_abbrev", "\t$L__x:", "\t.b64 sym+4"] * (COMPILE_ITEM_AT + 2))
    _agree(".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_info\n{\n" + twin + "\n\t" + stmt
           + "\n\t" + stmt + "\n}\n")


# ---- block comments in bodies --------------------------------------------------------------------

_COMMENT_LINES = [
    "/*ptx_texBake_end*/", "\tadd.s32 %r1, %r2, 1; /* x */", "/* a */ /* b */", "/* a */ add.s32 %r1, %r2, 1;",
    "add.s32 %r1, /* t */ %r2, 1;", "/* a", "/* a */ */", "/**/", "ret; /* a */ // b", "{ /* a */", "/* } */",
    "/* ; */", "add.s32 %r1, %r2, 1; /* x * / y */", "L: /* c */", "/* a // b */", '/* "s" */',
    "add.s32 %r1,\n\t\t%r2, 1; /* x */", "add.s32 %r1, /* x */\n\t\t%r2, 1;", "/* a\n b */", "}/* a */", "{ add.s32 %r1, %r2, 1; } /* x */",
]


@pytest.mark.parametrize("line", _COMMENT_LINES)
def test_block_comments_in_bodies_agree_with_lark(line):
    _agree(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\t"
           + line + "\n\tadd.s32 %r1, %r2, 2;\n\tret;\n}\n")


def test_a_block_comment_line_keeps_the_body_off_lark(monkeypatch):
    """nvcc writes ``/*ptx_texBake_end*/`` lines around inline asm; such a line (or a comment
    after a statement) used to send the whole body to Lark."""
    calls = []
    real = parser._lark
    monkeypatch.setattr(parser, "_lark", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
            "\t// inline asm\n\t/*ptx_texBake_end*/\n\t// inline asm\n\tadd.s32 %r1, %r2, 1; /* x */\n\tret;\n}\n")
    module = parser.parse(text, "t.ptx", cache=False)
    assert calls == [] and len(module.functions()[0].body.items) == 3
