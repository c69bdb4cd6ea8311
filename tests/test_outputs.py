"""Outputs never destroy anything: an output that is an input is refused, devices and FIFOs are
written through (never replaced), symlinks write their target, failures name the output."""
from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import pytest

from splice.cli import main
from splice.util import write_atomic

from .conftest import DATA

NATIVE = """// tiny phase 1, swapped order
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%d2, %d3}, {%a0, %a1, %a2, %a3}, {%b2, %b3}, {%c0, %c0};
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%d0, %d1}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c0};
"""


@pytest.fixture
def work(tmp_path):
    """A recipe, its module and its native phase in a fresh directory."""
    d = tmp_path / "w"
    d.mkdir()
    (d / "tiny.ptx").write_bytes((DATA / "recipes" / "tiny.ptx").read_bytes())
    (d / "n.ptx").write_text(NATIVE)
    (d / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    return d


def command(name, d, out):
    """argv of ``name`` writing to ``out``, and the files it reads."""
    mod, nat, rec = str(d / "tiny.ptx"), str(d / "n.ptx"), str(d / "r.yaml")
    return {
        "apply": (["apply", rec, "--no-ptxas", "-o", str(out)], [rec, mod, nat]),
        "canonical": (["canonical", mod, "-o", str(out)], [mod]),
        "extract": (["extract", mod, "--phase", "1", "-o", str(out)], [mod]),
        "notes": (["notes", mod, "--entry", "tiny", "-o", str(out)], [mod]),
    }[name]


COMMANDS = ["apply", "canonical", "extract", "notes"]


def snapshot(*dirs):
    """Every file's sha256 under ``dirs`` (inputs unchanged and nothing left behind)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else "link"
            for d in dirs for p in sorted(Path(d).rglob("*"))}


def spellings(target: Path, d: Path):
    """Ways to name ``target`` that are not its own path: ./../ detours, a symlink, a hard link."""
    yield "detour", d / ".." / d.name / "." / target.name
    link = d / "sub" / "link.ptx"
    link.parent.mkdir(exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    yield "symlink", link
    hard = d / "sub" / "hard.ptx"
    hard.unlink(missing_ok=True)
    os.link(target, hard)
    yield "hardlink", hard


@pytest.mark.parametrize("name", COMMANDS)
def test_output_onto_an_input_is_refused(name, work, capsys):
    _, inputs = command(name, work, "x")
    for inp in inputs:
        for how, out in [("same", Path(inp)), *spellings(Path(inp), work)]:
            argv, _ = command(name, work, out)
            before = snapshot(work)
            assert main(argv) == 2, (name, inp, how)
            err = capsys.readouterr().err
            assert err.startswith(f"{out}: refusing to write the output onto an input"), err
            assert "Traceback" not in err
            assert snapshot(work) == before, (name, inp, how)


def test_apply_onto_the_stand_in_is_refused(capsys):
    """The issue's case: the bundled recipe's own module as the output."""
    root = DATA.parents[1]
    enc5 = root / "corpus" / "enc5.ptx"
    digest = hashlib.sha256(enc5.read_bytes()).hexdigest()
    assert main(["apply", str(root / "recipes" / "enc5_p8.yaml"), "--no-ptxas", "-o", str(enc5)]) == 2
    assert "refusing" in capsys.readouterr().err
    assert hashlib.sha256(enc5.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("name", COMMANDS)
def test_a_character_device_is_written_through(name, work, tmp_path, capsys):
    """``-o /dev/null`` must leave /dev/null a device.  Shown on a private null device (same
    major/minor as /dev/null) so that a regression cannot replace the system's own."""
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        if os.geteuid() == 0:       # root could replace the real one if this regressed: never risk it
            pytest.skip("cannot create a private character device (mknod) here")
        null = Path("/dev/null")    # not root: the real one, which we could not replace anyway
    rdev = os.stat(null).st_rdev
    argv, _ = command(name, work, null)
    before = snapshot(work)
    assert main(argv) == 0
    st = os.stat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev
    assert snapshot(work) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".null")]


def test_a_fifo_is_written_through(work, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    argv, _ = command("canonical", work, fifo)
    try:
        assert main(argv) == 0
        reader.join(timeout=30)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert got and got[0].startswith(b".version 8.7\n")
    finally:
        if reader.is_alive():   # the FIFO was not written: release the reader
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_symlinked_output_writes_its_target(work, tmp_path, capsys):
    target = tmp_path / "real" / "out.ptx"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "out-link.ptx"
    link.symlink_to(target)
    argv, _ = command("canonical", work, link)
    assert main(argv) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith(".version 8.7\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640          # a replaced file keeps its mode
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.ptx"]


def test_new_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        p = write_atomic(tmp_path / "new.ptx", "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == 0o640


@pytest.mark.parametrize("where, message", [
    ("under-a-file", "Not a directory"),
    ("too-long", "File name too long"),
    ("unwritable", "cannot create its directory"),
    ("directory", "it is a directory"),
])
def test_write_failures_name_the_output(where, message, work, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    out = {"under-a-file": tmp_path / "file" / "out.ptx",
           "too-long": tmp_path / ("o" * 300 + ".ptx"),
           "unwritable": Path("/proc/splice-no-such-dir/out.ptx"),   # refused even to root
           "directory": tmp_path}[where]
    argv, _ = command("canonical", work, out)
    before = snapshot(work)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{out}: cannot write the output") and message in err, err
    assert ".tmp" not in err and "Traceback" not in err
    assert snapshot(work) == before


def test_long_output_name_within_the_limit(work, tmp_path, capsys):
    """A 250-byte name is legal: the temp file beside it must not push past NAME_MAX."""
    out = tmp_path / ("o" * 246 + ".ptx")
    argv, _ = command("canonical", work, out)
    assert main(argv) == 0 and out.is_file()


def test_probe_init_never_writes_its_module(tmp_path, capsys):
    """``splice probe init MODULE -o X``: X a hard link to the module is the module."""
    mod = tmp_path / "gemm.ptx"
    mod.write_bytes((DATA.parents[1] / "corpus" / "gemm" / "gemm_sm80.ptx").read_bytes())
    hard = tmp_path / "spec.yaml"
    os.link(mod, hard)
    before = snapshot(tmp_path)
    assert main(["probe", "init", str(mod), "-o", str(hard)]) == 2
    assert "refusing" in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    assert main(["probe", "init", str(mod), "-o", str(tmp_path / "new.yaml")]) == 0
    assert (tmp_path / "new.yaml").read_text().strip()
