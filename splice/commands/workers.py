"""Worker processes for corpus-wide commands (``splice roundtrip --jobs N``): forked by hand,
a pickle per message on a pipe each way.

Each worker runs batches of ``(fn, args)`` items as ``fn(state, *args)`` (``state``: a dict the
worker keeps between items) and sends back each batch's results in one message, in order.  The
scheduler that chooses what each worker runs is the caller's (``roundtrip_split.Scheduler``);
this module is the processes, the pipes and their life: fork with stop signals held, stop,
reap, and a dead worker seen as EOF.  ``multiprocessing`` cost the parent ~10 ms of its own
before the first item and after the last one (its import, ``Process``' bookkeeping, a join
per worker), a twentieth of what a two-core run saves.
"""
from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import gc


def _serve(conn) -> None:
    """A worker process' loop: for each batch that comes down the pipe, a list of ``(fn,
    args)``, run each as ``fn(texts, *args)`` and send back the list of their ``(True, result)``
    or ``(False, exception)``, in order, in one message; ``None`` or a closed pipe ends it.  ``texts``
    (index -> text of the split files this worker read) is the worker's own.

    Ctrl-C is the parent's to handle (it stops the workers); a SIGTERM from the parent unwinds
    the item like ``splice``'s own handler does (ptxas killed, temporary files removed) and the
    worker ends quietly: no traceback from a worker reaches the user.

    The cyclic collector is off in a worker, and run by ``_loop`` once ``COLLECT_AT`` more
    container objects are alive than after its last pass: an item's model has no cycles and
    dies with the item (reference counting frees it), while the collector's own passes and the
    parser's per-model bookkeeping, in a process forked with its parent's heap frozen, cost the
    workers a sixth of their time on the shared corpus.  The pass frees what cycles items do
    leave (a caught error's traceback), so what they can hold is bounded by ``COLLECT_AT``
    objects whatever the corpus."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    try:
        _loop(conn, {})
    except KeyboardInterrupt:   # splice.signals.Terminated (SIGTERM, SIGHUP) is one
        return


#: container objects allocated and still alive since a worker's last collection (the
#: collector's own generation-0 count, which only grows while it is off) that trigger the next
#: one (see ``_serve``).  Not a count of items: every pass walks what survived since the last
#: one, and what survives is mostly the parser's caches (statement texts and their models,
#: templates, interned operands: up to ~300k objects), which a pass every 64 items walked in
#: full the first time, 26 ms of one worker's 500 on the shared corpus, to free nothing.  At
#: ~100 bytes an object, cycles left by items hold at most ~50 MB before they are freed.
COLLECT_AT = 1 << 19


def _loop(conn, texts: dict) -> None:

    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        outs = []
        for fn, args in job:
            try:
                outs.append((True, fn(texts, *args)))
            except Exception as exc:  # handed to the parent, which raises it where results are read
                outs.append((False, _portable(exc)))
            if gc.get_count()[0] >= COLLECT_AT and not gc.isenabled():
                gc.collect(0)   # what survived since the last pass: the whole heap (the shape
                #                 cache, the grammar once built) would cost ms each time
        conn.send(outs)   # one message per batch: a send per 30-line file was 0.1 ms of 0.3
        del outs


def _portable(exc: Exception) -> Exception:
    """``exc`` as the parent will get it: itself when it survives pickling, else a RuntimeError
    with its type and text (an exception whose ``__init__`` pickle cannot call again would fail
    in the parent's ``pickle.loads``, a TypeError far from its cause)."""
    try:
        pickle.loads(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


#: the signals that stop a command (splice.signals.stop_on_signals) or the user (Ctrl-C)
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: a message's length, ahead of its pickle
_HEAD = struct.Struct("<Q")


def _send(fd: int, obj) -> None:
    body = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEAD.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


def _read(fd: int, n: int) -> bytes:
    parts = []
    while n:
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _recv(fd: int):
    return pickle.loads(_read(fd, _HEAD.unpack(_read(fd, _HEAD.size))[0]))


class _Pipe:
    """A worker's end of its two pipes, as ``_loop`` uses it."""

    def __init__(self, rfd: int, wfd: int):
        self.rfd, self.wfd = rfd, wfd

    def recv(self):
        return _recv(self.rfd)

    def send(self, obj) -> None:
        _send(self.wfd, obj)


class Worker:
    """One worker process with its own pipes (so the scheduler chooses which worker runs what,
    and no thread of the parent's moves items), the directory it is on and its queued items."""
    __slots__ = ("pid", "to", "back", "family", "queue", "costs", "exitcode", "told")

    def __init__(self, others: list):
        down_r, self.to = os.pipe()
        self.back, up_w = os.pipe()
        # signals held across the fork: one that reached the worker before its ``try`` would
        # unwind it into the parent's code (a second copy of the command running on)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            self.pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            for fd in (down_r, self.to, self.back, up_w):
                os.close(fd)
            raise
        if self.pid == 0:   # the worker: never returns into the parent's code
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                for w in others:   # the other workers' ends: EOF must reach each of them
                    os.close(w.to)
                    os.close(w.back)
                os.close(self.to)
                os.close(self.back)
                _serve(_Pipe(down_r, up_w))
                code = 0
            finally:
                os._exit(code)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        os.close(down_r)
        os.close(up_w)
        self.family = None
        self.queue: list = []      # (handler, index, last of its batch) of the items sent, in order
        self.costs: list = []      # the cost of each batch sent and not done, in order
        self.exitcode: "int | None" = None
        self.told = False          # asked to stop

    def send(self, cost: int, batch) -> None:
        """``batch``: (handler, index, fn, args) of each item."""
        _send(self.to, [(fn, args) for _handler, _i, fn, args in batch])
        self.queue.extend((handler, i, k == len(batch) - 1) for k, (handler, i, _fn, _args) in enumerate(batch))
        self.costs.append(cost)

    def recv(self):
        return _recv(self.back)

    def end(self, wait: bool) -> None:
        """Ask the worker to stop after its item (``wait``) or now (SIGTERM)."""
        if self.told and wait:
            return
        self.told = True
        try:
            if wait:
                _send(self.to, None)
            else:
                os.kill(self.pid, signal.SIGTERM)
        except OSError:   # gone already
            pass

    def join(self) -> int:
        if self.exitcode is None:
            self.exitcode = code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
            os.close(self.to)
            os.close(self.back)
            return code
        return self.exitcode


def fork_workers(n: int) -> list:
    """``n`` workers, forked with the parent's objects out of the collector's sight
    (``gc.freeze``): a worker's collections then never walk (and so never copy, page by page)
    the modules it inherited.  The parent's collector is as it was after.
    The standard streams are flushed first: nothing buffered is written twice."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    workers: list = []
    gc.freeze()
    try:
        for _ in range(n):
            workers.append(Worker(workers))
        return workers
    except BaseException:   # no fork left (EAGAIN), Ctrl-C: the ones forked end with the error
        for w in workers:
            w.end(wait=False)
            w.join()
        raise
    finally:
        gc.unfreeze()
