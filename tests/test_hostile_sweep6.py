"""A sixth hostile user: classes of failure the first five sweeps (tests/test_hostile_sweep.py …
tests/test_hostile_sweep5.py) do not reach, and the leftovers sweep 5 listed as not covered.
Each class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 6", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import tree_digest
from .test_hostile_sweep3 import RECIPE, TINY, refused, run  # noqa: F401 - shared with sweeps 3 to 5
from .test_hostile_sweep4 import work  # noqa: F401 - fixture: the work directory


# ---- a module found by its entry: never one of several -----------------------------------------

def test_a_module_named_by_no_file_is_not_one_of_several_declaring_the_entry(work, capsys):
    """regression: ``module: tinyy.ptx`` (a typo) was looked for by name, then as "the first
    *.ptx of the corpus directory declaring .entry tiny": ``a-spliced.ptx``, an earlier spliced
    output of the same kernel, sorted first and the recipe ran on it, exit 0."""
    (work / "a-spliced.ptx").write_text(TINY.replace("// tiny", "// spliced tiny", 1))
    (work / "r.yaml").write_text(RECIPE.replace("module: tiny.ptx", "module: tinyy.ptx"))
    before = tree_digest(work)
    err = refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]),
                  "r.yaml:1:9: module 'tinyy.ptx' is not a file, and 2 files of", "declare .entry tiny",
                  str(work / "a-spliced.ptx"), str(work / "tiny.ptx"))
    assert "out.ptx" not in os.listdir(work), err
    assert tree_digest(work) == before


def test_a_module_found_by_its_entry_alone_is_still_taken(work, capsys):
    """The rule that lets a recipe written for the stand-in run on a user's corpus whose file
    is named otherwise stays: one file declaring the entry is that module."""
    os.rename(work / "tiny.ptx", work / "0018-PREPASS.ptx")
    (work / "other.ptx").write_text(TINY.replace(".entry tiny", ".entry nottiny"))
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    assert '"module": "' + str(work / "0018-PREPASS.ptx") in capsys.readouterr().out


def test_a_module_named_exactly_wins_over_files_declaring_the_entry(work, capsys):
    (work / "a-spliced.ptx").write_text(TINY)
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    assert "\"module\": \"tiny.ptx\"" in capsys.readouterr().out


# ---- spec --pressure of a module of many entries: a bounded number of PNGs ----------------------

HEAD = ".version 8.7\n.target sm_90\n.address_size 64\n\n"


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


# ---- tables narrower than their content: folded, not cut to an ellipsis -------------------------

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
    from .test_hostile_sweep2 import run_cli

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


# ---- a .param list of thousands on one line: read once, not once per parameter -----------------

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


def test_a_parameters_line_is_still_the_line_it_is_declared_on():
    from splice.probe.check import entry_decl

    text = HEAD + ".visible .entry k(\n\t.param .u64 a,\n\t.param .u32 $b,\n\t.param .u32 c_2\n)\n{\n\tret;\n}\n"
    decl = entry_decl(text, "k")
    assert [(p.name, p.line) for p in decl.params] == [("a", 6), ("$b", 7), ("c_2", 8)]


# ---- a function defined twice: no lookup by name takes the first in silence ---------------------

import pytest  # noqa: E402

DUP_ENTRY = HEAD + (".visible .entry k()\n{\n\tret;\n}\n"
                    ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.b32 %r1, 1;\n\tret;\n}\n")
DUP_FUNC = HEAD + ".func f()\n{\n\tret;\n}\n.func f()\n{\n\tret;\n}\n.visible .entry k()\n{\n\tcall f;\n\tret;\n}\n"
DUP_KINDS = HEAD + ".func k()\n{\n\tret;\n}\n.visible .entry k()\n{\n\tret;\n}\n"


DUPS = {"entry": (DUP_ENTRY, "k"), "called-func": (DUP_FUNC, "f"), "func-and-entry": (DUP_KINDS, "k")}
LOOKUPS = [["spec"], ["spec", "--entry", "k"], ["spec", "--pressure", "--no-ptxas", "--png", "none"], ["notes"],
           ["extract", "--phase", "1"], ["extract", "--statements", "s1-s1"], ["probe", "init"], ["index"],
           ["index", "--entry", "k"]]
# index lists the entries' statements: a helper .func defined twice changes none of them
DUP_CASES = [(d, a) for d in DUPS for a in LOOKUPS if not (a[0] == "index" and d == "called-func")]


@pytest.mark.parametrize("dup, argv", DUP_CASES, ids=[f"{d}-{'-'.join(a).replace('--', '')}" for d, a in DUP_CASES])
def test_a_name_defined_twice_is_refused_not_taken_first(dup, argv, work, capsys):
    """regression: every lookup by name took the first definition: ``spec`` of a module with two
    ``.entry k`` showed the first twice (1 statement each) and never the second; ``index`` listed
    the first's statements only; notes, extract and probe init worked on the first; a ``.func f``
    defined twice was analysed through the first; ``.func k`` before ``.entry k`` was "--entry 'k'
    names a .func" with no --entry given.  ptxas refuses every such module."""
    text, name = DUPS[dup]
    (work / "dup.ptx").write_text(text)
    cmd = [*argv[:2], "dup.ptx", *argv[2:]] if argv[0] == "probe" else [argv[0], "dup.ptx", *argv[1:]]
    if argv[0] in ("extract", "probe", "notes"):
        cmd += ["-o", "out.md"]
    before = tree_digest(work)
    refused(capsys, run(cmd), f"dup.ptx:9: {name!r} is defined 2 times (lines 5, 9): ptxas refuses the module")
    assert tree_digest(work) == before


def test_a_name_defined_twice_still_reads_losslessly(work, capsys):
    """stats, roundtrip and canonical read every definition as written (they look nothing up)."""
    (work / "dup.ptx").write_text(DUP_ENTRY)
    assert run(["stats", "dup.ptx", "--json"]) == 0
    assert capsys.readouterr().out.count('"name": "k"') == 2
    assert run(["roundtrip", "dup.ptx"]) == 0
    assert run(["canonical", "dup.ptx", "-o", "c.ptx"]) == 0


# ---- a native's header: its own block, then ordinary comments -----------------------------------

def _native(work, text: str) -> None:
    (work / "n.ptx").write_text(text)



def _body() -> str:
    from .conftest import TINY_SWAPPED

    return TINY_SWAPPED


@pytest.mark.parametrize("comment", ["// The body below is hand-scheduled.", "//\n// (c) someone, 2026"],
                         ids=["prose", "blank-then-prose"])
def test_a_comment_after_the_native_header_is_a_comment(comment, work, capsys):
    """regression: every comment line after ``// splice-native:`` was read as the header's YAML
    (docs/recipes.md: "everything else in comments is ignored"): a sentence right after the
    header was "bad splice-native header: could not find expected ':'"."""
    _native(work, f"// splice-native:\n//   scratch: {{t: .b32}}\n{comment}\nmov.u32 %t, 0;\n" + _body())
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0, capsys.readouterr().err


def test_a_header_key_left_unindented_is_refused_not_dropped(work, capsys):
    """``params:`` at the header's column is no key of the header: it ends the block, and is an
    error at its line rather than a parameter dropped in silence."""
    _native(work, "// splice-native:\n// scratch: {t: .b32}\nmov.u32 %t, 0;\n" + _body())
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]), "n.ptx:2: scratch: belongs under splice-native: indent it")


def test_a_second_native_header_is_refused_not_ignored(work, capsys):
    """regression: a second ``// splice-native:`` block was ignored: its scratch and params were
    not there, and the error came later, at a use, naming no header."""
    _native(work, "// splice-native:\n//   params: {}\nmov.u32 %d0, 0;\n// splice-native:\n//   scratch: {t: .b32}\n"
            + _body())
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]),
            "n.ptx:4: a second splice-native header (the first is at line 1)")


# ---- SPLICE_PROBE_CACHE: read when the probe runs ------------------------------------------------

@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("value, where", [("{tmp}/pc", "{tmp}/pc"), ("", "{cwd}/build/probe")],
                         ids=["set-late", "empty"])
def test_the_probe_cache_is_the_variable_as_set_when_the_probe_runs(value, where, work, monkeypatch):
    """regression: ``$SPLICE_PROBE_CACHE`` was read once, when splice.probe.modules was first
    imported: a value set later in the process (as every test sets it) was never seen and the
    cubins went into ./build/probe; ``SPLICE_PROBE_CACHE=`` (an unset shell variable) was
    ``Path('')``, the working directory, and the cubins were written there."""
    import splice.probe.modules as modules

    tmp = str(work.parent / (work.name + "-late"))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", value.format(tmp=tmp))
    built = modules.compile_one("tiny", TINY, "sm_90", use_cache=False)
    assert str(built.path.parent.parent.resolve()) == where.format(tmp=tmp, cwd=work.resolve())
    assert not (work / "cubins").exists()


@pytest.mark.parametrize("xdg", ["rel", "./x", "~/c"])
def test_a_relative_xdg_cache_home_is_ignored_as_the_spec_says(xdg, tmp_path):
    """regression: ``XDG_CACHE_HOME=rel`` put splice's cache under the working directory
    (``rel/splice/ptxas``: a new cache in each directory splice ran in); the XDG base directory
    spec makes a relative value invalid, to be ignored."""
    from splice.ptx.cache import default_cache_dir

    assert default_cache_dir({"XDG_CACHE_HOME": xdg, "HOME": str(tmp_path)}) == tmp_path / ".cache" / "splice"
    absolute = {"XDG_CACHE_HOME": str(tmp_path / "x"), "HOME": "/nonexistent"}
    assert default_cache_dir(absolute) == tmp_path / "x" / "splice"


# ---- the umask: read, never set --------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the umask from /proc/self/status")
def test_writing_a_new_output_never_changes_the_umask(tmp_path, monkeypatch):
    """regression: ``write_atomic`` read the umask as ``os.umask(0)``, ``os.umask(old)``: for a
    moment every thread of the process had umask 0 (the probe writes cubins from a thread pool),
    and two threads doing it at once could leave it at 0 for good.  A new file still gets the
    permissions the umask gives."""
    from splice.util import write_atomic

    calls = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda m: calls.append(m) or real(m))
    old = real(0o027)
    try:
        write_atomic(tmp_path / "new.txt", "x")
        assert calls == []
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
    finally:
        real(old)


# ---- YAML 1.1 numbers a person reads otherwise -----------------------------------------------------

@pytest.mark.parametrize("text, value", [("0100", 64), ("0512", 330), ("-017", -15), ("1:30", 90), ("1:04", 64),
                                         ("0_10", 8)])
def test_a_yaml_number_read_two_ways_is_refused_at_its_place(text, value):
    """regression: PyYAML reads YAML 1.1, where ``0512`` is octal (330) and ``1:30`` base 60 (90);
    YAML 1.2 and a person read 512 and the text 1:30.  Recipes, native headers and probe specs
    took the 1.1 value in silence."""
    from splice.errors import SpliceError
    from splice.yamlsafe import load_yaml_marked

    with pytest.raises(SpliceError) as exc:
        load_yaml_marked(f"a: 1\nb: {text}\n", "r.yaml")
    assert str(exc.value).startswith(f"r.yaml:2:4: YAML: {text!r} is {value} to this YAML reader")


@pytest.mark.parametrize("text, value", [("0", 0), ("00", 0), ("10", 10), ("0x1F", 31), ("'0512'", "0512"),
                                         ("1_000", 1000), ("+5", 5), ("0.5", 0.5)])
def test_yaml_numbers_with_one_reading_still_load(text, value):
    from splice.yamlsafe import load_yaml_marked

    assert load_yaml_marked(f"a: {text}\n", "r.yaml")["a"] == value


def test_a_recipe_threads_with_a_leading_zero_is_refused_not_octal(work, capsys):
    """``threads: 0100`` ran the call-shared cut on 64 threads, exit 0."""
    (work / "r.yaml").write_text(RECIPE + "    abi: call-shared\n    threads: 0100\n")
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]), "r.yaml:8:14: YAML: '0100' is 64 to this YAML reader")
    assert not (work / "out.ptx").exists()


def test_a_probe_spec_of_an_entry_defined_twice_is_refused_before_the_gpu(work, capsys, monkeypatch):
    """regression: the probe checked the spec against the first ``.entry k`` of two and went on
    to the GPU run (where ptxas refuses the module)."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)
    (work / "k.yaml").write_text("name: k\nptx: dup.ptx\nentry: k\nlaunch:\n  grid: [1, 1, 1]\n  block: [32, 1, 1]\n"
                                 "params:\n- {name: x, kind: buffer, dtype: f32, shape: [32], role: output}\n")
    (work / "dup.ptx").write_text(DUP_ENTRY.replace("entry k()", "entry k(.param .u64 x)"))
    refused(capsys, run(["probe", "k.yaml", "dup.ptx"]), "dup.ptx:9: 'k' is defined 2 times")


# ---- module: naming something that is not a file -------------------------------------------------

@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling-link"])
def test_a_module_name_that_is_not_a_file_is_refused_not_searched_past(kind, tmp_path, monkeypatch, capsys):
    """regression: ``module: mine.ptx`` where mine.ptx beside the recipe is a directory, a FIFO
    or a link to nothing was "not a file", so the search went on by entry and the recipe ran on
    ``corpus/layer.ptx``, another module declaring the entry, exit 0."""
    from .test_hostile_sweep3 import NATIVE

    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "layer.ptx").write_text(TINY)
    (tmp_path / "n.ptx").write_text(NATIVE)
    (tmp_path / "r.yaml").write_text(RECIPE.replace("module: tiny.ptx", "module: mine.ptx"))
    mine = tmp_path / "mine.ptx"
    make = {"directory": mine.mkdir, "fifo": lambda: os.mkfifo(mine),
            "dangling-link": lambda: mine.symlink_to("gone.ptx")}
    make[kind]()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPLICE_CORPUS", raising=False)
    what = {"directory": "a directory", "fifo": "a FIFO", "dangling-link": "a symbolic link to nothing"}[kind]
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]), f"r.yaml:1:9: module 'mine.ptx': mine.ptx is {what}")
    assert not (tmp_path / "out.ptx").exists()


def test_probe_init_of_an_entry_declaring_a_parameter_twice_is_refused(work, capsys):
    """regression: ``.entry k(.param .u64 p, .param .u64 p)`` (ptxas: duplicate definition) gave a
    skeleton listing both, the first "never read", which ``splice probe`` refused to load."""
    (work / "dupp.ptx").write_text(HEAD + ".visible .entry k(.param .u64 p, .param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n"
                                   "\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
                                   "\tst.global.u32 [%rd2], 1;\n\tret;\n}\n")
    refused(capsys, run(["probe", "init", "dupp.ptx", "-o", "dupp.yaml"]),
            "dupp.ptx:5: k: parameter 'p' is declared twice: ptxas refuses the module")
    assert not (work / "dupp.yaml").exists()


DUP_LABEL = HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\nL:\n\tmov.b32 %r1, 1;\nL:\n\tret;\n}\n"


@pytest.mark.parametrize("argv", [["spec"], ["notes"], ["extract", "--statements", "s1-s1", "-o", "e.ptx"],
                                  ["spec", "--pressure", "--no-ptxas", "--png", "none"]],
                         ids=lambda a: a[0] + str(len(a)))
def test_a_label_defined_twice_in_one_scope_is_refused(argv, work, capsys):
    """regression: ``L:`` twice in a body (ptxas: duplicate definition of label) was analysed as
    if it were a kernel: a branch to L went to whichever the control-flow graph took."""
    (work / "dupl.ptx").write_text(DUP_LABEL)
    refused(capsys, run([argv[0], "dupl.ptx", *argv[1:]]),
            "dupl.ptx:10: k: label 'L' is defined twice in one scope (lines 8 and 10)")


def test_one_label_name_in_two_scopes_is_legal(work, capsys):
    (work / "scoped.ptx").write_text(HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
                                     "\t{\nL:\n\tmov.b32 %r1, 1;\n\t}\n"
                                     "\t{\nL:\n\tmov.b32 %r2, 1;\n\t}\n\tret;\n}\n")
    assert run(["spec", "scoped.ptx"]) == 0


def test_a_probe_specs_ptx_that_is_a_dangling_link_is_not_searched_past(work, capsys, monkeypatch):
    """regression: a spec's ``ptx: tiny.ptx`` beside it, a link to nothing, was passed over for
    the working directory's tiny.ptx, which the probe then ran as the original."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)
    (work / "specs").mkdir()
    (work / "specs" / "s.yaml").write_text((work / "spec.yaml").read_text())
    (work / "specs" / "tiny.ptx").symlink_to("gone.ptx")
    refused(capsys, run(["probe", "specs/s.yaml", "tiny.ptx"]), "specs/s.yaml:2:6: ptx: 'tiny.ptx' is not a file")


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


# ---- a recipe or spec read from a stream: its names from the working directory -----------------

def test_a_recipe_read_from_stdin_takes_its_names_from_the_working_directory(work, monkeypatch, capsys):
    """regression: ``splice apply /dev/stdin < r.yaml`` took ``/dev`` for the recipe's directory:
    its native was looked for as /dev/n.ptx and, as root, ``output: out.ptx`` was written into
    /dev (shown: /dev/splice-…-out.ptx, a regular file on devtmpfs)."""
    import sys

    from splice.util import home_dir

    assert home_dir("/dev/stdin") == work and home_dir("/proc/self/fd/0") == work and home_dir("/dev/fd/63") == work
    assert home_dir(work / "r.yaml") == work

    with open(work / "r.yaml", "rb") as stdin:      # `< r.yaml`: /dev/stdin is the file itself
        proc = subprocess.run([sys.executable, "-m", "splice.cli", "apply", "/dev/stdin", "--no-ptxas", "--json"],
                              cwd=work, stdin=stdin, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert (work / "out.ptx").exists()
    with open(work / "spec.yaml", "rb") as stdin:
        code = "import sys; sys.modules['cupy'] = None; from splice.cli import main; sys.exit(main(sys.argv[1:]))"
        proc = subprocess.run([sys.executable, "-c", code, "probe", "/dev/stdin", "tiny.ptx"],
                              cwd=work, stdin=stdin, capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"needs cupy" in proc.stderr, proc.stderr.decode()[-2000:]


# ---- --json of a UTF-8 file name under a C locale ------------------------------------------------

def test_json_gives_a_utf8_name_back_under_a_c_locale(work):
    """regression: with ``LANG=C`` (and no UTF-8 mode) Python decodes file names as ASCII and
    keeps each other byte as an escape: ``stats né.ptx --json`` said ``"path": "n\\ufffd\\ufffd.ptx"``,
    a name no file has.  A run of escaped bytes that is UTF-8 is now that text; other bytes stay
    U+FFFD (sweep 5)."""
    import json
    import subprocess
    import sys

    from splice.report.jsonout import dumps

    assert json.loads(dumps({"a": "n\udcc3\udca9.ptx", "b": "caf\udce9.ptx"})) == {"a": "né.ptx", "b": "caf\ufffd.ptx"}
    (work / "né.ptx").write_text(TINY)
    env = {**os.environ, "LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    proc = subprocess.run([sys.executable, "-m", "splice.cli", "stats", "né.ptx", "--json"], cwd=work, env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert json.loads(proc.stdout)["path"] == "né.ptx"


def test_probe_init_of_a_module_read_from_a_stream_leaves_ptx_to_fill_in(work):
    """regression: ``gen | splice probe init /dev/stdin`` wrote ``ptx: /dev/stdin`` into the
    skeleton: the probe would later read its original module from the terminal, or a pipe."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "splice.cli", "probe", "init", "/dev/stdin"], cwd=work,
                          input=TINY.encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert "\nptx: null   # TODO: the module's file (it was read from a stream)\n" in proc.stdout.decode()
    assert run(["probe", "init", "tiny.ptx", "-o", "s.yaml"]) == 0
    assert "\nptx: tiny.ptx\n" in (work / "s.yaml").read_text()


# ---- an output and the --json document on one stream ---------------------------------------------

JSON_WRITERS = [["canonical", "tiny.ptx", "-o"], ["notes", "tiny.ptx", "-o"],
                ["extract", "tiny.ptx", "--phase", "1", "-o"],
                ["probe", "init", "tiny.ptx", "-o"], ["apply", "r.yaml", "--no-ptxas", "-o"],
                ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png"]]


@pytest.mark.parametrize("target", ["/dev/stdout", "/dev/fd/1"])
@pytest.mark.parametrize("argv", JSON_WRITERS, ids=lambda a: a[0] + ("-png" if a[-1] == "--png" else ""))
def test_an_output_on_stdout_beside_json_is_refused(argv, target, work):
    """regression: ``-o /dev/stdout --json`` wrote the output and the JSON document into one
    stream, exit 0: no JSON reader could read it (``--png /dev/fd/1 --json``: a PNG, then JSON)."""
    from .test_hostile_sweep2 import check_refused, run_cli

    proc = run_cli([*argv, target, "--json"], work)
    check_refused(proc, target + ":", f"{argv[-1]} {target} writes to standard output, where --json prints")
    assert proc.stdout == b""


def test_a_recipe_output_on_stdout_beside_json_is_refused_and_alone_is_written(work):
    from .test_hostile_sweep2 import check_refused, run_cli

    (work / "r.yaml").write_text(RECIPE.replace("output: out.ptx", "output: /dev/stdout"))
    check_refused(run_cli(["apply", "r.yaml", "--no-ptxas", "--json"], work), "/dev/stdout: output: /dev/stdout writes")
    proc = run_cli(["apply", "r.yaml", "--no-ptxas"], work)        # a report for people beside it: as before
    assert proc.returncode == 0 and b".entry tiny" in proc.stdout
    proc = run_cli(["canonical", "tiny.ptx", "-o", "/dev/null", "--json"], work, stdout=subprocess.DEVNULL)
    assert proc.returncode == 0       # the null device keeps neither


@pytest.mark.parametrize("target", ["gone.ptx", "n2.ptx"], ids=["dangling", "loop"])
def test_a_native_that_is_a_link_to_nothing_is_named_so(target, work, capsys):
    """regression: ``native: n2.ptx``, a symlink loop or a link to a missing file, was "native
    phase file not found": the file is there, as a link."""
    (work / "n2.ptx").symlink_to(target)
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", "native: n2.ptx"))
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]), "r.yaml:6:5: cut 1: native phase file is a symbolic link "
                                                           "to nothing (its target is missing, or the links loop)")


# ---- a module spliced before, spliced again ----------------------------------------------------------

@pytest.mark.needs("ptxas")
def test_a_called_cut_of_a_module_spliced_before_gets_a_function_of_its_own(work, capsys):
    """regression: the ``.func`` of a called cut was ``__splice_fn<cut>``: splicing a module that an
    ``abi: call`` cut had spliced before made a second ``__splice_fn1`` (ptxas: duplicate
    definition of function; ``--no-ptxas`` wrote the broken module, exit 0)."""
    (work / "c1.yaml").write_text(RECIPE.replace("output: out.ptx", "output: c1.ptx") + "    abi: call\n")
    assert run(["apply", "c1.yaml", "--json"]) == 0
    assert run(["extract", "c1.ptx", "--statements", "s5-s6", "-o", "c1n.ptx"]) == 0
    (work / "c2.yaml").write_text("module: c1.ptx\nentry: tiny\noutput: c2.ptx\ncuts:\n"
                                  "  - statements: s5-s6\n    native: c1n.ptx\n    abi: call\n")
    capsys.readouterr()
    assert run(["apply", "c2.yaml", "--json"]) == 0, capsys.readouterr().err
    text = (work / "c2.ptx").read_text()
    assert text.count(") __splice_fn1(") == 1 and text.count(") __splice_fn2(") == 1


def test_a_second_call_shared_splice_is_refused_before_it_writes_a_broken_module(work, capsys):
    """regression: a call-shared cut of a module a call-shared cut had spliced declared a second
    ``.shared __splice_ret`` (ptxas: duplicate definition), and ``--no-ptxas`` wrote it, exit 0."""
    shared = "    abi: call-shared\n    threads: 32\n"
    (work / "s1.yaml").write_text(RECIPE.replace("output: out.ptx", "output: s1.ptx") + shared)
    assert run(["apply", "s1.yaml", "--no-ptxas", "--json"]) == 0
    assert run(["extract", "s1.ptx", "--statements", "s5-s6", "-o", "s1n.ptx"]) == 0
    (work / "s2.yaml").write_text("module: s1.ptx\nentry: tiny\noutput: s2.ptx\ncuts:\n"
                                  "  - statements: s5-s6\n    native: s1n.ptx\n" + shared)
    refused(capsys, run(["apply", "s2.yaml", "--no-ptxas"]), "s2.yaml:7:5: cut 1: the module already declares "
                                                             "__splice_ret")
    assert not (work / "s2.ptx").exists()


def test_a_ptxas_error_in_glue_outside_any_line_is_not_placed_at_line_none():
    """regression: a ptxas error in the glue splice adds before the entry (``__splice_ret``) was
    listed as ``r.yaml:None: ptxas error: …``."""
    from types import SimpleNamespace

    from splice.cut.validate import map_ptxas_error
    from splice.ptx.sass import Diagnostic

    plan = SimpleNamespace(origin=lambda n: ("r.yaml", None, "generated"), recipe=SimpleNamespace(path="r.yaml"))
    exc = SimpleNamespace(diagnostics=[Diagnostic("x.ptx", 41, "error", "Duplicate definition of variable 'v'")],
                          repro="ptxas x.ptx", stderr="")
    err = map_ptxas_error(plan, exc)
    assert "None" not in str(err) + err.detail and "  r.yaml: ptxas error: Duplicate" in err.detail
