"""What splice shows on a console: never highlighted, never read as markup, laid out between 80 and
1000 columns whatever COLUMNS says, a report of many entries cut with a line that says so, long
names and statements folded rather than cut to an ellipsis, diff lines whole.  Found 2026-12-01
with hostile inputs."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .userfiles import HEAD, NATIVE, RECIPE, TINY, many_entries, run, run_cli, work  # noqa: F401 - work


def test_consoles_do_not_highlight(tmp_path, monkeypatch, capsys):
    """regression: rich's highlighter ran its regular expressions over every printed line: the
    pressure header of a 100000-character entry name took 73 s of CPU (quadratic; 10000: 0.5 s),
    and numbers and paths inside the user's text were coloured.  No console of splice highlights."""
    from rich.highlighter import ReprHighlighter

    def refuse(self, text):
        raise AssertionError(f"highlighted: {str(text)[:80]!r}")

    monkeypatch.setattr(ReprHighlighter, "highlight", refuse)
    name = "k" * 2000
    (tmp_path / "m.ptx").write_text(".version 8.7\n.target sm_90\n.address_size 64\n\n"
                                    f".visible .entry {name}(.param .u64 p0)\n{{\n.reg .b32 %r<4>;\nret;\n}}\n")
    (tmp_path / "r.yaml").write_text(RECIPE)
    (tmp_path / "tiny.ptx").write_text(TINY)
    (tmp_path / "n.ptx").write_text(NATIVE)
    for argv in (["spec", "m.ptx", "--pressure", "--no-ptxas", "--png", "none"], ["spec", "m.ptx"],
                 ["stats", "m.ptx"], ["roundtrip", "m.ptx"], ["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"],
                 ["verify", "r.yaml"]):
        monkeypatch.chdir(tmp_path)
        assert run(argv) == 0, argv
    assert name in capsys.readouterr().out.replace("\n", "")


def test_a_progress_task_is_not_markup():
    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from splice.report.probe import RichUI

    con = Console(file=__import__("io").StringIO(), width=120)
    with Progress(TextColumn("[bold]{task.description}"), console=con) as prog:
        RichUI(prog).task("compile (ptxas -arch=[/x] -O3)", 1)()
    assert "[/x]" in con.file.getvalue()


TABLE_COMMANDS = [["stats", "tiny.ptx"], ["index", "tiny.ptx"], ["roundtrip", "tiny.ptx"], ["spec", "tiny.ptx"],
                  ["spec", "tiny.ptx", "--abi", "phase:1"], ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none"],
                  ["notes", "tiny.ptx"], ["extract", "tiny.ptx", "--phase", "1"], ["canonical", "tiny.ptx"],
                  ["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"], ["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx", "--diff"],
                  ["verify", "r.yaml"], ["probe", "init", "tiny.ptx"]]


_RENDER_ALL = """
import io, json, sys
from splice.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    rc = main(argv)
    sys.stdout.flush()
    text, sys.stdout = sys.stdout.buffer.getvalue().decode("utf-8", "surrogateescape"), sys.__stdout__
    out.append([rc, text])
print(json.dumps(out))
"""


def _render_all(work, columns, commands):
    """Every command's (status, stdout) in one child process whose ``COLUMNS`` is ``columns``
    (None: unset); the consoles read it when they are made."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.run([sys.executable, "-c", _RENDER_ALL, json.dumps(commands)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    import re

    return [[rc, re.sub(r"\d+\.\d+ ?s\b", "T", text)] for rc, text in json.loads(proc.stdout)]   # timings vary


@pytest.mark.slow
@pytest.mark.parametrize("commands", [
    pytest.param(TABLE_COMMANDS, id="tables"),
    pytest.param([["sass-mix", "tiny.ptx"]], id="sass-mix", marks=pytest.mark.needs("ptxas", "nvdisasm"))])
def test_columns_out_of_range_lays_tables_out_at_the_bounds(commands, work):
    """regression: ``COLUMNS=0`` made rich print nothing (stats, roundtrip, apply, verify: an
    empty report, exit 0); ``COLUMNS=1``…``10`` one character a line, every cell lost.  A width
    below 80 is laid out at 80 (as for a pipe), above 1000 at 1000; a value that is no number is
    not a width (the default)."""
    default = _render_all(work, None, commands)
    assert all(rc == 0 and text for rc, text in default), default
    for columns in ("0", "1", "5", "79", "-3", "abc", " 40"):
        assert _render_all(work, columns, commands) == default, columns
    wide = _render_all(work, "1000", commands)
    assert _render_all(work, "99999999", commands) == wide


@pytest.mark.parametrize("argv, says", [(["stats"], "6 more opcode tables"), (["spec"], "5 more entries"),
                                        (["spec", "--pressure", "--no-ptxas", "--png", "none"], "5 more entries")],
                         ids=["stats", "spec", "pressure"])
def test_a_report_of_many_entries_shows_the_first_and_says_so(argv, says, tmp_path, monkeypatch, capsys):
    """regression: the human reports laid out one rich table (or several) per entry: 50000
    entries took minutes (stats 100 s, spec 130 s) where the JSON takes seconds.  The first
    ``MAX_ENTRIES`` are shown, then a line says how many are not and how to see them."""
    from splice.report import console

    monkeypatch.setattr(console, "MAX_ENTRIES", 3)
    monkeypatch.setattr(console, "MAX_ROWS", 5)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.ptx").write_text(many_entries(8))
    assert run([argv[0], "m.ptx", *argv[1:]]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{says} not shown (a report shows the first 3): --entry NAME shows one, --json shows every one" in out
    if argv[0] == "spec":
        assert "k2 " in out and "k3 " not in out
    else:
        assert "4 more functions not shown (a report shows the first 5)" in out     # f and 8 kernels


LONG = "_Z" + "x" * 250 + "end"


def _column(out: str, header: str) -> str:
    """The text of the column ``header`` of the first table in ``out`` that has it, its cells'
    lines joined: what a reader of the table can read of each value."""
    lines = out.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("┃") and f" {header} " in ln)
    bars = [i for i, ch in enumerate(lines[top]) if ch == "┃"]
    lo, hi = next((a, b) for a, b in zip(bars, bars[1:]) if lines[top][a:b].strip(" ┃") == header)
    cells = []
    for ln in lines[top + 2:]:
        if not ln.startswith("│"):
            break
        cells.append(ln[lo + 1:hi].strip())
    return "".join(cells)


def _cli(work, *argv):
    proc = run_cli(list(argv), work, env={"COLUMNS": "80", "TERM": "dumb"})
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, (proc.returncode, err[-2000:])
    return out


def test_a_long_entry_name_is_folded_in_the_stats_table_not_cut(work):
    """regression: rich cut a cell to its column with ``…``: at 80 columns (an output that is
    not a terminal) the stats table showed the 255-character entry as ``_Zxxxxxxxxxxxxxxxxxxxx…``;
    nothing in the report said which kernel it was."""
    (work / "long.ptx").write_text(HEAD + f".visible .entry {LONG}()\n{{\n\t.reg .b32 %r<2>;\n"
                                   "\tmov.b32 %r1, 1;\n\tret;\n}\n")
    out = _cli(work, "stats", "long.ptx")
    assert "…" not in out, out
    assert _column(out, "function") == LONG


def test_a_cut_display_name_in_specs_headline_comes_with_the_whole_entry(work):
    """regression: spec's headline shows a name shortened to fit (``_Zxxx…xxend``): the entry's
    own name was nowhere in the report."""
    (work / "long.ptx").write_text(HEAD + f".visible .entry {LONG}()\n{{\n\tret;\n}}\n")
    for argv in (["spec", "long.ptx"], ["spec", "long.ptx", "--pressure", "--no-ptxas", "--png", "none"]):
        assert LONG in "".join(_cli(work, *argv).splitlines()), argv


def test_a_long_statement_in_the_pressure_table_is_shown_or_marked_cut(work):
    """regression: a peak's statement text was cut at 60 characters with nothing to say so: a
    different, shorter statement was shown."""
    reg = "%r" + "q" * 90
    (work / "wide.ptx").write_text(HEAD + f".visible .entry k()\n{{\n\t.reg .b32 {reg}, %s;\n"
                                   f"\tmov.b32 {reg}, 1;\n\tadd.s32 %s, {reg}, {reg};\n\tret;\n}}\n")
    text = _column(_cli(work, "spec", "wide.ptx", "--pressure", "--no-ptxas", "--png", "none"), "text")
    assert text.replace(" ", "") == f"add.s32%s,{reg},{reg};", text    # a line breaks at a blank


def test_a_long_native_name_is_folded_in_the_apply_table(work):
    native = "n" + "a" * 150 + ".ptx"
    os.rename(work / "n.ptx", work / native)
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", f"native: {native}"))
    out = _cli(work, "apply", "r.yaml", "--no-ptxas")
    assert native in _column(out, "native"), out


def test_apply_diff_lines_are_printed_whole(work):
    """regression: ``apply --diff`` (and the preview) printed each diff line cut at the console's
    width, without a mark: the spliced lines of a native, or the cut's comment naming a long
    native path, lost their ends."""
    native = "n" + "a" * 150 + ".ptx"
    os.rename(work / "n.ptx", work / native)
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", f"native: {native}"))
    out = _cli(work, "apply", "r.yaml", "--no-ptxas", "--diff")
    added = [ln for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert any(ln.rstrip().endswith(f"<- {native} (abi inline)") for ln in added), out
    assert sum(ln.rstrip().endswith("{%r10, %r10};") for ln in added) == 2, out
