"""The timing method, as pure logic over an injectable device (:class:`Backend`).

One *sample* of a module is, on the GPU stream, in this order::

    restore   inputs the kernel writes, back to their initial bytes        (not timed)
    flush     --cache cold only: a write over a buffer of 2x the L2        (not timed)
    spacer    a fixed-length spin kernel                                   (not timed)
    start     CUDA event
    launch    N back-to-back launches (or one captured graph of N)         (timed)
    stop      CUDA event

With ``--cache cold`` the sample is N of these groups, one launch each, so that every timed launch
follows its own flush; the sample is the sum of the N timed intervals.  Either way a sample is
divided by N: per-launch milliseconds.

Why a spacer: an event recorded on an idle GPU is timestamped when the host *submits* it, so the
first timed launch after a host synchronisation also times the host's launch latency (the old
loop's position bias: the original, always first, looked ~20 % slower than an identical copy on a
23 us kernel).  The spacer keeps the GPU busy for longer than the host takes to submit
start + launches + stop, so every timed launch starts on a GPU that already has it queued, after
the same preceding work.  The host checks this after each sample (``Backend.late``: the start
event had already completed when stop was submitted); a round where that happened is discarded,
and when it happens in 3 of the last 10 rounds (a slow host, not one pause) the spacer doubles.

A *round* takes one sample of every module in an order from :class:`RoundOrders` (a seeded
Latin square: every module at every position equally often), then synchronises.  Rounds go on
until every ratio's interval is narrower than the target, the time budget is spent, or the round
cap is reached.  The control (a second loaded copy of the baseline) is timed in the same rounds;
its ratio to the baseline is the A/A band that decides every verdict (``timing_stats.verdict``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Protocol

from .timing_stats import RoundOrders, bootstrap_indices, choose_batch, ratio_interval, stop_reason, summary, \
    verdict

CACHES = ("warm", "cold")
FIRST_SAMPLES = 3          # single-launch samples per module in the first measurement
LATE_WINDOW, LATE_GROW = 10, 3   # 3 late rounds among the last 10 double the spacer; one is discarded


@dataclass(frozen=True)
class TimingOptions:
    """What ``splice probe`` exposes as --cache, --runs, --warmup, --graph, --ci-width,
    --time-budget, --confidence, --min-sample-ms and --timing-seed."""
    cache: str = "warm"            # warm | cold (L2 flushed before every timed launch)
    runs: int = 200                # the most rounds: a cap, the run stops earlier when precise
    warmup: int = 5                # untimed launches of every module first
    graph: bool = False            # a sample launches one captured graph of N launches
    target: float = 0.005          # stop when every interval's (hi - lo) / ratio is at most this
    budget_s: float = 10.0         # ... or when the timing has taken this long
    confidence: float = 0.95
    min_rounds: int = 20           # no precision stop before this many rounds
    check_every: int = 5           # rounds between two looks at the intervals
    resamples: int = 2000          # bootstrap resamples
    seed: int = 0                  # round orders and bootstrap draws
    min_sample_ms: float = 1.0     # one sample covers at least this much of the shortest module
    max_batch: int = 1000
    spacer_min_us: float = 50.0
    spacer_max_us: float = 20000.0

    def __post_init__(self):
        if self.cache not in CACHES:
            raise ValueError(f"cache {self.cache!r}: one of {', '.join(CACHES)}")


class Backend(Protocol):
    """The device as the method sees it.  Every call but ``sync``, ``elapsed_ms``, ``late`` and
    ``host_s`` only enqueues work on one stream, in call order."""

    def prepare(self, name: str, n: int) -> None: ...  # before any sample: e.g. capture the graph of n
    def restore(self, name: str) -> None: ... # inputs module `name` writes, back to initial bytes
    def flush(self) -> None: ...              # overwrite >= 2x the L2 (cold cache)
    def spacer(self, us: float) -> None: ...  # keep the GPU busy for ``us`` microseconds
    def start(self) -> object: ...            # a mark (CUDA event) before the timed launches
    def launch(self, name: str, n: int) -> None: ...
    def stop(self, mark) -> None: ...         # the mark's end event
    def late(self, mark) -> bool: ...         # the GPU had passed the start already
    def sync(self) -> None: ...
    def elapsed_ms(self, mark) -> float: ...  # after sync
    def host_s(self) -> float: ...            # the host's clock (seconds)


class StateReader(Protocol):
    def snapshot(self) -> dict: ...
    def throttle_mask(self) -> Optional[int]: ...


@dataclass
class _Run:
    """What the rounds accumulate (one object per ``measure`` call, no global state)."""
    names: list
    batch: int = 1
    spacer_us: float = 50.0
    first_ms: dict = field(default_factory=dict)
    samples: dict = field(default_factory=dict)
    orders: list = field(default_factory=list)
    late_rounds: int = 0
    late_kept: int = 0
    max_lag_s: float = 0.0
    polls: int = 0
    polls_throttled: int = 0
    polled_mask: Optional[int] = None
    recent: list = field(default_factory=list)     # late or not, the last LATE_WINDOW rounds


def _sample(be: Backend, run: _Run, name: str, n: int, cold: bool) -> tuple:
    """Enqueue one sample of ``name`` (see the module docstring); (marks, late)."""
    marks, late = [], False
    for _ in range(n if cold else 1):
        be.restore(name)
        if cold:
            be.flush()
        be.spacer(run.spacer_us)
        t0 = be.host_s()
        m = be.start()
        be.launch(name, 1 if cold else n)
        be.stop(m)
        run.max_lag_s = max(run.max_lag_s, be.host_s() - t0)
        late = be.late(m) or late
        marks.append(m)
    return marks, late


def _per_launch(be: Backend, marks: list, n: int) -> float:
    return sum(be.elapsed_ms(m) for m in marks) / n


def calibrate(be: Backend, run: _Run, opt: TimingOptions) -> None:
    """Warm-up launches; the first measurement (single-launch samples) that sets N; one full
    sample per module that sets the spacer from the host's submission time."""
    cold = opt.cache == "cold"
    for name in run.names:
        be.prepare(name, 1)
    for _ in range(max(opt.warmup, 0)):
        for name in run.names:
            be.launch(name, 1)
    be.sync()
    run.spacer_us = opt.spacer_min_us
    for name in run.names:
        got = []
        while len(got) < FIRST_SAMPLES:
            marks, late = _sample(be, run, name, 1, cold)
            be.sync()
            if late and run.spacer_us < opt.spacer_max_us:    # the host was slower than the spacer
                run.spacer_us = min(2 * run.spacer_us, opt.spacer_max_us)
                continue
            got.append(_per_launch(be, marks, 1))
        run.first_ms[name] = sorted(got)[len(got) // 2]
    run.batch = choose_batch(min(run.first_ms.values()), opt.min_sample_ms, opt.max_batch)
    run.max_lag_s = 0.0
    for name in run.names:
        be.prepare(name, 1 if cold else run.batch)     # a graph is captured here, not inside a sample
        _sample(be, run, name, run.batch, cold)
        be.sync()
    run.spacer_us = min(max(2e6 * run.max_lag_s + 20.0, opt.spacer_min_us), opt.spacer_max_us)


def _round(be: Backend, run: _Run, order: list, opt: TimingOptions, state: Optional[StateReader]) -> bool:
    """One sample of every module in ``order``; False when the round was discarded (late)."""
    cold = opt.cache == "cold"
    marks, late = {}, False
    for i in order:
        name = run.names[i]
        marks[name], lt = _sample(be, run, name, run.batch, cold)
        late = late or lt
    if state is not None:            # while the GPU is busy with the round
        m = state.throttle_mask()
        if m is not None:
            run.polls += 1
            run.polled_mask = (run.polled_mask or 0) | m
            run.polls_throttled += bool(_throttling(m))
    be.sync()
    run.recent = (run.recent + [late])[-LATE_WINDOW:]
    if late and run.spacer_us < opt.spacer_max_us:
        run.late_rounds += 1
        if sum(run.recent) >= LATE_GROW:   # the host is slow, not one pause: a longer spacer
            run.spacer_us = min(2 * run.spacer_us, opt.spacer_max_us)
            run.recent = []
        return False
    run.late_kept += late
    for name, ms in marks.items():
        run.samples[name].append(_per_launch(be, ms, run.batch))
    run.orders.append(list(order))
    return True


def _throttling(mask: int) -> list:
    from .device_state import reason_names

    return reason_names(mask)


def _intervals(run: _Run, baseline: str, opt: TimingOptions) -> dict:
    """Every other module's ratio to the baseline, one set of bootstrap draws for all."""
    a = run.samples[baseline]
    idx = bootstrap_indices(len(a), opt.resamples, opt.seed)
    return {n: ratio_interval(a, run.samples[n], opt.confidence, idx=idx) for n in run.names if n != baseline}


def rounds(be: Backend, run: _Run, baseline: str, opt: TimingOptions, t_start: float,
           state: Optional[StateReader] = None, progress: Optional[Callable] = None) -> str:
    """Rounds until :func:`timing_stats.stop_reason` says stop; returns the reason."""
    orders = RoundOrders(len(run.names), opt.seed)
    run.samples = {n: [] for n in run.names}
    while True:
        kept = _round(be, run, orders.next(), opt, state)
        n = len(run.orders)
        if kept and progress is not None:
            progress()
        widths: list = []
        if kept and n >= min(opt.min_rounds, opt.runs) and (n % opt.check_every == 0 or n >= opt.runs):
            widths = [iv.width for iv in _intervals(run, baseline, opt).values()]
        why = stop_reason(n, be.host_s() - t_start, widths, target=opt.target, budget_s=opt.budget_s,
                          cap=opt.runs, min_rounds=opt.min_rounds)
        if why is not None and n > 0:
            return why


def measure(be: Backend, names: list, baseline: str, control: str, opt: TimingOptions,
            state: Optional[StateReader] = None, progress: Optional[Callable] = None) -> dict:
    """Time every module of ``names`` against ``baseline`` with ``control`` (a second loaded
    copy of the baseline) as the A/A.  Returns the JSON-able result (:func:`result`)."""
    if baseline not in names or control not in names or baseline == control:
        raise ValueError(f"measure: baseline {baseline!r} and control {control!r} must be two of {names}")
    if opt.runs < 1:
        raise ValueError("measure: runs must be 1 or more")
    from .device_state import judge

    run = _Run(list(names))
    t0 = be.host_s()
    before = state.snapshot() if state is not None else _no_state()
    calibrate(be, run, opt)
    why = rounds(be, run, baseline, opt, t0, state, progress)
    after = state.snapshot() if state is not None else _no_state()
    dev = judge(before, after, run.polled_mask, run.polls, run.polls_throttled)
    res = result(run, baseline, control, opt, why, be.host_s() - t0, dev)
    describe = getattr(be, "describe", None)     # the device's own facts (L2, flush bytes, restored inputs)
    if describe is not None:
        res["method"].update(describe())
    return res


def _no_state() -> dict:
    return {"state": "unknown", "reason": "no device state reader was given"}


def result(run: _Run, baseline: str, control: str, opt: TimingOptions, stopped: str, seconds: float,
           device: dict) -> dict:
    """The JSON-able record: method, per-module samples and statistics, every ratio with its
    interval, the A/A band and each verdict (withheld when the device throttled)."""
    from .timing_stats import band

    ivs = _intervals(run, baseline, opt)
    aa = ivs[control]
    withheld = "the device throttled during the run: " + ", ".join(device["reasons"]) \
        if device.get("throttled") else None
    ratios = {}
    for n, iv in ivs.items():
        ratios[n] = iv.as_dict()
        if n != control:
            ratios[n]["verdict"] = "withheld" if withheld else verdict(iv, aa)
    return {"method": method(run, opt), "roles": {"baseline": baseline, "control": control}, "names": list(run.names),
            "modules": {n: {"events": summary(s), "first_ms": run.first_ms[n], "samples_ms": list(s)}
                        for n, s in run.samples.items()},
            "ratios": ratios, "aa": {**aa.as_dict(), "band": band(aa)},
            "rounds": len(run.orders), "stopped": stopped, "seconds": seconds,
            "late_rounds": run.late_rounds, "late_kept": run.late_kept,
            "orders": run.orders, "device": device, "withheld": withheld}


def method(run: _Run, opt: TimingOptions) -> dict:
    """How the samples were taken: what a reader needs to judge (or repeat) the figures."""
    d = asdict(opt)
    d.update(batch=run.batch, batch_from_ms=min(run.first_ms.values()) if run.first_ms else None,
             launch="graph" if opt.graph else "direct", spacer_us=run.spacer_us,
             host_submit_us=run.max_lag_s * 1e6,
             order="seeded Latin square: every module at every position once per block of rounds",
             interval="paired percentile bootstrap of the ratio of medians")
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}
