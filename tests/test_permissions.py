"""File permissions as a user without root's override meets them: a read-only output is not
replaced, a directory this user cannot read is said to be one.  Run as root, each command runs
under setpriv without CAP_DAC_OVERRIDE (skipped where that cannot be done).  Found 2026-12-01
with hostile inputs."""
from __future__ import annotations

import os

import pytest

from .userfiles import TINY, work  # noqa: F401 - work: the fixture


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
    were dropped in silence, as a missing directory's were before 2026-11-30, when that became an error."""
    (work / "locked").mkdir()
    (work / "locked").chmod(0o000)
    monkeypatch.setenv("SPLICE_PROFILES", str(work / "locked"))      # the child's environment
    try:
        proc = _without_override(["spec", "tiny.ptx"], work)
        assert proc.returncode == 2 and "SPLICE_PROFILES names this directory, which this user cannot read" \
            in proc.stderr, proc.stderr
    finally:
        (work / "locked").chmod(0o755)
