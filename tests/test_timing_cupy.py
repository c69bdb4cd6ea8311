"""The timing's cupy device (splice/probe/timing_cupy.py) against a recording fake cupy: what goes
on the stream in which order -- the L2 flush (>= 2x the L2, a memset) and the input restore
before every timed launch and never between its two events, the spacer kernel last before the
start event, a captured graph of N launches -- and the restore of inout buffers on a Device."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from splice.probe.timing import TimingOptions, time_launchers

L2 = 50 * (1 << 20)


class RecCupy:
    """Records every enqueue as (op, detail); a launch of module function f advances the clock by
    cost[f]."""

    uint8 = np.uint8

    def __init__(self, cost: dict):
        self.ops: list = []
        self.clock = [0.0]
        self.cost = cost
        ops, clock = self.ops, self.clock

        class Event:
            n = 0
            done = False

            def __init__(self):
                Event.n += 1
                self.id = Event.n

            def record(self, stream=None):
                self.t = clock[0]
                ops.append(("event", self.id))

        def launch(fn, *a):
            ops.append(("launch", fn))
            clock[0] += cost.get(fn, 0.0)

        rt = SimpleNamespace(
            memsetAsync=lambda ptr, v, n, s: ops.append(("memset", ptr, v, n)),
            memcpyAsync=lambda dst, src, n, kind, s: ops.append(("memcpy", dst, src, n)),
            memcpyDeviceToDevice=3,
            getDeviceProperties=lambda i: {"l2CacheSize": L2})
        self.cuda = SimpleNamespace(Event=Event, runtime=rt, driver=SimpleNamespace(launchKernel=launch),
                                    get_elapsed_time=lambda a, b: b.t - a.t,
                                    Device=lambda *a: SimpleNamespace(id=0, compute_capability="90"))

    def empty(self, n, dtype=None):
        return SimpleNamespace(data=SimpleNamespace(ptr=0xF1000), nbytes=n)

    def asarray(self, host):
        return SimpleNamespace(data=SimpleNamespace(ptr=0xC0000 + len(self.ops)), nbytes=np.asarray(host).nbytes)

    def RawModule(self, path):
        return SimpleNamespace(get_function=lambda entry: SimpleNamespace(kernel=SimpleNamespace(ptr=99)))


class RecStream:
    ptr = 7

    def __init__(self, cp):
        self.cp = cp
        self.capturing = None

    def synchronize(self):
        self.cp.ops.append(("sync",))

    def begin_capture(self):
        self.cp.ops.append(("capture",))
        self.capturing = []

    def end_capture(self):
        body, self.capturing = self.capturing, None
        cp = self.cp

        def replay(stream):
            cp.ops.append(("graph", len(body)))
            for f in body:
                f()
        return SimpleNamespace(launch=replay)


def _launcher(cp, stream, fn):
    def run(s):
        if s.capturing is not None:
            s.capturing.append(lambda: cp.cuda.driver.launchKernel(fn))
            return
        cp.cuda.driver.launchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s.ptr, 0, 0)
    return run


def _time(cache="warm", graph=False, restore=None):
    cp = RecCupy({1: 0.023, 2: 0.023, 3: 0.023})
    st = RecStream(cp)
    launchers = {n: _launcher(cp, st, fn) for n, fn in (("original", 1), ("control", 2), ("spliced", 3))}
    r = time_launchers(cp, st, launchers, "original", "control",
                       TimingOptions(cache=cache, graph=graph, runs=12, min_rounds=12, resamples=200),
                       restore=restore, restored=("buf",) if restore else ())
    return cp, r


def _timed_and_before(ops):
    """The ops between each pair of events (start, stop), and the ops since the previous stop."""
    inside, before, cur, since, events = [], [], None, [], 0
    for op in ops:
        if op[0] == "event":
            events += 1
            if events % 2:
                cur, before_one = [], since
                before.append(before_one)
            else:
                inside.append(cur)
                cur, since = None, []
        elif cur is not None:
            cur.append(op)
        else:
            since.append(op)
    return inside, before


@pytest.mark.needs("ptxas")
def test_cold_cache_memsets_twice_the_l2_before_every_timed_launch_never_inside():
    cp, r = _time("cold")
    inside, before = _timed_and_before(cp.ops)
    assert all(all(op[0] == "launch" and op[1] in (1, 2, 3) for op in xs) and len(xs) == 1 for xs in inside)
    assert all(any(op[0] == "memset" for op in b) for b in before)
    last = [b[-2:] for b in before]           # the flush, then the spacer (function 99), then start
    assert all(x[0][0] == "memset" and x[0][3] >= 2 * L2 and x[1] == ("launch", 99) for x in last)
    assert r["method"]["flush_bytes"] >= 2 * L2 and r["method"]["l2_bytes"] == L2
    assert r["method"]["batch"] == 44 and r["rounds"] == 12


@pytest.mark.needs("ptxas")
def test_warm_cache_never_memsets_and_times_n_launches_between_two_events():
    cp, r = _time("warm")
    assert not any(op[0] == "memset" for op in cp.ops)
    inside, before = _timed_and_before(cp.ops)
    assert max(len(xs) for xs in inside) == 44 and all(b[-1] == ("launch", 99) for b in before)
    assert r["modules"]["spliced"]["events"]["median_ms"] == pytest.approx(0.023)
    assert r["method"]["flush_bytes"] is None


@pytest.mark.needs("ptxas")
def test_graph_mode_replays_one_captured_graph_of_n_launches():
    cp, r = _time("warm", graph=True)
    inside, _ = _timed_and_before(cp.ops)
    assert any(xs and xs[0] == ("graph", 44) and len(xs) == 45 for xs in inside)
    assert r["method"]["launch"] == "graph"
    # every graph was captured outside the samples (a capture between the events would be timed
    # as the host's work, and the spacer sized for it)
    assert sum(1 for op in cp.ops if op[0] == "capture") == 6          # (name, 1) and (name, 44)
    assert not any(op[0] == "capture" for xs in inside for op in xs)


@pytest.mark.needs("ptxas")
def test_the_restore_runs_before_the_flush_for_the_module_sampled():
    seen = []

    def restore(name, stream):
        stream.cp.ops.append(("restore", name))
        seen.append(name)
    cp, r = _time("cold", restore=restore)
    inside, before = _timed_and_before(cp.ops)
    assert all([op[0] for op in b[-3:]] == ["restore", "memset", "launch"] for b in before)
    assert not any(op[0] == "restore" for xs in inside for op in xs)
    assert set(seen) == {"original", "control", "spliced"} and r["method"]["restored"] == ["buf"]


def test_graph_capture_on_the_default_stream_is_refused():
    from splice.errors import SpliceError
    from splice.probe.timing_cupy import CupyBackend

    cp = RecCupy({})
    st = RecStream(cp)
    st.ptr = 0
    with pytest.raises(SpliceError, match="cannot capture the legacy default stream"):
        CupyBackend(cp, st, {}, graph=True)


def test_restorer_copies_inout_buffers_and_zero_fills(tmp_path):
    """An inout buffer with initial bytes is copied back from a device copy; one that starts at
    zero is memset; inputs and outputs are left alone."""
    from splice.probe.timing_cupy import Restorer

    cp = RecCupy({})
    spec = SimpleNamespace(seed=0, globals=[], fields=[
        SimpleNamespace(name="x", kind="buffer", role="inout", bytes=64),
        SimpleNamespace(name="z", kind="buffer", role="inout", bytes=32),
        SimpleNamespace(name="a", kind="buffer", role="input", bytes=16),
        SimpleNamespace(name="c", kind="buffer", role="output", bytes=16)])
    views = {n: SimpleNamespace(data=SimpleNamespace(ptr=p)) for n, p in (("x", 0x100), ("z", 0x200),
                                                                           ("a", 0x300), ("c", 0x400))}
    dev = SimpleNamespace(cp=cp, spec=spec, views=views, host={"x": np.arange(64, dtype=np.uint8)}, arrays={},
                          globals={})
    rs = Restorer(dev)
    assert rs.names == ["x", "z"] and not rs.empty
    rs("original", SimpleNamespace(ptr=7))
    assert [op[0] for op in cp.ops] == ["memcpy", "memset"]
    assert cp.ops[0][1] == 0x100 and cp.ops[0][3] == 64 and cp.ops[1] == ("memset", 0x200, 0, 32)
