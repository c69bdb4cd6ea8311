"""Modules ptxas refuses, refused by splice first, at their line (left open 2026-12-01).

A register declared twice in one scope: ptxas says "Duplicate definition of variable", and the
analysis kept one of the two declarations' types in silence.  Each form ptxas refuses is refused
at the second declaration's line; a nested scope's same name (shadowing) and names outside a
range are legal.  A ``.reqntid`` of zero threads: probe init wrote a skeleton that failed at
the compile."""
from __future__ import annotations

import pytest

from splice.analysis import Kernel
from splice.cli import main
from splice.errors import SpliceError
from splice.ptx import parse

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"


def _kernel(body: str) -> Kernel:
    return Kernel(parse(HEAD + body + "\nret;\n}\n", "dup.ptx"))


@pytest.mark.parametrize("body, said", [
    (".reg .b32 %r1;\n.reg .b32 %r1;", "register %r1 is declared twice"),
    (".reg .b32 %r1;\n.reg .f32 %r1;", "register %r1 is declared twice"),          # another type
    (".reg .b32 %r<4>;\n.reg .b32 %r2;", "%r2 is already declared by %r<4>"),
    (".reg .b32 %r<4>;\n.reg .b32 %r03;", "%r03 is already declared by %r<4>"),    # ptxas reads 03 as 3
    (".reg .b32 %r2;\n.reg .f32 %r<4>;", "%r<4> declares %r2 again"),
    (".reg .b32 %r<4>;\n.reg .b32 %r<8>;", "%r<8> declares %r<4> again"),
    (".reg .b32 %a, %b, %a;", "register %a is declared twice"),
])
def test_a_register_declared_twice_in_one_scope_is_refused_at_its_line(body, said):
    with pytest.raises(SpliceError) as ei:
        _kernel(body)
    assert said in ei.value.message and "duplicate definition" in ei.value.message
    assert ei.value.line == 5 + body.count("\n") + 1


@pytest.mark.parametrize("body", [
    ".reg .b32 %r1;\n{\n.reg .b32 %r1;\n}",                 # shadowing in a nested scope
    ".reg .b32 %r<4>;\n.reg .b32 %r4;\n.reg .b32 %rd2;",    # past the range; another prefix
    "{\n.reg .b32 %r1;\n}\n{\n.reg .b32 %r1;\n}",           # sibling scopes (inline asm repeats)
])
def test_legal_declarations_stay_legal(body):
    assert _kernel(body).name == "k"


@pytest.mark.needs("ptxas")
def test_ptxas_agrees_on_each_form(tmp_path):
    """Every refused form is one ptxas refuses, every legal one it takes."""
    import subprocess

    from splice.ptx.sass import require_tool

    ptxas = require_tool("ptxas")      # as splice finds it: PATH or the nvidia wheels
    for body, ok in ((".reg .b32 %r<4>;\n.reg .b32 %r03;", False), (".reg .b32 %r2;\n.reg .f32 %r<4>;", False),
                     (".reg .b32 %r1;\n{\n.reg .b32 %r1;\n}", True), (".reg .b32 %r<4>;\n.reg .b32 %r4;", True)):
        f = tmp_path / "k.ptx"
        f.write_text(HEAD + body + "\nret;\n}\n")
        r = subprocess.run([ptxas, "-arch=sm_90", str(f), "-o", str(tmp_path / "k.cubin")], capture_output=True)
        assert (r.returncode == 0) == ok, (body, r.stderr)


def test_the_commands_say_so_with_exit_2(tmp_path, capsys):
    f = tmp_path / "dup.ptx"
    f.write_text(HEAD + ".reg .b32 %r<4>;\n.reg .b32 %r2;\nret;\n}\n")
    for cmd in (["spec", str(f)], ["notes", str(f), "-o", str(tmp_path / "n.md")],
                ["extract", str(f), "--statements", "s1-s1"]):
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert "dup.ptx:7" in err and "already declared" in err and "Traceback" not in err
    assert not (tmp_path / "n.md").exists()


def test_probe_init_refuses_a_block_of_no_thread(tmp_path, capsys):
    """``.reqntid 0, 0, 0`` (ptxas: "Positive non-zero value expected"): the skeleton said
    ``block: [0, 0, 0]`` and the probe failed at the compile."""
    from splice.cli import main

    f = tmp_path / "rq.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                 ".visible .entry k(.param .u64 p) .reqntid 0, 0, 0\n{\nret;\n}\n")
    assert main(["probe", "init", str(f), "-o", str(tmp_path / "s.yaml")]) == 2
    err = capsys.readouterr().err
    assert "rq.ptx:4" in err and "block of no thread" in err and "Traceback" not in err
    assert not (tmp_path / "s.yaml").exists()


@pytest.mark.parametrize("req, said", [("-4, 1, 1", "block of no thread"), ("32, 32, 2", "2048 threads a block"),
                                       ("99999999999", "more than 1024")])
def test_probe_init_refuses_a_block_no_launch_can_have(tmp_path, capsys, req, said):
    """``.reqntid -4, 1, 1`` read as ``1, 1`` (only decimal digits were read, the sign dropped);
    ``32, 32, 2`` ptxas takes, and the launch fails on the device."""
    from splice.cli import main

    f = tmp_path / "rq.ptx"
    f.write_text(f".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p) .reqntid {req}\n"
                 "{\nret;\n}\n")
    assert main(["probe", "init", str(f)]) == 2
    err = capsys.readouterr().err
    assert "rq.ptx:4" in err and said in err and "Traceback" not in err


def test_a_hexadecimal_reqntid_is_the_block_it_names(tmp_path):
    """``.reqntid 0x40`` (ptxas takes it) was no directive argument at all: probe init asked for
    the block, and a spec's launch was not checked against it."""
    import yaml

    from splice.probe.language.entry import check
    from splice.probe.language.init import skeleton
    from splice.probe.language.context import SpecError
    from splice.probe.language.document import parse_spec

    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 p) .reqntid 0x40\n{\nret;\n}\n")
    sk = yaml.safe_load(skeleton(text, "rq.ptx", "k")[0])
    assert sk["launch"]["block"] == [64, 1, 1]
    spec = parse_spec({"name": "k", "ptx": "rq.ptx", "entry": "k",
                       "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]},
                       "params": [{"name": "p", "kind": "buffer", "dtype": "u8", "shape": [4], "role": "output"}]},
                      str(tmp_path / "s.yaml"))
    with pytest.raises(SpecError, match="reqntid"):
        check(spec, text, "rq.ptx")
