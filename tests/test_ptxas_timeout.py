"""ptxas run as a user expects: its time limit scales with the module and can be set
(``--ptxas-timeout``, ``SPLICE_PTXAS_TIMEOUT``); a timeout is said as a timeout, with its own exit
status (124) in every command that runs ptxas -- never "ptxas rejects the module" (exit 2) nor a
passing row (exit 0); ``-v`` only where resource usage is read; ``sass-mix`` compiles the one
entry it shows.

ptxas is a fake here (``SPLICE_PTXAS``): one that never ends, or one that logs its arguments.
"""
from __future__ import annotations

import os
import sys

import pytest

from splice.cli import main
from splice.errors import TIMEOUT_STATUS, ToolTimedOut
from splice.ptx import sass

from .conftest import DATA
from .test_outputs import NATIVE

HANGS = '#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas, release 13.0, V13.0.1"; exit 0; fi\nexec sleep 60\n'
LOGS = f'''#!{sys.executable}
import os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("fake ptxas, release 13.0, V13.0.1")
    sys.exit(0)
with open(os.environ["ARGV_LOG"], "a") as f:
    f.write(" ".join(args) + "\\n")
open(args[args.index("-o") + 1], "wb").write(b"\\x7fELF fake")
'''


@pytest.fixture
def work(tmp_path, monkeypatch):
    d = tmp_path / "w"
    d.mkdir()
    (d / "tiny.ptx").write_bytes((DATA / "recipes" / "tiny.ptx").read_bytes())
    (d / "n.ptx").write_text(NATIVE)
    (d / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    monkeypatch.chdir(d)
    monkeypatch.delenv("SPLICE_PTXAS_TIMEOUT", raising=False)
    return d


def fake(tmp_path, monkeypatch, body: str):
    exe = tmp_path / "ptxas"
    exe.write_text(body)
    exe.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(exe))
    monkeypatch.setenv("ARGV_LOG", str(tmp_path / "argv.log"))
    return tmp_path / "argv.log"


RUNS_PTXAS = [["apply", "r.yaml", "-o", "o.ptx"], ["roundtrip", "tiny.ptx", "--sass", "--no-cache"],
              ["spec", "tiny.ptx", "--pressure", "--png", "none"], ["sass-mix", "tiny.ptx"], ["sass-mix", "r.yaml"]]


@pytest.mark.parametrize("argv", RUNS_PTXAS, ids=lambda a: "-".join(a[:2]))
def test_a_timeout_is_its_own_status_in_every_command(argv, work, tmp_path, monkeypatch, capsys):
    """regression: ``roundtrip --sass`` exited 0 with "ptxas rejects the original: ptxas timed out
    after 120s", ``apply`` exited 2 with "ptxas rejects the original module"."""
    fake(tmp_path, monkeypatch, HANGS)
    assert main([*argv, "--ptxas-timeout", "0.5"]) == TIMEOUT_STATUS
    err = capsys.readouterr().err
    assert "ptxas timed out after 0.5 s" in err and "--ptxas-timeout" in err and "SPLICE_PTXAS_TIMEOUT" in err
    assert "reject" not in err and "Traceback" not in err
    assert not (work / "o.ptx").exists()


def test_the_variable_sets_the_limit_and_the_option_wins(work, tmp_path, monkeypatch, capsys):
    fake(tmp_path, monkeypatch, HANGS)
    monkeypatch.setenv("SPLICE_PTXAS_TIMEOUT", "0.5")
    assert main(["roundtrip", "tiny.ptx", "--sass", "--no-cache"]) == TIMEOUT_STATUS
    assert "timed out after 0.5 s" in capsys.readouterr().err
    assert main(["roundtrip", "tiny.ptx", "--sass", "--no-cache", "--ptxas-timeout", "0.7"]) == TIMEOUT_STATUS
    assert "timed out after 0.7 s" in capsys.readouterr().err
    assert os.environ["SPLICE_PTXAS_TIMEOUT"] == "0.5"     # the option held for the command only


def test_a_probe_compile_that_times_out_is_a_timeout(work, tmp_path, monkeypatch):
    """``splice probe`` builds its cubins through the same compile: a timeout there reaches the
    CLI as ToolTimedOut (exit 124), not as a rejected module."""
    from splice.probe.run.modules import compile_one

    fake(tmp_path, monkeypatch, HANGS)
    monkeypatch.setenv("SPLICE_PTXAS_TIMEOUT", "0.5")
    with pytest.raises(ToolTimedOut, match="ptxas timed out after 0.5 s"):
        compile_one("tiny", (work / "tiny.ptx").read_text(), "sm_90", tmp_path / "probe-cache", use_cache=False)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc", ""])
def test_a_limit_that_is_no_time_is_a_usage_error(value, work, capsys):
    with pytest.raises(SystemExit) as ei:
        main(["roundtrip", "tiny.ptx", "--sass", "--ptxas-timeout", value])
    assert ei.value.code == 2 and "--ptxas-timeout" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "abc", "-5"])
def test_a_variable_that_is_no_time_is_an_error(value, work, tmp_path, monkeypatch, capsys):
    fake(tmp_path, monkeypatch, LOGS)
    monkeypatch.setenv("SPLICE_PTXAS_TIMEOUT", value)
    assert main(["roundtrip", "tiny.ptx", "--sass", "--no-cache"]) == 2
    assert f"SPLICE_PTXAS_TIMEOUT={value!r}: not a number of seconds" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["roundtrip", "tiny.ptx"], ["apply", "r.yaml", "--no-ptxas", "-o", "o.ptx"],
                                  ["spec", "tiny.ptx"], ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "none"],
                                  ["probe", "init", "tiny.ptx", "-o", "s.yaml"]], ids=lambda a: "-".join(a[:2]))
def test_a_limit_where_no_ptxas_runs_is_refused(argv, work, capsys):
    """An option the mode drops in silence is refused, as --no-cache is."""
    assert main([*argv, "--ptxas-timeout", "5"]) == 2
    assert "--ptxas-timeout: no ptxas runs in this mode" in capsys.readouterr().err
    assert not (work / "o.ptx").exists() and not (work / "s.yaml").exists()


def test_the_default_limit_scales_with_the_module(monkeypatch):
    monkeypatch.delenv("SPLICE_PTXAS_TIMEOUT", raising=False)
    assert sass.ptxas_timeout(0) == sass.DEFAULT_TIMEOUT
    assert sass.ptxas_timeout(3_000_000) == sass.DEFAULT_TIMEOUT + 3 * sass.TIMEOUT_PER_MB
    monkeypatch.setenv("SPLICE_PTXAS_TIMEOUT", "7.5")
    assert sass.ptxas_timeout(3_000_000) == 7.5


def _argv_lines(log):
    return [ln.split() for ln in log.read_text().splitlines() if "header.ptx" not in ln]


def test_v_only_where_resource_usage_is_read(work, tmp_path, monkeypatch):
    """ptxas -v cost a module of 10,000 entries 273 s against 37 s without it: a compile whose
    resource usage nobody reads goes without."""
    log = fake(tmp_path, monkeypatch, LOGS)
    monkeypatch.setattr(sass, "normalized_sass", lambda cubin, **kw: [])    # the fake's cubin is no ELF
    text = (work / "tiny.ptx").read_text()
    sass.compile_ptx(text, "sm_90", resources=False)
    sass.sass_equal(text, text, "sm_90", compare_resources=False)
    assert all("-v" not in a for a in _argv_lines(log)) and len(_argv_lines(log)) == 3
    log.unlink()
    sass.compile_ptx(text, "sm_90")
    assert all("-v" in a for a in _argv_lines(log))


def test_sass_mix_of_a_module_compiles_its_entry_alone(work, tmp_path, monkeypatch, capsys):
    """``ptxas -e ENTRY``: the other entries of the module are not compiled for one entry's mix
    (a 10,000-entry module compiled every entry for ``sass-mix --entry k09999``) -- unless the
    entry calls a function, whose code depends on its other callers (tests/test_sass_mix.py).
    The fake writes no real cubin, so the command stops at the disassembler; the ptxas line is
    checked."""
    log = fake(tmp_path, monkeypatch, LOGS)
    main(["sass-mix", "tiny.ptx", "--entry", "tiny"])
    (argv,) = _argv_lines(log)
    assert argv[argv.index("-e") + 1] == "tiny"
    log.unlink()
    calls = DATA / "ptx" / "modern" / "calls_params_globals.ptx"
    main(["sass-mix", str(calls), "--entry", "_Z12calls_kernelPfPKf6Paramsi"])
    capsys.readouterr()
    (argv,) = _argv_lines(log)
    assert "-e" not in argv


@pytest.mark.gpu
def test_probe_stops_at_a_ptxas_timeout_with_124(tmp_path, monkeypatch, capsys):
    """The whole command on a GPU machine: ``splice probe RECIPE`` whose ptxas never ends stops
    with 124 and the timeout's message, no report written as if the module were judged."""
    from .conftest import ROOT

    fake(tmp_path, monkeypatch, HANGS)
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path / "probe-cache"))
    rc = main(["probe", str(ROOT / "recipes" / "enc5_p8.yaml"), "--runs", "2", "--no-cache",
               "--ptxas-timeout", "1", "--report-dir", str(tmp_path / "report")])
    err = capsys.readouterr().err
    assert rc == TIMEOUT_STATUS and "ptxas timed out after 1 s" in err and "Traceback" not in err, err
    assert not (tmp_path / "report" / "probe.json").exists()
