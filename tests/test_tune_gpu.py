"""splice tune on the GPU (the real probe bench on the probe's timing method): the CUDA GEMM's
space end to end -- every timed variant's whole outputs identical to the original's, the A/A
control close to 1 with its band, each verdict the timing's, the rounds asked a cap, the best
recipe written.  Marked gpu."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.gpu
@pytest.mark.needs("ptxas")
def test_tune_the_gemm_phase_on_the_gpu(tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["tune", str(ROOT / "recipes/tune/gemm.yaml"), "-o", str(out), "--gpus", "1", "--json",
                   "--rounds", "4", "--final-rounds", "20"])
    board = json.loads(capsys.readouterr().out)
    assert status == 0 and board["best"] is not None and Path(board["best"]["recipe"]).is_file()
    timed = [v for v in board["variants"] if v["ratio"] is not None]
    assert timed and all(v["identical"] is True and v["verify"] == "equal" for v in timed)
    assert all(v["verdict"] in ("faster", "slower", "indistinguishable", "withheld") for v in timed)
    assert all(0 < v["rounds"] <= v["asked"] for v in timed)
    assert 0.9 < board["aa"]["ratio"] < 1.1 and board["aa"]["band"] >= 0
    assert board["timing"]["timed"] >= 1 and board["timing"]["method"]["cache"] == "warm"
    assert board["calls"] >= 1 and (out / "tune.png").is_file()
