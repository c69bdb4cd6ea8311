"""``--executor ray`` on a real local Ray instance (two CPUs, two GPU resources and no GPU: the
fake bench of tests/tune_fakes.py runs in the GPU actors): the same search as the embedded
executor, a worker killed mid-variant retried by Ray, a GPU actor killed mid-batch restarted
and its batch run again, a restarted run resuming.  Marked ``ray`` (deselected by default, run
with ``-m ray``) and skipped when ray is not installed."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.tune import driver
from splice.tune.space import load_space
from splice.tune.store import Store
from tests import tune_fakes

ray = pytest.importorskip("ray", reason="needs ray (pip install -e '.[ray]')")
pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "tests/data/tune/qkv.yaml"
BENCH = "tests.tune_fakes:FakeBench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    marks = tmp_path_factory.mktemp("marks")
    for d in ("log", "kill_cpu", "kill_gpu"):
        (marks / d).mkdir()
    env = {"PYTHONPATH": str(ROOT), "TUNE_FAKE_GPUS": "2", "TUNE_FAKE_LOG": str(marks / "log"),
           "TUNE_FAKE_KILL_CPU": str(marks / "kill_cpu"), "TUNE_FAKE_KILL_GPU": str(marks / "kill_gpu")}
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    yield marks
    ray.shutdown()


def tune(out: Path):
    from splice.tune.rayexec import RayExecutor

    space = load_space(str(SPACE))
    store = Store(out / "tune.db")
    ex = RayExecutor(None, None, BENCH)
    try:
        summary = driver.run(space, store, ex, driver.Options(out, True, space.search, BENCH, tune_fakes.fake_screen))
        return summary, store.rows(), store.calls()
    finally:
        ex.close()
        store.close()


def test_ray_search_with_kills_and_a_resume(cluster, tmp_path):
    summary, rows, calls = tune(tmp_path / "out")
    fate = {r["key"]: tune_fakes.fate(tune_fakes.shapes(r["recipe"])) for r in rows}
    assert any((cluster / "kill_cpu").iterdir()) and any((cluster / "kill_gpu").iterdir())   # both kills happened
    assert len({r["key"] for r in rows}) == len(rows) == 12                                   # none lost or doubled
    for r in rows:
        if fate[r["key"]] == "kill-cpu":
            assert r["stage"] == "done" and r["verdict"] == "equal"       # Ray ran the task again
        if fate[r["key"]] == "kill-gpu":
            assert r["rounds"] > 0 and not r["dropped"].startswith("GPU")
        if fate[r["key"]] == "fault":
            assert r["dropped"].startswith("GPU fault")
    timed = [r for r in rows if r["ratio"] is not None]
    fastest = min(timed, key=lambda r: tune_fakes.speed(tune_fakes.shapes(r["recipe"])))
    assert summary["best"]["key"] == fastest["key"]
    assert {c["worker"] for c in calls} == {"ray gpu0", "ray gpu1"}
    assert all(Path(r["cubin"]).is_file() for r in rows if r["cubin"])       # cubins came back by content

    logged = len(list((cluster / "log").iterdir()))
    again, rows2, calls2 = tune(tmp_path / "out")
    assert len(list((cluster / "log").iterdir())) == logged and calls2 == calls
    assert again["best"] == summary["best"]
