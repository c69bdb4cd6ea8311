"""A command's stops: SIGTERM and SIGHUP turned into :class:`Terminated` (unwinding like Ctrl-C),
the children such a stop kills from whichever thread started them, the main thread's waits on
worker threads that wake for it, and the pool a failing command gives up (:class:`WorkerThreads`).

The kernel may hand a process-directed signal to any thread; Python runs the handler in the main
thread only.  Everything here exists so that, whichever thread received it, ptxas is killed, no
temporary file is left and the command ends at once (2026-12-02: a stop handed to a worker
thread, and a recipe error, both waited for a running ptxas).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import signal
import threading
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:   # at run time only the commands that start a child import subprocess
    import subprocess


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: unwinds like Ctrl-C (SIGINT), so ``subprocess.run`` kills
    ptxas, temporary directories are removed and no output is half-written."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _SignalStop:
    """The handler :func:`stop_on_signals` installs.  It kills the children registered with
    :func:`stoppable_child` (ptxas runs in worker threads too, where no exception can reach it),
    then raises :class:`Terminated` in the main thread -- or, inside :func:`signals_deferred`,
    holds it until the block ends.  It also knows which thread started each child, so that a
    :class:`WorkerThreads` given up on by a failing command kills its own children, and only
    those (:meth:`abandon`)."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: "int | None" = None
        self.stopped: "int | None" = None
        self.children: dict = {}            # child -> ident of the thread that started it
        self.abandoned: set = set()         # idents whose children are killed as they start
        self.lock = threading.RLock()   # re-entrant: the handler may interrupt its own thread

    def __call__(self, signum: int, _frame: object) -> None:
        with self.lock:
            self.stopped = signum
            children = list(self.children)
        for child in children:
            _kill(child)
        if self.depth:
            self.pending = signum
            return
        raise Terminated(signum)

    @contextlib.contextmanager
    def track(self, child: "subprocess.Popen") -> Iterator[None]:
        ident = threading.get_ident()
        with self.lock:
            self.children[child] = ident
            doomed = self.stopped is not None or ident in self.abandoned
        try:
            if doomed:     # the stop (or the abandon) came while it was being spawned
                _kill(child)
            yield
        finally:
            with self.lock:
                self.children.pop(child, None)

    def abandon(self, idents: "set[int]") -> None:
        """Kill the children the threads ``idents`` run, and any they start until
        :meth:`release`."""
        with self.lock:
            self.abandoned |= idents
            children = [c for c, t in self.children.items() if t in idents]
        for child in children:
            _kill(child)

    def release(self, idents: "set[int]") -> None:
        with self.lock:
            self.abandoned -= idents

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if not self.depth and self.pending is not None:
                signum, self.pending = self.pending, None
                raise Terminated(signum)


@contextlib.contextmanager
def stop_on_signals(signums: Iterable[int] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """For the duration of a command, turn ``signums`` into :class:`Terminated` raised in the
    main thread; the previous handlers come back on exit (no process-global leftovers) -- unless
    the command was stopped: then the process is going down, and a worker thread that is still
    unwinding (a join can itself be interrupted) must find the handler there to kill any ptxas
    it starts, or the interpreter's exit would wait on it.  Outside the main thread, where
    handlers cannot be set, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _SignalStop()
    previous = {s: signal.signal(s, handler) for s in signums}
    try:
        yield
    finally:
        if handler.stopped is None:
            for s, h in previous.items():
                signal.signal(s, h)


def _kill(child: "subprocess.Popen") -> None:
    try:
        child.kill()
    except OSError:     # already gone
        pass


@contextlib.contextmanager
def stoppable_child(child: "subprocess.Popen") -> Iterator[None]:
    """While the block runs, a SIGTERM/SIGHUP that stops the command kills ``child``, from
    whichever thread started it (no-op outside :func:`stop_on_signals`)."""
    handler = signal.getsignal(signal.SIGTERM)
    if isinstance(handler, _SignalStop):
        with handler.track(child):
            yield
    else:
        yield


#: how long the main thread waits on a worker before it lets pending signal handlers run
SIGNAL_POLL_S = 0.1


def result_when_done(future):
    """``future.result()`` for the main thread while workers run ptxas.  A SIGTERM/SIGHUP the
    kernel hands to a worker thread does not interrupt the main thread's plain lock wait, and
    Python runs its handler only in the main thread: ``apply`` waited for both ``ptxas
    --version`` probes to time out (60 s each) before the stop was seen (2026-12-02, one run in
    about 30 under load).  Waking every :data:`SIGNAL_POLL_S` lets the handler run, kill the
    children and raise :class:`Terminated` here."""
    while not concurrent.futures.wait([future], timeout=SIGNAL_POLL_S).done:
        pass
    return future.result()


class WorkerThreads:
    """A thread pool for a command's ptxas runs whose exit never outwaits the command.

    ``with ThreadPoolExecutor(...)`` joins its threads on the way out, whatever the way: a recipe
    error found while the original module compiled waited for that compile (30 s with a slow
    ptxas, 2026-12-02) before exit 2, and the join, a plain lock wait, was not woken by a stop
    the kernel handed to a worker thread.  Here a block left by an exception first kills the
    children this pool's threads run (:meth:`_SignalStop.abandon`; under the CLI's
    :func:`stop_on_signals`, and only this pool's: a caller that recovers keeps the others);
    every wait wakes for signals; a submit holds SIGTERM/SIGHUP until the pool knows its thread
    (a stop raised inside ``Thread.start`` left the thread unjoined, its ptxas orphaned)."""

    def __init__(self, workers: int) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(workers)
        self._futures: list = []
        self._idents: set = set()
        self._given_up = False
        self._lock = threading.Lock()

    def submit(self, fn, *args, **kwargs) -> "concurrent.futures.Future":
        def run():
            with self._lock:
                if self._given_up:
                    raise concurrent.futures.CancelledError("the command gave this work up")
                self._idents.add(threading.get_ident())
            return fn(*args, **kwargs)

        with signals_deferred():
            future = self._pool.submit(run)
        self._futures.append(future)
        return future

    def close(self, abandon: bool = False) -> None:
        """Wait for the submitted work (woken for signals); with ``abandon``, cancel what has
        not started and kill the children of what has, first."""
        handler = signal.getsignal(signal.SIGTERM)
        with self._lock:
            self._given_up = self._given_up or abandon
            idents = set(self._idents)
        if abandon and isinstance(handler, _SignalStop):
            handler.abandon(idents)
        self._pool.shutdown(wait=False, cancel_futures=abandon)
        try:
            for future in self._futures:
                # done(), not wait()'s answer: a future the shutdown cancelled stays CANCELLED
                # (never CANCELLED_AND_NOTIFIED), which wait() never counts as done
                while not future.done():
                    concurrent.futures.wait([future], timeout=SIGNAL_POLL_S)
            self._pool.shutdown(wait=True)
        finally:
            if abandon and isinstance(handler, _SignalStop):
                handler.release(idents)

    def __enter__(self) -> "WorkerThreads":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(abandon=exc_type is not None)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold a SIGTERM/SIGHUP that arrives inside the block until it ends: around spawning a
    child, so that the :class:`Terminated` it becomes finds the child there to be killed
    (raised halfway through ``Popen()``, it would orphan a running ptxas)."""
    handler = signal.getsignal(signal.SIGTERM)
    if isinstance(handler, _SignalStop) and threading.current_thread() is threading.main_thread():
        with handler.deferred():
            yield
    else:
        yield
