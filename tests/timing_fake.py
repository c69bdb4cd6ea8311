"""A simulated device for the timing tests: a host clock and a GPU clock, deterministic.

Every call costs the host ``submit_ms``; the work it enqueues starts on the GPU when both the
GPU is free and the host has submitted it (``max(gpu, host)``), so an event recorded on an idle
GPU is stamped at submission -- the effect that biased the old loop -- and a launch submitted
late leaves a gap inside the timed interval.  ``log`` keeps every call in order, with the
timed-interval marks, for the placement tests.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Mark:
    id: int
    t: float = 0.0          # GPU time the start event was reached
    end: float = 0.0


class FakeDevice:
    def __init__(self, cost_ms: dict, *, noise: float = 0.0, seed: int = 1, submit_ms: float = 0.005,
                 flush_ms: float = 0.04, cold_extra_ms: float = 0.0, graph: bool = False,
                 drift: float = 0.0, stalls=(), stall_ms: float = 1.0):
        self.cost = dict(cost_ms)
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.submit_ms = submit_ms
        self.flush_ms = flush_ms
        self.cold_extra_ms = cold_extra_ms    # a launch right after a flush pays this much more
        self.graph = graph
        self.drift = drift                    # every launch slower by this fraction per simulated second
        self.stalls = set(stalls)             # start marks after which the host stalls (a GC pause)
        self.stall_ms = stall_ms
        self.host = 0.0
        self.gpu = 0.0
        self.cold = False
        self.log: list = []
        self.marks = 0
        self.syncs = 0

    def _submit(self):
        self.host += self.submit_ms

    def _run(self, ms: float) -> float:
        begin = max(self.gpu, self.host)
        self.gpu = begin + ms
        return begin

    def prepare(self, name, n):
        self.log.append(("prepare", name, n))

    def restore(self, name):
        self._submit()
        self.log.append(("restore", name))
        self._run(0.001)

    def flush(self):
        self._submit()
        self.log.append(("flush",))
        self._run(self.flush_ms)
        self.cold = True

    def spacer(self, us):
        self._submit()
        self.log.append(("spacer", us))
        self._run(us / 1000.0)

    def start(self):
        self._submit()
        self.marks += 1
        m = Mark(self.marks)
        m.t = self._run(0.0)
        self.log.append(("start", m.id))
        return m

    def _one(self, name: str) -> float:
        ms = self.cost[name] * (1.0 + self.drift * self.gpu / 1000.0)
        if self.noise:
            ms *= float(np.exp(self.rng.normal(0.0, self.noise)))
        if self.cold:
            ms += self.cold_extra_ms
            self.cold = False
        return ms

    def launch(self, name, n):
        self.log.append(("launch", name, n))
        if self.marks in self.stalls:
            self.stalls.discard(self.marks)
            self.host += self.stall_ms
        if self.graph:
            self._submit()
        for _ in range(n):
            if not self.graph:
                self._submit()
            self._run(self._one(name))

    def stop(self, m):
        self._submit()
        m.end = self._run(0.0)
        self.log.append(("stop", m.id))

    def late(self, m):
        return m.t <= self.host

    def sync(self):
        self.syncs += 1
        self.log.append(("sync",))
        self.host = max(self.host, self.gpu)

    def elapsed_ms(self, m):
        return m.end - m.t

    def host_s(self):
        return self.host / 1000.0


def old_loop(dev: FakeDevice, names: list, runs: int) -> dict:
    """The loop splice used before the timing module (kept here to show the fake reproduces its
    bias): every round launches the modules in the same order between two events each, after
    a host synchronisation."""
    times = {n: [] for n in names}
    for _ in range(runs):
        marks = []
        for n in names:
            m = dev.start()
            dev.launch(n, 1)
            dev.stop(m)
            marks.append((n, m))
        dev.sync()
        for n, m in marks:
            times[n].append(dev.elapsed_ms(m))
    return times


class FakeState:
    """A device state reader: ``masks`` are the throttle masks the polls return in turn."""

    def __init__(self, masks=(0,), before_viol=0, after_viol=0):
        self.masks = list(masks)
        self.polls = 0
        self.viol = [before_viol, after_viol]
        self.snaps = 0

    def throttle_mask(self):
        m = self.masks[min(self.polls, len(self.masks) - 1)]
        self.polls += 1
        return m

    def snapshot(self):
        v = self.viol[min(self.snaps, 1)]
        self.snaps += 1
        return {"state": "known", "sm_clock_mhz": 1980, "memory_clock_mhz": 3201, "temperature_c": 40,
                "power_w": 100.0, "reasons_mask": 0, "reasons": [], "violation_ns": {"power": v, "thermal": 0}}
