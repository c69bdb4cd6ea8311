"""Register pressure: weights per type, roles, regions, peaks, the CLI and its PNG."""
from __future__ import annotations

import json

import pytest

from splice.analysis import Kernel
from splice.analysis.pressure import pressure, reg_weight
from splice.cli import main
from splice.ptx import parse
from splice.report import png

SMALL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry s(.param .u64 s_p)
{
  .reg .pred %p<2>;
  .reg .b16 %rs<3>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [s_p];
  mov.u32 %r1, 1;
  mov.u32 %r2, 2;
  add.u32 %r3, %r1, %r2;
  mov.b32 {%rs1, %rs2}, %r3;
  setp.eq.u32 %p1, %r3, 0;
  @%p1 st.global.v2.u16 [%rd1], {%rs1, %rs2};
  ret;
}
"""


def test_weights():
    assert reg_weight(".b64") == reg_weight(".f64") == reg_weight(".u64") == 2
    assert reg_weight(".b32") == reg_weight(".f32") == 1
    assert reg_weight(".b16") == reg_weight(".f16") == 1
    assert reg_weight(".pred") == 0


def test_small_curve_by_hand():
    p = pressure(Kernel(parse(SMALL)))
    # live before each numbered statement
    assert p.numbers == list(range(1, 9))
    got = list(zip(p.total, p.predicates))
    #        ld.param  mov r1  mov r2  add     mov {}  setp              st        ret
    assert got == [(0, 0), (2, 0), (3, 0), (4, 0), (3, 0), (5, 0), (4, 1), (0, 0)]
    assert p.max == 5
    pk = p.peaks[0]
    assert pk.region == "prologue" and pk.total == 5
    assert set(pk.registers["temp"]) == {"%r3", "%rs1", "%rs2"}
    assert pk.registers["address"] == ["%rd1"]


def test_roles_in_a_two_phase_kernel():
    from tests.test_phases import SRC

    p = pressure(Kernel(parse(SRC)))
    names = [r[0] for r in p.regions]
    assert names[:4] == ["prologue", "phase 1", "E1", "phase 2"]
    # before phase 2's first mma: A (%r20..%r27 are D of phase 1 and A of phase 2: D wins), B, C
    i = p.numbers.index(27)
    assert p.by_role["D"][i] == 8 and p.by_role["B"][i] == 8 and p.by_role["C"][i] == 2
    assert p.total[i] == sum(p.by_role[r][i] for r in p.by_role)


def test_cli_json_and_png(tmp_path, capsys):
    f = tmp_path / "s.ptx"
    f.write_text(SMALL)
    out_png = tmp_path / "c.png"
    rc = main(["spec", str(f), "--pressure", "--no-ptxas", "--png", str(out_png), "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]
    assert d["max"] == 5 and d["peaks"][0]["statement"] > 1
    assert len(d["curve"]["total"]) == len(d["curve"]["statement"])
    img = png.decode(out_png.read_bytes())
    assert img.shape == (520, 1400, 3) and (img != 255).any()


@pytest.mark.needs("ptxas")
def test_cli_ptxas_figures(tmp_path, capsys):
    f = tmp_path / "s.ptx"
    f.write_text(SMALL)
    rc = main(["spec", str(f), "--pressure", "--png", "none", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)["entries"][0]
    assert d["ptxas"]["registers"] >= 4 and d["ptxas"]["spill_stores"] == 0


def test_the_pressure_plot_of_a_one_statement_kernel(tmp_path):
    """One statement is one x: the axis spanned zero, the tick step became 1e-12 and numpy was
    asked for 7 TiB of ticks (a MemoryError traceback on ``spec --pressure`` of a kernel that
    only returns)."""
    from splice.cli import main
    from splice.report.plot import LinePlot, render_line_plot

    img = render_line_plot(LinePlot("one", [1], [("live", [0])]))
    assert img.shape == (520, 1400, 3)
    f = tmp_path / "k.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n")
    png = tmp_path / "k.png"
    assert main(["spec", "--pressure", "--no-ptxas", "--png", str(png), str(f)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
