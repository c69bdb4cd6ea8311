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
