"""A third hostile user: classes of failure the first two sweeps (tests/test_hostile_sweep.py,
tests/test_hostile_sweep2.py) do not reach.  Each class names the fix it guards
(``regression:``); every case failed before its fix.  docs/hostile-inputs.md, "Sweep 3", lists
the classes, their causes and their fixes.
"""
from __future__ import annotations

import os

import pytest

from splice.cli import main

from .conftest import DATA, TINY_SWAPPED, tree_digest

TINY = (DATA / "recipes" / "tiny.ptx").read_text()
NATIVE = "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED
RECIPE = "module: tiny.ptx\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n"
SPEC = ("name: tiny\nptx: tiny.ptx\nentry: tiny\nlaunch:\n  grid: [1, 1, 1]\n  block: [32, 1, 1]\nparams:\n"
        "- {name: param_0, kind: buffer, dtype: f32, shape: [1024], role: input}\n"
        "- {name: param_1, kind: buffer, dtype: f32, shape: [1024], role: output}\n")


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory holding tiny.ptx, its native phase, a recipe and a probe spec; the cwd and
    SPLICE_CORPUS.  Returns the directory; ``tree_digest`` of it is taken by the checks."""
    for name, text in {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "spec.yaml": SPEC}.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPLICE_CORPUS", str(tmp_path))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path.parent / (tmp_path.name + "-cache")))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path.parent / (tmp_path.name + "-probe")))
    return tmp_path


def run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:      # argparse's usage errors
        return exc.code


def refused(capsys, rc, *says) -> str:
    out, err = capsys.readouterr()
    assert rc == 2, (rc, err[-1500:])
    assert "Traceback" not in out + err
    for s in says:
        assert s in err, err[-1500:]
    return err


# ---- '--' as an option's value ----------------------------------------------------------------

DASHDASH = [
    ["stats", "tiny.ptx", "--top=--"],             # regression: TypeError (slice by a list)
    ["stats", "tiny.ptx", "--entry=--"],
    ["index", "tiny.ptx", "--range=--"],
    ["roundtrip", "tiny.ptx", "--jobs=--"],        # regression: TypeError ('<' list and int)
    ["canonical", "tiny.ptx", "-o=--"],            # regression: printed to stdout, -o dropped
    ["canonical", "tiny.ptx", "--output=--"],
    ["spec", "tiny.ptx", "--abi=--"],              # regression: AttributeError
    ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png=--"],   # regression: TypeError in samefile
    ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--top=--"],
    ["notes", "tiny.ptx", "--entry=--"],           # regression: TypeError ('in' a list)
    ["extract", "tiny.ptx", "--phase=--"],
    ["extract", "tiny.ptx", "--statements=--"],
    ["sass-mix", "tiny.ptx", "--arch=--"],
    ["apply", "r.yaml", "--no-ptxas", "-o=--"],
    ["probe", "spec.yaml", "tiny.ptx", "--runs=--"],
    ["probe", "init", "tiny.ptx", "--entry=--"],
]


@pytest.mark.parametrize("argv", DASHDASH, ids=[" ".join(a[2:]) for a in DASHDASH])
def test_dashdash_as_a_value_is_a_usage_error(argv, work, capsys):
    """``--opt=--``: argparse takes the ``--`` for its end-of-options marker, drops it and
    stores ``[]`` without calling the option's type, so the commands got a list."""
    before = tree_digest(work)
    refused(capsys, run(argv), "'--' is not a value")
    assert tree_digest(work) == before


# ---- a ptxas that does not work ----------------------------------------------------------------

BROKEN_PTXAS = {
    "segv": ("kill -SEGV $$\n", "killed by SIGSEGV"),
    "exit0-no-cubin": ("exit 0\n", "exited 0 without writing a cubin"),
    "garbage": ("head -c 3000 /dev/urandom >&2; exit 3\n", "exit code 3"),
}


@pytest.fixture(params=BROKEN_PTXAS, ids=list(BROKEN_PTXAS))
def broken_ptxas(request, tmp_path, monkeypatch):
    body, says = BROKEN_PTXAS[request.param]
    tool = tmp_path / "tools" / "ptxas"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\n' + body)
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    return says


def test_roundtrip_sass_with_a_broken_ptxas_is_an_error(broken_ptxas, work, capsys):
    """regression: ``roundtrip --sass`` with a ptxas that crashed (or exited 0 without a cubin)
    exited 0, the row noted "ptxas rejects the original": --sass did nothing and said it
    passed.  apply already refused such a ptxas; roundtrip now stops the same way."""
    rc = run(["roundtrip", "tiny.ptx", "--sass", "--no-cache", "--json"])
    refused(capsys, rc, "tiny.ptx", "no diagnostic", broken_ptxas)


def test_roundtrip_sass_with_a_broken_ptxas_in_a_worker(work, tmp_path, monkeypatch, capsys):
    tool = tmp_path / "ptxas"
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\nkill -SEGV $$\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    (work / "b.ptx").write_text(TINY)
    rc = run(["roundtrip", "tiny.ptx", "b.ptx", "--sass", "--no-cache", "--jobs", "2"])
    refused(capsys, rc, "killed by SIGSEGV", "no diagnostic")


def test_roundtrip_sass_without_ptxas_is_an_error(work, monkeypatch, capsys):
    """regression: ``SPLICE_PTXAS=/nonexistent splice roundtrip m.ptx --sass`` exited 0 with
    "ptxas not found" as each row's note."""
    monkeypatch.setenv("SPLICE_PTXAS", str(work / "nonexistent"))
    refused(capsys, run(["roundtrip", "tiny.ptx", "--sass"]), "does not name an executable")


def test_a_ptxas_killed_by_a_signal_is_said_in_words(work, tmp_path, monkeypatch, capsys):
    """``exit code -11`` (subprocess' status for a signal) read as a code ptxas chose."""
    tool = tmp_path / "ptxas"
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\nkill -SEGV $$\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    for argv in (["apply", "r.yaml", "--no-cache"], ["sass-mix", "tiny.ptx"],
                 ["spec", "tiny.ptx", "--pressure", "--png", "none"]):
        err = refused(capsys, run(argv), "killed by SIGSEGV")
        assert "exit code -11" not in err
    assert not (work / "out.ptx").exists()


# ---- recipe keys accepted and then ignored -----------------------------------------------------

IGNORED_KEYS = {   # (old, new) in the recipe, the refused key's line
    # regression: module: '' is Path('.'), a directory: the module was found by its entry alone
    "module-empty": ("module: tiny.ptx", "module: ''", 1),
    "module-blank": ("module: tiny.ptx", "module: '  '", 1),
    # regression: entry: '' read as no entry: the first entry, as --entry '' was before sweep 1
    "entry-empty": ("entry: tiny", "entry: ''", 2),
    # regression: threads and sync are call-shared's; with abi inline/call they were dropped
    "threads-inline": ("native: n.ptx", "native: n.ptx\n    threads: 128", 7),
    "sync-inline": ("native: n.ptx", "native: n.ptx\n    sync: cta", 7),
    "threads-call": ("native: n.ptx", "native: n.ptx\n    abi: call\n    threads: 32", 8),
    "sync-call": ("native: n.ptx", "native: n.ptx\n    abi: call\n    sync: warp", 8),
    # regression: a list was the description, as its str()
    "description-list": ("entry: tiny", "entry: tiny\ndescription: [a, b]", 3),
    "cut-name-map": ("native: n.ptx", "native: n.ptx\n    name: {a: 1}", 7),
}


@pytest.mark.parametrize("cmd", ["apply", "verify"])
@pytest.mark.parametrize("case", IGNORED_KEYS, ids=list(IGNORED_KEYS))
def test_a_recipe_key_that_would_be_ignored_is_refused(case, cmd, work, capsys):
    old, new, line = IGNORED_KEYS[case]
    (work / "r.yaml").write_text(RECIPE.replace(old, new))
    before = tree_digest(work)
    refused(capsys, run([cmd, "r.yaml", "--no-ptxas"] if cmd == "apply" else [cmd, "r.yaml"]), f"r.yaml:{line}:")
    assert tree_digest(work) == before


def test_call_shared_keeps_threads_and_sync(work, capsys):
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", "native: n.ptx\n    abi: call-shared\n"
                                                "    threads: 32\n    sync: cta"))
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    assert "membar.cta;" in (work / "out.ptx").read_text()


# ---- Ctrl-C while roundtrip --jobs forks its workers ---------------------------------------------

def test_ctrl_c_while_workers_start_leaves_no_worker(work):
    """regression: a Ctrl-C 0.3 s into ``roundtrip DIR --jobs 2`` (while the scheduler was
    forking and feeding its workers, before ``results()`` could stop them) exited 130 but left
    the workers running their batches (with multiprocessing workers, one blocked for ever),
    holding splice's stdout (``splice … | cat`` did not end).  The scheduler now stops its
    workers when its own set-up is interrupted.  The interrupt is raised here, deterministically,
    once the workers were fed and a worker's ptxas (one that takes a minute) tells through a FIFO
    that it runs."""
    import signal
    import subprocess
    import sys

    (work / "b.ptx").write_text(TINY)
    os.mkfifo(work / "started")
    code = ("import os, sys\nfrom splice.commands import roundtrip_split as rs\n"
            "feed0 = rs.Scheduler._feed\n"
            "def feed(self):\n    feed0(self)\n"
            "    fd = os.open(os.environ['STARTED'], os.O_RDWR)\n    os.read(fd, 64)\n    raise KeyboardInterrupt\n"
            "rs.Scheduler._feed = feed\n"
            "from splice.cli import console_main\n"
            "sys.argv = ['splice', 'roundtrip', 'tiny.ptx', 'b.ptx', '--jobs', '2', '--sass', '--no-cache']\n"
            "console_main()\n")
    tool = work / "ptxas"     # busy workers: each runs a ptxas that takes a minute
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\n'
                    'echo $$ > "$STARTED"\nexec sleep 60\n')
    tool.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,
                            env={**os.environ, "SPLICE_PTXAS": str(tool), "STARTED": str(work / "started")})
    try:
        _out, err = proc.communicate(timeout=30)     # EOF on stdout: no worker holds it any more
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("a worker outlived splice and kept its stdout open")
    assert proc.returncode == 130 and b"Traceback" not in err, err
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert not left, f"workers left running: {left}"


# ---- UTF-16 / UTF-32 files ---------------------------------------------------------------------

WIDE = {
    "utf16-bom": lambda t: t.encode("utf-16"),
    "utf16le": lambda t: t.encode("utf-16-le"),
    "utf16be": lambda t: t.encode("utf-16-be"),
    "utf32-bom": lambda t: t.encode("utf-32"),
    "utf32le": lambda t: t.encode("utf-32-le"),
}


@pytest.mark.parametrize("enc", WIDE, ids=list(WIDE))
@pytest.mark.parametrize("argv", [["stats", "m.ptx"], ["spec", "m.ptx"], ["index", "m.ptx", "--entry", "tiny"],
                                  ["probe", "init", "m.ptx", "-o", "s.yaml"], ["apply", "w.yaml", "--no-ptxas"],
                                  ["apply", "r.yaml", "--no-ptxas"], ["probe", "w.yaml", "tiny.ptx"]],
                         ids=["stats", "spec", "index", "probe-init", "apply-recipe", "apply-native", "probe-spec"])
def test_a_utf16_file_is_named_as_such(argv, enc, work, capsys):
    """regression: a module (recipe, spec, native file) saved as UTF-16 by an editor or
    PowerShell was "unexpected character '\\udcff'" at 1:1 (or "byte 0xff is not UTF-8"), with no
    word of the cause."""
    name = WIDE[enc]
    (work / "m.ptx").write_bytes(name(TINY))
    (work / "w.yaml").write_bytes(name(SPEC if argv[0] == "probe" else RECIPE))
    if argv[1] == "r.yaml":
        (work / "n.ptx").write_bytes(name(NATIVE))
    family = "UTF-32" if enc.startswith("utf32") else "UTF-16"
    before = tree_digest(work)
    refused(capsys, run(argv), f"the file is {family} text", f"iconv -f {family} -t UTF-8")
    assert tree_digest(work) == before


@pytest.mark.parametrize("head", [b"", b"\x00" * 64, b"// plain ascii text here\n", "é ü 名前 text".encode(),
                                  b"\xff\xfdnot a bom"])
def test_utf8_and_binary_are_not_called_utf16(head):
    from splice.util import wide_encoding

    assert wide_encoding(head) == ""


@pytest.mark.parametrize("spelling", ["s11–s12", "s11..s12", "11-12"])
def test_abi_takes_the_range_spellings_of_the_notes(spelling, work, capsys):
    """``splice notes`` writes ranges with an en dash (``s11–s12``) and recipes and ``--range``
    take it; ``spec --abi`` refused the same text copied from the notes."""
    import json

    assert run(["spec", "tiny.ptx", "--abi", "s11-s12", "--json"]) == 0
    want = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    assert run(["spec", "tiny.ptx", "--abi", spelling, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["abi"] == want


# ---- a tool's own temporary files --------------------------------------------------------------

def test_a_killed_tools_temp_files_go_with_splices_directory(work, tmp_path, monkeypatch, capsys):
    """regression: Ctrl-C during ``roundtrip --sass`` killed cuobjdump/ptxas, which left their
    ``tmpxft_*`` files in $TMPDIR (two per interrupted run).  A tool now gets splice's private
    temporary directory as its TMPDIR, removed on every path.  The fake ptxas here leaves its
    file and hangs until the 2 s timeout kills it, as a Ctrl-C would."""
    from splice.ptx import sass

    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    tool = tmp_path / "ptxas"
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\n'
                    'touch "${TMPDIR:-/tmp}/tmpxft_splice_test_$$"\nsleep 60\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)     # re-read TMPDIR
    with pytest.raises(sass.ToolTimedOut, match="timed out"):     # no rejection: it judged nothing
        sass.compile_ptx(TINY, "sm_90", 3, timeout=2.0)
    assert not [p.name for p in tmpdir.iterdir() if p.name.startswith("tmpxft")]
    assert not [p.name for p in tmpdir.iterdir() if p.name.startswith("splice-")]


# ---- options a mode drops in silence -----------------------------------------------------------

DROPPED = [   # (argv, what the refusal says); each exited 0 and did without the option
    (["spec", "tiny.ptx", "--top", "3"], "--top is an option of --pressure"),
    (["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--abi", "s1-s2"], "--abi is not an option"),
    (["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--phases"], "--phases is not an option"),
    (["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--epilogues"], "--epilogues is not"),
    (["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--profile", "p.yaml"], "--profile is not"),
    (["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--arch", "sm_90"], "--no-ptxas runs no"),
    (["sass-mix", "r.yaml", "--entry", "tiny"], "a recipe names its entry"),
    (["apply", "r.yaml", "--no-ptxas", "--no-cache"], "--no-ptxas runs none"),
    (["roundtrip", "tiny.ptx", "--no-cache"], "add --sass"),
    (["probe", "init", "tiny.ptx", "--stages", "cut", "-o", "s.yaml"], "--stages is an option of a probe run"),
    (["probe", "init", "tiny.ptx", "--runs", "3", "-o", "s.yaml"], "--runs is an option of a probe run"),
    (["probe", "init", "tiny.ptx", "--harness"], "--harness is an option of a probe run"),
    (["probe", "init", "tiny.ptx", "--report-dir", "d"], "--report-dir is an option of a probe run"),
    (["probe", "spec.yaml", "tiny.ptx", "--graph", "--runs", "0"], "--runs 0 times nothing"),
]


@pytest.mark.parametrize("argv, says", DROPPED, ids=[" ".join(a[:1] + a[2:]) for a, _s in DROPPED])
def test_an_option_the_mode_drops_is_refused(argv, says, work, capsys):
    (work / "p.yaml").write_text("entries: ['*']\nfields: {}\n")
    before = tree_digest(work)
    refused(capsys, run(argv), says)
    assert tree_digest(work) == before


@pytest.mark.parametrize("top, peaks", [(["--top", "1"], 1), ([], 3)])
def test_pressure_top_still_counts(top, peaks, work, capsys):
    """--top's default moved into the --pressure mode (to tell "given" from "left out")."""
    import json

    assert run(["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none", "--json", *top]) == 0
    assert len(json.loads(capsys.readouterr().out)["entries"][0]["peaks"]) == peaks


@pytest.mark.parametrize("link", ["dangling", "loop"])
def test_roundtrip_of_a_symlink_to_nothing_is_a_user_error(link, work, capsys):
    """regression: ``roundtrip`` checked its paths with ``lexists``: a dangling symlink (or a
    loop) passed and became a row "0 parsed" with exit 1, as if a PTX file had failed."""
    os.symlink("gone.ptx" if link == "dangling" else "l.ptx", work / "l.ptx")
    refused(capsys, run(["roundtrip", "l.ptx", "--json"]), "l.ptx: a symbolic link to nothing")


# ---- probe specs: names that become paths, values placed at their line ----------------------------

@pytest.mark.parametrize("old, new, says", [
    # regression: the report directory is build/probe/reports/<name>-<module>: '..' and '/' wrote
    # the reports outside it; a list or null became "['a']" / "None"
    ("name: tiny", "name: ../../../elsewhere", "1:7: name: expected a name for the report files"),
    ("name: tiny", "name: '..'", "1:7: name:"),
    ("name: tiny", "name: [a]", "1:7: name:"),
    ("name: tiny", "name: null", "1:7: name:"),
    ("name: tiny", "name: tiny\narch: [sm_90]", "2:7: arch: expected text"),
    # regression: "spec.yaml: params[0].fill: expected a mapping", no line
    ("role: input}", "role: input, fill: 5}", "8:79: params[0].fill: expected a mapping"),
])
def test_probe_spec_values_are_checked_and_placed(old, new, says, work, capsys):
    (work / "spec.yaml").write_text(SPEC.replace(old, new, 1))
    before = tree_digest(work)
    refused(capsys, run(["probe", "spec.yaml", "tiny.ptx"]), "spec.yaml:" + says)
    assert tree_digest(work) == before


# ---- native labels -----------------------------------------------------------------------------

def test_native_labels_with_and_without_dollar_stay_apart(work, capsys):
    """regression: labels were renamed ``$Lsplice<cut>_`` + the name with its ``$`` stripped,
    so ``L1`` and ``$L1`` of one native were one label twice: ptxas "Duplicate definition of
    label", and with --no-ptxas a broken module written with exit 0."""
    (work / "n.ptx").write_text(NATIVE + "bra L1;\nL1:\nbra $L1;\n$L1:\n")
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    text = (work / "out.ptx").read_text()
    defined = [ln.strip()[:-1] for ln in text.splitlines()
               if ln.strip().startswith("$Lsplice") and ln.strip().endswith(":")]
    assert len(defined) == 2 and len(set(defined)) == 2, defined
    for name in defined:
        assert f"bra {name};" in text


def test_a_native_label_named_with_percent_is_a_valid_name(work, capsys):
    """regression: ``%x:`` (a legal PTX label) became ``$Lsplice1_%x``, a syntax error reported
    in ``<site>``, a file the user does not have."""
    from splice.cut.binding.abi import spliced_label

    (work / "n.ptx").write_text(NATIVE + "%x:\n")      # a branch to it would name a register
    rc = run(["apply", "r.yaml", "--no-ptxas"])
    out, err = capsys.readouterr()
    assert "<site>" not in err and "Traceback" not in err
    assert rc == 0 and f"{spliced_label(1, '%x')}:" in (work / "out.ptx").read_text()
    names = [spliced_label(1, x) for x in ("L1", "$L1", "%L1", "$pL1", "_L1", "$$L1")]
    assert len(set(names)) == len(names)
    import re

    assert all(re.fullmatch(r"\$[A-Za-z0-9_$]+", n) for n in names), names


@pytest.mark.parametrize("argv", [["apply", "r.yaml", "--no-cache"], ["roundtrip", "tiny.ptx", "--sass"],
                                  ["sass-mix", "tiny.ptx"]])
def test_splice_ptxas_naming_a_file_that_is_not_executable(argv, work, monkeypatch, capsys):
    """regression: ``SPLICE_PTXAS=tiny.ptx`` (a file, not executable) was run: "splice:
    tiny.ptx: permission denied", not a word of SPLICE_PTXAS."""
    monkeypatch.setenv("SPLICE_PTXAS", str(work / "tiny.ptx"))
    refused(capsys, run(argv), "SPLICE_PTXAS=", "does not name an executable")
    assert not (work / "out.ptx").exists()


def test_probe_run_options_defaults_match_the_parser():
    """``probe init`` tells a run option given from one left out by its default: the table must
    follow the parser, or init would refuse every call."""
    import argparse

    from splice.cli import build_parser
    from splice.commands.probe import RUN_OPTIONS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    defaults = {a.dest: a.default for a in sub.choices["probe"]._actions}
    assert {dest: unset for _flag, dest, unset in RUN_OPTIONS} == {dest: defaults[dest] for _f, dest, _u in RUN_OPTIONS}
