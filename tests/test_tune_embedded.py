"""The embedded executor end to end with fake workers (tests/tune_fakes.py): the run finds the
variant the fake clock makes fastest; a worker killed mid-variant has its task run again; a GPU
fault marks its variant, never the run; a second run over the same store does nothing again."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from splice.tune import driver
from splice.tune.embedded import Embedded
from splice.tune.space import load_space
from splice.tune.store import Store
from tests import tune_fakes

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "tests/data/tune/qkv.yaml"
BENCH = "tests.tune_fakes:FakeBench"


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Spawned workers import tests.tune_fakes: the repository root on their path."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("log", "kill_cpu", "kill_gpu"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("TUNE_FAKE_LOG", str(tmp_path / "log"))
    return tmp_path


def tune(out: Path, jobs: int = 2, gpus: int = 1, references: tuple = ()):
    space = load_space(str(SPACE))
    store = Store(out / "tune.db")
    ex = Embedded(jobs, list(range(gpus)), BENCH)
    try:
        opts = driver.Options(out, True, space.search, BENCH, tune_fakes.fake_screen, references=references)
        summary = driver.run(space, store, ex, opts)
        return summary, store.rows(), store.calls()
    finally:
        ex.close()
        store.close()


def fates(rows: list) -> dict:
    return {r["key"]: tune_fakes.fate(tune_fakes.shapes(r["recipe"])) for r in rows}


@pytest.mark.needs("ptxas")     # the driver compiles the original module
def test_a_run_finds_the_fastest_and_says_why_each_other_left(env):
    summary, rows, calls = tune(env / "out")
    fate = fates(rows)
    by = {r["key"]: r for r in rows}
    assert all(by[k]["state"] == "dropped" and by[k]["dropped"].startswith("verify: proved different")
               for k, f in fate.items() if f == "different")
    assert all(by[k]["dropped"].startswith("ptxas:") for k, f in fate.items() if f == "ptxas")
    assert all(by[k]["dropped"].startswith("GPU fault") for k, f in fate.items() if f == "fault")
    timed = [r for r in rows if r["ratio"] is not None]
    true_speed = {r["key"]: tune_fakes.speed(tune_fakes.shapes(r["recipe"])) for r in timed}
    # two points of the space are equally fast (a fence at the start, the loads as-is or sunk):
    # the jitter, a function of the variant's key (which holds the checkout's path), picks one
    fastest = {k for k, v in true_speed.items() if v == min(true_speed.values())}
    assert summary["best"]["key"] in fastest and by[summary["best"]["key"]]["state"] == "timed"
    final = [r for r in rows if r["state"] == "timed"]
    assert len(final) == 2 and all(r["rounds"] >= 6 and r["rounds"] == max(x["rounds"] for x in rows) for r in final)
    for r in rows:       # every variant timed and left behind says at which rung, with that rung's rounds
        if r["dropped"].startswith("halving"):
            rung = int(r["dropped"].split("rung ")[1].split(",")[0])
            assert r["rounds"] == 2 * 2 ** rung
    harnessed = [r for r in rows if fate[r["key"]] == "not proven" and r["ratio"] is not None]
    assert harnessed and all(r["harness"] == "identical" for r in harnessed)
    assert calls and all(c["device"] == "fake-gpu" for c in calls)


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_killed_workers_have_their_tasks_run_again(env, monkeypatch):
    monkeypatch.setenv("TUNE_FAKE_KILL_CPU", str(env / "kill_cpu"))
    monkeypatch.setenv("TUNE_FAKE_KILL_GPU", str(env / "kill_gpu"))
    _, rows, _ = tune(env / "out")
    fate = fates(rows)
    assert any((env / "kill_cpu").iterdir()) and any((env / "kill_gpu").iterdir())   # the kills happened
    killed_cpu = [r for r in rows if fate[r["key"]] == "kill-cpu"]
    killed_gpu = [r for r in rows if fate[r["key"]] == "kill-gpu"]
    assert killed_cpu and all(r["stage"] == "done" and r["verdict"] == "equal" for r in killed_cpu)
    assert killed_gpu and all(r["rounds"] > 0 and not r["dropped"].startswith("GPU") for r in killed_gpu)
    assert len({r["key"] for r in rows}) == len(rows) == 12                           # none lost, none twice


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_a_second_run_over_the_store_does_nothing_again(env):
    first, rows1, calls1 = tune(env / "out")
    screened = len(list((env / "log").iterdir()))
    second, rows2, calls2 = tune(env / "out")
    assert len(list((env / "log").iterdir())) == screened        # no variant screened again
    assert calls2 == calls1                                       # no GPU batch again
    assert second["best"] == first["best"]
    assert [(r["key"], r["state"], r["rounds"]) for r in rows2] == [(r["key"], r["state"], r["rounds"]) for r in rows1]


@pytest.mark.needs("ptxas")     # the driver compiles the original module
def test_two_gpu_workers_share_the_batches(env, monkeypatch):
    monkeypatch.setenv("TUNE_FAKE_GPUS", "2")
    summary, rows, calls = tune(env / "out", gpus=2)
    assert {c["worker"] for c in calls} == {"gpu0", "gpu1"}
    assert summary["best"] is not None


@pytest.mark.needs("ptxas")     # the driver compiles the original module
def test_a_reference_is_timed_in_every_rung_and_never_the_best(env):
    ref = str(ROOT / "recipes/enc5_qkv_wave.yaml")
    summary, rows, _ = tune(env / "out", references=(ref,))
    row = next(r for r in rows if r["choices"] == {"reference": ref})
    assert row["state"] == "timed" and row["recipe"] == ref
    assert row["rounds"] == max(r["rounds"] for r in rows)
    assert summary["best"]["key"] != row["key"]


def test_arch_chooses_the_cubins_and_must_match_the_gpu(env, monkeypatch):
    from splice.errors import SpliceError

    space = load_space(str(SPACE))
    store = Store(env / "out" / "tune.db")
    ex = Embedded(2, [0], BENCH)
    opts = driver.Options(env / "out", True, space.search, BENCH, tune_fakes.fake_screen, arch="sm_100")
    with pytest.raises(SpliceError, match="the GPU runs sm_90 cubins"):
        driver.run(space, store, ex, opts)
    ex.close()
    assert store.rows() == []            # said before anything was screened
    store.close()


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_a_store_moved_elsewhere_resumes_with_recipes_apply_reads(env):
    """A CPU screen carried to another machine: the folder moved to another depth resumes there
    (nothing screened again) and its variants' recipes still find their module."""
    import shutil

    from splice.cut.pipeline import run_apply

    tune(env / "out")
    screened = len(list((env / "log").iterdir()))
    (env / "deep/er").mkdir(parents=True)
    shutil.move(str(env / "out"), str(env / "deep/er/out"))
    _, rows, _ = tune(env / "deep/er/out")
    assert len(list((env / "log").iterdir())) == screened
    r = next(r for r in rows if r["state"] == "timed")
    assert r["recipe"].startswith(str(env / "deep/er/out")) and Path(r["cubin"]).is_file()
    assert run_apply(r["recipe"], ptxas=False)[0].entry == "cuda_dldn_engine_swin_enc5_kernel"
