"""`splice roundtrip`: JSON per file, exit status, and SASS identity of the canonical print."""
from __future__ import annotations

import json
import shutil

import pytest

from splice.cli import main

from .conftest import MODERN, THIRDPARTY

FAIL = THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_fail" / "shared_ptr.ptx"
GOOD = THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_run" / "add.ptx"


def _json_lines(out):
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def test_json_objects_and_exit_status(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(GOOD, d / "good.ptx")
    assert main(["roundtrip", str(d), "--json"]) == 0
    (rec,) = _json_lines(capsys.readouterr().out)
    assert rec == {"path": str(d / "good.ptx"), "parsed": True, "identical": True,
                   "sass_identical": None, "error": None, "note": None}
    shutil.copy(FAIL, d / "bad.ptx")
    assert main(["roundtrip", str(d), "--json"]) == 1
    recs = {r["path"].rsplit("/", 1)[-1]: r for r in _json_lines(capsys.readouterr().out)}
    assert recs["bad.ptx"]["parsed"] is False
    assert recs["bad.ptx"]["error"].startswith(f"{d / 'bad.ptx'}:5:1: expected")


def test_no_files_is_an_error(tmp_path, capsys):
    assert main(["roundtrip", str(tmp_path)]) == 2


@pytest.mark.needs("ptxas", "disassembler")
@pytest.mark.parametrize("name", ["fp8_mma_sm89.ptx", "tex_surf_objects.ptx", "calls_params_globals.ptx",
                                  "wgmma_sm90a.ptx", "lineinfo_inlined.ptx"])
def test_canonical_print_gives_identical_sass(name, capsys):
    assert main(["roundtrip", str(MODERN / name), "--sass", "--json"]) == 0
    (rec,) = _json_lines(capsys.readouterr().out)
    assert rec["sass_identical"] is True, rec


@pytest.mark.needs("ptxas", "disassembler")
def test_sass_check_can_fail(tmp_path, monkeypatch):
    """The SASS comparison is real: a canonical printer that changed an opcode is caught."""
    from splice.ptx import printer
    from splice.commands import roundtrip as rt

    real = printer.canonical

    def wrong(mod):
        return real(mod).replace("add.s32", "sub.s32", 1)

    monkeypatch.setattr(rt, "canonical", wrong)
    r = rt.check_file(MODERN / "warp_atomics_preds.ptx", sass=True)
    assert r.parsed and r.identical and r.sass_identical is False
    assert r.note and "instruction" in r.note


def test_jobs_on_processes_same_records_same_order(tmp_path, capsys):
    """--jobs 2 runs files in worker processes; the records and their order do not change."""
    d = tmp_path / "d"
    d.mkdir()
    for f in sorted(MODERN.glob("*.ptx"))[:6]:
        shutil.copy(f, d / f.name)
    (d / "zz_bad.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n.entry k( {\n")
    assert main(["roundtrip", str(d), "--json", "--jobs", "1"]) == 1
    one = _json_lines(capsys.readouterr().out)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 1
    two = _json_lines(capsys.readouterr().out)
    assert one == two and len(one) == 7 and one[-1]["parsed"] is False
