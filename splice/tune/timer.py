"""Timing variants against the original: the protocol tune's GPU workers speak, and its adapter
onto today's probe -- the one module of splice.tune that calls ``splice.probe`` at run time.

A GPU worker holds one :class:`Bench`: the probe spec's inputs on its device, the original
module loaded twice (the control and an independently loaded copy of it, the A/A pair) and its
reference outputs.  ``Bench.run(batch)`` checks each candidate's whole outputs against the
reference (byte for byte), runs the phase harness for the ones verify could not prove, and times
``batch.rounds`` rounds, each launching the control, its copy and every candidate once, in an
order rotated by one each round.  It returns per candidate the (candidate ms, control ms) pairs
of the rounds with that batch's ratio, interval and verdict (``judge``), and the A/A pairs; the
driver judges again, with :func:`summarize`, over every round a variant has had (a ratio of
medians with a bootstrap interval, and a verdict against the A/A band).

What changes when the probe's own timing (A/A control, interleaving, bootstrap intervals,
verdicts, cache state) lands: ``ProbeBench._time`` becomes one call of its ranking API with the
control and the candidates, and ``summarize`` / ``ratio_interval`` / ``verdict`` become calls of
its statistics; the records here (``TimeBatch``, ``VariantTiming``, ``BatchResult``) stay, so
the driver, the store and the executors do not change.
"""
from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass
from typing import Optional, Protocol

FASTER, SLOWER, SAME = "faster", "slower", "indistinguishable"
DEFAULT_FACTORY = "splice.tune.timer:ProbeBench"


@dataclass(frozen=True)
class BenchSpec:
    """What a GPU worker needs to open its bench; plain data, shipped to worker processes."""
    probe: str                 # the probe spec (probes/<module stem>.yaml)
    module: str                # the original module (the spec's check reads its .param list)
    entry: str
    control: str               # the original's cubin
    control_sha: str
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
    rounds: int
    candidates: tuple
    seed: int = 0


@dataclass(frozen=True)
class VariantTiming:
    key: str
    pairs: tuple = ()          # (candidate ms, control ms) per round
    identical: Optional[bool] = None   # whole outputs equal to the control's
    harness: str = ""          # '' (not run) | 'identical' | what differed
    fault: str = ""            # a GPU fault while running this candidate
    judged: Optional[dict] = None      # this batch's {ratio, low, high, verdict, rounds} (summarize)


@dataclass(frozen=True)
class BatchResult:
    worker: str
    device: str
    rung: int
    rounds: int
    timings: tuple             # VariantTiming per candidate run
    aa: tuple = ()             # (copy ms, control ms) per round: the control against itself
    seconds: float = 0.0
    undone: tuple = ()         # keys not run (the batch stopped at a fault)
    pid: int = 0               # the worker process that ran it
    lost: bool = False         # the worker's CUDA context is lost: replace the worker


class Bench(Protocol):
    device: str

    def run(self, batch: TimeBatch) -> BatchResult: ...


def factory(name: str):
    """The bench class ``module:attr`` names (the probe's, or a test's fake)."""
    mod, _, attr = name.partition(":")
    return getattr(importlib.import_module(mod), attr)


# --------------------------------------------------------------------------------------------
# statistics (see the module docstring: these become the probe timing's own)
# --------------------------------------------------------------------------------------------

def ratio_interval(pairs, seed: int = 0, level: float = 0.95, resamples: int = 2000) -> tuple:
    """(ratio of medians, low, high): candidate median over control median, with a percentile
    bootstrap over rounds (a round's two times stay together, so drift cancels)."""
    import numpy as np

    a = np.asarray(pairs, dtype=float)
    if a.ndim != 2 or len(a) == 0:
        raise ValueError("no timing pairs")
    ratio = float(np.median(a[:, 0]) / np.median(a[:, 1]))
    if len(a) == 1:
        return ratio, ratio, ratio
    idx = np.random.default_rng(seed).integers(0, len(a), (resamples, len(a)))
    rs = np.median(a[idx, 0], axis=1) / np.median(a[idx, 1], axis=1)
    lo, hi = np.quantile(rs, [(1 - level) / 2, (1 + level) / 2])
    return ratio, float(lo), float(hi)


def verdict(low: float, high: float, aa: Optional[tuple] = None) -> str:
    """faster / slower when the whole interval is past 1 and past the A/A band (the control
    against its own copy: what the method alone produces); otherwise indistinguishable."""
    aa_lo, aa_hi = aa if aa is not None else (1.0, 1.0)
    if high < 1.0 and high < aa_lo:
        return FASTER
    if low > 1.0 and low > aa_hi:
        return SLOWER
    return SAME


def summarize(pairs, aa_pairs=(), seed: int = 0) -> dict:
    """{ratio, low, high, verdict, rounds} of a candidate's pairs, judged against the A/A pairs."""
    ratio, lo, hi = ratio_interval(pairs, seed)
    aa = ratio_interval(aa_pairs, seed)[1:] if len(aa_pairs) else None
    return {"ratio": ratio, "low": lo, "high": hi, "verdict": verdict(lo, hi, aa), "rounds": len(pairs)}


def judge(timings, aa, seed: int = 0) -> tuple:
    """Each timing with its batch's own summary: the protocol's per-variant interval and verdict
    (the driver judges again over every round a variant has had)."""
    from dataclasses import replace

    return tuple(replace(t, judged=summarize(t.pairs, aa, seed)) if t.pairs else t for t in timings)


# --------------------------------------------------------------------------------------------
# the adapter onto today's probe
# --------------------------------------------------------------------------------------------

def _cuda_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("CUDADriverError", "CUDARuntimeError")


class ProbeBench:
    """A GPU worker's bench on ``splice.probe``: ``device.Device`` for inputs and launches,
    ``memory.snapshot`` for the whole device state a render leaves (every buffer and surface,
    compared on the device: enc5's arena is 1.3 GB), ``timing.time_interleaved`` for the
    CUDA-event rounds, ``session.run_probe`` for the harness."""

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
        self.dev.load("control", spec.control)
        self.dev.load("control-copy", spec.control)      # a second cuModuleLoad: the A/A pair
        self.dev.prepare(self.dev.stream)
        self.before = snapshot(self.dev, self.dev.stream)     # inputs as the spec fills them
        self.reference = self._render("control")
        if not self._same(self._render("control-copy")):
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
        """Every byte of every field equal to the control's (on the device; NaNs by their bits)."""
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

    def _time(self, names: list, rounds: int) -> dict:
        """{name: [ms per round]}: one launch of each name per round, the order rotated by one
        each round (no name always first), after one warm-up launch of each."""
        from ..probe.timing import time_interleaved

        launch = {n: self.dev.launcher(n) for n in names}
        time_interleaved(self.dev.cp, self.dev.stream, launch, 0, 1)
        out: dict = {n: [] for n in names}
        for r in range(rounds):
            k = r % len(names)
            order = names[k:] + names[:k]
            got = time_interleaved(self.dev.cp, self.dev.stream, {n: launch[n] for n in order}, 1, 0)
            for n in names:
                out[n].append(got[n]["times_ms"][0])
        return out

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
                self.broken = True        # the context is lost: nothing more runs here
                return BatchResult("", self.device, batch.rung, 0, tuple(checked) + (
                    VariantTiming(c.key, fault=f"{type(exc).__name__}: {exc}"),), (), time.perf_counter() - t0,
                    tuple(x.key for x in batch.candidates[i + 1:]), os.getpid(), lost=True)
        return self._timed(batch, [v for v in checked if not v.fault], t0, [v for v in checked if v.fault])

    def _timed(self, batch: TimeBatch, checked: list, t0: float, refused: list) -> BatchResult:
        keys = [v.key for v in checked if v.identical and v.harness in ("", "identical")]
        times = self._time(["control", "control-copy", *keys], batch.rounds) if batch.rounds else {}
        ctl = times.get("control", [])
        out = []
        for v in checked:
            pairs = tuple(zip(times[v.key], ctl)) if v.key in times else ()
            out.append(VariantTiming(v.key, pairs, v.identical, v.harness))
        aa = tuple(zip(times.get("control-copy", []), ctl))
        return BatchResult("", self.device, batch.rung, batch.rounds, judge(out, aa, batch.seed) + tuple(refused),
                           aa, time.perf_counter() - t0, pid=os.getpid())


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
