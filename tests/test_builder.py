"""splice.ptx.builder: generated PTX written one way, fresh names that never collide."""
from splice.ptx.builder import Builder, NameScope, addr, vec


def test_names_are_fresh_per_type_and_declared():
    sc = NameScope("%g")
    assert [sc.reg(".b64"), sc.reg(".b32"), sc.reg(".b64"), sc.reg(".pred")] == ["%g_d0", "%g_r0", "%g_d1", "%g_p0"]
    assert sc.decls() == [".reg .b64 %g_d<2>;", ".reg .b32 %g_r<1>;", ".reg .pred %g_p<1>;"]


def test_instructions_guards_and_addresses():
    b = Builder(NameScope("%g"))
    b.ins("ld.global.b32", "%r1", addr("%rd1", 16), guard="@%p1")
    b.ins("st.shared.b32", addr("%r2"), "%r1")
    b.ins("bar.sync", 0)
    b.ins("ret")
    b.comment("done")
    assert b.text() == ("\t@%p1 ld.global.b32 %r1, [%rd1+16];\n\tst.shared.b32 [%r2], %r1;\n"
                        "\tbar.sync 0;\n\tret;\n\t// done\n")
    assert vec("%r1", "%r2") == "{%r1, %r2}" and addr("%rd1", -4) == "[%rd1+-4]"


def test_the_built_text_parses():
    from splice.ptx import parse

    b = Builder(NameScope("%g"))
    a, v = b.scope.reg(".b64"), b.scope.reg(".b32")
    b.ins("mov.u64", a, 0)
    b.ins("ld.global.u32", v, addr(a, 8))
    body = "\n".join("\t" + d for d in b.scope.decls()) + "\n" + b.text()
    text = f".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n{body}\tret;\n}}\n"
    k = parse(text, "k.ptx")
    assert k.items[-1].name == "k"
