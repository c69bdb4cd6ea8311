"""probe init round-trips: every skeleton it writes for a bundled entry (corpus/, tests/data/ptx/)
loads and passes its own checks once each TODO is filled with the value the skeleton names for it
(``(e.g. VALUE)`` on the TODO's line).  A skeleton that cannot be filled so says so in its rows
(``probeable: false`` with the reason) -- counted and named here, never silently dropped."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from splice.errors import SpliceError
from splice.probe.language.document import parse_spec
from splice.probe.language.entry import check
from splice.probe.language.init import skeleton
from splice.ptx import parse

ROOT = Path(__file__).resolve().parents[1]
#: a placeholder and the value its TODO names: ``key: null ... # TODO ... (e.g. VALUE)``
_TODO = re.compile(r"(?P<key>[\w]+: )(?P<null>null|\[null(?:, null)*\])(?P<rest>.*#.*\(e\.g\. (?P<eg>.*)\)\s*)$")


def fill(text: str) -> str:
    """Each TODO placeholder replaced by the value its comment names."""
    out = []
    for line in text.splitlines():
        mt = _TODO.search(line)
        if mt:
            line = line[:mt.start("null")] + mt.group("eg") + line[mt.end("null"):]
        out.append(line)
    return "\n".join(out) + "\n"


def _entries() -> list:
    out = []
    for p in sorted(list((ROOT / "corpus").rglob("*.ptx")) + list((ROOT / "tests/data/ptx").rglob("*.ptx"))):
        if "refused" in p.parts:
            continue
        try:
            mod = parse(p.read_text(errors="surrogateescape"), str(p))
        except Exception:  # noqa: BLE001 - a module the front end refuses is no probe's
            continue
        out += [(p, f.name) for f in mod.functions() if f.is_entry and f.body is not None]
    return out


ENTRIES = _entries()


def test_there_are_entries():
    assert len(ENTRIES) > 200


def test_a_filled_line_takes_the_named_value():
    assert fill("  grid: null   # TODO: blocks (e.g. [64, 1, 1])\n") == "  grid: [64, 1, 1]   # TODO: blocks (e.g. [64, 1, 1])\n"
    assert fill("- {name: n, kind: scalar, dtype: u32, value: null}   # TODO (e.g. 1)\n").startswith(
        "- {name: n, kind: scalar, dtype: u32, value: 1}")
    assert fill("  dims: [null, null]   # TODO (e.g. [64, 64])").startswith("  dims: [64, 64]")


@pytest.mark.parametrize("path, entry", ENTRIES, ids=[f"{p.name}:{e[:40]}" for p, e in ENTRIES])
def test_the_filled_skeleton_is_accepted(path, entry):
    text = path.read_text(errors="surrogateescape")
    variables: list = []
    unprobeable: list = []
    try:
        skel, rows = skeleton(text, str(path), entry, variables, unprobeable)
    except SpliceError as exc:      # init refuses the entry (32-bit addressing, .reqntid of no thread)
        pytest.skip(f"probe init refuses it: {exc.message}")
    stuck = [r["why"] for r in rows + variables if r.get("probeable") is False] + unprobeable
    if stuck:
        pytest.skip(f"not probeable: {stuck[0]}")
    filled = fill(skel)
    assert "null" not in re.sub(r"#.*", "", filled), [ln for ln in filled.splitlines() if "null" in ln.split("#")[0]]
    spec = parse_spec(yaml.safe_load(filled), str(path.parent / "skeleton.yaml"))
    check(spec, text, str(path))
