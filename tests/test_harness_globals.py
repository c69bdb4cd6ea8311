"""The bound harness and a probe spec's module globals: a cut that reaches a global the harness'
module neither sets from the spec nor compares is skipped with the reason; one that reaches none
(or reads only a module-initialised input) runs.  Found 2026-12-01 with hostile inputs: a native
storing a wrong value into g_out came out "equal"."""
from __future__ import annotations

from splice.cli import main

from .conftest import ROOT

TABLES = ROOT / "tests/data/ptx/probe/tables.ptx"


def _harness_cases(tmp_path, spec_name: str, entry: str, ranges: list, edit=lambda text: text) -> list:
    import shutil

    from splice.analysis import Kernel
    from splice.probe.harness import cases
    from splice.probe.modules import resolve
    from splice.probe.spec import load_spec

    shutil.copy(TABLES, tmp_path / "m.ptx")
    (tmp_path / "probes").mkdir()
    spec_text = edit((ROOT / "tests/data/probe" / spec_name).read_text())
    (tmp_path / "probes" / "m.yaml").write_text(spec_text.replace("ptx: ../ptx/probe/tables.ptx", "ptx: m.ptx"))
    cuts = ""
    for k, rng in enumerate(ranges):
        assert main(["extract", str(tmp_path / "m.ptx"), "--entry", entry, "--statements", rng,
                     "-o", str(tmp_path / f"n{k}.ptx")]) == 0
        cuts += f"  - statements: {rng}\n    native: n{k}.ptx\n"
    (tmp_path / "r.yaml").write_text(f"name: hg\nmodule: m.ptx\nentry: {entry}\ncuts:\n{cuts}")
    pair = resolve(str(tmp_path / "r.yaml"))
    return cases(pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path))


def test_a_bound_harness_case_reaching_a_spec_global_is_skipped_with_the_reason(tmp_path):
    """regression: a cut that stores into a module global (globals_only s18-s20: ``mov.u64
    %rd8, g_out; …; st.global.f32 [%rd9]``) or reads one through an address it is handed
    (s16-s17: ``ld.global.f32 [%rd3]``, %rd3 = g_in + i) ran in the bound harness, whose module
    neither sets the spec's globals nor compares them: a native storing a wrong value into
    g_out came out "equal"."""
    hcs = _harness_cases(tmp_path, "tables_globals_only.yaml", "globals_only", ["s18-s20", "s16-s17"])
    assert [h.skipped.split(":")[0] for h in hcs] == ["the cut reaches the spec's module global(s) g_out",
                                                      "the cut reaches the spec's module global(s) g_in"]
    assert "neither set from the spec nor compared" in hcs[0].skipped


def test_a_bound_harness_case_reaching_no_spec_global_still_runs(tmp_path):
    (hc,) = _harness_cases(tmp_path, "tables_lut.yaml", "lut_count", ["s25-s27"])    # st.global into out
    assert hc.skipped is None and hc.orig_ptx


def test_a_bound_case_reading_only_module_initialised_inputs_still_runs(tmp_path):
    """An input global with ``fill: module`` holds the same bytes in the harness's module as in
    the frame run: a cut reading it (globals_only s16-s17 reading g_in) runs."""
    seeded = "role: input, fill: {rule: uniform, seed: 1, range: [-1, 1]}"
    (hc,) = _harness_cases(tmp_path, "tables_globals_only.yaml", "globals_only", ["s16-s17"],
                           lambda text: text.replace(seeded, "role: input, fill: module"))
    assert hc.skipped is None
