"""spec --pressure of a recipe (the module it splices) and of a native alone; --live (the live set
at one statement with each value's definitions and last use); ptxas's own live registers per
region (nvdisasm life ranges, by PTX line)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.analysis.pressure import live_at
from splice.cli import main
from splice.ptx import parse

from .conftest import TINY_SWAPPED
from .test_pressure import SMALL

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "recipes" / "tiny.ptx"


def run_json(capsys, *argv) -> dict:
    assert main(["spec", *argv, "--pressure", "--png", "none", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["entries"][0]


def test_live_at_definitions_last_use_and_weights():
    k = Kernel(parse(SMALL))
    vals = {v.register: v for v in live_at(k, 6)}          # before `setp.eq.u32 %p1, %r3, 0`
    assert set(vals) == {"%rd1", "%r3", "%rs1", "%rs2"}
    assert vals["%r3"].defined == (4,) and vals["%r3"].last_use == 6 and vals["%r3"].reads == 1
    assert vals["%rs1"].defined == (5,) and vals["%rs1"].last_use == 7
    assert vals["%rd1"].weight == 2 and vals["%rd1"].role == "address" and vals["%rd1"].defined == (1,)
    # the longest-carried first: %rd1 from s1 to s7
    assert next(iter(live_at(k, 6))).register == "%rd1"


def test_live_at_stops_at_the_next_definition():
    src = SMALL.replace("add.u32 %r3, %r1, %r2;", "add.u32 %r3, %r1, %r2;\n  add.u32 %r1, %r3, 1;\n"
                        "  add.u32 %r3, %r1, %r3;")
    k = Kernel(parse(src))
    v = {x.register: x for x in live_at(k, 5)}["%r3"]     # before `add.u32 %r1, %r3, 1`
    assert v.last_use == 6 and v.reads == 2                # read twice, then written again


def test_cli_live_table_and_json(tmp_path, capsys):
    f = tmp_path / "s.ptx"
    f.write_text(SMALL)
    d = run_json(capsys, str(f), "--no-ptxas", "--live", "s6")
    assert d["live"]["statement"] == 6 and {v["register"] for v in d["live"]["values"]} == {"%rd1", "%r3", "%rs1",
                                                                                             "%rs2"}
    assert main(["spec", str(f), "--pressure", "--png", "none", "--no-ptxas", "--live", "L15"]) == 0
    out = capsys.readouterr().out
    assert "live before s6" in out and "%rd1" in out


@pytest.mark.parametrize("bad", ["s99", "x5", "L999"])
def test_cli_live_refused(tmp_path, capsys, bad):
    f = tmp_path / "s.ptx"
    f.write_text(SMALL)
    assert main(["spec", str(f), "--pressure", "--png", "none", "--no-ptxas", "--live", bad]) == 2
    assert "s.ptx" in capsys.readouterr().err


def test_live_needs_pressure(tmp_path, capsys):
    f = tmp_path / "s.ptx"
    f.write_text(SMALL)
    assert main(["spec", str(f), "--live", "s6"]) == 2
    assert "--live is an option of --pressure" in capsys.readouterr().err


def _recipe(tmp_path) -> Path:
    (tmp_path / "n.ptx").write_text("// tiny phase 1, swapped order\n" + TINY_SWAPPED)
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {TINY}\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    return r


def test_recipe_target_is_the_spliced_module(tmp_path, capsys):
    r = _recipe(tmp_path)
    d = run_json(capsys, str(r), "--no-ptxas")
    assert d["target"]["kind"] == "recipe" and d["entry"] == "tiny"
    k = Kernel(parse(TINY.read_text()))
    assert len(d["curve"]["statement"]) >= len([s for s in k.stmts if s.n is not None])
    assert not (tmp_path / "out.ptx").exists()            # planned, nothing written
    by_region = {p["region"]: p for p in d["peaks"]}
    assert by_region["phase 1"]["cut"].startswith("cut 1 ")   # the native's mma: in the cut's site
    assert by_region["prologue"]["cut"] is None


def test_recipe_target_refuses_entry(tmp_path, capsys):
    assert main(["spec", str(_recipe(tmp_path)), "--pressure", "--entry", "tiny"]) == 2
    assert "a recipe names its entry" in capsys.readouterr().err


def test_recipe_without_pressure_is_refused(tmp_path, capsys):
    assert main(["spec", str(_recipe(tmp_path))]) == 2
    assert "a recipe is read by --pressure" in capsys.readouterr().err


NATIVE = """// a native alone
// splice-native:
//   params: {woff: 16}
//   scratch: {t: .b32, q: .b16, w: .b64}
add.u32 %t, %in0, 1;
cvt.rn.satfinite.e4m3x2.f16x2 %q, %t;
mov.b32 %out0, {%q, %q};
add.s64 %w, %in1, {{woff}};
ld.global.u32 %out1, [%w];
"""


def test_native_target_curve_at_its_own_lines(tmp_path, capsys):
    f = tmp_path / "n.ptx"
    f.write_text(NATIVE)
    d = run_json(capsys, str(f), "--no-ptxas", "--live", "L8")
    assert d["target"]["kind"] == "native" and "2 live-ins" in d["target"]["note"]
    assert "2 live-outs" in d["target"]["note"]
    live = {v["register"] for v in d["live"]["values"]}
    assert d["live"]["line"] == 8 and live == {"%in1", "%out0"}
    types = {v["register"]: v["type"] for v in d["live"]["values"]}
    assert types["%in1"] == ".b64"                  # an address operand's register is 64-bit
    assert all(p["line"] is None or 5 <= p["line"] <= 9 for p in d["peaks"])


def test_native_target_refuses_statement_numbers(tmp_path, capsys):
    f = tmp_path / "n.ptx"
    f.write_text(NATIVE)
    assert main(["spec", str(f), "--pressure", "--png", "none", "--no-ptxas", "--live", "s3"]) == 2
    assert "give its line" in capsys.readouterr().err


@pytest.mark.needs("ptxas", "nvdisasm")
def test_ptxas_live_registers_by_region(tmp_path, capsys):
    """ptxas's own count next to the PTX one: per region, per peak, and as a curve (null where a
    statement has no SASS of its own)."""
    d = run_json(capsys, str(TINY))
    s = d["sass"]
    assert s["max"] > 0 and s["region"] in s["regions"]
    assert 0 < s["max"] <= d["ptxas"]["registers"]
    assert len(d["curve"]["sass"]) == len(d["curve"]["statement"])
    assert any(v is not None for v in d["curve"]["sass"])
    assert all(p["sass"] == s["regions"][p["region"]]["live"] for p in d["peaks"])


@pytest.mark.needs("ptxas", "nvdisasm")
def test_native_alone_through_ptxas(tmp_path, capsys):
    f = tmp_path / "n.ptx"
    f.write_text(NATIVE)
    d = run_json(capsys, str(f))
    assert d["ptxas"]["registers"] > 0 and d["ptxas"]["spill_stores"] == 0 and d["sass"]["max"] > 0


@pytest.mark.needs("ptxas", "nvdisasm")
def test_sass_pressure_rows_are_attributed():
    from splice.ptx.sass import compile_ptx
    from splice.ptx.sass_lines import MARK_FILE, mark_lines
    from splice.ptx.sass_pressure import attributed_pressure, region_peaks

    mod = parse(TINY.read_text())
    c = compile_ptx(mark_lines(mod), "sm_90", extra=("-lineinfo",))
    rows = attributed_pressure(c.cubin, MARK_FILE)["tiny"]
    mma_lines = [i for i, ln in enumerate(TINY.read_text().splitlines(), 1) if ln.strip().startswith("mma.")]
    hmma = [(ln, g) for ln, op, g in rows if op.startswith("HMMA")]
    assert hmma and all(ln in mma_lines for ln, _g in hmma)
    [(g, op, n)] = region_peaks(rows, [(mma_lines[0], mma_lines[-1])])
    inside = [(op, gg) for ln, op, gg in rows if mma_lines[0] <= ln <= mma_lines[-1]]
    assert n == len(inside) > len(hmma) and g == max(gg for _op, gg in inside)   # the e4m3 unpacks too
