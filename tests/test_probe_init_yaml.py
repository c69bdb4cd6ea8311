"""The YAML `probe init` writes: it reads back as written whatever the parameter names, module path
or variables are (`%tp0`, `on`, a newline, an escape, a name like a register), and it is no larger
than a probe spec may be.  Found 2026-12-01 with hostile inputs: `%tp0` made the skeleton invalid
YAML, `on`/`null` read back as True/None, an ESC in the header comment made splice refuse its own
skeleton, a module read from a stream was named `ptx: /dev/stdin`."""
from __future__ import annotations

import subprocess
import sys

import pytest

from splice.cli import main

from .conftest import ROOT
from .userfiles import HEAD, TINY, refused, run, work  # noqa: F401 - work: the fixture

PERCENT = ROOT / "tests/data/ptx/probe/globals_percent.ptx"
ESC_NAME = "a\x1b]0;PWN\x07b\x1b[2J.ptx"      # retitles the terminal, then clears it


@pytest.mark.parametrize("names", [("%tp0", "$tp1"), ("on", "null"), ("yes", "no")], ids=" ".join)
def test_probe_init_writes_names_yaml_reads_back(names, work, capsys):
    """regression: the skeleton wrote parameter names unquoted: ``%tp0`` (a legal PTX name) made
    it invalid YAML (``found character '%' that cannot start any token``), ``on``/``null``
    read back as True/None."""
    from splice.yamlsafe import load_yaml_marked

    text = TINY.replace("tiny_param_0", names[0]).replace("tiny_param_1", names[1])
    (work / "m.ptx").write_text(text)
    assert run(["probe", "init", "m.ptx", "-o", "s.yaml"]) == 0
    data = load_yaml_marked((work / "s.yaml").read_text(), "s.yaml")
    assert [p["name"] for p in data["params"]] == list(names)


def test_probe_init_keeps_a_newline_in_the_path_inside_its_comment(work, capsys):
    name = "a\nname: evil.ptx"
    (work / name).write_text(TINY)
    assert run(["probe", "init", name, "-o", "s.yaml"]) == 0
    from splice.yamlsafe import load_yaml_marked

    data = load_yaml_marked((work / "s.yaml").read_text(), "s.yaml")
    assert data["name"] == "tiny" and data["ptx"] == name


def test_probe_init_of_a_name_with_control_characters_writes_yaml_that_loads(work, capsys):
    """regression: the skeleton's header comment held the name's ESC: YAML allows no control
    character, not even in a comment, so ``splice probe`` refused the skeleton it had written."""
    from splice.yamlsafe import load_yaml_marked

    (work / ESC_NAME).write_text(TINY)
    assert run(["probe", "init", ESC_NAME, "-o", "s.yaml"]) == 0
    data = load_yaml_marked((work / "s.yaml").read_text(), "s.yaml")      # the skeleton's nulls are to fill in
    assert data["ptx"] == ESC_NAME


@pytest.mark.slow
def test_probe_init_refuses_a_skeleton_larger_than_a_spec_may_be(work, capsys):
    """regression: ``probe init`` of an entry of 20000 parameters wrote 1.9 MB of YAML, which
    ``splice probe`` refused to read (a probe spec holds at most 1 MiB)."""
    params = ", ".join(f".param .u64 p{i}" for i in range(20000))
    (work / "wide.ptx").write_text(HEAD + f".visible .entry k({params})\n{{\n\tret;\n}}\n")
    refused(capsys, run(["probe", "init", "wide.ptx", "-o", "wide.yaml"]),
            "wide.ptx: the probe spec of this entry would be", "(20000 parameters): over the 1048576 bytes")
    assert not (work / "wide.yaml").exists()
    some = params.split(", .param .u64 p8000")[0]
    (work / "some.ptx").write_text(HEAD + f".visible .entry k({some})\n{{\n\tret;\n}}\n")
    assert run(["probe", "init", "some.ptx", "-o", "some.yaml"]) == 0      # 8000: 750 KB
    capsys.readouterr()
    err = refused(capsys, run(["probe", "some.yaml", "some.ptx"]), "some.yaml:")    # its nulls, not its size
    assert "may hold" not in err, err


def test_probe_init_of_a_module_read_from_a_stream_leaves_ptx_to_fill_in(work):
    """regression: ``gen | splice probe init /dev/stdin`` wrote ``ptx: /dev/stdin`` into the
    skeleton: the probe would later read its original module from the terminal, or a pipe."""

    proc = subprocess.run([sys.executable, "-m", "splice.cli", "probe", "init", "/dev/stdin"], cwd=work,
                          input=TINY.encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert "\nptx: null   # TODO: the module's file (it was read from a stream)\n" in proc.stdout.decode()
    assert run(["probe", "init", "tiny.ptx", "-o", "s.yaml"]) == 0
    assert "\nptx: tiny.ptx\n" in (work / "s.yaml").read_text()


def test_probe_init_lists_a_variable_named_like_a_register(tmp_path, capsys):
    """regression: ``.global .u32 %g`` (a PTX name may start with %) read as ``[%g]`` is a
    register operand to the parser: probe init left it out of ``globals:`` (the kernel read a
    variable the spec never set, and a write to one was never compared)."""
    out = tmp_path / "s.yaml"
    assert main(["probe", "init", str(PERCENT), "-o", str(out)]) == 0
    text = out.read_text()
    assert "- name: '%g'\n" in text and "- name: '%h'\n" in text and "- name: 'on'\n" in text
    h = text.split("- name: '%h'\n", 1)[1]
    assert "  role: output" in h.split("\n- ", 1)[0]        # only written, through mov %rd3, %h
