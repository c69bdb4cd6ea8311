"""User file names in what splice writes and shows: a newline, an escape, a byte that is not UTF-8,
a character that is not ASCII, a name of hundreds of characters, a `;`.  Each stays inert: in a
comment, escaped, as U+FFFD, quoted for a shell, shortened to a file name that fits.  Found
2026-12-01 with hostile inputs."""
from __future__ import annotations

import os

import pytest

from .conftest import TINY_SWAPPED
from .userfiles import HEAD, NATIVE, RECIPE, TINY, run, work  # noqa: F401 - work: the fixture

LATIN1 = os.fsdecode(b"caf\xe9")       # a name that is not UTF-8: a lone surrogate once decoded
ESC_NAME = "a\x1b]0;PWN\x07b\x1b[2J.ptx"      # retitles the terminal, then clears it


@pytest.mark.parametrize("how", [["--phase", "1"], ["--epilogue", "1"]], ids=lambda a: a[0])
def test_an_extracted_native_from_a_path_with_a_newline_applies(how, work, capsys):
    """regression: extract's header comment quoted the module path as is: a newline in it ended
    the comment, and the rest of the path was a PTX syntax error in the native file written."""
    name = "a\nb.ptx"
    (work / name).write_text(TINY)
    assert run(["extract", name, *how, "-o", "x.ptx"]) == 0
    from splice.cut.native import load_native

    load_native(str(work / "x.ptx"))


@pytest.mark.parametrize("abi", ["inline", "call"])
def test_a_native_path_with_a_newline_stays_in_its_comment(abi, work, capsys):
    """regression: the spliced module's ``// splice: cut 1 … <- NATIVE`` comment quoted the
    native's path as is: a newline in it put the rest of the path into the PTX (``.entry x``:
    ptxas' syntax error; with --no-ptxas a broken module written, exit 0)."""
    from splice.ptx import parse_file

    (work / "n\n.entry x.ptx").write_text(NATIVE)
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", 'native: "n\\n.entry x.ptx"') + f"    abi: {abi}\n")
    assert run(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]) == 0
    parse_file(str(work / "o.ptx"))
    assert ".entry x" not in "".join(ln for ln in (work / "o.ptx").read_text().splitlines()
                                     if not ln.lstrip().startswith("//"))


def test_verify_suggests_a_shell_line_with_the_recipe_quoted(work, capsys):
    """regression: "run the GPU probe (splice probe RECIPE --harness)" pasted the recipe's path
    as is into a line meant for a shell: ``x;touch PWNED.yaml`` ran a second command there."""
    (work / "n.ptx").write_text("LOOP:\nbra LOOP;\n" + TINY_SWAPPED)      # not proven: the line is printed
    (work / "x;touch PWNED.yaml").write_text(RECIPE)
    assert run(["verify", "x;touch PWNED.yaml"]) == 3
    out = " ".join(capsys.readouterr().out.split())      # rich wraps at the console's width
    assert "splice probe 'x;touch PWNED.yaml' --harness" in out


@pytest.mark.parametrize("argv", [["stats"], ["roundtrip"], ["spec"], ["spec", "--pressure", "--no-ptxas", "--png", "none"]],
                         ids=lambda a: " ".join(a))
def test_a_file_name_with_terminal_control_is_shown_inert(argv, work, capsys):
    """regression: a report put the file name into its table as is: ``stats $'\\e[2J.ptx'``
    cleared the terminal (messages on stderr were already shown with U+FFFD)."""
    (work / ESC_NAME).write_text(TINY)
    assert run([argv[0], ESC_NAME, *argv[1:]]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "a\ufffd]0;PWN" in out.replace("\n", "") or argv[0] == "spec"


@pytest.mark.parametrize("native, made", [("né.ptx", "né.ptx"), ('"n\\e[2J.ptx"', "n\x1b[2J.ptx"),
                                          ("~/n.ptx", f"{LATIN1}/n.ptx")], ids=["utf8", "control", "latin1-home"])
def test_a_native_name_in_the_spliced_comments_is_ascii(native, made, work, monkeypatch, capsys):
    """regression: the spliced module's ``// splice: cut 1 … <- NATIVE`` comment carried the
    native's name as is: ``né.ptx`` made ptxas fail ("Unexpected non-ASCII character", on a line
    outside the cuts), a control character or an undecodable byte (here from ``$HOME``, which
    ``~`` expands) went into the module."""
    (work / made).parent.mkdir(exist_ok=True)
    (work / made).write_text((work / "n.ptx").read_text())
    monkeypatch.setenv("HOME", str(work / LATIN1))
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", f"native: {native}"))
    assert run(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]) == 0
    raw = (work / "o.ptx").read_bytes()
    assert raw.isascii() and b"\x1b" not in raw


def test_the_default_pressure_png_of_a_long_mangled_name_is_written(tmp_path, monkeypatch, capsys):
    """regression: the default PNG was ``build/<module>_<entry>_pressure.png``: a mangled C++
    kernel name of a few hundred characters (CUTLASS's are) made it longer than a file name may
    be, and ``spec --pressure`` failed ("file name too long").  Two such names that share their
    first characters get two files."""
    monkeypatch.chdir(tmp_path)
    a, b = "_Z" + "k" * 300 + "a", "_Z" + "k" * 300 + "b"
    (tmp_path / "m.ptx").write_text(HEAD + "".join(f".visible .entry {n}()\n{{\n\tret;\n}}\n" for n in (a, b)))
    assert run(["spec", "m.ptx", "--pressure", "--no-ptxas", "--json"]) == 0
    import json

    pngs = [e["png"] for e in json.loads(capsys.readouterr().out)["entries"]]
    assert len(set(pngs)) == 2 and all(os.path.isfile(p) and len(os.path.basename(p)) < 255 for p in pngs)


def test_a_probe_of_a_long_spec_name_makes_report_names_that_fit(work):
    """regression: the probe's reports are ``build/probe/reports/<spec name>-<module stem>/
    <same>.spliced.ptx``: ``probe init`` names a spec after its entry, so a long mangled name
    failed to make its report directory after the whole GPU run."""
    from splice.probe.modules import resolve

    long_stem = "m" * 200
    (work / f"{long_stem}.ptx").write_text(TINY)
    (work / "s.yaml").write_text((work / "spec.yaml").read_text().replace("name: tiny", "name: " + "n" * 200))
    pair = resolve(str(work / "s.yaml"), str(work / f"{long_stem}.ptx"))
    assert len(pair.name.encode()) <= 96 and pair.name.startswith("nnnn")
