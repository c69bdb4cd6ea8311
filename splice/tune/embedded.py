"""The default executor, on one host: CPU tasks on a process pool sized to the cores
(``concurrent.futures.ProcessPoolExecutor``), one GPU worker process per visible GPU.

Workers die (a crash in a native library, the OOM killer, a ``kill``): the tasks they held are
submitted again on a fresh pool.  A task that was in flight at two deaths is run alone, and only
a death while it runs alone marks it (``Died``): one bad variant never stops the run, and
neither does a worker lost to something else.  A GPU batch whose worker died is split in two
and queued again for any GPU worker; a single variant whose worker died twice is marked.  A GPU
fault the bench reports (a CUDA error in one variant) marks that variant; its worker is replaced
and the rest of its batch goes on.
"""
from __future__ import annotations

import multiprocessing
import queue
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Optional

from ..errors import SpliceError
from .timer import BatchResult, BenchSpec, TimeBatch, VariantTiming
from .worker import Failed, Ready

MAX_DEATHS = 2


@dataclass(frozen=True)
class Died:
    """A task whose worker died every time it ran (the last time alone): the reason."""
    reason: str


class WorkerDied(RuntimeError):
    pass


def _spawn():
    return multiprocessing.get_context("spawn")


class CpuPool:
    """``map(fn, items)``: (item, result | Died | Failed) as they finish, on ``jobs`` processes."""

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)
        self.running: dict = {}            # key -> item, for the progress view

    def map(self, fn: Callable, items: list, key: Callable) -> Iterator:
        attempts: dict = {}
        pending, alone = list(items), []
        while pending or alone:
            batch, width = (pending, self.jobs) if pending else ([alone.pop(0)], 1)
            pending = []
            for item, out in self._round(fn, batch, width, key):
                if out is not None:
                    yield item, out
                    continue
                k = key(item)
                attempts[k] = attempts.get(k, 0) + 1
                if width == 1 and attempts[k] >= MAX_DEATHS:
                    yield item, Died(f"its worker process died {attempts[k]} times, the last time running it alone")
                elif attempts[k] >= MAX_DEATHS:
                    alone.append(item)
                else:
                    pending.append(item)

    def _round(self, fn: Callable, items: list, width: int, key: Callable) -> Iterator:
        """(item, result) for each finished item, (item, None) for each lost to a dead worker."""
        pool = ProcessPoolExecutor(max_workers=min(width, len(items)), mp_context=_spawn())
        futs = {pool.submit(fn, it): it for it in items}
        for it in items:
            self.running[key(it)] = it
        try:
            for f in as_completed(futs):
                it = futs[f]
                self.running.pop(key(it), None)
                try:
                    yield it, f.result()
                except BrokenProcessPool:
                    yield it, None
                except Exception as exc:  # noqa: BLE001 - the task's own error marks its item only
                    yield it, Failed(f"{type(exc).__name__}: {exc}")
        finally:
            for it in items:
                self.running.pop(key(it), None)
            pool.shutdown(wait=True, cancel_futures=True)


class GpuProcess:
    """One GPU worker process and the pipe to it."""

    def __init__(self, name: str, gpu, spec: BenchSpec):
        self.name, self.gpu, self.spec = name, gpu, spec
        self.proc: Any = None
        self.conn: Any = None
        self.device = ""
        self.state = "starting"

    def start(self) -> None:
        from .worker import serve

        ctx = _spawn()
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(child, self.gpu, self.spec), daemon=True)
        self.proc.start()
        child.close()
        msg = self._recv()
        if isinstance(msg, Failed):
            raise SpliceError(msg.message)
        if isinstance(msg, Ready):
            self.device, self.state = msg.device, "idle"

    def _recv(self):
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            raise WorkerDied(f"{self.name}: its process ended (exit status {self._exit()})") from None

    def _exit(self):
        if self.proc is None:
            return None
        self.proc.join(5)
        return self.proc.exitcode

    def call(self, batch: TimeBatch) -> BatchResult:
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.state = f"rung {batch.rung}: {len(batch.candidates)} variants x {batch.rounds} rounds"
        try:
            self.conn.send(batch)
        except (OSError, BrokenPipeError):
            raise WorkerDied(f"{self.name}: its process ended") from None
        out = self._recv()
        self.state = "idle"
        if isinstance(out, Failed):
            raise WorkerDied(out.message)
        return replace(out, worker=self.name)

    def stop(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()
        self.proc = None


class GpuPool:
    """Batches over the GPU workers, one thread each; retries as the module docstring says."""

    def __init__(self, gpus: list, spec: BenchSpec):
        self.workers = [GpuProcess(f"gpu{g}", g, spec) for g in gpus]

    def states(self) -> list:
        return [(w.name, w.state) for w in self.workers]

    def run(self, batches: list) -> Iterator:
        work: queue.Queue = queue.Queue()
        out: queue.Queue = queue.Queue()
        for b in batches:
            work.put((b, 0))
        threads = [threading.Thread(target=self._loop, args=(w, work, out), daemon=True) for w in self.workers]
        for t in threads:
            t.start()
        outstanding = len(batches)
        try:
            while outstanding:
                kind, payload = out.get()
                if kind == "error":
                    raise payload
                if kind == "more":
                    outstanding += payload
                    continue
                outstanding -= 1
                yield payload
        finally:
            for _ in threads:
                work.put(None)
            for t in threads:
                t.join()

    def _loop(self, w: GpuProcess, work: queue.Queue, out: queue.Queue) -> None:
        """One GPU worker's thread.  Every unit of work ends in exactly one ``done``; a unit
        replaced by more units says ``more`` first (before they are queued, so the count of
        outstanding units never reaches 0 early)."""
        while True:
            item = work.get()
            if item is None:
                return
            batch, deaths = item
            try:
                res = w.call(batch)
            except SpliceError as exc:         # the bench cannot open: the run's error, not a variant's
                out.put(("error", exc))
                continue
            except WorkerDied as exc:
                w.stop()
                w.state = "restarting"
                self._after_death(batch, deaths, str(exc), work, out)
                continue
            if res.lost:                       # a GPU fault: the process has ended; a fresh one next
                w.stop()
            if res.undone:                     # the rest of the batch, on whichever worker is free
                out.put(("more", 1))
                work.put((replace(batch, candidates=tuple(c for c in batch.candidates if c.key in res.undone)), 0))
            out.put(("done", res))

    @staticmethod
    def _after_death(batch: TimeBatch, deaths: int, why: str, work: queue.Queue, out: queue.Queue) -> None:
        cands = batch.candidates
        if len(cands) > 1:
            half = len(cands) // 2
            out.put(("more", 1))
            for part in (cands[:half], cands[half:]):
                work.put((replace(batch, candidates=part), 0))
        elif deaths + 1 < MAX_DEATHS:
            work.put((batch, deaths + 1))
        else:
            c = cands[0]
            out.put(("done", BatchResult("", "", batch.rung, 0, (VariantTiming(
                c.key, fault=f"its GPU worker died {deaths + 1} times while it ran: {why}"),))))

    def close(self) -> None:
        for w in self.workers:
            w.stop()


def describe_gpu(gpu, factory_name: str) -> dict:
    """{name, arch, count} of a GPU, asked in a spawned process (the driver creates no context)."""
    from .worker import describe

    ctx = _spawn()
    parent, child = ctx.Pipe()
    p = ctx.Process(target=describe, args=(child, gpu, factory_name), daemon=True)
    p.start()
    child.close()
    try:
        msg = parent.recv()
    except EOFError:
        msg = Failed(f"the process asking for the GPU ended (exit status {p.exitcode})")
    p.join(10)
    if isinstance(msg, Failed):
        from ..errors import SpliceError

        raise SpliceError(msg.message)
    return msg


class Embedded:
    """The executor the driver talks to: ``cpu`` (a CpuPool), ``start_gpus``, ``time``."""

    name = "embedded"

    def __init__(self, jobs: int, gpus, factory_name: str):
        self.cpu = CpuPool(jobs)
        self.gpu_ids: Optional[list] = None if gpus is None else list(gpus)   # None: every visible GPU
        self.factory_name = factory_name
        self.gpus: Optional[GpuPool] = None

    def device(self) -> dict:
        """{name, arch, count, workers}: the first GPU's name and arch, one worker per GPU used."""
        d = dict(describe_gpu(self.gpu_ids[0] if self.gpu_ids else None, self.factory_name))
        if self.gpu_ids is None:
            self.gpu_ids = list(range(int(d.get("count", 1))))
        d["workers"] = len(self.gpu_ids)
        return d

    def start_gpus(self, spec: BenchSpec) -> None:
        self.gpus = GpuPool(self.gpu_ids if self.gpu_ids is not None else [0], spec)

    def time(self, batches: list) -> Iterator:
        if self.gpus is None:
            raise RuntimeError("time() before start_gpus()")
        return self.gpus.run(batches)

    def states(self) -> list:
        cpu = [("cpu", f"{len(self.cpu.running)} tasks in flight on {self.cpu.jobs} processes")]
        return cpu + (self.gpus.states() if self.gpus is not None else [])

    def close(self) -> None:
        if self.gpus is not None:
            self.gpus.close()
