"""SIGTERM and SIGHUP stop ptxas as SIGINT does, and no temporary file or directory outlives a
command on any path (a signal, a failing ptxas, a timeout).

ptxas is replaced by a script (``SPLICE_PTXAS``) that tells its pid through a FIFO and sleeps, or
fails: no real compiler runs, so the test is fast and exact about what is left behind.  The test
waits on the FIFO (and on the command's stderr, which ends if the command does), never on a
timer: the signal is sent once a ptxas is known to run, however loaded the machine is."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from splice.cli import main

from .userfiles import NATIVE, TINY

SLEEPER = """#!/bin/sh
echo $$ > "$PIDFIFO"
exec sleep 60
"""
FAILER = """#!/bin/sh
echo "ptxas fatal   : something is wrong" >&2
exit 1
"""


@pytest.fixture
def work(tmp_path):
    d = tmp_path / "w"
    (d / "out").mkdir(parents=True)
    (d / "tmp").mkdir()
    from .conftest import DATA

    (d / "tiny.ptx").write_bytes((DATA / "recipes" / "tiny.ptx").read_bytes())
    (d / "n.ptx").write_text(NATIVE)
    (d / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    return d


def fake_ptxas(d, body):
    p = d.parent / "ptxas"
    p.write_text(body)
    p.chmod(0o755)
    return p


def env_for(d, ptxas):
    return {**os.environ, "SPLICE_PTXAS": str(ptxas), "TMPDIR": str(d / "tmp"),
            "PIDFIFO": str(d.parent / "ptxas.pid")}


def leftovers(tmp):
    """What a command left in TMPDIR, less Lark's grammar cache (kept across runs on purpose)."""
    return [p for p in tmp.iterdir() if not p.name.startswith(".lark_cache")]


def alive(pid: int) -> bool:
    """Running: a zombie (dead, not yet reaped by whoever inherited it) is not."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def first_ptxas(proc, fd: int) -> int:
    """The pid the first fake ptxas writes into the FIFO open on ``fd``: waits until it comes,
    or fails when the command ends (its stderr closes) first."""
    import select

    ready, _, _ = select.select([fd, proc.stderr], [], [], 120)
    assert fd in ready, ("the command ended before ptxas ran", proc.communicate())
    return int(os.read(fd, 4096).split()[0])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_stops_ptxas_and_leaves_nothing(sig, work):
    env = env_for(work, fake_ptxas(work, SLEEPER))
    os.mkfifo(work.parent / "ptxas.pid")
    # read-write: opening never blocks, a read waits for a writer's data, and every fake ptxas
    # (the compile of each module, `ptxas --version`) can write its pid without waiting for a reader
    fifo = os.open(work.parent / "ptxas.pid", os.O_RDWR)
    before = sorted(p.name for p in work.iterdir())
    proc = subprocess.Popen([sys.executable, "-m", "splice.cli", "apply", "r.yaml", "-o", "out/o.ptx"],
                            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = first_ptxas(proc, fifo)
        assert alive(child)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)   # generous: CI machines can be loaded
    finally:
        os.close(fifo)
    assert proc.returncode == 128 + sig, err
    assert b"Traceback" not in err and f"stopped by {sig.name}".encode() in err
    assert not alive(child), "ptxas still running after the signal"
    assert leftovers(work / "tmp") == []                 # ptxas' work directory is gone
    assert list((work / "out").iterdir()) == []          # no output, no temp file
    assert sorted(p.name for p in work.iterdir()) == before


def test_failing_ptxas_leaves_nothing(work, capsys, monkeypatch):
    """A rejected module: exit 2, a repro line that names no temp copy, nothing left anywhere."""
    for k, v in env_for(work, fake_ptxas(work, FAILER)).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr("tempfile.tempdir", None)      # TMPDIR is read again
    monkeypatch.chdir(work)
    assert main(["apply", "r.yaml", "-o", "out/o.ptx"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "splice-repro" not in err
    assert leftovers(work / "tmp") == [] and list((work / "out").iterdir()) == []


def test_handlers_are_restored_after_a_command(work, capsys, monkeypatch):
    """The CLI holds its SIGTERM/SIGHUP handlers only while a command runs."""
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    monkeypatch.chdir(work)
    assert main(["canonical", "tiny.ptx", "-o", "out/c.ptx"]) == 0
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_signal_while_spawning_is_held_until_the_child_exists():
    """Inside signals_deferred (around Popen) SIGTERM is held, then raised at the block's end."""
    from splice.signals import Terminated, signals_deferred, stop_on_signals

    reached = []
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with pytest.raises(Terminated) as ei, stop_on_signals():
            with signals_deferred():
                signal.raise_signal(signal.SIGTERM)     # its handler has run when this returns
                reached.append("end of block")
    finally:   # a stopped command keeps its handler (the process is going down): not pytest's
        for s, h in saved.items():
            signal.signal(s, h)
    assert reached == ["end of block"] and ei.value.signum == signal.SIGTERM


# ---- Ctrl-C and timeouts while tools and workers run (found 2026-11-30 with hostile inputs) ------

def test_ctrl_c_while_workers_start_leaves_no_worker(work):
    """regression: a Ctrl-C 0.3 s into ``roundtrip DIR --jobs 2`` (while the scheduler was
    forking and feeding its workers, before ``results()`` could stop them) exited 130 but left
    the workers running their batches (with multiprocessing workers, one blocked for ever),
    holding splice's stdout (``splice … | cat`` did not end).  The scheduler now stops its
    workers when its own set-up is interrupted.  The interrupt is raised here, deterministically,
    once the workers were fed and a worker's ptxas (one that takes a minute) tells through a FIFO
    that it runs."""
    (work / "b.ptx").write_text(TINY)
    os.mkfifo(work / "started")
    code = ("import os, sys\nfrom splice.commands import roundtrip_split as rs\n"
            "feed0 = rs.Scheduler._feed\n"
            "def feed(self):\n    feed0(self)\n"
            "    fd = os.open(os.environ['STARTED'], os.O_RDWR)\n    os.read(fd, 64)\n    raise KeyboardInterrupt\n"
            "rs.Scheduler._feed = feed\n"
            "from splice.cli import console_main\n"
            "sys.argv = ['splice', 'roundtrip', 'tiny.ptx', 'b.ptx', '--jobs', '2', '--sass', '--no-cache']\n"
            "console_main()\n")
    tool = work / "ptxas"     # busy workers: each runs a ptxas that takes a minute
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\n'
                    'echo $$ > "$STARTED"\nexec sleep 60\n')
    tool.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,
                            env={**os.environ, "SPLICE_PTXAS": str(tool), "STARTED": str(work / "started")})
    try:
        _out, err = proc.communicate(timeout=30)     # EOF on stdout: no worker holds it any more
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("a worker outlived splice and kept its stdout open")
    assert proc.returncode == 130 and b"Traceback" not in err, err
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert not left, f"workers left running: {left}"


def test_a_killed_tools_temp_files_go_with_splices_directory(work, tmp_path, monkeypatch, capsys):
    """regression: Ctrl-C during ``roundtrip --sass`` killed cuobjdump/ptxas, which left their
    ``tmpxft_*`` files in $TMPDIR (two per interrupted run).  A tool now gets splice's private
    temporary directory as its TMPDIR, removed on every path.  The fake ptxas here leaves its
    file and hangs until the 2 s timeout kills it, as a Ctrl-C would."""
    from splice.ptx import sass

    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    tool = tmp_path / "ptxas"
    tool.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi\n'
                    'touch "${TMPDIR:-/tmp}/tmpxft_splice_test_$$"\nsleep 60\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)     # re-read TMPDIR
    with pytest.raises(sass.ToolTimedOut, match="timed out"):     # no rejection: it judged nothing
        sass.compile_ptx(TINY, "sm_90", 3, timeout=2.0)
    assert not [p.name for p in tmpdir.iterdir() if p.name.startswith("tmpxft")]
    assert not [p.name for p in tmpdir.iterdir() if p.name.startswith("splice-")]


ANNOUNCER = """#!/bin/sh
if [ "$1" = --version ]; then echo "fake ptxas V13"; exit 0; fi
echo $$ >> "$PIDLOG"
exec sleep 300
"""


def test_a_recipe_error_does_not_wait_for_the_originals_ptxas(work):
    """regression (2026-12-02): the original module's ptxas starts as soon as the recipe is read,
    to overlap the planning; a recipe error the planning found (a phase the kernel lacks) waited
    for that compile to end before exit 2 -- 30 s with a slow ptxas.  The pool now kills its
    ptxas on the way out of a failing command.  Whichever way the race goes (ptxas started or
    not yet), the answer comes at once and no ptxas is left."""
    (work / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 99\n    native: n.ptx\n")
    env = {**env_for(work, fake_ptxas(work, ANNOUNCER)), "PIDLOG": str(work.parent / "pids")}
    done = subprocess.run([sys.executable, "-m", "splice.cli", "apply", "r.yaml", "-o", "out/o.ptx"],
                          cwd=work, env=env, capture_output=True, text=True,
                          timeout=60)   # the fake ptxas takes 300 s: waiting for it fails here
    assert done.returncode == 2 and "phase 99 does not exist" in done.stderr, done.stderr
    pids = (work.parent / "pids").read_text().split() if (work.parent / "pids").exists() else []
    assert not [p for p in pids if alive(int(p))], "a ptxas outlived the command"
    assert leftovers(work / "tmp") == [] and list((work / "out").iterdir()) == []


def test_a_failing_block_kills_its_own_pools_children_and_no_others():
    """``WorkerThreads`` left by an exception kills the children its threads run (a caller that
    recovers from one pool's failure -- tune records a variant's rejection and goes on -- keeps
    every other pool's ptxas) and returns without waiting for them."""
    import threading
    import time

    from splice.signals import WorkerThreads, stop_on_signals, stoppable_child

    def sleeper(started, pids):
        with subprocess.Popen(["sleep", "60"]) as child, stoppable_child(child):
            pids.append(child.pid)
            started.set()
            child.wait()

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    mine, theirs = [], []
    try:
        with stop_on_signals():
            other = WorkerThreads(1)
            go = threading.Event()
            other.submit(sleeper, go, theirs)
            t0 = time.monotonic()
            with pytest.raises(ValueError, match="a recipe error"):
                with WorkerThreads(1) as pool:
                    started = threading.Event()
                    pool.submit(sleeper, started, mine)
                    queued = pool.submit(sleeper, threading.Event(), mine)   # behind the first
                    assert started.wait(30) and go.wait(30)
                    raise ValueError("a recipe error")
            assert time.monotonic() - t0 < 20          # the sleepers run 60 s
            assert queued.cancelled() and len(mine) == 1
            assert not alive(mine[0]) and alive(theirs[0])
            other.close(abandon=True)
            assert not alive(theirs[0])
    finally:
        for s, h in before.items():
            signal.signal(s, h)


STOP_IN_A_WORKER = r"""
import signal, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from splice.signals import Terminated, result_when_done, stop_on_signals

def main_is_waiting():
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None:
        if frame.f_code is result_when_done.__code__:
            return True
        frame = frame.f_back
    return False

def task():
    while not main_is_waiting():       # the signal goes out once the main thread waits in it
        time.sleep(0.01)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
    time.sleep(30)                      # the worker stays busy: only the handler can end the wait

with stop_on_signals(), ThreadPoolExecutor(1) as pool:
    fut = pool.submit(task)
    t0 = time.monotonic()
    try:
        result_when_done(fut)
    except Terminated:
        print(f"terminated after {time.monotonic() - t0:.2f} s", flush=True)
        import os
        os._exit(0)
    print("the wait ended without Terminated", flush=True)
    import os
    os._exit(1)
"""


def test_a_stop_handed_to_a_worker_thread_reaches_the_waiting_main_thread():
    """The kernel may deliver SIGTERM to any thread; Python runs the handler in the main thread
    only, and a plain ``future.result()`` there was not woken: ``apply`` sat through both
    ``ptxas --version`` probes (60 s each) before seeing the stop.  ``result_when_done`` wakes
    and raises Terminated at once.  The worker signals its own thread only once the main thread
    is inside ``result_when_done`` (read from its stack, not guessed with a timer), and the whole
    case runs in a child process, so the stop can reach nothing of the test runner."""
    done = subprocess.run([sys.executable, "-c", STOP_IN_A_WORKER], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("terminated after "), done.stdout
    # the worker sleeps 30 s: an answer well before that is the handler's, not the task's end
    assert float(done.stdout.split()[2]) < 20, done.stdout
