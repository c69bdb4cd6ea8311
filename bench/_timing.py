"""Shared by the bench scripts: run a command as a child process and measure its wall time and
peak RSS (wait4's rusage of that child alone), and summarise repeats as min / median."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(cmd, env=None, cwd=ROOT, check=True):
    """(wall seconds, peak RSS in MB, stdout bytes, CPU seconds) of one child process (user +
    system time of the child and of the worker processes it waited for).
    Output goes to temp files so the child can be reaped with wait4, which gives that child's
    own peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if check and proc.returncode != 0:
        sys.stderr.write(stderr.decode("utf-8", "replace"))
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(map(str, cmd))}")
    return wall, usage.ru_maxrss / 1024, stdout, usage.ru_utime + usage.ru_stime


def splice_cmd(*args):
    """``python -m splice.cli ARGS`` of this tree (the console script's exit path included)."""
    return [sys.executable, "-m", "splice.cli", *map(str, args)]


def summary(xs, unit="s") -> str:
    return f"min {min(xs):.3f} {unit}, median {statistics.median(xs):.3f} {unit} (n={len(xs)})"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) / {five:.2f} (5 min) on {os.cpu_count()} cores"
