"""Edits of PTX text through the model (splice/ptx/edit.py) and generated code as model nodes
(splice/ptx/builder.py): an edit changes the text only where it names a node, a fragment's nodes
point into the fragment, insertions go only where a statement ends, and the builder's nodes print
as its lines always did."""
from __future__ import annotations

import pytest

from splice.ptx import edit
from splice.ptx import model as m
from splice.ptx.builder import Builder, NameScope, addr, function, instruction, module_text, operand, param, reg_decl
from splice.ptx.parser import parse

BODY = ("$L1:\n\tadd.s32 %r1, %r1, 1; // keep me\n\t@%p1 bra $L1;\n\t@!%p2 bra.uni $Lout;\n"
        "\t.loc 1 2 3\n\t{\n\t.reg .b32 t;\n\tret;\n\t}\n")


def test_a_fragments_nodes_point_into_its_own_text():
    f = edit.fragment(BODY)
    got = [(type(s).__name__, BODY[s.span[0]:s.span[1]], s.line) for s in f.statements()]
    assert got == [("Label", "$L1:", 1), ("Instruction", "add.s32 %r1, %r1, 1;", 2),
                   ("Instruction", "@%p1 bra $L1;", 3), ("Instruction", "@!%p2 bra.uni $Lout;", 4),
                   ("Directive", ".loc 1 2 3", 5), ("Decl", ".reg .b32 t;", 7), ("Instruction", "ret;", 8)]


def test_a_rewrite_changes_only_the_statements_it_names():
    def to_exit(s):
        if isinstance(s, m.Instruction) and s.opcode == "ret":
            return (m.Instruction(None, "exit", (), ()),)
        if isinstance(s, m.Directive) and s.name == ".loc":
            return ()
        return None

    out = edit.rewrite(BODY, to_exit)
    assert out == BODY.replace("ret;", "exit;").replace(".loc 1 2 3", "")
    assert edit.rewrite(BODY, lambda s: None) is BODY          # nothing named: the same text
    # a guard is the node's: a replacement written from the node keeps it
    guarded = edit.rewrite("\t@!%p2 bra.uni $Lout;\n", lambda s: (m.Instruction(s.guard, "bra", (), (m.Sym("E"),)),))
    assert guarded == "\t@!%p2 bra E;\n"


def test_code_before_and_after_a_node_goes_on_lines_of_its_own():
    f = edit.fragment(BODY)
    add = next(s for s in f.statements() if isinstance(s, m.Instruction) and s.opcode == "add")
    out = edit.apply(BODY, [edit.Edit(add, before=(m.Label("$Lnew"),), after=("\t// after",))])
    assert out.splitlines()[1:5] == ["\t$Lnew:", "\tadd.s32 %r1, %r1, 1; // keep me", "\t// after",
                                     "\t@%p1 bra $L1;"]
    with pytest.raises(ValueError, match="overlapping"):
        edit.apply(BODY, [edit.Edit(add, replace=()), edit.Edit(add, replace=())])


def test_the_instructions_of_a_prelude_are_its_functions():
    pre = ".func (.param .b32 r) f(.param .b32 a)\n{\n\tld.param.b32 %r1, [a];\n\tret;\n}\n"
    assert [i.name for i in edit.instructions(pre, module=True)] == ["ld.param.b32", "ret"]


def test_line_edits_go_only_between_statements():
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            "\tmov.u32 %r1,\n\t\t7;\n\tret;\n}\n")
    mod = parse(text, "k.ptx", cache=False)
    done = edit.apply_all(text, edit.line_edits(mod, {8: ["\t// before ret\n"]}, {7: ["\t// after mov"]}))
    assert done == text.replace("\t\t7;\n", "\t\t7;\n\t// after mov\n").replace("\tret;", "\t// before ret\n\tret;")
    with pytest.raises(ValueError, match="line 6: inside the statement at line 6"):
        edit.line_edits(mod, {}, {6: ["x"]})
    with pytest.raises(ValueError, match="line 2: outside every function body"):
        edit.line_edits(mod, {}, {2: ["x"]})
    with pytest.raises(ValueError, match="line 40: the module has 10 lines"):
        edit.line_edits(mod, {40: ["x"]}, {})


def test_the_builders_nodes_print_as_its_lines():
    b = Builder(NameScope("%t"))
    r = b.scope.reg(".b64")
    b.ins("ld.global.b64", r, addr("%rd0", 2048))
    b.ins("mov.b128", "q", "{%w0, %w1}")
    b.ins("st.global.b32", addr("%a", -4), "%r", guard="@!%p")
    b.ins("ld.param.u64", "%x", addr("splice_harness_in"))
    b.ins("ret")
    assert b.lines == ["\tld.global.b64 %t_d0, [%rd0+2048];", "\tmov.b128 q, {%w0, %w1};",
                       "\t@!%p st.global.b32 [%a+-4], %r;", "\tld.param.u64 %x, [splice_harness_in];", "\tret;"]
    assert [type(n).__name__ for n in b.nodes] == ["Instruction"] * 5
    assert b.nodes[2] == instruction("st.global.b32", "[%a+-4]", "%r", guard="@!%p")
    assert b.nodes[2].guard == m.Guard("%p", True) and b.nodes[2].modifiers == (".global", ".b32")
    assert operand("[%rd1+16]") == m.Addr((m.Offset(m.Reg("%rd1"), "16"),)) and operand(3) == m.Imm("3")
    assert b.scope.decls() == [".reg .b64 %t_d<1>;"]
    # a module of them parses back to the same nodes
    fn = function("k", [param(".u64", "p")], [reg_decl(".b64", "%t_d", 1), reg_decl(".b32", "%r"), *b.nodes[:1]])
    text = module_text(".version 8.0\n.target sm_90\n.address_size 64", [fn])
    back = parse(text, "k.ptx", cache=False).function("k")
    assert [s for s in back.body.items if isinstance(s, m.Instruction)] == b.nodes[:1]
    assert back.params == (param(".u64", "p"),)
