"""A fifth hostile user: classes of failure the first four sweeps (tests/test_hostile_sweep.py …
tests/test_hostile_sweep4.py) do not reach, and the leftovers sweep 4 listed as not covered.
Each class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 5", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import os

import pytest

from .test_hostile_sweep3 import RECIPE, TINY, refused, run  # noqa: F401 - shared with sweeps 3 and 4
from .test_hostile_sweep4 import no_gpu, work  # noqa: F401 - fixtures: the work directory, cupy missing


# ---- probe --ncu without ncu: said before any GPU work ------------------------------------------

@pytest.fixture
def no_ncu(monkeypatch, tmp_path):
    """A PATH on which no ``ncu`` is found (whatever this machine has)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("argv", [["probe", "r.yaml", "--ncu"], ["probe", "spec.yaml", "tiny.ptx", "--ncu", "--json"]],
                         ids=["recipe", "spec"])
def test_ncu_requested_but_missing_is_refused_before_the_gpu(argv, work, no_gpu, no_ncu, capsys):
    """regression: ``probe --ncu`` without ncu on PATH built, rendered and timed both modules on
    the GPU, then put ``{"error": "ncu … not on PATH: --ncu skipped"}`` into the report and exited
    0: what was asked for was not done, and the user learnt it at the end of the run."""
    err = refused(capsys, run(argv), argv[1] + ":", "--ncu: ncu (Nsight Compute) is not on PATH")
    assert "cupy" not in err


def test_ncu_on_path_passes_the_planning_check(work, no_gpu, tmp_path, monkeypatch, capsys):
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ncu").write_text("#!/bin/sh\nexit 0\n")
    (tools / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools) + os.pathsep + os.environ.get("PATH", ""))
    refused(capsys, run(["probe", "r.yaml", "--ncu"]), "needs cupy")


# ---- character devices as outputs: /dev/null and terminals only ---------------------------------

WRITERS = [["canonical", "tiny.ptx", "-o"], ["notes", "tiny.ptx", "-o"], ["extract", "tiny.ptx", "--phase", "1", "-o"],
           ["probe", "init", "tiny.ptx", "-o"], ["apply", "r.yaml", "--no-ptxas", "-o"],
           ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png"]]


def _device(path):
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    return path


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/full", "/dev/urandom", "/dev/kmsg"])
@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0] + ("-png" if a[-1] == "--png" else ""))
def test_a_character_device_that_is_no_terminal_is_refused(argv, dev, work, capsys):
    """regression: every character device was opened and written through: ``-o /dev/zero`` (or
    ``/dev/urandom``) swallowed the output with exit 0, ``-o /dev/kmsg`` wrote the module into the
    kernel's log as root; ``/dev/full`` failed only after opening it."""
    before = os.stat(_device(dev))
    refused(capsys, run([*argv, dev]), f"{dev}: cannot write the output: it is a character device that is "
                                       "neither a terminal nor /dev/null")
    assert os.stat(dev).st_rdev == before.st_rdev


def test_a_link_to_a_device_is_judged_as_the_device(work, capsys):
    os.symlink(_device("/dev/zero"), work / "z.ptx")
    refused(capsys, run(["canonical", "tiny.ptx", "-o", "z.ptx"]), "z.ptx: cannot write the output: it is a character")
    assert os.path.islink(work / "z.ptx")


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0] + ("-png" if a[-1] == "--png" else ""))
def test_dev_null_is_still_written_through(argv, work, capsys):
    assert run([*argv, os.devnull]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_terminal_is_still_written_through(work, capsys):
    """``-o /dev/pts/N`` (or ``/dev/tty``): the output is shown on that terminal."""
    import pty

    master, slave = pty.openpty()
    try:
        assert run(["canonical", "tiny.ptx", "-o", os.ttyname(slave)]) == 0
        got = b""
        while b"ret;" not in got:
            got += os.read(master, 65536)
    finally:
        os.close(master)
        os.close(slave)
    assert b".entry tiny" in got


# ---- --json: strict JSON, whatever bytes the inputs hold -----------------------------------------

LATIN1 = os.fsdecode(b"caf\xe9")       # a name that is not UTF-8: a lone surrogate once decoded


def strict_json(raw: bytes, lines: bool = False) -> list:
    """The documents in ``raw`` as a strict parser reads them: UTF-8, no NaN/Infinity, and no
    escape of a lone surrogate (RFC 8259's escapes are characters; serde_json and others refuse
    ``\\udce9``)."""
    import json

    def no_constant(name):
        raise AssertionError(f"{name} is not JSON")

    def walk(o):
        if isinstance(o, str):
            assert not any("\ud800" <= ch <= "\udfff" for ch in o), repr(o)
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(k)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    text = raw.decode("utf-8")          # strict: raises on anything that is not UTF-8
    docs = [json.loads(ln, parse_constant=no_constant) for ln in text.splitlines()] if lines else \
        [json.loads(text, parse_constant=no_constant)]
    for d in docs:
        walk(d)
    return docs


JSON_COMMANDS = [
    ["stats", "M"], ["index", "M"], ["roundtrip", "M"], ["canonical", "M", "-o", "c.ptx"], ["spec", "M"],
    ["spec", "M", "--phases", "--epilogues", "--abi", "phase:1"], ["spec", "M", "--pressure", "--no-ptxas", "--png", "none"],
    ["notes", "M"], ["notes", "M", "-o", "O.md"], ["extract", "M", "--phase", "1"], ["extract", "M", "--phase", "1", "-o", "O.ptx"],
    ["probe", "init", "tiny.ptx", "-o", "O.yaml"],
    ["apply", "R", "--no-ptxas", "-o", "O.ptx"], ["verify", "R"],
    pytest.param(["sass-mix", "M"], marks=pytest.mark.needs("ptxas", "nvdisasm")),
    pytest.param(["sass-mix", "R"], marks=pytest.mark.needs("ptxas", "nvdisasm")),
]


@pytest.mark.parametrize("argv", JSON_COMMANDS, ids=lambda a: " ".join(a))
def test_json_is_strict_whatever_the_names_and_comments_hold(argv, work, capsys):
    """regression: a file name or a comment with a byte that is not UTF-8 reached ``--json`` as
    the escape ``\\udce9`` (Python's lone surrogate): ``jq`` shows garbage, serde_json and other
    strict parsers refuse the document.  Each such byte is U+FFFD now."""
    mod, rec, out = f"{LATIN1}.ptx", f"{LATIN1}.yaml", "o-" + LATIN1
    comment = "// caf\xe9 tiny:" if argv[0] != "sass-mix" else "// tiny:"    # ptxas refuses non-ASCII
    (work / mod).write_bytes(TINY.replace("// tiny:", comment).encode("latin-1"))
    (work / rec).write_text(RECIPE)       # a recipe is UTF-8: its file name holds the byte
    subst = {"M": mod, "R": rec, "O.md": out + ".md", "O.ptx": out + ".ptx", "O.yaml": out + ".yaml"}
    rc = run([subst.get(a, a) for a in argv] + ["--json"])
    raw, err = capsys.readouterr()
    assert rc in (0, 3), (rc, err)
    docs = strict_json(raw.encode("utf-8", "surrogateescape"), lines=argv[0] == "roundtrip")
    assert "\\ufffd" in raw or argv[0] in ("index", "sass-mix"), raw[:400]     # the byte is there, replaced
    assert docs


def test_json_out_keeps_astral_characters_and_nulls_non_finite_numbers():
    from splice.report.jsonout import dumps

    assert dumps({"k": "\U0001f600", "x": [1.5, 2]}) == '{"k": "\\ud83d\\ude00", "x": [1.5, 2]}'
    assert dumps({"\udce9": [float("nan"), float("inf"), "a\udcffb"]}) == '{"\\ufffd": [null, null, "a\\ufffdb"]}'


# ---- COLUMNS: tables laid out between 80 and 1000 columns ---------------------------------------

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
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.run([sys.executable, "-c", _RENDER_ALL, json.dumps(commands)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    import re

    return [[rc, re.sub(r"\d+\.\d+ ?s\b", "T", text)] for rc, text in json.loads(proc.stdout)]   # timings vary


@pytest.mark.slow
@pytest.mark.parametrize("with_tools", [pytest.param([], id="tables"), pytest.param(
    [["sass-mix", "tiny.ptx"]], marks=pytest.mark.needs("ptxas", "nvdisasm"), id="sass-mix")])
def test_columns_out_of_range_lays_tables_out_at_the_bounds(with_tools, work):
    """regression: ``COLUMNS=0`` made rich print nothing (stats, roundtrip, apply, verify: an
    empty report, exit 0); ``COLUMNS=1``…``10`` one character a line, every cell lost.  A width
    below 80 is laid out at 80 (as for a pipe), above 1000 at 1000; a value that is no number is
    not a width (the default)."""
    commands = TABLE_COMMANDS + with_tools
    default = _render_all(work, None, commands)
    assert all(rc == 0 and text for rc, text in default), default
    for columns in ("0", "1", "5", "79", "-3", "abc", " 40"):
        assert _render_all(work, columns, commands) == default, columns
    wide = _render_all(work, "1000", commands)
    assert _render_all(work, "99999999", commands) == wide


# ---- a reader that goes away (| head): status 0, nothing on stderr --------------------------------

PIPED = [["stats", "M"], ["stats", "M", "--json"], ["index", "M"], ["roundtrip", "M"], ["canonical", "M"], ["spec", "M"],
         ["spec", "M", "--phases"], ["spec", "M", "--pressure", "--no-ptxas", "--png", "none"], ["notes", "M"],
         ["extract", "M", "--phase", "8"], ["probe", "init", "M"], ["apply", "R", "--no-ptxas", "-o", "o.ptx"],
         ["verify", "R"],
         # regression: argparse's help and version end with SystemExit; the interpreter's last flush
         # then met the closed pipe: "Exception ignored … BrokenPipeError" and status 120
         ["--help"], ["stats", "--help"], ["--version"]]


@pytest.mark.slow
@pytest.mark.parametrize("argv", PIPED, ids=lambda a: " ".join(a))
def test_a_closed_pipe_is_a_quiet_exit_0(argv, tmp_path):
    """regression: ``splice stats m.ptx | head -1`` exited 1 (rich's ``on_broken_pipe`` raises
    ``SystemExit(1)``; 1 is "a difference was found" for roundtrip, verify and probe), where the
    commands that print through Python's stdout ended with the quiet 0 of a closed pipe."""
    import subprocess
    import sys

    from .conftest import ROOT

    subst = {"M": str(ROOT / "corpus" / "enc5.ptx"), "R": str(ROOT / "recipes" / "enc5_p8.yaml")}
    r, w = os.pipe()
    os.close(r)             # the reader is gone before the first write: every write is EPIPE
    try:
        proc = subprocess.run([sys.executable, "-c", "from splice.cli import console_main; console_main()",
                               *[subst.get(a, a) for a in argv]], cwd=tmp_path, stdout=w, stderr=subprocess.PIPE,
                              timeout=300)
    finally:
        os.close(w)
    assert (proc.returncode, proc.stderr.decode()) == (0, "")


# ---- modules of many entries: each entry's analysis does not rescan the module ------------------

HEAD = ".version 8.7\n.target sm_90\n.address_size 64\n\n"


def _many_entries(n: int) -> str:
    return HEAD + ".shared .align 4 .b8 smem[64];\n.func f()\n{\n\tret;\n}\n" + \
        "".join(f".visible .entry k{i}()\n{{\n\tcall f;\n\tret;\n}}\n" for i in range(n))


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

    mod = parse(_many_entries(300), "many.ptx")
    counted = m.Module(_CountingItems(mod.items), mod.source, mod.path)
    lines = SourceLines(counted.source)
    _CountingItems.walks = 0
    for e in counted.entries():
        d = build_spec(Kernel(counted, e.name, lines), profile=False)
        assert d["mma_in_calls"] is not None
    assert _CountingItems.walks < 20, _CountingItems.walks      # not once or more per entry


def test_one_png_for_several_entries_is_refused(tmp_path, monkeypatch, capsys):
    """regression: ``spec --pressure --png p.png`` of a module of two entries wrote the first
    entry's curve to p.png, then the second's over it; the JSON named p.png for both."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two.ptx").write_text(_many_entries(2))
    refused(capsys, run(["spec", "two.ptx", "--pressure", "--no-ptxas", "--png", "p.png"]),
            "two.ptx: --png names one file and the module has several entries")
    assert not (tmp_path / "p.png").exists()
    assert run(["spec", "two.ptx", "--pressure", "--no-ptxas", "--png", "p.png", "--entry", "k1"]) == 0
    assert (tmp_path / "p.png").is_file()


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
    (tmp_path / "m.ptx").write_text(_many_entries(8))
    assert run([argv[0], "m.ptx", *argv[1:]]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{says} not shown (a report shows the first 3): --entry NAME shows one, --json shows every one" in out
    if argv[0] == "spec":
        assert "k2 " in out and "k3 " not in out
    else:
        assert "4 more functions not shown (a report shows the first 5)" in out     # f and 8 kernels


@pytest.mark.parametrize("argv", [["stats", "bad.ptx"], ["apply", "missing.yaml"], ["index", "bad.ptx", "--range", "x"]],
                         ids=lambda a: a[0])
def test_a_user_error_keeps_its_status_when_stderr_is_gone(argv, tmp_path):
    """regression: ``splice stats bad.ptx 2>&1 | head -0``: printing the error message raised
    ``BrokenPipeError`` from main's own error handler; the run ended with status 120 (Python's
    "could not flush") instead of 2."""
    import subprocess
    import sys

    (tmp_path / "bad.ptx").write_text("garbage")
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-c", "from splice.cli import console_main; console_main()", *argv],
                              cwd=tmp_path, stdout=w, stderr=w, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 2


# ---- user file names in what splice writes and shows ---------------------------------------------

ESC_NAME = "a\x1b]0;PWN\x07b\x1b[2J.ptx"      # retitles the terminal, then clears it


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


def test_probe_init_of_a_name_with_control_characters_writes_yaml_that_loads(work, capsys):
    """regression: the skeleton's header comment held the name's ESC: YAML allows no control
    character, not even in a comment, so ``splice probe`` refused the skeleton it had written."""
    from splice.yamlsafe import load_yaml_marked

    (work / ESC_NAME).write_text(TINY)
    assert run(["probe", "init", ESC_NAME, "-o", "s.yaml"]) == 0
    data = load_yaml_marked((work / "s.yaml").read_text(), "s.yaml")      # the skeleton's nulls are to fill in
    assert data["ptx"] == ESC_NAME


def test_probe_init_of_a_name_that_is_not_utf8_is_refused(work, capsys):
    """regression: the skeleton of ``caf\\xe9.ptx`` held the raw byte in its comment (not UTF-8:
    refused at 1:36) and ``ptx: "caf\\uDCE9.ptx"`` (a lone surrogate: refused too).  A UTF-8
    spec cannot name such a file: said at once, nothing written."""
    (work / f"{LATIN1}.ptx").write_text(TINY)
    refused(capsys, run(["probe", "init", f"{LATIN1}.ptx", "-o", "s.yaml"]), "file name is not UTF-8")
    assert not (work / "s.yaml").exists()


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


@pytest.mark.needs("ptxas")
def test_a_native_with_a_non_ascii_name_passes_ptxas(work, capsys):
    (work / "né.ptx").write_text((work / "n.ptx").read_text())
    (work / "r.yaml").write_text(RECIPE.replace("native: n.ptx", "native: né.ptx"))
    assert run(["apply", "r.yaml", "-o", "o.ptx"]) == 0, capsys.readouterr().err


# ---- file names splice makes up from the user's names -------------------------------------------

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


# ---- permissions: what a user without root's override may not write ------------------------------

def _without_override(argv, cwd):
    """``splice ARGV`` as a user whom file permissions bind: as is for a user that is not root;
    for root, under ``setpriv`` without CAP_DAC_OVERRIDE (skipped where that cannot be done)."""
    import shutil
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "from splice.cli import console_main; console_main()", *argv]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv: permissions do not bind")
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all", *cmd]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "setpriv:" in proc.stderr:
        pytest.skip(f"setpriv cannot drop capabilities here: {proc.stderr.strip()}")
    return proc


@pytest.mark.parametrize("argv", [["canonical", "tiny.ptx", "-o"], ["notes", "tiny.ptx", "-o"],
                                  ["apply", "r.yaml", "--no-ptxas", "-o"], ["probe", "init", "tiny.ptx", "-o"]],
                         ids=lambda a: a[0])
def test_a_read_only_output_file_is_not_replaced(argv, work):
    """regression: an output the user had made read-only (``chmod a-w out.ptx``) was replaced:
    ``write_atomic`` renames a new file over it, which the directory's permission allows; the
    shell's ``>`` and ``cp`` refuse it.  Refused now, the file as it was."""
    out = work / "out.txt"
    out.write_text("keep me\n")
    out.chmod(0o444)
    proc = _without_override([*argv, "out.txt"], work)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "out.txt: cannot write the output: permission denied" in proc.stderr
    assert out.read_text() == "keep me\n"
    out.chmod(0o644)
    assert _without_override([*argv, "out.txt"], work).returncode == 0 and out.read_text() != "keep me\n"


def test_roundtrip_of_what_this_user_cannot_read_says_so(work):
    """regression: ``roundtrip locked/`` (a directory this user cannot read) said "no .ptx files
    in locked", and ``roundtrip locked/m.ptx`` "no such file or directory": the file is there,
    the directory on the way cannot be searched; ``roundtrip tree/`` skipped a subdirectory it
    could not read and reported the rest as the whole tree."""
    (work / "locked").mkdir()
    (work / "locked" / "m.ptx").write_text(TINY)
    for sub in ("sub", "closed"):
        (work / "tree" / sub).mkdir(parents=True)
        (work / "tree" / sub / "m.ptx").write_text(TINY)
    (work / "tree" / "closed").chmod(0o000)        # below the tree: rglob skipped it in silence
    (work / "locked").chmod(0o000)
    try:
        for arg, says in (("locked", "locked: cannot read the directory: permission denied"),
                          ("locked/m.ptx", "locked/m.ptx: cannot look it up: permission denied"),
                          ("tree", "tree/closed: cannot read the directory: permission denied")):
            proc = _without_override(["roundtrip", arg], work)
            assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    finally:
        (work / "locked").chmod(0o755)
        (work / "tree" / "closed").chmod(0o755)


def test_an_unreadable_profiles_directory_is_an_error(work, monkeypatch):
    """regression: ``SPLICE_PROFILES=locked`` (a directory this user cannot read): its profiles
    were dropped in silence, as a missing directory's were before sweep 2 made that an error."""
    (work / "locked").mkdir()
    (work / "locked").chmod(0o000)
    monkeypatch.setenv("SPLICE_PROFILES", str(work / "locked"))      # the child's environment
    try:
        proc = _without_override(["spec", "tiny.ptx"], work)
        assert proc.returncode == 2 and "SPLICE_PROFILES names this directory, which this user cannot read" \
            in proc.stderr, proc.stderr
    finally:
        (work / "locked").chmod(0o755)


@pytest.mark.parametrize("cmd", [["stats"], ["spec"], ["index"], ["notes"], ["probe", "init"]], ids=lambda c: c[-1])
@pytest.mark.parametrize("query, says", [("nope", "no entry 'nope'"), ("k", "--entry 'k' matches 31 entries")],
                         ids=["missing", "ambiguous"])
def test_an_entry_error_lists_a_bounded_number_of_names(cmd, query, says, tmp_path, monkeypatch, capsys):
    """regression: ``--entry`` that names no entry (or several) listed every entry of the module
    in the error: a typo on a module of 50000 kernels printed 50000 lines."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.ptx").write_text(_many_entries(31))
    err = refused(capsys, run([*cmd, "m.ptx", "--entry", query]), says)
    assert "… and 11 more (splice stats --json FILE lists every one)" in err
    assert err.count("\n  k") <= 20


@pytest.mark.parametrize("value, says", [("~nosuchuser-hx5/x.ptx", "no user 'nosuchuser-hx5'"),
                                         ("http://example.org/x.ptx", "is a URL")], ids=["tilde-user", "url"])
def test_a_recipe_output_is_a_local_name_as_module_and_native_are(value, says, work, capsys):
    """regression: sweep 4 made ``module:`` and ``native:`` expand ``~`` and refuse URLs; the
    recipe's ``output:`` was still joined to the recipe's directory as written:
    ``output: ~/x.ptx`` wrote ``./~/x.ptx``, ``http://h/x.ptx`` made a directory ``http:``."""
    (work / "r.yaml").write_text(RECIPE.replace("output: out.ptx", f"output: {value}"))
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas"]), "r.yaml:3:9:", says)
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(("~", "http"))) == []


def test_a_recipe_output_under_home_is_written_there(work, monkeypatch, capsys):
    home = work / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (work / "r.yaml").write_text(RECIPE.replace("output: out.ptx", "output: ~/o.ptx"))
    assert run(["apply", "r.yaml", "--no-ptxas"]) == 0
    assert (home / "o.ptx").is_file() and not (work / "~").exists()


@pytest.mark.parametrize("value, says", [(None, "needs cupy"), ("http://example.org/tiny.ptx", "sp.yaml:2:6: ptx: "),
                                         ("~nosuchuser-hx5/tiny.ptx", "no user 'nosuchuser-hx5'")],
                         ids=["home", "url", "tilde-user"])
def test_a_probe_spec_names_local_files_as_a_recipe_does(value, says, work, no_gpu, monkeypatch, capsys):
    """regression: a probe spec's ``ptx: ~/tiny.ptx`` was "not a file" (``~`` not expanded), a
    URL's base name could be found next to the spec; a fill's ``path:`` likewise."""
    home = work / "home"
    home.mkdir()
    (home / "tiny.ptx").write_text(TINY)
    monkeypatch.setenv("HOME", str(home))
    spec = (work / "spec.yaml").read_text()
    (work / "sp.yaml").write_text(spec.replace("ptx: tiny.ptx", f"ptx: {value or '~/tiny.ptx'}"))
    refused(capsys, run(["probe", "sp.yaml", "tiny.ptx"]), says)


def test_a_fill_path_under_home_is_found(work, no_gpu, monkeypatch, capsys):
    import numpy as np

    home = work / "home"
    home.mkdir()
    np.save(home / "x.npy", np.zeros(1024, np.float32))
    monkeypatch.setenv("HOME", str(home))
    spec = (work / "spec.yaml").read_text().replace("role: input}", "role: input, fill: {rule: from, path: ~/x.npy}}")
    (work / "sp.yaml").write_text(spec)
    refused(capsys, run(["probe", "sp.yaml", "tiny.ptx"]), "needs cupy")
    (work / "sp.yaml").write_text(spec.replace("~/x.npy", "~nosuchuser-hx5/x.npy"))
    refused(capsys, run(["probe", "sp.yaml", "tiny.ptx"]), "sp.yaml:8:", "no user 'nosuchuser-hx5'")


def test_running_out_of_memory_is_said_not_a_traceback(work, monkeypatch, capsys):
    """regression: under an address-space limit (``ulimit -v 150000``: ``spec enc5.ptx
    --pressure``) the analysis' ``MemoryError`` left ``main`` as a traceback, exit 1.  Raised
    here where a real limit would, so that the test does not depend on this machine's memory."""
    from splice.analysis import pressure

    def exhausted(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(pressure, "pressure", exhausted)
    refused(capsys, run(["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none"]), "splice: out of memory")


@pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user needs root (lchown)")
def test_a_link_another_user_planted_in_a_shared_directory_is_not_followed(work, capsys):
    """regression: ``-o /tmp/out.ptx`` where another user had planted ``/tmp/out.ptx ->
    ~/.bashrc``: the output was written through the path the link resolves to, which bypasses
    Linux's ``fs.protected_symlinks`` (it guards following a link on ``open()``): the victim's
    file was replaced by the module."""
    shared, victim = work / "shared", work / "victim.txt"
    shared.mkdir()
    shared.chmod(0o1777)
    victim.write_text("victim's data\n")
    os.symlink(victim, shared / "out.ptx")
    os.lchown(shared / "out.ptx", 54321, 54321)
    refused(capsys, run(["canonical", "tiny.ptx", "-o", str(shared / "out.ptx")]),
            "a symbolic link another user made in a shared directory")
    assert victim.read_text() == "victim's data\n"
    (work / "victim-dir").mkdir()
    os.symlink(work / "victim-dir", shared / "d")             # a directory on the way, planted too
    os.lchown(shared / "d", 54321, 54321)
    refused(capsys, run(["canonical", "tiny.ptx", "-o", str(shared / "d" / "x.ptx")]), "d is a symbolic link another")
    assert not list((work / "victim-dir").iterdir())
    os.lchown(shared / "out.ptx", os.geteuid(), os.getegid())      # this user's own link: followed
    assert run(["canonical", "tiny.ptx", "-o", str(shared / "out.ptx")]) == 0
    assert ".entry tiny" in victim.read_text()


# ---- --arch: ASCII digits, and one ptxas knows --------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_\u0669\u0660", "sm_\uff19\uff10", "\uff19\uff10"], ids=["arabic-indic", "fullwidth", "bare"])
def test_an_arch_of_unicode_digits_is_refused(arch, work, capsys):
    """regression: ``normalize_arch`` matched ``\\d``, which takes every script's digits:
    ``--arch sm_٩٠`` went to ptxas (its error, not splice's), and ``roundtrip --sass`` exited 0
    with a note on each row."""
    refused(capsys, run(["roundtrip", "tiny.ptx", "--sass", "--arch", arch]), "not a GPU architecture")


@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_roundtrip_sass_with_an_arch_ptxas_does_not_know_is_an_error(jobs, work, capsys):
    """regression: ``roundtrip --sass --arch sm_999`` exited 0, each row noting "ptxas rejects the
    original: Value 'sm_999' is not defined for option 'gpu-name'": ptxas judged its options,
    not the module, so nothing was compared."""
    (work / "b.ptx").write_text(TINY)
    refused(capsys, run(["roundtrip", "tiny.ptx", "b.ptx", "--sass", "--no-cache", "--arch", "sm_999", "--jobs", jobs]),
            "ptxas refuses its options", "sm_999")
