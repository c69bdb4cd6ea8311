"""GPU: module texture/surface references (kind: texref / surfref) on the device's driver.  Either
the driver binds them -- the same module compares identical and a wrong one (x 2.0000002) is
caught at surf_out -- or it refuses, and the probe says so (exit 2) naming the driver call and
its CUresult.  Which one this driver does is printed (``-s``) and recorded by
bench/gpu_probe_kinds.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "tests/data/probe/texref.yaml"
PTX = ROOT / "tests/data/ptx/probe"
pytestmark = pytest.mark.gpu


def _probe(module: str, tmp_path, capsys) -> tuple:
    from splice.cli import main

    rc = main(["probe", str(SPEC), str(PTX / module), "--runs", "2", "--json", "--report-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc in (0, 1) else None), err


def test_references_bind_and_compare_or_the_driver_is_named(tmp_path, capsys):
    rc, res, err = _probe("texref.ptx", tmp_path, capsys)
    if rc == 2:         # the driver will not bind module references: said, with its call and CUresult
        assert "this driver" in err and ("cuModuleGet" in err or "cuTexRefSet" in err or "cuSurfRefSet" in err
                                         or "cuFuncGetModule" in err), err
        print(f"\nDRIVER REFUSES module references: {err.strip()}")
        return
    assert rc == 0 and res["identical"] and res["covered"], (err, res and res["compare"])
    rc, res, err = _probe("texref_wrong.ptx", tmp_path, capsys)
    assert rc == 1 and not res["compare"]["outputs"]["surf_out"]["identical"], err
    print("\nDRIVER BINDS module references: identical module identical, wrong module caught at surf_out")
