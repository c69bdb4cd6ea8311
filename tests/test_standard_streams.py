"""The standard streams as a shell leaves them: closed (`>&-`, `2>&-`), a pipe whose reader has
gone (`| head`), a file that takes only part of the output (a full disk), standard input that is
the recipe (`< r.yaml`).  Each is a status a script can trust (0 for a closed pipe, 2 for an
error, never 0 for a truncated output) and never a traceback.  Found 2026-11-30 and 2026-12-01
with hostile inputs; each run is a child process whose streams are set up as the shell would."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


from .conftest import ROOT
from .userfiles import TINY, work, write_files  # noqa: F401 - work: the fixture


@pytest.mark.parametrize("argv", [["stats", "tiny.ptx"], ["canonical", "tiny.ptx", "-o", "c.ptx"],
                                  ["stats", "gone.ptx"]])
def test_closed_standard_streams_are_no_traceback(argv, tmp_path):
    """regression: ``splice stats m.ptx >&-`` (stdout closed) ended in ``AttributeError:
    'NoneType' object has no attribute 'flush'``, exit 1; with stderr closed likewise."""
    import shlex

    write_files(tmp_path, {"tiny.ptx": TINY})
    code = shlex.quote("import sys; from splice.cli import console_main; console_main()")
    cmd = f"{shlex.quote(sys.executable)} -c {code} {shlex.join(argv)}"
    closed_out = subprocess.run(["sh", "-c", cmd + " >&- 2>err.txt"], cwd=tmp_path, timeout=60)
    err = (tmp_path / "err.txt").read_text()
    assert closed_out.returncode == 2 and err.startswith("splice: standard output is closed"), err
    assert not (tmp_path / "c.ptx").exists()            # refused before any work
    closed_err = subprocess.run(["sh", "-c", cmd + " 2>&- >out.txt"], cwd=tmp_path, timeout=60)
    assert closed_err.returncode == (2 if "gone.ptx" in argv else 0)
    assert (tmp_path / "c.ptx").exists() == (argv[0] == "canonical")


def _limited(argv, out_path, env_extra, limit=1024):
    """``splice ARGV > out_path`` in a child whose file size limit is ``limit`` bytes (a full
    disk, as far as the output is concerned)."""
    import resource

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


@pytest.mark.parametrize("argv", [["stats", "bad.ptx"], ["apply", "missing.yaml"], ["index", "bad.ptx", "--range", "x"]],
                         ids=lambda a: a[0])
def test_a_user_error_keeps_its_status_when_stderr_is_gone(argv, tmp_path):
    """regression: ``splice stats bad.ptx 2>&1 | head -0``: printing the error message raised
    ``BrokenPipeError`` from main's own error handler; the run ended with status 120 (Python's
    "could not flush") instead of 2."""

    (tmp_path / "bad.ptx").write_text("garbage")
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-c", "from splice.cli import console_main; console_main()", *argv],
                              cwd=tmp_path, stdout=w, stderr=w, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 2


def test_a_recipe_read_from_stdin_takes_its_names_from_the_working_directory(work, monkeypatch, capsys):
    """regression: ``splice apply /dev/stdin < r.yaml`` took ``/dev`` for the recipe's directory:
    its native was looked for as /dev/n.ptx and, as root, ``output: out.ptx`` was written into
    /dev (shown: /dev/splice-…-out.ptx, a regular file on devtmpfs)."""

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
