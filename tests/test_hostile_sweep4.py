"""A fourth hostile user: classes of failure the first three sweeps (tests/test_hostile_sweep.py,
tests/test_hostile_sweep2.py, tests/test_hostile_sweep3.py) do not reach.  Each class names the
fix it guards (``regression:``); every case failed before its fix.  docs/hostile-inputs.md,
"Sweep 4", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import os
import sys

import pytest

from .conftest import TINY_SWAPPED, tree_digest
from .test_compile_cache import PTX, fake  # noqa: F401 - the fake ptxas fixture
from .test_hostile_sweep3 import NATIVE, RECIPE, SPEC, TINY, refused, run  # noqa: F401 - shared with sweep 3


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory holding tiny.ptx, its native phase, a recipe and a probe spec; the cwd and
    SPLICE_CORPUS."""
    for name, text in {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "spec.yaml": SPEC}.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "probes").mkdir()          # the recipe's probe spec, found next to its corpus
    (tmp_path / "probes" / "tiny.yaml").write_text(SPEC.replace("ptx: tiny.ptx", "ptx: ../tiny.ptx"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPLICE_CORPUS", str(tmp_path))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path.parent / (tmp_path.name + "-cache")))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path.parent / (tmp_path.name + "-probe")))
    return tmp_path




# ---- probe: a usage error is said before "no cupy / no GPU" -------------------------------------

@pytest.fixture
def no_gpu(monkeypatch):
    """cupy missing, whatever this machine has: the probe's import of it fails as without one."""
    monkeypatch.setitem(sys.modules, "cupy", None)


PROBE_USAGE = [
    (["probe", "r.yaml", "--stages", "garbage"], "r.yaml: --stages: 'garbage' is not a phase"),
    (["probe", "r.yaml", "--stages", "1-99999"], "r.yaml: --stages: phase 99999 does not exist"),
    (["probe", "r.yaml", "--stages", "E999"], "r.yaml: --stages: epilogue E999 does not exist"),
    (["probe", "spec.yaml", "tiny.ptx", "--stages", "cut"], "spec.yaml: --stages cut needs a recipe"),
    # regression: a probe spec and a module have no cut, --harness compared nothing (exit 0)
    (["probe", "spec.yaml", "tiny.ptx", "--harness"], "spec.yaml: --harness compares each cut"),
]


@pytest.mark.parametrize("argv, says", PROBE_USAGE, ids=[" ".join(a[1:]) for a, _ in PROBE_USAGE])
def test_probe_usage_errors_come_before_the_gpu_check(argv, says, work, no_gpu, capsys):
    """regression: the run's options (``--stages``) were planned after cupy was imported, so
    without a GPU the user learnt of the missing GPU first and of the typo only on the GPU box."""
    before = tree_digest(work)
    err = refused(capsys, run(argv), says)
    assert "cupy" not in err
    assert tree_digest(work) == before


def test_probe_without_a_usage_error_still_says_no_gpu(work, no_gpu, capsys):
    refused(capsys, run(["probe", "r.yaml", "--stages", "1"]), "r.yaml: splice probe needs cupy")


def test_an_error_placed_at_a_path_object_is_rendered(capsys):
    """regression: ``SpliceError(msg, Path(...))`` was a ``TypeError`` traceback in ``_headline``
    (``where += ": "`` on a Path) in place of the message."""
    from pathlib import Path

    from splice.errors import SpliceError

    e = SpliceError("bad", Path("dir/x.yaml"), line=3)
    assert str(e) == "dir/x.yaml:3: bad" and e.render().startswith("dir/x.yaml:3: bad")


# ---- file names a recipe or the environment spells with ~ or as a URL ---------------------------

TILDE = [
    # regression: Path.expanduser raised RuntimeError("Could not determine home directory.")
    ("module: ~nosuchuser-hx4/tiny.ptx", "module", "no user 'nosuchuser-hx4' on this system"),
    ("native: ~nosuchuser-hx4/n.ptx", "native", "no user 'nosuchuser-hx4' on this system"),
    # regression: read as the relative path http:/example.org/tiny.ptx, found by base name in the corpus
    ("module: http://example.org/tiny.ptx", "module", "is a URL: splice reads local files only"),
    ("native: file:///tmp/n.ptx", "native", "is a URL"),
]


@pytest.mark.parametrize("line, key, says", TILDE, ids=[t[0] for t in TILDE])
def test_a_name_that_cannot_be_a_local_file_is_refused_at_its_line(line, key, says, work, capsys):
    text = RECIPE.replace(f"{key}: tiny.ptx" if key == "module" else f"{key}: n.ptx", line)
    (work / "r.yaml").write_text(text)
    lineno = text.splitlines().index(line.strip()) + 1 if key == "module" else 6
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]), f"r.yaml:{lineno}:", says)
    assert not (work / "o.ptx").exists()


def test_splice_cache_naming_an_unknown_user_is_refused(work, monkeypatch, capsys):
    """regression: ``SPLICE_CACHE=~nobody/c`` was a RuntimeError traceback."""
    monkeypatch.setenv("SPLICE_CACHE", "~nosuchuser-hx4/cache")
    refused(capsys, run(["apply", "r.yaml", "-o", "o.ptx"]), "SPLICE_CACHE:", "no user 'nosuchuser-hx4'")


# ---- standard output that takes only part of the output -----------------------------------------

def _limited(argv, out_path, env_extra, limit=1024):
    """``splice ARGV > out_path`` in a child whose file size limit is ``limit`` bytes (a full
    disk, as far as the output is concerned)."""
    import resource
    import subprocess

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(env_extra)
    with open(out_path, "wb") as fh:
        return subprocess.run([sys.executable, "-c", "from splice.cli import console_main; console_main()", *argv],
                              stdout=fh, stderr=subprocess.PIPE, env=env, preexec_fn=cap, timeout=120)


@pytest.mark.parametrize("unbuffered", [{}, {"PYTHONUNBUFFERED": "1"}], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("argv", [["canonical", "enc5.ptx"], ["stats", "--json", "enc5.ptx"],
                                  ["index", "enc5.ptx"]], ids=lambda a: " ".join(a))
def test_an_output_cut_short_is_not_exit_0(argv, unbuffered, work):
    """regression: with ``PYTHONUNBUFFERED=1`` the raw stdout wrote 1 KiB of 900 KiB and returned
    the count, which the text layer ignored (``canonical``: exit 0, a truncated module); buffered,
    the last flush's ``EFBIG``/``ENOSPC`` was swallowed by the console script (``stats --json``:
    exit 0)."""
    from .conftest import ROOT

    (work / "enc5.ptx").write_bytes((ROOT / "corpus" / "enc5.ptx").read_bytes())
    proc = _limited(argv, work / "out", unbuffered)
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err[-800:])
    assert "file too large" in err and "Traceback" not in err


def test_an_output_that_fits_is_whole(work):
    proc = _limited(["canonical", "tiny.ptx"], work / "out", {"PYTHONUNBUFFERED": "1"}, limit=1 << 20)
    assert proc.returncode == 0, proc.stderr.decode()
    from splice.ptx import parse
    from splice.ptx.printer import canonical

    assert (work / "out").read_text() == canonical(parse(TINY, "tiny.ptx"))


# ---- output names ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["canonical", "tiny.ptx", "-o", "-"], ["notes", "tiny.ptx", "-o", "-"],
                                  ["extract", "tiny.ptx", "--phase", "1", "-o", "-"],
                                  ["probe", "init", "tiny.ptx", "-o", "-"]], ids=lambda a: a[0])
def test_dash_as_an_output_is_refused(argv, work, capsys):
    """regression: ``-o -`` wrote a file named ``-`` (exit 0), where ``-`` is everywhere else
    standard output."""
    refused(capsys, run(argv), "'-' would be a file named '-'")
    assert not (work / "-").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a block device needs root")
def test_a_block_device_is_never_written_through(work, capsys):
    """regression: an output that is a device was opened and written through, a block device (a
    disk, ``-o /dev/sda`` as root) included.  The node made here (loop 250) backs no disk."""
    try:
        os.mknod(work / "disk", 0o600 | __import__("stat").S_IFBLK, os.makedev(7, 250))
    except OSError as exc:
        pytest.skip(f"cannot make a block device here: {exc}")
    os.symlink("disk", work / "link.ptx")
    for target in ("disk", "link.ptx"):
        refused(capsys, run(["canonical", "tiny.ptx", "-o", target]), "it is a block device")


# ---- data shown through rich: never read as markup ----------------------------------------------

MARKUP_NAMES = ["[/b].ptx", "[red]x.ptx", "[link=http://e]y.ptx"]
MARKUP_COMMANDS = [["stats"], ["spec"], ["spec", "--phases", "--epilogues"], ["spec", "--abi", "phase:1"],
                   ["spec", "--pressure", "--no-ptxas", "--png", "none"], ["roundtrip"]]


@pytest.mark.parametrize("name", MARKUP_NAMES)
@pytest.mark.parametrize("cmd", MARKUP_COMMANDS, ids=lambda c: " ".join(c))
def test_a_file_name_in_brackets_is_shown_as_written(cmd, name, work, capsys):
    """regression: a path interpolated into rich markup: ``[/b].ptx`` was a ``MarkupError``
    traceback (stats, roundtrip, spec --pressure), ``[red]x.ptx`` was shown as a red ``x.ptx``."""
    (work / name).parent.mkdir(parents=True, exist_ok=True)
    (work / name).write_text(TINY)
    assert run([cmd[0], name, *cmd[1:]]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if cmd[0] in ("stats", "roundtrip"):
        assert name in out or os.path.normpath(name) in out, out    # roundtrip shows it normalised


def test_recipe_and_output_names_in_brackets_are_shown_as_written(work, capsys):
    (work / "[red]r.yaml").write_text(RECIPE)
    (work / "[").mkdir()
    assert run(["apply", "[red]r.yaml", "--no-ptxas", "-o", "[/b]o.ptx"]) == 0
    out = capsys.readouterr().out
    assert "[red]r.yaml" in out and "[/b]o.ptx" in out
    assert run(["verify", "[red]r.yaml"]) == 0
    assert "[red]r.yaml" in capsys.readouterr().out


def test_an_address_in_a_provenance_keeps_its_brackets(capsys):
    """regression: ``spec --abi`` showed ``ld.shared`` where the value is ``ld.shared [smem +
    16·laneid + 9216]``: rich took ``[smem …]`` for a style tag and dropped it."""
    from .conftest import ROOT

    assert run(["spec", str(ROOT / "corpus" / "enc5.ptx"), "--abi", "phase:8"]) == 0
    out = capsys.readouterr().out
    assert "ld.shared [smem + 16·laneid + 9216]" in out


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


# ---- compile caches: an entry another user planted ----------------------------------------------

OTHER_UID = 54321


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_ptxas_cache_entry_of_another_user_is_not_trusted(fake, tmp_path):
    """regression: a well-formed entry (right key, checksum and ELF magic) was trusted whoever
    wrote it: in a shared $SPLICE_CACHE another user could plant a cubin for a module."""
    from splice.ptx import sass
    from splice.ptx.cache import CompileCache

    c = CompileCache(tmp_path / "c")
    sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=c).cached
    (entry,) = (tmp_path / "c").rglob("*.entry")
    os.chown(entry, OTHER_UID, OTHER_UID)
    again = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert not again.cached and len(fake.log()) == 2
    assert entry.stat().st_uid == os.geteuid()        # replaced by this user's own
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=c).cached


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
@pytest.mark.parametrize("which", ["cubin", "json"])
def test_a_probe_cubin_of_another_user_is_not_trusted(which, fake, tmp_path):
    from splice.probe.run.modules import compile_one

    first = compile_one("k", PTX, "sm_90", tmp_path / "probe")
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached
    os.chown(first.path.with_suffix("." + which), OTHER_UID, OTHER_UID)
    assert not compile_one("k", PTX, "sm_90", tmp_path / "probe").cached
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached


# ---- analysis whose size grows as the square of the kernel --------------------------------------

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


# ---- probe spec fills whose numbers cannot be drawn ----------------------------------------------

FILLS = [
    # regression: OverflowError/ValueError tracebacks from numpy on the GPU run, after the build
    ("f32", "{rule: uniform, range: [.nan, 1]}", "range", "not a finite number"),
    ("f32", "{rule: uniform, range: [-.inf, .inf]}", "range", "not a finite number"),
    ("f32", "{rule: uniform, range: [5, 1]}", "range", "is empty"),
    ("u8", "{rule: uniform, range: [5, 1]}", "range", "is empty"),
    ("s32", "{rule: integers, range: [0, 99999999999999999999999]}", "range", "goes beyond s32"),
    ("s32", "{rule: integers, range: [1.5, 1.7]}", "range", "holds no integer"),
    ("s32", "{rule: uniform, range: [-.inf, 1]}", "range", "not a finite number"),
    ("s32", "{rule: arange, start: .nan, step: 1}", "start", "not a finite number"),
    ("s32", "{rule: arange, start: 0.5, step: 1}", "start", "whole numbers"),
    ("f32", "{rule: from, path: spec.yaml}", "path", "is not a .npy array"),
    ("f32", "{rule: weight_image, f16_regions: [{lo: 0, hi: 8, range: [.nan, 1]}]}", "range", "finite numbers"),
    # regression: silent: NaN stored as INT_MIN, 1e23 clipped to INT_MAX, a NaN normal fill
    ("s32", "{rule: constant, value: .nan}", "value", "not a finite number"),
    ("s32", "{rule: constant, value: 99999999999999999999999}", "value", "is not a s32"),
    ("u8", "{rule: constant, value: -1}", "value", "is not a u8"),
    ("f32", "{rule: normal, mean: .nan, std: 1}", "mean", "not a finite number"),
    ("f32", "{rule: normal, mean: 0, std: .inf}", "std", "not a finite number"),
]


@pytest.mark.parametrize("dtype, fill, key, says", FILLS, ids=[f"{d} {f}" for d, f, _, _ in FILLS])
def test_a_fill_that_cannot_be_drawn_is_refused_with_the_spec(dtype, fill, key, says, work, no_gpu, capsys):
    text = SPEC.replace("dtype: f32, shape: [1024], role: input}",
                        f"dtype: {dtype}, shape: [1024], role: input, fill: {fill}}}")
    (work / "s2.yaml").write_text(text)
    err = refused(capsys, run(["probe", "s2.yaml", "tiny.ptx"]), "s2.yaml:8:", "params[0].fill.", f".{key}:", says)
    assert "cupy" not in err


@pytest.mark.parametrize("dtype, fill", [("f32", "{rule: constant, value: .nan}"),
                                         ("s8", "{rule: integers, range: [-128, 127]}"),
                                         ("u64", "{rule: arange, start: 0, step: 3}"),
                                         ("f16", "{rule: uniform, range: [-1, 1]}")])
def test_fills_that_can_be_drawn_still_pass(dtype, fill, work, no_gpu, capsys):
    text = SPEC.replace("dtype: f32, shape: [1024], role: input}",
                        f"dtype: {dtype}, shape: [1024], role: input, fill: {fill}}}")
    (work / "s2.yaml").write_text(text)
    refused(capsys, run(["probe", "s2.yaml", "tiny.ptx"]), "needs cupy")


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


# ---- native scratch: bounded in all, not per range -----------------------------------------------

@pytest.mark.parametrize("head, says", [
    # regression: each range was bounded (65536), not their sum: 200 ranges, 13M names, 10 GB
    ("// splice-native:\n//   scratch: {" + ", ".join(f"r{i}<65536>: .b32" for i in range(200)) + "}\n\n",
     "in all (at most 65536)"),
    # regression: a body's .reg range was expanded name by name: %x<4294967296> took 16 GB
    (".reg .b32 %x<4294967296>;\n", "scratch registers in all (at most 65536)"),
    ("{\n.reg .b32 %y<40000>;\n}\n.reg .b32 %x<40000>;\n", "80000 scratch registers in all"),
], ids=["header ranges", "body range", "nested and flat"])
def test_native_scratch_is_bounded_in_all(head, says, work, capsys):
    (work / "n.ptx").write_text(head + TINY_SWAPPED)
    refused(capsys, run(["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"]), "n.ptx:", says)
    assert not (work / "o.ptx").exists()


def test_a_report_dir_that_cannot_be_made_is_refused_before_the_gpu(work, no_gpu, capsys):
    """regression: ``--report-dir tiny.ptx/sub`` (under a file) passed the check, which looked
    only at a path that exists; ``mkdir`` failed after the whole GPU run."""
    err = refused(capsys, run(["probe", "spec.yaml", "tiny.ptx", "--report-dir", "tiny.ptx/sub/deeper"]),
                  "--report-dir:", "tiny.ptx is a file, not a directory")
    assert "cupy" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any directory")
def test_a_report_dir_under_a_read_only_directory_is_refused_before_the_gpu(work, no_gpu, capsys):
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        err = refused(capsys, run(["probe", "spec.yaml", "tiny.ptx", "--report-dir", "ro/reports"]),
                      "cannot create it under", "permission denied")
    finally:
        ro.chmod(0o755)
    assert "cupy" not in err


@pytest.mark.parametrize("argv", [["--runs", "99999999999"], ["--warmup", "10000001"]], ids=lambda a: a[0])
def test_a_run_count_past_the_bound_is_refused_before_the_gpu(argv, work, no_gpu, capsys):
    """regression: ``--runs 99999999999`` passed (only negatives were refused): the timing loop
    would have launched frames for days on the GPU box."""
    err = refused(capsys, run(["probe", "spec.yaml", "tiny.ptx", *argv]), f"{argv[0]} {argv[1]}: at most 1000000")
    assert "cupy" not in err


# ---- Lark's grammar cache: a pickle, never from a directory others write -------------------------

_BUILD = "from splice.ptx.parser import lark_parser; lark_parser()"


class _Payload:
    """Unpickled, it creates the file ``MARKER`` names: the proof that a planted cache ran code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _build_grammar(env_extra: dict):
    import subprocess

    from .conftest import ROOT

    env = {**os.environ, **env_extra}
    r = subprocess.run([sys.executable, "-c", _BUILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_grammar_cache_is_not_read_from_tmpdir(tmp_path):
    """regression: Lark's default cache is ``$TMPDIR/.lark_cache_<user>_<sha>_<py>.tmp``, a name
    anyone can compute in a directory anyone can write, and Lark unpickles it (before checking
    its checksum): another user of a shared /tmp could plant one and run code as whoever parses a
    module next.  Here: after one build nothing of Lark's is in TMPDIR; were it there, the planted
    payload would run on the next build."""
    import pickle

    tmp, marker = tmp_path / "tmp", tmp_path / "PWNED"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "SPLICE_CACHE": str(tmp_path / "cache")}
    _build_grammar(env)
    planted = list(tmp.glob(".lark_*"))
    for f in planted:
        f.write_bytes(b"0\n" + pickle.dumps(_Payload(str(marker))))
    _build_grammar(env)
    assert not marker.exists() and not planted
    assert (tmp_path / "cache" / "lark" / "grammar.pickle").is_file()       # the cache is kept, privately


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_grammar_cache_planted_by_another_user_is_not_loaded(tmp_path):
    import pickle

    marker = tmp_path / "PWNED"
    lark_dir = tmp_path / "cache" / "lark"
    lark_dir.mkdir(parents=True, mode=0o700)
    f = lark_dir / "grammar.pickle"
    f.write_bytes(b"0\n" + pickle.dumps(_Payload(str(marker))))
    os.chown(f, OTHER_UID, OTHER_UID)
    _build_grammar({"SPLICE_CACHE": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)})
    assert not marker.exists()
    assert f.stat().st_uid == os.geteuid()        # replaced by this user's own build


def test_no_grammar_cache_in_a_folder_others_may_write(tmp_path, monkeypatch):
    from splice.ptx.cache import grammar_cache

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)        # SPLICE_CACHE=/tmp/shared: anyone could swap lark/ for their own
    monkeypatch.setenv("SPLICE_CACHE", str(shared))
    assert grammar_cache() is False
    shared.chmod(0o755)
    assert grammar_cache() == str(shared / "lark" / "grammar.pickle")
    assert (shared / "lark").stat().st_mode & 0o777 == 0o700


SEQ_SPEC = ("name: tiny\nptx: tiny.ptx\nentry: tiny\nlaunch:\n  grid: [1]\n  block: [32]\n"
            "  sequence: [{k: 0}, {k: VALUE}]\nparams:\n"
            "- {name: param_0, kind: buffer, dtype: f32, shape: [1024], role: input}\n"
            "- {name: param_1, kind: buffer, dtype: f32, shape: [1024], role: output}\n")


@pytest.mark.parametrize("value, says", [(".nan", "expected an integer, got nan"),
                                         ("1.5", "expected an integer, got 1.5"),
                                         ("1000000000000000000000000000000", "does not fit .s32")])
def test_a_sequence_override_is_checked_like_the_value(value, says, work, no_gpu, capsys):
    """regression: ``launch.sequence: [{k: .nan}]`` for an s32 scalar passed (only "a number" was
    checked): ``int(nan)`` was a ValueError traceback on the GPU run, 1.5 became 1, 10^30 wrapped."""
    src = (work / "tiny.ptx").read_text()
    (work / "k.ptx").write_text(src.replace(".param .u64 tiny_param_1\n",
                                            ".param .u64 tiny_param_1,\n\t.param .u32 tiny_param_2\n"))
    text = SEQ_SPEC.replace("VALUE", value).replace("ptx: tiny.ptx", "ptx: k.ptx") + \
        "- {name: k, kind: scalar, dtype: s32, value: 0}\n"
    (work / "s3.yaml").write_text(text)
    err = refused(capsys, run(["probe", "s3.yaml", "k.ptx"]), "s3.yaml:7:", "launch.sequence[1].k[0]", says)
    assert "cupy" not in err


@pytest.mark.parametrize("kind", ["texture", "surface"])
@pytest.mark.parametrize("wh, key", [("width: 99999999999, height: 1", "width"), ("width: 1, height: 65537", "height")])
def test_an_image_past_cudas_2d_limits_is_refused_with_the_spec(kind, wh, key, work, no_gpu, capsys):
    """regression: a texture or surface of 10^11 x 10^11 texels passed the spec check; its texels
    were built on the host on the GPU run (a MemoryError traceback)."""
    fill = ", fill: {rule: zeros}" if kind == "texture" else ""
    text = SPEC.replace("{name: param_0, kind: buffer, dtype: f32, shape: [1024], role: input}",
                        f"{{name: param_0, kind: {kind}, {wh}, format: rgba32f{fill}}}")
    (work / "s4.yaml").write_text(text)
    err = refused(capsys, run(["probe", "s4.yaml", "tiny.ptx"]), f"params[0].{key}:", f"CUDA allows a 2-D {kind}")
    assert "cupy" not in err


def test_a_specs_ptx_is_found_next_to_the_spec_before_the_cwd(tmp_path, monkeypatch, no_gpu, capsys):
    """regression: ``ptx: tiny.ptx`` was looked up in the working directory first: run from a
    directory holding another ``tiny.ptx``, the probe took that one as the original."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "specs" / "tiny.ptx").write_text(TINY)
    (tmp_path / "specs" / "s.yaml").write_text(SPEC)
    (tmp_path / "elsewhere" / "tiny.ptx").write_text(
        TINY.replace(".param .u64 tiny_param_1\n", ".param .u64 tiny_param_1,\n\t.param .u32 extra\n"))
    monkeypatch.chdir(tmp_path / "elsewhere")
    err = refused(capsys, run(["probe", "../specs/s.yaml", "../specs/tiny.ptx"]), "needs cupy")
    assert "param" not in err


def test_a_loop_in_a_native_is_named_without_a_memory_address(work, capsys):
    """regression: verify's reason for a native with a loop named the label with its scope's
    ``id()`` (``$Lsplice1n_LOOP@140472916579712``): a memory address, different on every run."""
    import re

    (work / "n.ptx").write_text("LOOP:\nbra LOOP;\n" + TINY_SWAPPED)
    assert run(["verify", "r.yaml", "--json"]) == 3
    out = capsys.readouterr().out
    assert "backward branch to $Lsplice1n_LOOP" in out and not re.search(r"@\d{6,}", out)


@pytest.mark.parametrize("arch", ["'[/x]'", "sm_1", "'sm_90 -o /tmp/x'"])
def test_a_build_arch_that_is_no_arch_is_refused_with_the_spec(arch, work, no_gpu, capsys):
    """regression: ``build_arch:`` was checked to be text only: ptxas refused it on the GPU run,
    and ``[/x]`` in the progress bar's markup was a MarkupError traceback there."""
    (work / "s5.yaml").write_text(SPEC + f"build_arch: {arch}\n")
    err = refused(capsys, run(["probe", "s5.yaml", "tiny.ptx"]), "s5.yaml:", "build_arch: not a GPU architecture")
    assert "cupy" not in err


def test_a_build_arch_is_normalised_as_arch_is():
    from splice.probe.language.document import load_spec

    from .conftest import ROOT

    text = (ROOT / "probes" / "gemm_sm80.yaml").read_text() + "build_arch: 90a\n"
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "s.yaml")
        open(p, "w").write(text.replace("ptx: corpus/", f"ptx: {ROOT}/corpus/"))
        assert load_spec(p).build_arch == "sm_90a"


def test_a_progress_task_is_not_markup():
    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from splice.report.probe import RichUI

    con = Console(file=__import__("io").StringIO(), width=120)
    with Progress(TextColumn("[bold]{task.description}"), console=con) as prog:
        RichUI(prog).task("compile (ptxas -arch=[/x] -O3)", 1)()
    assert "[/x]" in con.file.getvalue()


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
