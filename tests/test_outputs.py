"""Outputs never destroy anything: an output that is an input is refused, devices and FIFOs are
written through (never replaced), symlinks write their target, failures name the output."""
from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from splice.cli import main
from splice.util import write_atomic

from .conftest import DATA
from .userfiles import NATIVE as SWAPPED_NATIVE
from .userfiles import RECIPE, TINY, check_refused, refused, run, run_cli, write_files

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


# ---- outputs that are this process's file descriptors, terminals, devices (found 2026-11-30 and
# 2026-12-01 with hostile inputs) --------------------------------------------------------------------

WRITERS = {"canonical": ["canonical", "tiny.ptx", "-o"], "notes": ["notes", "tiny.ptx", "-o"],
           "extract": ["extract", "tiny.ptx", "--phase", "1", "-o"], "apply": ["apply", "r.yaml", "--no-ptxas", "-o"],
           "probe-init": ["probe", "init", "tiny.ptx", "-o"]}
STDOUT_CASES = ([(w, "/dev/stdout") for w in WRITERS]
                + [("canonical", s) for s in ("/proc/self/fd/1", "/dev/fd/1", "link-to-stdout")])


@pytest.mark.parametrize("writer, spelling", STDOUT_CASES, ids=[f"{w}-{s}" for w, s in STDOUT_CASES])
def test_output_to_stdout_appends_to_the_redirection(writer, spelling, tmp_path):
    """regression: ``splice canonical m.ptx -o /dev/stdout >> log`` resolved /dev/stdout to
    ``log`` and replaced it atomically: the log's earlier lines were gone."""
    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": SWAPPED_NATIVE, "r.yaml": RECIPE})
    os.symlink("/dev/stdout", tmp_path / "link-to-stdout")
    log = tmp_path / "log.txt"
    log.write_text("precious line\n")
    with open(log, "ab") as fh:
        proc = run_cli([*WRITERS[writer], spelling], tmp_path, stdout=fh)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = log.read_text()
    assert text.startswith("precious line\n") and len(text) > 200, text[:300]


def test_output_to_an_open_descriptor_and_a_closed_one(tmp_path):
    write_files(tmp_path, {"tiny.ptx": TINY})
    log = tmp_path / "fd.txt"
    log.write_text("kept\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        proc = run_cli(["canonical", "tiny.ptx", "-o", f"/dev/fd/{fd}"], tmp_path, pass_fds=(fd,))
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().startswith("kept\n.version 8.7\n")
    err = check_refused(run_cli(["canonical", "tiny.ptx", "-o", "/dev/fd/57"], tmp_path), "/dev/fd/57")
    assert "cannot write the output" in err


def test_stdout_redirected_onto_the_input_is_still_refused(tmp_path):
    write_files(tmp_path, {"tiny.ptx": TINY})
    with open(tmp_path / "tiny.ptx", "ab") as fh:
        proc = run_cli(["canonical", "tiny.ptx", "-o", "/dev/stdout"], tmp_path, stdout=fh)
    check_refused(proc, "/dev/stdout", "refusing to write the output onto an input")
    assert (tmp_path / "tiny.ptx").read_text() == TINY


def test_concurrent_runs_onto_one_output_leave_one_whole_file(tmp_path):
    """Eight processes writing the same output at once: the output is one whole run's text
    (never interleaved, never truncated) and no temporary file is left."""
    big = TINY.replace("\tret;", "\t" + "add.s32 %r20, %r20, 1;\n\t" * 20000 + "ret;")
    write_files(tmp_path, {"m.ptx": big})
    code = "import sys; from splice.cli import main; sys.exit(main(sys.argv[1:]))"
    procs = [subprocess.Popen([sys.executable, "-c", code, "canonical", "m.ptx", "-o", "out.ptx"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(8)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()[-1000:]
        p.stderr.close()
    assert main(["canonical", str(tmp_path / "m.ptx"), "-o", str(tmp_path / "ref.ptx")]) == 0
    assert (tmp_path / "out.ptx").read_bytes() == (tmp_path / "ref.ptx").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ptx", "out.ptx", "ref.ptx"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a block device needs root")
def test_a_block_device_is_never_written_through(work, monkeypatch, capsys):
    """regression: an output that is a device was opened and written through, a block device (a
    disk, ``-o /dev/sda`` as root) included.  The node made here (loop 250) backs no disk."""
    monkeypatch.chdir(work)
    try:
        os.mknod(work / "disk", 0o600 | __import__("stat").S_IFBLK, os.makedev(7, 250))
    except OSError as exc:
        pytest.skip(f"cannot make a block device here: {exc}")
    os.symlink("disk", work / "link.ptx")
    for target in ("disk", "link.ptx"):
        refused(capsys, run(["canonical", "tiny.ptx", "-o", target]), "it is a block device")


def test_a_terminal_is_still_written_through(work, monkeypatch, capsys):
    """``-o /dev/pts/N`` (or ``/dev/tty``): the output is shown on that terminal."""
    import pty

    monkeypatch.chdir(work)
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


@pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user needs root (lchown)")
def test_a_link_another_user_planted_in_a_shared_directory_is_not_followed(work, monkeypatch, capsys):
    """regression: ``-o /tmp/out.ptx`` where another user had planted ``/tmp/out.ptx ->
    ~/.bashrc``: the output was written through the path the link resolves to, which bypasses
    Linux's ``fs.protected_symlinks`` (it guards following a link on ``open()``): the victim's
    file was replaced by the module."""
    monkeypatch.chdir(work)
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
