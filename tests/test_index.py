"""The notes' statement index, on hand-made cases that exercise every rule."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.cli import main
from splice.ptx import Instruction, Label, attach, parse, statement_index

SRC = """//
// header comment
.version 8.5
.target sm_90
.address_size 64

.visible .entry k(
\t.param .align 8 .b8 k_param_0[144]
)
{
\t.reg .b32 %r<30>;
\t.reg .b16 %rs<4>;
\t.reg .f32 %f<4>;
\t.shared .align 4 .b8 smem[64];

\tmov.b64 %rd6, k_param_0;
\t// begin inline asm
\t{ cvt.f32.f16 %f1, %rs1;}

\t// end inline asm
\t{
\t.reg .b16 %temp;
\tmov.b32 {%temp, %rs2}, %r5;
\t}
\t{.reg .pred p; setp.ne.b32 p, %r1, 0; selp.u32 %r2, 1, 0, p;}
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t{%r10, %r11},
\t{%r12, %r13, %r14, %r15},
\t{%r16, %r17},
\t{%r18, %r19};
$L__BB0_1:
\t.loc 1 2 3
\tadd.s32 %r1, %r1, 1; // trailing comment
\t{mul.f16x2 %r20,%r21,%r22;
}
\tret;
}
"""


def test_rules_reproduced():
    idx = statement_index(SRC, "k")
    got = [(s.n, s.line, s.text) for s in idx]
    assert got == [
        (1, 9, ") mov.b64 %rd6, k_param_0;"),          # ')' is not skipped (rule 2)
        (2, 18, "cvt.f32.f16 %f1, %rs1;"),              # one-line scope: braces stripped
        (3, 23, "mov.b32 {%temp, %rs2}, %r5;"),         # multi-line scope: .reg skipped
        (4, 26, "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r10, %r11}, "
                "{%r12, %r13, %r14, %r15}, {%r16, %r17}, {%r18, %r19};"),  # 4-line form, '{%' kept
        (5, 31, "$L__BB0_1:"),                          # label is its own statement
        # a trailing comment leaves the buffer open: the next line joins it (literal rules)
        (6, 33, "add.s32 %r1, %r1, 1; // trailing comment mul.f16x2 %r20,%r21,%r22;"),
        (7, 36, "ret;"),
    ]
    # `{.reg …` line is skipped whole, as the rules say
    assert not any("setp" in s.text for s in idx)
    assert idx[3].last_line == 30


def test_attach_pairs_statements_with_nodes():
    mod = parse(SRC, cache=False)
    stmts = attach(mod, "k")
    numbered = {s.n: s.node for s in stmts if s.n is not None}
    assert isinstance(numbered[1], Instruction) and numbered[1].opcode == "mov"
    assert numbered[4].opcode == "mma" and numbered[4].line == 26
    assert isinstance(numbered[5], Label)
    assert numbered[7].opcode == "ret"
    both = [s.node.opcode for s in stmts if s.n == 6]
    assert both == ["add", "mul"]
    depth = {s.n: s.depth for s in stmts if s.n is not None}
    assert depth[2] == 1 and depth[3] == 1 and depth[4] == 0


def test_index_cli(tmp_path, capsys):
    p = tmp_path / "k.ptx"
    p.write_text(SRC)
    assert main(["index", str(p), "--entry", "k", "--range", "s4-s5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("s4 L26 mma.sync") and out[1] == "s5 L31 $L__BB0_1:"
    assert main(["index", str(p), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["k"]) == 7 and data["k"][0]["line"] == 9


def test_cli_error_exit_status(tmp_path, capsys):
    p = tmp_path / "bad.ptx"
    p.write_text(".version 8.5\n.target sm_90\n.entry k()\n{\n\tadd.s32 %r1 %r2;\n}\n")
    assert main(["stats", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{p}:5:14: expected") and err.rstrip().endswith("^")
    assert main(["stats", str(tmp_path / "missing.ptx")]) == 2


def test_stats_json(tmp_path, capsys):
    p = tmp_path / "k.ptx"
    p.write_text(SRC)
    assert main(["stats", str(p), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    f = data["functions"][0]
    assert f["name"] == "k" and f["statements"] == 7 and f["labels"] == 1
    assert f["opcodes"]["mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"] == 1


def test_index_entry_is_named_as_everywhere_else(capsys):
    """``index --entry`` takes what ``spec --entry`` takes: the exact name, the demangled one or
    a unique substring; an unknown one is exit 2 listing the entries."""
    from pathlib import Path

    enc5 = str(Path(__file__).resolve().parents[1] / "corpus" / "enc5.ptx")
    assert main(["index", enc5, "--entry", "cuda_dldn_engine_swin_enc5_kernel", "--range", "s1-s3"]) == 0
    exact = capsys.readouterr().out
    assert main(["index", enc5, "--entry", "swin_enc5", "--range", "s1-s3"]) == 0
    assert capsys.readouterr().out == exact and exact.startswith("s1 L")
    assert main(["index", enc5, "--entry", "dec1"]) == 2
    assert "no entry 'dec1'" in capsys.readouterr().err


@pytest.mark.parametrize("query", ["tile", "_Z4tilePfjjjjjj"])
def test_entry_naming_a_func_says_so_however_it_is_spelled(capsys, query):
    """``--entry`` that finds no ``.entry`` but exactly one ``.func`` (by any of the rules an
    entry is found by: here a demangled base name and the mangled one) says it is a ``.func``,
    not "no entry"; the entries are listed."""
    from splice.cli import main

    mod = str(Path(__file__).parent / "data" / "ptx" / "modern" / "mma_in_func.ptx")
    assert main(["index", mod, "--entry", query, "--json"]) == 2
    err = capsys.readouterr().err
    assert "names a .func" in err and "not an .entry" in err, err
    assert query == "_Z4tilePfjjjjjj" or "(tile(" in err, "a partial name says which .func it found"
    assert "_Z8via_funcPKjS0_Pfi" in err and "Traceback" not in err
    assert main(["index", mod, "--entry", "via_func", "--json"]) == 0


_OCELOT = (Path(__file__).parent / "data" / "ptx" / "thirdparty" / "gpuocelot" / "ocelot" / "ocelot" / "executive"
           / "test" / "kernels.ptx")


def test_a_statement_of_several_instructions_is_cited_and_ranged_from_its_first():
    """``mov.f32 %f3, 0f7f800000; // ((1.0F)/(0.0F))`` joins the next line (``setp.eq.f32 …``)
    into s5.  Its citation gives the line the notes' index gives (the mov's, not the setp's),
    as cuts start their ranges there."""
    from splice.analysis.kernel import Kernel

    k = Kernel.load(_OCELOT, "_Z17k_sequenceLoopingPfi")
    row = next(s for s in statement_index(_OCELOT.read_text(), "_Z17k_sequenceLoopingPfi") if s.n == 5)
    assert k.first_pos_of(5) < k.pos_of(5)
    assert row.line == 65 and k.cite(5).startswith("s5 L65: mov.f32 %f3, 0f7f800000;")
    assert k.stmts[k.first_pos_of(5)].node.opcode == "mov"
