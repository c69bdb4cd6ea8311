"""The console script ends with os._exit after flushing: output complete, status kept."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args):
    code = "import sys; from splice.cli import console_main; sys.argv = ['splice', *sys.argv[1:]]; console_main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True)


def test_output_flushed_and_status_kept(tmp_path):
    ok = _run("index", str(ROOT / "corpus" / "enc5.ptx"), "--json")
    assert ok.returncode == 0
    idx = json.loads(ok.stdout)                      # the whole document arrived
    assert len(next(iter(idx.values()))) > 10000
    bad = _run("stats", str(tmp_path / "missing.ptx"))
    assert bad.returncode == 2 and "missing.ptx: no such file" in bad.stderr


def test_ctrl_c_before_the_command_starts_is_a_quiet_130():
    """Ctrl-C while ``main`` still builds its parser (or imports) is exit 130 with nothing on
    stderr, as one during the command is, not a KeyboardInterrupt traceback.

    Deterministic: Python's own SIGINT handler is installed first (a process started in the
    background inherits SIGINT ignored, and the Ctrl-C was lost: exit 2 from the command that
    then ran), and ``raise_signal`` runs that handler before it returns."""
    code = ("import signal, sys\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from splice import cli\n"
            "real = cli.build_parser\n"
            "def slow():\n"
            "    signal.raise_signal(signal.SIGINT)\n"
            "    return real()\n"
            "cli.build_parser = slow\n"
            "sys.argv = ['splice', 'stats', 'x.ptx']\n"
            "cli.console_main()\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and r.stderr == "" and r.stdout == "", r
