"""splice verify's memory model (splice/verify/footprint.py, lanes.py): the footprint table, the
rule mem-commute it allows and nothing else, issue 26's three reorders, and the soundness bed of
mutants over every memory form (bench/mutants_memory.py) with its ground truth."""
from __future__ import annotations

import importlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from splice.analysis.roles import MEMORY_TABLE
from splice.cli import main
from splice.verify import footprint as fp
from splice.verify.compare import DIFFERENT, EQUAL, NOT_PROVEN

ROOT = Path(__file__).resolve().parents[1]
MEMORY = ROOT / "tests" / "data" / "verify" / "memory"


def _bench(name: str):
    """A module of bench/ (the mutant generator the GPU bench runs too)."""
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module(name)


# --- the footprint table ------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(MEMORY_TABLE))
def test_every_memory_row_of_the_roles_table_has_a_footprint(key):
    """An instruction the roles table says touches memory (or orders it) must have a footprint
    row; a new roles row without one is caught here, not by a wrong proof."""
    name = key if key != "cp" else "cp.async.bulk.tensor.2d.shared::cluster.global"
    row = fp.row_of(name)
    assert row is not None, key
    assert row.section.split()[0][0].isdigit()


def test_rows_name_their_section_and_collectives_are_never_private():
    for row in fp.ROWS:
        assert row.section and row.reach in (fp.THREAD, fp.WARP, fp.WARPGROUP, fp.ASYNC, fp.ORDER, fp.NOMEM)
    for name in ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                 "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16", "wmma.store.d.sync.aligned.row.m16n16k16.global.f32",
                 "cp.async.ca.shared.global", "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                 "atom.shared.add.u32", "red.global.add.u32", "tex.1d.v4.s32.s32", "suld.b.1d.b32.trap",
                 "ld.global.nc.u32", "ld.volatile.shared.u32", "ld.acquire.gpu.global.u32", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"):
        f = fp.footprint(name)
        assert f is not None and not f.private, name


def test_the_docs_list_every_row_with_its_section():
    text = (ROOT / "docs" / "verify.md").read_text()
    missing = [row.key for row in fp.ROWS if f"| `{row.key}` | {row.section} |" not in text]
    assert not missing


@pytest.mark.parametrize("name,size", [
    ("ld.shared.u8", 1), ("st.global.b16", 2), ("ld.shared.f16x2", 4), ("st.shared.v2.u32", 8),
    ("ld.global.v4.f32", 16), ("st.global.v2.u64", 16), ("ld.shared.b128", 16), ("ld.global.v8.f32", 32),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 16), ("mbarrier.arrive.shared.b64", 8),
])
def test_per_thread_bytes_come_from_the_modifiers(name, size):
    assert fp.footprint(name).bytes == size


def test_bytes_are_unknown_without_exactly_one_type():
    assert fp.footprint("ld.shared").bytes is None
    assert not fp.footprint("ld.shared").private


def test_an_instruction_without_a_row_is_not_proven():
    from splice.ptx import parse
    from splice.verify.canon import Graph
    from splice.verify.dataflow import Evaluator, Unsupported

    body = parse(".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\nfrobnicate.shared.u32 %r1, [%rd1];\n}\n",
                 "<t>", cache=False).function("k").body.items
    with pytest.raises(Unsupported, match="no row in the memory footprint table"):
        Evaluator(Graph(), lambda s: None).run(body)


# --- uniform bases ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text,uniform", [
    ("W", True), ("p0+0", True), ("smem + 64·ctaid.x + 16", True), ("W + 16·laneid + 8512", False),
    ("smem + 16·tid.x", False), ("%r143", False), ("ld.global [W + 8]", False), ("?", False),
    ("r5 + 8", False),           # a register named without %: not a declared variable
])
def test_uniform_inputs_from_provenance(text, uniform):
    from splice.verify.lanes import Declared, uniform_inputs

    source = (".entry k(.param .u64 p0)\n{\n.reg .b32 r5, %r<4>;\n.shared .align 4 .b8 smem[64];\n"
              "ld.param.u64 %rd1, [p0];\nld.shared.u32 %r1, [smem];\n}\n")
    assert (uniform_inputs({"%rd1": text}, Declared(source)) == {"%rd1"}) is uniform


# --- issue 26's reorders --------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["ldmatrix", "wmma", "stmatrix"])
def test_issue_reorders_are_never_equal(form, capsys):
    """The swap of a store and a collective access at x / x+4 was proved equal (exit 0): the
    access size came from the type suffix (.b16: 2 bytes), the rows from other lanes."""
    status = main(["verify", str(MEMORY / f"{form}.yaml"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 3 and data["cuts"][0]["verdict"] == NOT_PROVEN
    assert "memory state" in data["cuts"][0]["reason"]


# --- the soundness bed ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    mm = _bench("mutants_memory")
    return mm, mm.plan_all(tmp_path_factory.mktemp("mutants"))


@pytest.mark.slow
def test_the_bed_covers_the_memory_forms(planned):
    mm, ps = planned
    assert len(ps) >= 200
    assert len({p.mutant.form.split(".")[0] for p in ps}) >= 15
    assert len({p.mutant.form for p in ps}) >= 60
    assert {p.mutant.truth for p in ps} == {"equal", "different", "racy"}
    assert not [(p.mutant.id, p.error) for p in ps if p.error]


@pytest.mark.slow
def test_no_mutant_is_proved_what_it_is_not(planned):
    """Every mutant gets its CPU verdict: none that may differ is proved equal, none that is equal
    proved different; the legal reorders off a uniform base are proved equal."""
    mm, ps = planned
    bad = [(p.mutant.id, p.mutant.form, p.mutant.scenario, p.verdict) for p in ps if not mm.sound(p)]
    assert not bad
    verdicts = Counter((p.mutant.truth, p.verdict) for p in ps)
    assert verdicts[("equal", EQUAL)] >= 15
    assert verdicts[("different", DIFFERENT)] >= 5
    assert verdicts[("different", EQUAL)] == verdicts[("racy", EQUAL)] == 0
    assert all(p.exit == {EQUAL: 0, DIFFERENT: 1, NOT_PROVEN: 3}[p.verdict] for p in ps)


@pytest.mark.slow
def test_issue_forms_are_in_the_bed(planned):
    _mm, ps = planned
    scen = {(p.mutant.form, p.mutant.scenario): p.verdict for p in ps}
    assert scen[("ldmatrix.x4", "store into this lane's row, swapped")] == NOT_PROVEN
    assert scen[("wmma.load.a", "store of lane T at smem+4T (inside the fragment), swapped")] == NOT_PROVEN
    assert scen[("stmatrix.x4", "load of this lane's row, swapped")] == NOT_PROVEN


@pytest.mark.slow
def test_every_address_the_bed_forms_is_aligned(planned):
    """Every access of every original and mutant kernel, thread by thread, is aligned to its width
    and inside its buffer (on the H200 on 2026-12-02 a v2 store / v4 load off smem+4T faulted and
    the dead CUDA context cost 35 other mutants their GPU check); every form but multimem runs."""
    mm, ps = planned
    ml = _bench("mutants_layout")
    assert {p.mutant.id: ml.check_planned(p) for p in ps if ml.check_planned(p)} == {}
    assert [p.mutant.form for p in ps if not p.mutant.gpu] == ["multimem.st", "multimem.ld_reduce"]


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_every_mutant_module_assembles(planned, tmp_path):
    """What the H200 bench loads, built here: every batch module passes ptxas."""
    mm, ps = planned
    vm = _bench("verify_mutants")
    built = vm.ptxas_all(mm.batch_modules(ps, 8), tmp_path, 2)
    assert sum(len(names) for _c, names in built) == len(ps)
    assert all(c.stat().st_size > 0 for c, _n in built)


@pytest.mark.gpu
@pytest.mark.needs("ptxas")
def test_issue_mutants_differ_on_the_gpu(tmp_path):
    """On the device: the three reorders of issue 26 change the bits (one CTA, two seeds, A/A
    first), and the CPU never said equal.  The whole bed is bench/verify_mutants.py."""
    mm, vm = _bench("mutants_memory"), _bench("verify_mutants")
    ids = {m.id for m in mm.mutants() if (m.form, m.scenario) in {
        ("ldmatrix.x4", "store into this lane's row, swapped"),
        ("wmma.load.a", "store of lane T at smem+4T (inside the fragment), swapped"),
        ("stmatrix.x4", "load of this lane's row, swapped")}}
    ps = mm.plan_all(tmp_path / "plan", only=ids)
    built = vm.ptxas_all(mm.batch_modules(ps, 1), tmp_path, 1)
    gpu, notes = vm.gpu_outcomes(built, {p.mutant.id: p for p in ps})
    assert gpu == {i: "differs" for i in ids} and not notes
    assert all(p.verdict != EQUAL for p in ps)
