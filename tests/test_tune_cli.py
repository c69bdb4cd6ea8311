"""``splice tune`` as a command: --plan, errors at their line with exit 2, the leaderboard and
its JSON, the best recipe that ``splice apply`` takes as it is, and a killed run that, started
again, skips what it finished."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "tests/data/tune/qkv.yaml"


def test_plan_prints_the_size(capsys):
    assert main(["tune", str(SPACE), "--plan", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["size"] == 32 and [d["key"] for d in data["dimensions"]] == ["order", "fence", "loads"]
    assert main(["tune", str(SPACE), "--plan"]) == 0
    assert "space size 32" in capsys.readouterr().out


def test_errors_are_exit_2_at_the_line(tmp_path, capsys):
    p = tmp_path / "t.yaml"
    p.write_text(f"recipe: {ROOT / 'recipes/triton_matmul_p1.yaml'}\ntune:\n  space:\n    - cuts: 2\n"
                 "      fence: [start]\n")
    assert main(["tune", str(p), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{p}:4:" in err and "cuts 1-1, not 2" in err
    assert main(["tune", str(SPACE), "--no-gpu", "--gpus", "1"]) == 2
    assert "--no-gpu runs no GPU worker" in capsys.readouterr().err
    assert main(["tune", str(SPACE), "--address", "x:1", "--plan", "--eta", "1"]) == 2
    capsys.readouterr()
    assert main(["tune", str(SPACE), "--plan", "--ci-width", "2"]) == 2       # the timing's settings, checked
    assert "--ci-width: expected a number" in capsys.readouterr().err
    assert main(["tune", str(SPACE), "--plan", "--json", "--cache", "cold", "--min-sample-ms", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["search"]["cache"] == "cold"
    with pytest.raises(SystemExit) as exc:             # verify's budget: seconds above 0, as verify's
        main(["tune", str(SPACE), "--plan", "--timeout", "0"])
    assert exc.value.code == 2 and "--timeout" in capsys.readouterr().err


def test_a_space_without_a_recipe_and_a_missing_reference_are_said_before_any_work(tmp_path, capsys):
    """A tune file with no recipe: and no cuts of its own says so (it said "cuts 1-0"); a
    --reference that does not exist is refused by --plan too, not after the screen."""
    p = tmp_path / "t.yaml"
    p.write_text("tune:\n  space:\n  - cuts: 1\n    order: [k-major]\n")
    assert main(["tune", str(p), "--plan"]) == 2
    assert f"{p}:3:" in (err := capsys.readouterr().err) and "the recipe has no cuts" in err
    assert main(["tune", str(SPACE), "--plan", "--reference", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: recipe not found" in capsys.readouterr().err

def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               SPLICE_TUNE_BENCH="tests.tune_fakes:FakeBench")
    env.update(extra)
    return env


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_the_best_recipe_is_an_ordinary_recipe(tmp_path):
    """A real screen (apply, verify, ptxas) of the Triton phase, the fake bench's clock: the
    best recipe it writes is applied by splice apply as it is, and splice probe reads it up to
    the GPU it needs."""
    space = tmp_path / "t.yaml"
    space.write_text(f"recipe: {ROOT / 'recipes/triton_matmul_p1.yaml'}\ntune:\n  space:\n    - cuts: 1\n"
                     "      order: [original, k-major]\n      fence: [none, start]\n"
                     "  search: {rounds: 2, final: 2, final_rounds: 4}\n")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "splice.cli", "tune", str(space), "-o", str(out), "--jobs", "2",
                          "--json"], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    board = json.loads(run.stdout)
    assert board["best"]["recipe"] == str(out / "best.yaml") and (out / "leaderboard.json").is_file()
    assert all(v["verify"] == "equal" for v in board["variants"]) and (out / "tune.png").is_file()
    applied = subprocess.run([sys.executable, "-m", "splice.cli", "apply", str(out / "best.yaml"), "-o",
                              str(tmp_path / "best.ptx"), "--verify-strict"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=600)
    assert applied.returncode == 0, applied.stderr
    probed = subprocess.run([sys.executable, "-m", "splice.cli", "probe", str(out / "best.yaml")],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert probed.returncode in (0, 2) and ("CUDA GPU" in probed.stderr or probed.returncode == 0), probed.stderr


def _screened(db: Path) -> int:
    try:
        with sqlite3.connect(str(db), timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM variants WHERE state != 'pending'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.needs("ptxas")     # the driver compiles the original module
@pytest.mark.slow
def test_a_killed_run_resumes_where_it_stopped(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "splice.cli", "tune", str(SPACE), "-o", str(out), "--jobs", "1", "--json"]
    env = _env(SPLICE_TUNE_SCREEN="tests.tune_fakes:fake_screen", TUNE_FAKE_LOG=str(log))
    proc = subprocess.Popen(cmd, env=dict(env, TUNE_FAKE_SLOW="1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while _screened(out / "tune.db") < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = _screened(out / "tune.db")
    calls_before = len(list(log.iterdir()))
    assert 4 <= done_before < 12
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    board = json.loads(run.stdout)
    assert len(board["variants"]) == 12 and board["best"] is not None
    screens = [p.name.split("-")[0] for p in log.iterdir()]
    assert len(screens) - calls_before == 12 - done_before      # only what was not finished is screened
    assert len(set(screens)) == 12


def test_outputs_onto_an_input_are_refused_before_any_work(tmp_path, capsys):
    space = tmp_path / "t.yaml"
    space.write_text(SPACE.read_text().replace("../../../recipes/", str(ROOT / "recipes") + "/"))
    before = space.read_text()
    assert main(["tune", str(space), "--no-gpu", "--png", str(space), "-o", str(tmp_path / "o")]) == 2
    assert "refusing to write the output onto an input" in capsys.readouterr().err
    assert space.read_text() == before and not (tmp_path / "o").exists()


def test_reference_is_repeatable_and_refuses_dashdash(capsys):
    refs = [str(ROOT / "recipes/perf" / n) for n in ("enc5_fence_start.yaml", "enc5_stream.yaml")]
    assert main(["tune", str(SPACE), "--plan", "--reference", refs[0], "--reference", refs[1]]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["tune", str(SPACE), "--plan", "--reference=--"])
    assert exc.value.code == 2 and "'--' is not a value" in capsys.readouterr().err
