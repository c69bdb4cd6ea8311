"""The device's state around a timing run (splice/probe/device_state.py): NVML read through a fake
pynvml, the missing-pynvml case ("unknown", said, not a crash), and what counts as throttling."""
from __future__ import annotations

import builtins
from types import SimpleNamespace

import pytest

from splice.probe.device_state import DeviceState, judge, reason_names


class FakeNvml:
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, reasons=(0,), viol=(0, 0), fail_open=False, unsupported=()):
        self.reasons = list(reasons)
        self.viol = list(viol)
        self.calls = []
        self.fail_open = fail_open
        self.unsupported = set(unsupported)
        self.shut = False

    def nvmlInit(self):
        self.calls.append("init")

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetHandleByPciBusId(self, bus):
        if self.fail_open:
            raise RuntimeError("NVML_ERROR_NOT_FOUND")
        self.bus = bus
        return "h"

    def _maybe(self, name, value):
        if name in self.unsupported:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return value

    def nvmlDeviceGetClockInfo(self, h, kind):
        return self._maybe("clock", 1980 if kind == 1 else 3201)

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return 1980

    def nvmlDeviceGetTemperature(self, h, s):
        return self._maybe("temperature", 41)

    def nvmlDeviceGetPowerUsage(self, h):
        return self._maybe("power", 123456)

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700000

    def nvmlDeviceGetPerformanceState(self, h):
        return 0

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self.reasons.pop(0) if len(self.reasons) > 1 else self.reasons[0]

    def nvmlDeviceGetViolationStatus(self, h, policy):
        v = self.viol.pop(0) if len(self.viol) > 1 else self.viol[0]
        return SimpleNamespace(referenceTime=0, violationTime=v if policy == 0 else 0)

    # every setter NVML has for clocks and limits: calling one fails the test
    def __getattr__(self, name):
        if name.startswith("nvmlDeviceSet") or name.startswith("nvmlDeviceReset"):
            raise AssertionError(f"the timing changed a device setting: {name}")
        raise AttributeError(name)


def test_a_snapshot_reads_clocks_temperature_power_and_reasons():
    nv = FakeNvml(reasons=[0x1])
    st = DeviceState("0000:1B:00.0", nv)
    s = st.snapshot()
    assert nv.bus == b"0000:1B:00.0"
    assert s["state"] == "known" and s["sm_clock_mhz"] == 1980 and s["memory_clock_mhz"] == 3201
    assert s["temperature_c"] == 41 and s["power_w"] == pytest.approx(123.456) and s["power_limit_w"] == 700.0
    assert s["reasons"] == ["gpu_idle"] and s["violation_ns"] == {"power": 0, "thermal": 0}
    assert s["unsupported"] == []
    st.close()
    assert nv.shut


def test_an_unsupported_query_is_none_and_listed():
    st = DeviceState("0:1:0.0", FakeNvml(unsupported={"temperature", "power"}))
    s = st.snapshot()
    assert s["temperature_c"] is None and s["power_w"] is None
    assert set(s["unsupported"]) == {"temperature_c", "power_w"}


def test_without_pynvml_the_state_is_unknown_and_said(monkeypatch):
    real = builtins.__import__

    def no_pynvml(name, *a, **k):
        if name == "pynvml":
            raise ImportError("No module named 'pynvml'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    monkeypatch.delitem(__import__("sys").modules, "pynvml", raising=False)
    st = DeviceState("0000:1B:00.0")
    assert not st.available and "pynvml is not installed" in st.reason
    assert st.snapshot() == {"state": "unknown", "reason": st.reason}
    assert st.throttle_mask() is None
    st.close()
    j = judge(st.snapshot(), st.snapshot(), None)
    assert j["state"] == "unknown" and j["throttled"] is None and "pynvml" in j["reason"]


def test_nvml_that_cannot_open_the_device_is_unknown():
    st = DeviceState("0000:1B:00.0", FakeNvml(fail_open=True))
    assert not st.available and "NVML_ERROR_NOT_FOUND" in st.reason
    st2 = DeviceState(None, FakeNvml())
    assert not st2.available and "PCI bus id" in st2.reason


def test_judge_throttling_from_polls_after_and_violation_counters():
    quiet = {"state": "known", "reasons_mask": 0, "violation_ns": {"power": 10, "thermal": 0}}
    assert judge(quiet, quiet, 0x1)["throttled"] is False            # idle is not throttling
    j = judge(quiet, quiet, 0x4 | 0x1)
    assert j["throttled"] and j["reasons"] == ["sw_power_cap"]
    hot = {**quiet, "reasons_mask": 0x40}
    assert judge(quiet, hot, 0)["reasons"] == ["hw_thermal_slowdown"]
    grew = {**quiet, "violation_ns": {"power": 2_000_010, "thermal": 0}}
    j = judge(quiet, grew, 0)
    assert j["throttled"] and j["violation_ns_during"] == {"power": 2_000_000}
    assert j["reasons"] == ["power violation 2.000 ms"]


def test_reason_names():
    assert reason_names(0x4 | 0x8 | 0x1) == ["sw_power_cap", "hw_slowdown"]
    assert reason_names(0) == []


def test_the_state_reader_never_sets_anything():
    """Every NVML function the reader touches is a query (or init/shutdown): no clock, limit or
    mode is set."""
    class Recording(FakeNvml):
        def __getattribute__(self, name):
            if name.startswith("nvml"):
                object.__getattribute__(self, "seen").append(name)
            return object.__getattribute__(self, name)

    nv = Recording(reasons=[0, 0x4])
    nv.seen = []
    st = DeviceState("0000:1B:00.0", nv)
    st.snapshot()
    st.throttle_mask()
    st.snapshot()
    st.close()
    assert "nvmlDeviceGetCurrentClocksEventReasons" in nv.seen and "nvmlShutdown" in nv.seen
    assert all(n.startswith(("nvmlDeviceGet", "nvmlInit", "nvmlShutdown")) for n in nv.seen), nv.seen
