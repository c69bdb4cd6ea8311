"""A space's directive dimensions reach ptxas: each variant's recipe, applied by ``splice apply``
as it is, sets the entry's ``.maxnreg`` / ``.minnctapersm``, and ptxas's register count follows
(the Triton matmul: 80 registers on sm_80 as the module is; at most 64 under ``.maxnreg 64`` or
under ``.minnctapersm 8`` with its ``.reqntid 128``: 65536 / (8 x 128))."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.cli import main
from splice.tune.space import load_space
from splice.tune.variants import load_base, materialize, write_variant

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.needs("ptxas")
def test_directive_variants_change_ptxas_registers(tmp_path, capsys):
    t = tmp_path / "t.yaml"
    t.write_text(f"recipe: {ROOT / 'recipes/triton_matmul_p1.yaml'}\ntune:\n"
                 "  directives: {maxnreg: [none, 64], minblocks: [none, 8]}\n")
    space = load_space(str(t))
    base = load_base(space)
    got = {}
    for i in range(space.size):
        v = materialize(base, i)
        recipe = write_variant(v, tmp_path / v.key[:16], base.module)
        assert main(["apply", str(recipe), "-o", str(tmp_path / f"{i}.ptx"), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["verify_status"] == "done" and data["verify"][0]["verdict"] == "proved equal"
        got[(v.choices["maxnreg"], v.choices["minblocks"])] = (data["directives"], data["ptxas"]["after"]["registers"])
        text = (tmp_path / f"{i}.ptx").read_text()
        assert (".maxnreg 64" in text) == (v.choices["maxnreg"] == 64)
        assert (".minnctapersm 8" in text) == (v.choices["minblocks"] == 8)
    assert got[("none", "none")] == ({}, 80)
    directives, regs = got[(64, "none")]
    assert directives == {"maxnreg": 64} and regs <= 64
    directives, regs = got[("none", 8)]
    assert directives == {"minblocks": 8} and regs <= 64
    assert got[(64, 8)][1] <= 64
