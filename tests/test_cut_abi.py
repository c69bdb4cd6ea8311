"""The three ABIs and their checks, on small fakes (no kernel, no ptxas) and on tests/data/recipes/tiny.ptx."""
from dataclasses import dataclass, field

import pytest

from splice.cut.binding import Namer, bind
from splice.cut.native import parse_native
from splice.errors import SpliceError


@dataclass
class R:
    reg: str
    type: str
    role: str
    index: int


@dataclass
class FakeABI:
    live_in: list
    live_out: list
    named: dict = field(default_factory=dict)
    value_types: dict = field(default_factory=dict)


def abi2(shared_reg=False):
    ins = [R(f"%r{2 + i}", ".b32", "a", i) for i in range(4)]
    ins += [R(f"%r{6 + i}", ".b32", "b", i) for i in range(2)]
    ins += [R("%r20", ".b32", "c", 0), R("%r21", ".b32", "c", 1)]
    outs = [R("%r20" if shared_reg else "%r30", ".b32", "d", 0), R("%r31", ".b32", "d", 1)]
    return FakeABI(ins, outs)


MMA = ("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%d0, %d1}, {%a0, %a1, %a2, %a3}, "
       "{%b0, %b1}, {%c0, %c1};\n")


def nat(text, path="n.ptx"):
    return parse_native(text, path)


def test_inline_renames_and_declares_fresh_scratch():
    n = nat("// splice-native: {scratch: {t: .b32}}\nmov.b32 %t, %a0;\n" + MMA)
    b = bind(n, abi2(), "inline", Namer(7), 1)
    text = "\n".join(b.site)
    assert "\t.reg .b32 %rsplice7;" in text
    assert "mov.b32 %rsplice7, %r2;" in text
    assert "{%r30, %r31}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r20, %r21};" in text
    assert b.site[1] == "{" and b.site[-2] == "}"
    assert b.site_origin[b.site.index("\tmov.b32 %rsplice7, %r2;")] == ("n.ptx", 2)
    rows = {r["symbol"]: r["register"] for r in b.table}
    assert rows["%d0"] == "%r30" and rows["%t"] == "%rsplice7"


def test_namer_starts_above_existing_names():
    assert Namer.for_source("x %rsplice4 y %rsplice11").fresh() == "%rsplice12"


def test_missing_live_out():
    n = nat("// x\nmov.b32 %d0, %a0;\n")
    with pytest.raises(SpliceError) as ei:
        bind(n, abi2(), "inline", Namer(), 1)
    assert "%d1" in ei.value.message and ei.value.path == "n.ptx"


def test_unknown_register_names_line():
    n = nat("// x\n\nmov.b32 %d0, %zz;\n" + MMA)
    with pytest.raises(SpliceError) as ei:
        bind(n, abi2(), "inline", Namer(), 1)
    assert ei.value.line == 3 and "%zz" in ei.value.message


def test_live_in_read_after_clobber_inline_only():
    # %d0 and %c0 share %r20 (an in-place accumulator): reading %c0 after writing %d0 is wrong
    n = nat("// x\nmov.b32 %d0, %a0;\nadd.u32 %d1, %c0, 1;\n")
    with pytest.raises(SpliceError) as ei:
        bind(n, abi2(shared_reg=True), "inline", Namer(), 1)
    assert ei.value.line == 3 and "%c0" in ei.value.message and "line 2" in ei.value.message
    # through a call the value was copied into the .param: fine
    bind(n, abi2(shared_reg=True), "call", Namer(), 1)


def test_writing_a_live_in_inline_is_refused():
    n = nat("// x\nmov.b32 %a0, 0;\n" + MMA)
    with pytest.raises(SpliceError) as ei:
        bind(n, abi2(), "inline", Namer(), 1)
    assert ei.value.line == 2 and "live-in %a0" in ei.value.message


def test_type_mismatch():
    n = nat("// x\nadd.s64 %d0, %a0, 1;\n" + MMA)
    with pytest.raises(SpliceError) as ei:
        bind(n, abi2(), "inline", Namer(), 1)
    assert ei.value.line == 2 and "64-bit" in ei.value.message
    n = nat("// splice-native: {scratch: {w: .b64}}\nmov.b32 %d0, %w;\n" + MMA)
    with pytest.raises(SpliceError):
        bind(n, abi2(), "inline", Namer(), 1)


def test_call_emits_func_params_and_packed_returns():
    b = bind(nat(MMA), abi2(), "call", Namer(), 3)
    fn = b.prelude[0]
    assert ".func (.param .align 8 .b8 __splice_fn3_out[8]) __splice_fn3(" in fn
    assert "ld.param.b32 %a0, [__splice_fn3_in0];" in fn
    assert "st.param.b32 [__splice_fn3_out+4], %d1;" in fn and fn.rstrip().endswith("ret;\n}")
    site = "\n".join(b.site)
    assert "st.param.b32 [__splice_fn3_arg0], %r2;" in site
    assert "call.uni (__splice_fn3_ret), __splice_fn3, (__splice_fn3_arg0," in site
    assert "ld.param.b32 %r31, [__splice_fn3_ret+4];" in site


def test_call_reuses_identical_function():
    cache = {}
    a = bind(nat(MMA), abi2(), "call", Namer(), 1, func_cache=cache)
    b = bind(nat(MMA), abi2(), "call", Namer(), 2, func_cache=cache)
    assert a.prelude and not b.prelude and b.func == "__splice_fn1"


def test_call_shared_slots_and_sync():
    b = bind(nat(MMA), abi2(), "call-shared", Namer(), 1, threads=64)
    assert b.shared_bytes == 2 * 4 * 64
    fn = b.prelude[0]
    assert "st.shared.b32 [%splice_slot+256], %d1;" in fn
    site = "\n".join(b.site)
    assert "bar.warp.sync -1;" in site            # the cut holds mma.sync
    assert "ld.shared.b32 %r31, [" in site and "+256];" in site
    with pytest.raises(SpliceError):
        bind(nat(MMA), abi2(), "call-shared", Namer(), 1)      # no threads


def test_predicate_cannot_cross_a_call():
    a = abi2()
    a.live_in.append(R("%p1", ".pred", "v", 0))
    with pytest.raises(SpliceError) as ei:
        bind(nat(MMA), a, "call", Namer(), 1)
    assert "predicate" in ei.value.message


def test_named_values_bind():
    a = abi2()
    a.named = {"W": "%rd3"}
    a.value_types = {"W": ".b64"}
    n = nat("// splice-native: {scratch: {q<2>: .b32}}\nld.global.v2.u32 {%q0, %q1}, [%W+16];\n" + MMA)
    b = bind(n, a, "inline", Namer(), 1)
    assert any("[%rd3+16]" in ln for ln in b.site)
