"""splice's work is bounded by its input: no scan repeated per line, per statement, per entry or
per parameter (quadratic on a minified or generated module), no number expanded before it is
checked, no pair of definitions and uses counted without a bound, no file per entry without one.
Each case took minutes, hours or the machine's memory before its fix (found 2026-11-30 and
2026-12-01 with hostile inputs).  Not timing tests: each bound is many times what the linear code
needs on a loaded machine, where the quadratic one needs minutes; memory is measured with
tracemalloc or under an address-space limit, not by the clock."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .userfiles import HEAD, TINY, many_entries, refused, run, run_cli, work, write_files  # noqa: F401 - work


def test_param_gaps_are_computed_from_the_reads_alone():
    from splice.analysis.notes_facts import _gaps

    assert _gaps(10 ** 30, [(0, 8)]) == [(8, 10 ** 30)]
    assert _gaps(16, [(4, 8), (-4, 2), (6, 6), (30, 40)]) == [(2, 4), (8, 16)]
    assert _gaps(0, []) == []


def test_many_statements_on_one_line_are_not_quadratic(tmp_path):
    """regression: the lossless printer sliced the whole line before every statement to find its
    indent: 160k statements on one line took 96 s to round-trip (40k: 3.6 s), 300k more than
    two minutes -- a hang for a minified module.  Not a timing test: the bound is 30x what
    the linear printer needs on a loaded machine; the quadratic one needs minutes."""
    text = TINY.replace("\tret;", "\t" + "add.s32 %r20, %r20, 1; " * 200_000 + "\n\tret;")
    write_files(tmp_path, {"m.ptx": text})
    proc = run_cli(["roundtrip", "m.ptx", "--json"], tmp_path, timeout=90)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert b'"identical": true' in proc.stdout, proc.stdout[:300]


@pytest.mark.parametrize("seed", range(5))
def test_indent_before_is_the_line_prefix_when_it_is_blank(seed):
    import random

    from splice.ptx.printer import _indent_before

    rnd = random.Random(seed)
    alphabet = [" ", "\t", "\n", "\r", "\x0b", "a", ";", "\u2028", "\x85"]
    for _ in range(300):
        source = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        pos = rnd.randint(0, len(source))
        prefix = source[source.rfind("\n", 0, pos) + 1:pos]           # the definition
        assert _indent_before(source, pos) == (prefix if not prefix.strip() else ""), (source, pos)


STAGE_RANGES = [("parse_selection", "'1-99999999999', 3, set()", "phase 99999999999 does not exist"),
                ("parse_selection", "'0-2', 3, set()", "phase 0 does not exist"),
                ("parse_selection", "'3-1', 3, set()", "empty phase range"),
                ("split_selection", "'E1-E99999999999', 5", "epilogue E99999999999 does not exist")]


@pytest.mark.parametrize("func, args, says", STAGE_RANGES, ids=[a for _f, a, _s in STAGE_RANGES])
def test_stage_ranges_are_bounded_before_they_are_expanded(func, args, says, tmp_path):
    """regression: ``--stages 1-99999999999`` (or ``E1-E99999999999``) was expanded into a set
    of 10^11 numbers before being checked against the kernel: the memory ran out.  Run in a
    child under a 2 GiB limit, so a regression fails instead of swapping."""
    mod = "stages" if func == "parse_selection" else "epilogue_stages"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            f"from splice.probe.{mod} import {func}\nfrom splice.errors import SpliceError\n"
            f"try:\n    {func}({args})\nexcept SpliceError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0 and says in proc.stdout.decode(), proc.stderr[-800:]


def _skip_chain(n: int) -> str:
    """n blocks, each skipping or taking one ``add`` of %r1: n/2 definitions reach each use."""
    body = "".join(f"L{i}:\n\t@%p1 bra L{i + 1};\n\tadd.s32 %r1, %r1, 1;\n" for i in range(n))
    return (".version 8.7\n.target sm_90\n.address_size 64\n\n.visible .entry k(.param .u64 p0)\n{\n"
            f"\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n{body}L{n}:\n\tret;\n}}\n")


def test_notes_refuses_a_def_use_web_past_its_bound(tmp_path, monkeypatch, capsys):
    """regression: ``notes`` built every (definition, use) pair through joins of paths: 200k
    such blocks took more than 8 GB (MemoryError traceback, exit 1), 20k three minutes.  The
    pairs are counted as they are made; past the bound the run stops at the use that crossed it.
    (Here the bound is lowered so that a small kernel shows it.)"""
    from splice.analysis import notes_facts

    monkeypatch.setattr(notes_facts, "MAX_JOINED_PAIRS", 5000, raising=False)
    (tmp_path / "m.ptx").write_text(_skip_chain(400))       # 80k pairs
    err = refused(capsys, run(["notes", str(tmp_path / "m.ptx")]), "m.ptx:", "pairs through joins of paths",
                  "splice's limit")
    assert "add.s32 %r1, %r1, 1;" in err       # the statement is quoted, caret under it
    (tmp_path / "s.ptx").write_text(_skip_chain(40))        # 800 pairs: notes as before
    assert run(["notes", str(tmp_path / "s.ptx")]) == 0


def test_a_module_of_empty_lines_costs_8_bytes_a_line():
    """regression: the line-start table was built as a list of ints (36 bytes a line at the
    peak) before it became an array: 50M empty lines took 2.4 GB to print the stats of a 50 MB
    file.  Measured with tracemalloc (Python's own allocations), not the clock."""
    import tracemalloc

    from splice.ptx.index import SourceLines

    text = "\n" * 1_000_000
    tracemalloc.start()
    try:
        sl = SourceLines(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(sl.starts) == 1_000_001 and sl.line_of(500_000) == 500_001
    assert peak < 12 * 1_000_000, peak        # 8 bytes a line (and the array's growth), not 36


class _CountingItems(tuple):
    """A module's items that count how often they are walked."""
    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def test_each_entrys_spec_does_not_rescan_the_module(monkeypatch):
    """regression: ``spec`` of a module of n entries scanned every item of the module several
    times per entry (the function lookup, the call graph's function table, the arrays of
    provenance and of the shared-memory table): n^2, 8000 empty kernels took 21 s of CPU
    (50000: hours).  The module's functions and declarations are found once."""
    from splice.analysis import Kernel
    from splice.analysis.spec import build_spec
    from splice.ptx import model as m
    from splice.ptx import parse
    from splice.ptx.index import SourceLines

    mod = parse(many_entries(300), "many.ptx")
    counted = m.Module(_CountingItems(mod.items), mod.source, mod.path)
    lines = SourceLines(counted.source)
    _CountingItems.walks = 0
    for e in counted.entries():
        d = build_spec(Kernel(counted, e.name, lines), profile=False)
        assert d["mma_in_calls"] is not None
    assert _CountingItems.walks < 20, _CountingItems.walks      # not once or more per entry


def _many(n: int) -> str:
    return HEAD + "".join(f".visible .entry k{i}()\n{{\n\tret;\n}}\n" for i in range(n))


def test_pressure_of_more_entries_than_pngs_it_writes_is_refused(work, capsys):
    """regression: ``spec --pressure`` wrote one PNG per entry under build/: 50000 kernels wrote
    50000 files in ten minutes, where the report shows the first 100."""
    from splice.commands.perf import MAX_PNGS

    (work / "many.ptx").write_text(_many(MAX_PNGS + 1))
    refused(capsys, run(["spec", "many.ptx", "--pressure", "--no-ptxas"]),
            f"many.ptx: the module has more than {MAX_PNGS} entries", "--png none")
    assert not (work / "build").exists()


def test_pressure_of_many_entries_runs_with_png_none_or_an_entry(work, capsys):
    from splice.commands.perf import MAX_PNGS

    (work / "many.ptx").write_text(_many(MAX_PNGS + 1))
    assert run(["spec", "many.ptx", "--pressure", "--no-ptxas", "--png", "none", "--json"]) == 0
    assert capsys.readouterr().out.count('"entry"') == MAX_PNGS + 1
    assert run(["spec", "many.ptx", "--pressure", "--no-ptxas", "--entry", "k7"]) == 0
    assert os.listdir(work / "build") == ["many_k7_pressure.png"]


def test_the_lines_of_a_long_param_list_on_one_line_are_found_in_linear_time():
    """regression: each parameter's line was searched for over the 400 lines from the entry's,
    whole: a list of 20000 parameters on one line (500 KB, what a generator writes) made
    ``probe init`` run past a minute (quadratic); now well under a second."""
    import time

    from splice.probe.check import entry_decl

    params = ", ".join(f".param .u64 p{i}" for i in range(20000))
    t = time.monotonic()
    decl = entry_decl(HEAD + f".visible .entry k({params})\n{{\n\tret;\n}}\n", "k")
    assert time.monotonic() - t < 10, "finding 20000 parameters' lines is quadratic"
    assert len(decl.params) == 20000 and {p.line for p in decl.params} == {5}


def test_a_parameters_line_is_still_the_line_it_is_declared_on():
    from splice.probe.check import entry_decl

    text = HEAD + ".visible .entry k(\n\t.param .u64 a,\n\t.param .u32 $b,\n\t.param .u32 c_2\n)\n{\n\tret;\n}\n"
    decl = entry_decl(text, "k")
    assert [(p.name, p.line) for p in decl.params] == [("a", 6), ("$b", 7), ("c_2", 8)]
