"""--json documents: strict JSON (RFC 8259) whatever the inputs hold -- astral characters kept,
NaN and infinities null, a file name's bytes given back as the text they are (tests/hostile/json
has every command's side of it).  Found 2026-12-01 with hostile inputs."""
from __future__ import annotations

import os

from .userfiles import TINY, work  # noqa: F401 - work: the fixture


def test_json_out_keeps_astral_characters_and_nulls_non_finite_numbers():
    from splice.report.jsonout import dumps

    assert dumps({"k": "\U0001f600", "x": [1.5, 2]}) == '{"k": "\\ud83d\\ude00", "x": [1.5, 2]}'
    assert dumps({"\udce9": [float("nan"), float("inf"), "a\udcffb"]}) == '{"\\ufffd": [null, null, "a\\ufffdb"]}'


def test_json_gives_a_utf8_name_back_under_a_c_locale(work):
    """regression: with ``LANG=C`` (and no UTF-8 mode) Python decodes file names as ASCII and
    keeps each other byte as an escape: ``stats né.ptx --json`` said ``"path": "n\\ufffd\\ufffd.ptx"``,
    a name no file has.  A run of escaped bytes that is UTF-8 is now that text; other bytes stay
    U+FFFD (tests/hostile/json/strict.yaml)."""
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
