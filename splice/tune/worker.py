"""A GPU worker process of the embedded executor: one per visible GPU, holding one bench.

The process is started with ``spawn`` (no CUDA state is inherited), pins itself to its GPU with
``CUDA_VISIBLE_DEVICES`` before anything imports cupy, opens the bench (the probe spec's inputs
on the device, the original loaded twice: the baseline and its A/A control) and answers batches
over a pipe.  After a batch that ended in a GPU fault it exits: a CUDA context that saw an
illegal address is lost, and the next batch must start on a fresh one (the executor starts a
new process).
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Ready:
    device: str


@dataclass(frozen=True)
class Failed:
    """The bench could not be opened, or a batch raised: the message, for the run's report."""
    message: str


def pin(gpu) -> None:
    """Make GPU ``gpu`` (an index into the GPUs this process may see) the only visible one:
    under ``CUDA_VISIBLE_DEVICES=2,3`` index 1 is device 3, not device 1."""
    if gpu is None:
        return
    seen = [x.strip() for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip()]
    os.environ["CUDA_VISIBLE_DEVICES"] = seen[gpu] if gpu < len(seen) else str(gpu)


def serve(conn, gpu, spec) -> None:
    """The worker's loop: open the bench, then one batch per message until None or EOF."""
    pin(gpu)
    from ..errors import SpliceError
    from .timer import open_bench

    try:
        bench = open_bench(spec)
    except SpliceError as exc:
        conn.send(Failed(exc.render()))
        return
    conn.send(Ready(bench.device))
    while True:
        try:
            batch = conn.recv()
        except EOFError:
            return
        if batch is None:
            return
        result = bench.run(batch)
        conn.send(result)
        if result.lost:           # a lost CUDA context: the executor starts a fresh process
            return


def describe(conn, gpu, factory_name: str) -> None:
    """Send the device's {name, arch, count} (``timer.device_info``) and exit: asked in a
    process of its own, so the driver never creates a CUDA context."""
    pin(gpu)
    from ..errors import SpliceError
    from .timer import factory

    try:
        conn.send(factory(factory_name).describe())
    except SpliceError as exc:
        conn.send(Failed(exc.render()))
