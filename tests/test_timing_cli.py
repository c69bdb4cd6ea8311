"""`splice probe`'s timing options: each bad value is a usage error (exit 2, the target named, no
traceback) before anything runs on a GPU, and a good set reaches the timing's options."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
RECIPE = str(ROOT / "recipes/triton_matmul_p1.yaml")


@pytest.mark.parametrize("extra,fragment", [
    (["--ci-width", "0"], "--ci-width 0.0: must be above 0"),
    (["--ci-width", "1.5"], "--ci-width 1.5"),
    (["--ci-width", "nan"], "--ci-width nan"),
    (["--confidence", "1"], "--confidence 1.0: must be above 0 and below 1"),
    (["--time-budget", "-3"], "--time-budget -3.0"),
    (["--time-budget", "inf"], "--time-budget inf"),
    (["--min-sample-ms", "-1"], "--min-sample-ms -1.0"),
    (["--timing-seed", "-1"], "--timing-seed -1"),
    (["--runs", "0", "--cache", "cold"], "--cache chooses how frames are timed: --runs 0 times nothing"),
    (["--runs", "0", "--ci-width", "0.01"], "--ci-width chooses how frames are timed"),
])
def test_bad_timing_options_exit_2_naming_the_target(capsys, extra, fragment):
    assert main(["probe", RECIPE, *extra]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "triton_matmul_p1.yaml" in err and "Traceback" not in err


def test_an_unknown_cache_state_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["probe", RECIPE, "--cache", "lukewarm"])
    assert e.value.code == 2 and "invalid choice: 'lukewarm'" in capsys.readouterr().err


def test_probe_init_refuses_a_timing_option(tmp_path, capsys):
    assert main(["probe", "init", str(ROOT / "corpus/triton/matmul_sm80.ptx"), "--cache", "cold"]) == 2
    assert "--cache is an option of a probe run" in capsys.readouterr().err


def test_the_options_reach_the_timing():
    from splice.commands.probe import _options
    from splice.probe.session import timing_options

    args = build_parser().parse_args(["probe", RECIPE, "--runs", "40", "--warmup", "2", "--cache", "cold",
                                      "--ci-width", "0.002", "--time-budget", "30", "--confidence", "0.99",
                                      "--min-sample-ms", "2", "--timing-seed", "7", "--graph"])
    t = timing_options(_options(args))
    assert (t.cache, t.runs, t.warmup, t.graph, t.target, t.budget_s, t.confidence, t.min_sample_ms, t.seed) == \
        ("cold", 40, 2, True, 0.002, 30.0, 0.99, 2.0, 7)


def test_the_defaults():
    from splice.commands.probe import _options
    from splice.probe.session import timing_options

    t = timing_options(_options(build_parser().parse_args(["probe", RECIPE])))
    assert (t.cache, t.runs, t.target, t.budget_s, t.confidence, t.min_sample_ms) == \
        ("warm", 200, 0.005, 10.0, 0.95, 1.0)


def test_graph_on_the_legacy_default_stream_is_refused_before_the_gpu(tmp_path, capsys):
    """CUDA cannot capture the legacy default stream: said at the spec's launch.stream line,
    before cupy is imported, not after the renders."""
    text = (ROOT / "probes/matmul_sm80.yaml").read_text().replace("ptx: corpus/", f"ptx: {ROOT}/corpus/")
    text = text.replace("  block: [128]", "  stream: default\n  block: [128]")
    spec = tmp_path / "matmul_sm80.yaml"
    spec.write_text(text)
    assert main(["probe", str(spec), str(ROOT / "corpus/triton/matmul_sm80.ptx"), "--graph"]) == 2
    err = capsys.readouterr().err
    line = text.splitlines().index("  stream: default") + 1
    assert f"matmul_sm80.yaml:{line}:" in err and "cannot capture the legacy default stream" in err
