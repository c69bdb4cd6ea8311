"""The files a user hands splice in the command tests: tiny.ptx, its native phase, a recipe, a probe
spec (the texts of tests/hostile/base, which the data cases edit too), a working directory holding
them, and the two ways a test runs a command (in this process; in a child under a memory limit and
a timeout, for a run that would hang or eat the memory if a fix regressed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from splice.cli import main

from .conftest import DATA, TINY_SWAPPED

BASE = Path(__file__).parent / "hostile" / "base"
TINY = (DATA / "recipes" / "tiny.ptx").read_text()
NATIVE = "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED
RECIPE = (BASE / "recipe.yaml").read_text()
SPEC = (BASE / "spec.yaml").read_text()
HEAD = (BASE / "head87.ptx").read_text()          # .version 8.7, .target sm_90, .address_size 64


def write_files(work: Path, files: dict) -> None:
    """``files`` (name -> text or bytes) under ``work``; text that is not UTF-8 keeps its bytes."""
    for name, content in files.items():
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogateescape"))


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory holding tiny.ptx, its native phase, a recipe and a probe spec (and the recipe's
    probe spec, found next to its corpus): the cwd and SPLICE_CORPUS; the caches beside it."""
    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "spec.yaml": SPEC,
                           "probes/tiny.yaml": SPEC.replace("ptx: tiny.ptx", "ptx: ../tiny.ptx")})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPLICE_CORPUS", str(tmp_path))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path.parent / (tmp_path.name + "-cache")))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path.parent / (tmp_path.name + "-probe")))
    return tmp_path


@pytest.fixture
def no_gpu(monkeypatch):
    """cupy missing, whatever this machine has: the probe's import of it fails as without one."""
    monkeypatch.setitem(sys.modules, "cupy", None)


def run(argv) -> int:
    """``splice ARGV`` in this process: its status, argparse's usage errors included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def refused(capsys, rc, *says) -> str:
    """The run ended in status 2, without a traceback, its message holding each of ``says``."""
    out, err = capsys.readouterr()
    assert rc == 2, (rc, err[-1500:])
    assert "Traceback" not in out + err
    for s in says:
        assert s in err, err[-1500:]
    return err


def run_cli(argv, work: Path, env=None, timeout=60, stdout=subprocess.PIPE, pass_fds=()):
    """``splice ARGV`` in a child with 2 GiB of address space and a timeout: an unbounded read
    ends in a MemoryError and a hang in TimeoutExpired, both test failures, not a dead runner."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "from splice.cli import main; sys.exit(main(sys.argv[1:]))")
    full = {**os.environ, "SPLICE_CORPUS": str(work), **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=work, env=full, timeout=timeout,
                          stdout=stdout, stderr=subprocess.PIPE, pass_fds=pass_fds)


def check_refused(proc, named: str, says: str = "") -> str:
    """A child's run ended in status 2 naming ``named`` (and saying ``says``), no traceback."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "Traceback" not in err and "MemoryError" not in err
    assert named in err, err[-2000:]
    if says:
        assert says in err, err[-2000:]
    return err


def many_entries(n: int) -> str:
    """A module of ``n`` entries k0… that each call one .func, beside a .shared array."""
    return HEAD + ".shared .align 4 .b8 smem[64];\n.func f()\n{\n\tret;\n}\n" + \
        "".join(f".visible .entry k{i}()\n{{\n\tcall f;\n\tret;\n}}\n" for i in range(n))
