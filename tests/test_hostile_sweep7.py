"""A seventh hostile user: the features merged in the last stop (probe pointer tables and module
globals, image geometries, the round-6 analyses, cuts in ``{ }`` scopes and ``.b128`` registers,
builder-made call ABIs, re-splicing) attacked with cases their own tests did not try.  Each
class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 7", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "tests/data/ptx/probe/globals_hidden.ptx"
TABLES = ROOT / "tests/data/ptx/probe/tables.ptx"


def _probe(tmp_path, monkeypatch, capsys, text: str, ptx: Path) -> tuple:
    """``splice probe s.yaml PTX`` without cupy: (exit status, stderr).  A spec that passes every
    check stops at "needs cupy"; one that does not is exit 2 at its line."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("PTX", str(ptx)))
    rc = main(["probe", str(spec), str(ptx)])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return rc, err


# ---- a global role: input the entry writes where its own def-use does not look ------------------

HIDDEN_SPEC = """name: t
ptx: PTX
entry: k
launch: {grid: [1], block: [32]}
params:
- {name: out, kind: buffer, dtype: u32, shape: [2], role: output}
globals:
- {name: NAME, dtype: u8, bytes: BYTES, role: input, fill: {rule: zeros}}
"""


@pytest.mark.parametrize("name, size, says", [
    ("counter", 4, "role input, but it is named in a function the entry calls (not traced)"),
    ("gbuf", 64, "role input, but gptr's initialiser holds its address (line 10: not traced)"),
    ("g_or", 16, "role input, but its address reaches xor.b64 s10, not followed"),
])
def test_a_global_written_out_of_the_entrys_sight_is_not_an_input(tmp_path, monkeypatch, capsys, name, size, says):
    """regression: ``role: input`` was refused only for a global the entry's own statements
    store to; one bumped by a ``.func`` the entry calls, written through an address def-use does
    not follow (``xor``/``or``), or reached through another variable holding its address was
    accepted: set before each launch and never compared, so a splice that wrote it wrongly
    passed.  (``probe init`` already made these ``inout``.)"""
    text = HIDDEN_SPEC.replace("NAME", name).replace("BYTES", str(size))
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, HIDDEN)
    assert rc == 2 and f"s.yaml:8:3: globals: {name}: {says}" in err, err
    assert "give role inout" in err and f"PTX: {HIDDEN}:" in err


def test_a_global_the_entry_only_reads_is_still_an_input(tmp_path, monkeypatch, capsys):
    text = HIDDEN_SPEC.replace("NAME", "g_alone").replace("BYTES", "16")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, HIDDEN)
    assert "needs cupy" in err, err
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("role: input", "role: inout")
                     .replace("g_alone", "counter").replace("16", "4"), HIDDEN)
    assert "needs cupy" in err, err
