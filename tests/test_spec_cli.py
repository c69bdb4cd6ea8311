"""`splice spec` / `splice notes` end to end through the CLI entry point."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _src():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_phases_src", Path(__file__).with_name("test_phases.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SRC  # the hand-made two-phase kernel


SRC = _src()


@pytest.fixture()
def ptx(tmp_path):
    p = tmp_path / "g.ptx"
    p.write_text(SRC)
    return p


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_contract(ptx, capsys):
    rc, out, _ = run(capsys, "spec", ptx, "--json")
    assert rc == 0
    d = json.loads(out)
    e = d["entries"][0]
    assert e["entry"] == "g" and e["weight_image_bytes"] == 2560 + 16
    p = e["phases"][0]
    for key in ("index", "first", "last", "mma", "shape", "naive_shape", "grid", "weight_bytes",
                "bias_bytes", "slot_stride"):
        assert key in p
    assert p["weight_bytes"] == [320, 844] and p["slot_stride"] == 27648
    assert e["phases"][1]["shape"] == [16, 16, 64] and e["phases"][1]["naive_shape"] == [32, 32, 64]


def test_json_abi(ptx, capsys):
    rc, out, _ = run(capsys, "spec", ptx, "--abi", "phase:2", "--json")
    assert rc == 0
    abi = json.loads(out)["entries"][0]["abi"]
    assert [r["reg"] for r in abi["live_out"]] == ["%r70", "%r71", "%r72", "%r73"]
    assert {"reg": "%r50", "type": ".b32", "role": "c", "index": 0, "dead_after": True} in abi["live_in"]
    rc, out, _ = run(capsys, "spec", ptx, "--abi", "s27-s30", "--json")
    abi2 = json.loads(out)["entries"][0]["abi"]
    assert {r["reg"] for r in abi2["live_in"]} == {r["reg"] for r in abi["live_in"]}


def test_tables_for_people(ptx, capsys):
    rc, out, _ = run(capsys, "spec", ptx)
    assert rc == 0 and "phases" in out and "epilogues" in out
    rc, out, _ = run(capsys, "spec", ptx, "--phases")
    assert rc == 0 and "phases" in out and "s27" in out
    rc, out, _ = run(capsys, "spec", ptx, "--abi", "phase:1")
    assert rc == 0 and "live_out" in out


def test_user_errors(ptx, capsys):
    rc, _, err = run(capsys, "spec", ptx, "--abi", "phase:9")
    assert rc == 2 and "no phase 9" in err
    rc, _, err = run(capsys, "spec", ptx, "--abi", "sX-sY")
    assert rc == 2 and "bad --abi" in err
    rc, _, err = run(capsys, "spec", ptx, "--entry", "nope")
    assert rc == 2 and "no entry" in err
    rc, _, err = run(capsys, "spec", ptx, "--abi", "s999-s1000")
    assert rc == 2 and "no statement s999" in err


def test_notes(ptx, tmp_path, capsys):
    out_md = tmp_path / "notes.md"
    rc, _, _ = run(capsys, "notes", ptx, "-o", out_md)
    assert rc == 0
    md = out_md.read_text()
    assert md.startswith("# `g` — the epilogues of phases 1…2")
    for head in ("## 0. Conventions", "## 2. Phase table", "## 3. The epilogues", "### E1 —",
                 "## 4. Uncharacterised"):
        assert head in md
    assert "s22 L29: ld.global.u32 %r50, [%rd9+1000];" in md   # evidence in the notes' form


@pytest.mark.skipif(not (ROOT / "corpus" / "enc5.ptx").exists(), reason="corpus/enc5.ptx not generated yet")
def test_enc5_json_phase8(capsys):
    rc, out, _ = run(capsys, "spec", ROOT / "corpus" / "enc5.ptx", "--abi", "phase:8", "--json")
    assert rc == 0
    e = json.loads(out)["entries"][0]
    assert e["weight_image_bytes"] == 431124
    assert len(e["phases"]) == 61
    roles = {r["role"] for r in e["abi"]["live_in"]}
    assert roles == {"a", "b", "c"}
    assert {r["role"] for r in e["abi"]["live_out"]} == {"d"}


def test_one_entry_parses_only_its_body():
    """``spec --entry`` parses the skeleton and that entry's body alone (a 27 MB module's single
    entry costs seconds, not the whole file); the analysis is the full parse's, entry for entry."""
    import json as _json

    from splice.analysis import Kernel
    from splice.analysis.spec import build_spec
    from splice.ptx import parse_file
    from splice.ptx.parser import parse_entry
    from splice.util import read_text

    path = str(ROOT / "tests" / "data" / "ptx" / "modern" / "calls_params_globals.ptx")
    full = parse_file(path)
    names = [f.name for f in full.entries() if f.body is not None]
    assert len(names) >= 2
    for name in names:
        part = parse_entry(read_text(path), path, lambda ents: name)
        assert [f.name for f in part.functions()] == [f.name for f in full.functions()]
        others = [f for f in part.functions() if f.name != name and f.body is not None]
        assert others and all(not f.body.items for f in others)   # left unparsed
        a = build_spec(Kernel(full, name), phases=True, epilogues=True)
        b = build_spec(Kernel(part, name), phases=True, epilogues=True)
        assert _json.dumps(a, sort_keys=True, default=str) == _json.dumps(b, sort_keys=True, default=str)


def test_stats_entry_reports_only_that_entry(capsys):
    path = str(ROOT / "tests" / "data" / "ptx" / "modern" / "calls_params_globals.ptx")
    assert main(["stats", path, "--json"]) == 0
    every = json.loads(capsys.readouterr().out)["functions"]
    entry = next(f for f in every if f["kind"] == ".entry")
    assert main(["stats", path, "--entry", entry["name"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["functions"] == [entry]
