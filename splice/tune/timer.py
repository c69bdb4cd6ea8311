"""Timing variants against the original: the protocol tune's GPU workers speak, on the probe's
one timing method (``splice.probe.timing``, docs/timing.md) -- the one module of splice.tune
that times, and with ``steps.py`` the only one that calls ``splice.probe``.

A GPU worker holds one bench: the probe spec's inputs on its device, the original module loaded
twice -- the *baseline* (``original``) and the *control* (``control``: the same cubin loaded a
second time, the A/A) -- and the device state one render leaves.  ``run(batch)`` checks each
candidate's whole outputs against the original's (byte for byte), runs the phase harness for
the ones verify could not prove, then times the survivors with the timing method: the original,
the control and every candidate in the same rounds (a seeded Latin-square order, a spacer before
every sample, ``cache`` warm or cold, N launches per sample from ``min_sample_ms``), the rounds
stopping when every interval is narrower than ``ci_width``, when ``time_budget`` is spent or at
``batch.rounds`` -- a cap: halving asks for rounds, the timing may need fewer.  The device's
state is read through NVML; a batch during which it throttled has its verdicts withheld.

The batch returns per candidate its (candidate ms, original ms) pairs (one per kept round) with
the timing's own ratio, interval and verdict for that batch, the A/A pairs (control ms, original
ms), why the rounds stopped, what was withheld, and the timing record itself.  The driver judges
a variant again over every round it has had, with the same statistics (:func:`summarize`:
``splice.probe.timing_stats``' ratio of medians, paired bootstrap interval and verdict against
the A/A band): one statistics implementation in the project.
"""
from __future__ import annotations

import importlib
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Optional, Protocol

FASTER, SLOWER, SAME, WITHHELD = "faster", "slower", "indistinguishable", "withheld"
DEFAULT_FACTORY = "splice.tune.timer:ProbeBench"
BASELINE, CONTROL = "original", "control"      # the timing's roles: the original, its second load
CACHES = ("warm", "cold")


@dataclass(frozen=True)
class Timing:
    """The timing method's settings for every batch (the space's ``search:``, or the command's
    --cache, --min-sample-ms, --ci-width, --time-budget); ``batch.rounds`` is the round cap."""
    cache: str = "warm"             # cold: L2 flushed before every timed launch, outside the interval
    min_sample_ms: float = 1.0      # one sample covers at least this much of the shortest module
    ci_width: float = 0.005         # stop when every interval is at most this wide, relative
    time_budget: float = 60.0       # seconds of timing per batch at most
    confidence: float = 0.95
    warmup: int = 5                 # untimed launches of every module first


@dataclass(frozen=True)
class BenchSpec:
    """What a GPU worker needs to open its bench; plain data, shipped to worker processes."""
    probe: str                 # the probe spec (probes/<module stem>.yaml)
    module: str                # the original module (the spec's check reads its .param list)
    entry: str
    original: str              # the original's cubin (loaded twice: the baseline and the control)
    original_sha: str
    factory: str = DEFAULT_FACTORY


@dataclass(frozen=True)
class Candidate:
    key: str
    cubin: str
    cubin_sha: str
    recipe: str = ""           # the variant's recipe (the harness builds its cut kernels from it)
    harness: bool = False      # verify did not prove it: the harness must


@dataclass(frozen=True)
class TimeBatch:
    rung: int
    rounds: int                # the most rounds (the timing stops earlier once precise enough)
    candidates: tuple
    seed: int = 0
    timing: Timing = field(default_factory=Timing)


@dataclass(frozen=True)
class VariantTiming:
    key: str
    pairs: tuple = ()          # (candidate ms, original ms) per kept round
    identical: Optional[bool] = None   # whole outputs equal to the original's
    harness: str = ""          # '' (not run) | 'identical' | what differed
    fault: str = ""            # a GPU fault while running this candidate
    judged: Optional[dict] = None      # this batch's {ratio, lo, hi, confidence, width, rounds, verdict}


@dataclass(frozen=True)
class BatchResult:
    worker: str
    device: str
    rung: int
    rounds: int                # rounds kept
    timings: tuple             # VariantTiming per candidate run
    aa: tuple = ()             # (control ms, original ms) per round: the original against itself
    seconds: float = 0.0
    undone: tuple = ()         # keys not run (the batch stopped at a fault): queued again
    pid: int = 0               # the worker process that ran it
    lost: bool = False         # the worker's CUDA context is lost: replace the worker
    asked: int = 0             # the round cap the batch was given
    stopped: str = ""          # precision | budget | runs (the timing's own words)
    withheld: str = ""         # why the verdicts are withheld (the device throttled), or ''
    record: dict = field(default_factory=dict)   # the timing record (samples are in the pairs)


class Bench(Protocol):
    device: str

    def run(self, batch: TimeBatch) -> BatchResult: ...


def factory(name: str):
    """The bench class ``module:attr`` names (the probe's, or a test's fake)."""
    mod, _, attr = name.partition(":")
    return getattr(importlib.import_module(mod), attr)


# --------------------------------------------------------------------------------------------
# statistics: the timing module's, over the pairs a variant has gathered
# --------------------------------------------------------------------------------------------

def interval(pairs, seed: int = 0, confidence: float = 0.95):
    """The probe timing's :class:`~splice.probe.timing_stats.Interval` of (b ms, a ms) pairs:
    median(b) / median(a), a paired percentile bootstrap over rounds (seeded)."""
    from ..probe.timing_stats import ratio_interval

    if not len(pairs):
        raise ValueError("no timing pairs")
    b, a = zip(*pairs)
    return ratio_interval(a, b, confidence, seed=seed)


def summarize(pairs, aa_pairs, seed: int = 0, confidence: float = 0.95) -> dict:
    """{ratio, low, high, verdict, rounds} of a candidate's pairs, judged against the A/A pairs
    by the timing's own rule (faster / slower only outside the A/A band)."""
    from ..probe.timing_stats import verdict

    iv = interval(pairs, seed, confidence)
    aa = interval(aa_pairs, seed, confidence)
    return {"ratio": iv.ratio, "low": iv.lo, "high": iv.hi, "verdict": verdict(iv, aa), "rounds": iv.rounds}


def aa_summary(aa_pairs) -> dict:
    """{ratio, low, high, band, rounds} of the A/A pairs: the control against the original, and
    the half-width of the band every verdict must clear."""
    from ..probe.timing_stats import band

    iv = interval(aa_pairs)
    return {"ratio": iv.ratio, "low": iv.lo, "high": iv.hi, "band": band(iv), "rounds": iv.rounds}


def options(batch: TimeBatch):
    """The probe timing's options for one batch."""
    from ..probe.timing import TimingOptions

    t = batch.timing
    return TimingOptions(cache=t.cache, runs=batch.rounds, warmup=t.warmup, target=t.ci_width,
                         budget_s=t.time_budget, confidence=t.confidence, min_sample_ms=t.min_sample_ms,
                         seed=batch.seed)


def result_of(record: dict, timings: list) -> tuple:
    """(timings with their pairs and this batch's judgement, the A/A pairs) from a timing record."""
    mods = record["modules"]
    base = mods[BASELINE]["samples_ms"]
    out = []
    for v in timings:
        if v.key in mods:
            v = replace(v, pairs=tuple(zip(mods[v.key]["samples_ms"], base)), judged=record["ratios"][v.key])
        out.append(v)
    return out, tuple(zip(mods[CONTROL]["samples_ms"], base))


def brief(record: dict) -> dict:
    """The record as the store keeps it: everything but the per-module samples (the pairs)."""
    mods = {n: {k: v for k, v in m.items() if k != "samples_ms"} for n, m in record["modules"].items()}
    return {**record, "modules": mods}


# --------------------------------------------------------------------------------------------
# the bench: what every bench shares (the probe's, and the tests' fake device)
# --------------------------------------------------------------------------------------------

def _cuda_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("CUDADriverError", "CUDARuntimeError")


class TimingBench(ABC):
    """Check every candidate, then time the survivors with the probe's timing method.  A bench
    supplies ``_check(candidate) -> VariantTiming`` (load, render, compare, harness) and
    ``_measure(names, options) -> record`` (``splice.probe.timing``'s, on its device)."""

    device: str = ""
    broken: bool = False

    @abstractmethod
    def _check(self, c: Candidate) -> VariantTiming: ...

    @abstractmethod
    def _measure(self, names: list, opts) -> dict: ...

    def run(self, batch: TimeBatch) -> BatchResult:
        from ..errors import SpliceError

        t0 = time.perf_counter()
        checked = []
        for i, c in enumerate(batch.candidates):
            try:
                checked.append(self._check(c))
            except SpliceError as exc:       # the driver refuses the cubin: the context is fine
                checked.append(VariantTiming(c.key, fault=f"not loaded: {exc.message}"))
            except Exception as exc:  # noqa: BLE001 - a CUDA error is this candidate's fault
                if not _cuda_error(exc):
                    raise
                return self._lost(batch, checked, c, exc, i, t0)
        return self._timed(batch, checked, t0)

    def _lost(self, batch: TimeBatch, checked: list, c: Candidate, exc: BaseException, i: int,
              t0: float) -> BatchResult:
        """A fault loses the CUDA context: the faulting candidate is marked, the ones already
        found wrong keep their finding, every other candidate of the batch runs again elsewhere."""
        self.broken = True
        final = [v for v in checked if v.fault or v.identical is False or v.harness not in ("", "identical")]
        again = [v.key for v in checked if v not in final] + [x.key for x in batch.candidates[i + 1:]]
        fault = VariantTiming(c.key, fault=f"{type(exc).__name__}: {exc}")
        return BatchResult("", self.device, batch.rung, 0, tuple(final) + (fault,), (), time.perf_counter() - t0,
                           tuple(again), os.getpid(), lost=True, asked=batch.rounds)

    def _timed(self, batch: TimeBatch, checked: list, t0: float) -> BatchResult:
        keys = [v.key for v in checked if not v.fault and v.identical and v.harness in ("", "identical")]
        if not keys or batch.rounds < 1:
            return BatchResult("", self.device, batch.rung, 0, tuple(checked), (), time.perf_counter() - t0,
                               pid=os.getpid(), asked=batch.rounds)
        record = self._measure([BASELINE, CONTROL, *keys], options(batch))
        timings, aa = result_of(record, checked)
        return BatchResult("", self.device, batch.rung, record["rounds"], tuple(timings), aa,
                           time.perf_counter() - t0, pid=os.getpid(), asked=batch.rounds, stopped=record["stopped"],
                           withheld=record.get("withheld") or "", record=brief(record))


# --------------------------------------------------------------------------------------------
# the probe's bench
# --------------------------------------------------------------------------------------------

class ProbeBench(TimingBench):
    """A GPU worker's bench on ``splice.probe``: ``device.Device`` for inputs and launches,
    ``memory.snapshot`` for the whole device state a render leaves (every buffer and surface,
    compared on the device: enc5's arena is 1.3 GB), ``timing.time_device`` for the rounds,
    ``session.run_probe`` for the harness."""

    def __init__(self, spec: BenchSpec):
        from ..probe.check import check, cluster_dims
        from ..probe.device import Device, import_cupy
        from ..probe.memory import snapshot
        from ..probe.spec import load_spec
        from ..util import read_text

        self.spec = load_spec(spec.probe)
        cp = import_cupy(spec.probe)
        decl = check(self.spec, read_text(spec.module), spec.module)
        self.dev = Device(self.spec, cp, cluster=cluster_dims(self.spec, decl))
        self.device = self.describe(cp)["name"]
        self.dev.load(BASELINE, spec.original)
        self.dev.load(CONTROL, spec.original)      # a second cuModuleLoad: the A/A control
        self.dev.prepare(self.dev.stream)
        self.before = snapshot(self.dev, self.dev.stream)     # inputs as the spec fills them
        self.reference = self._render(BASELINE)
        if not self._same(self._render(CONTROL)):
            from ..errors import SpliceError

            raise SpliceError("the original's outputs differ between two renders: outputs cannot be "
                              "compared byte for byte (is the kernel deterministic?)", spec.probe)
        self.broken = False

    @staticmethod
    def describe(cp=None) -> dict:
        """{name, arch, count} of the visible devices (the first one's name and arch)."""
        from ..errors import SpliceError
        from ..probe.device import device_arch, import_cupy

        if cp is None:
            try:
                cp = import_cupy()
            except SpliceError as exc:       # the probe's words name the probe
                raise SpliceError("splice tune times variants on a GPU (--no-gpu screens them on the CPU "
                                  f"only): {exc.message.split(': ', 1)[-1]}") from None
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return {"name": name, "arch": device_arch(cp), "count": int(cp.cuda.runtime.getDeviceCount())}

    def _render(self, name: str) -> dict:
        """The device state one render of ``name`` leaves: inputs restored, outputs poisoned,
        the launch sequence, then every writable field copied on the device (and the module's
        spec globals, read back)."""
        from ..probe.memory import restore, snapshot

        st = self.dev.stream
        restore(self.dev, self.before, st)          # a variant that wrote an input leaves no trace
        self.dev.prepare(st)
        g = self.dev.globals.get(name)
        if g is not None:
            g.prepare(self.spec, st, False)
        self.dev.launcher(name)(st)
        state = snapshot(self.dev, st)
        if g is not None:
            state.update({f"global {k}": v for k, v in g.read(self.spec, st).items()})
        st.synchronize()
        return state

    def _same(self, state: dict) -> bool:
        """Every byte of every field equal to the original's (on the device; NaNs by their bits)."""
        import numpy as np

        for k, ref in self.reference.items():
            xp = self.dev.cp if not isinstance(ref, np.ndarray) else np
            a, b = ref.reshape(-1).view(xp.uint8), state[k].reshape(-1).view(xp.uint8)
            if a.size != b.size or not bool(xp.array_equal(a, b)):
                return False
        return True

    def _check(self, c: Candidate) -> VariantTiming:
        """Load, render, compare; the harness when verify could not prove the candidate."""
        if c.key not in self.dev.modules:
            self.dev.load(c.key, c.cubin)
        same = self._same(self._render(c.key))
        return VariantTiming(c.key, identical=same, harness=self._harness(c) if c.harness and same else "")

    def _harness(self, c: Candidate) -> str:
        from ..errors import SpliceError
        from ..probe.modules import resolve
        from ..probe.session import ProbeOptions, run_probe

        try:
            res = run_probe(resolve(c.recipe), ProbeOptions(harness=True, runs=0, roofline=False, repeat=1),
                            cp=self.dev.cp).result
        except SpliceError as exc:
            return f"harness refused: {exc.message}"
        first = (res.get("harness") or {}).get("first_divergence")
        if res.get("ok") and first is None:
            return "identical"
        return f"harness differs: {first}" if first else "outputs differ in the harness run"

    def _measure(self, names: list, opts) -> dict:
        """``splice.probe.timing.time_device``: every inout buffer, surface, table and global
        restored before each sample, the device's state read through NVML."""
        from ..probe.timing import time_device

        return time_device(self.dev, names, BASELINE, CONTROL, opts)


def open_bench(spec: BenchSpec) -> Bench:
    return factory(spec.factory)(spec)


def probe_spec(module, recipe: str, entry) -> str:
    """The probe spec of the recipe's module (``probes/<module stem>.yaml``, found as ``splice
    probe RECIPE`` finds it); it must run the recipe's entry."""
    from pathlib import Path

    from ..errors import SpliceError
    from ..probe.modules import find_spec
    from ..probe.spec import load_spec

    path = find_spec(Path(module), Path(recipe))
    if entry and load_spec(path).entry != entry:
        raise SpliceError(f"probe spec {path} runs {load_spec(path).entry}, the recipe splices {entry}", recipe)
    return str(path)
