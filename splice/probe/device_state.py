"""The device's state around a timing run, read through NVML (``nvidia-ml-py``, import ``pynvml``).

A ratio measured while the clocks were pulled down by a power or thermal limit is not a fact
about the kernels, so the timing records, before and after its rounds, the SM and memory clocks,
temperature, power and the clock-event (throttle) reasons, polls the reasons once per round while
the GPU is busy, and compares NVML's power/thermal violation counters across the run.

Read only: nothing here sets a clock, a power limit, persistence or any other device setting.
Without pynvml (or when NVML cannot open the device) the state is "unknown" and says why; the
timing goes on and the report says that throttling was not checked.
"""
from __future__ import annotations

import importlib
from typing import Optional

#: clock-event reasons that pull the clocks below what the kernel would get: a run that saw one
#: of them throttled (nvmlClocksEventReason*)
THROTTLE = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal_slowdown",
            0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown", 0x200: "board_limit",
            0x400: "reliability"}
#: reasons that are not throttling (an idle GPU, application clocks, sync boost, display clock)
OTHER = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x10: "sync_boost", 0x100: "display_clock_setting"}
#: NVML_PERF_POLICY_* counters of the time the clocks were held down
VIOLATIONS = {"power": 0, "thermal": 1}


def reason_names(mask: int, table: dict = THROTTLE) -> list:
    return [name for bit, name in sorted(table.items()) if mask & bit]


class DeviceState:
    """NVML's view of one device (by PCI bus id, so that it is the device cupy runs on whatever
    CUDA_VISIBLE_DEVICES says).  ``available`` is False, with ``reason``, when NVML cannot be
    used; every method then answers "unknown" instead of raising."""

    def __init__(self, pci_bus_id: Optional[str], nvml=None):
        self.nvml = None
        self.handle = None
        self.reason: Optional[str] = None
        try:
            nvml = nvml if nvml is not None else importlib.import_module("pynvml")
        except ImportError:
            self.reason = "pynvml is not installed (pip install nvidia-ml-py)"
            return
        if not pci_bus_id:
            self.reason = "the device's PCI bus id is unknown, so NVML cannot be matched to it"
            return
        try:
            nvml.nvmlInit()
            self.handle = nvml.nvmlDeviceGetHandleByPciBusId(str(pci_bus_id).encode())
        except Exception as e:  # noqa: BLE001 - NVMLError and ctypes errors: the state is unknown
            self.reason = f"NVML could not open the device {pci_bus_id}: {type(e).__name__}: {e}"
            return
        self.nvml = nvml

    @property
    def available(self) -> bool:
        return self.nvml is not None

    def _read(self, fn, *args):
        try:
            return fn(self.handle, *args)
        except Exception:  # noqa: BLE001 - a query this device does not support: None, listed
            return None

    def throttle_mask(self) -> Optional[int]:
        """The current clock-event reasons (a bit mask), or None when unknown."""
        if not self.available:
            return None
        n = self.nvml
        fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(n, "nvmlDeviceGetCurrentClocksThrottleReasons", None)   # the same query, older name
        v = self._read(fn) if fn is not None else None
        return int(v) if v is not None else None

    def snapshot(self) -> dict:
        """Clocks (MHz), temperature (C), power (W), the reasons and the violation counters (ns)."""
        if not self.available:
            return {"state": "unknown", "reason": self.reason}
        n = self.nvml
        out = {"state": "known",
               "sm_clock_mhz": self._read(n.nvmlDeviceGetClockInfo, n.NVML_CLOCK_SM),
               "memory_clock_mhz": self._read(n.nvmlDeviceGetClockInfo, n.NVML_CLOCK_MEM),
               "sm_clock_max_mhz": self._read(n.nvmlDeviceGetMaxClockInfo, n.NVML_CLOCK_SM),
               "temperature_c": self._read(n.nvmlDeviceGetTemperature, n.NVML_TEMPERATURE_GPU),
               "power_w": _watts(self._read(n.nvmlDeviceGetPowerUsage)),
               "power_limit_w": _watts(self._read(n.nvmlDeviceGetEnforcedPowerLimit)),
               "pstate": self._read(n.nvmlDeviceGetPerformanceState)}
        mask = self.throttle_mask()
        out["reasons_mask"] = mask
        out["reasons"] = (reason_names(mask, THROTTLE) + reason_names(mask, OTHER)) if mask is not None else None
        viol = {}
        for name, policy in VIOLATIONS.items():
            v = self._read(n.nvmlDeviceGetViolationStatus, policy)
            viol[name] = int(v.violationTime) if v is not None else None
        out["violation_ns"] = viol
        out["unsupported"] = sorted(k for k, v in out.items() if v is None)
        return out

    def close(self) -> None:
        if self.available:
            try:
                self.nvml.nvmlShutdown()
            except Exception:  # noqa: BLE001 - shutting down a library that failed is no news
                pass
            self.nvml = None


def _watts(mw) -> Optional[float]:
    return None if mw is None else round(mw / 1000.0, 3)


def judge(before: dict, after: dict, polled_mask: Optional[int], polls: int = 0,
          polls_throttled: int = 0) -> dict:
    """Did the run throttle?  Throttle reasons seen while the rounds ran (``polled_mask``, the
    OR of every poll) or right after them, and power/thermal violation time that grew across the
    run.  ``throttled`` is None when the state is unknown (said in ``reason``)."""
    out = {"before": before, "after": after, "polls": polls, "polls_throttled": polls_throttled}
    if before.get("state") != "known" or after.get("state") != "known":
        out.update(state="unknown", throttled=None,
                   reason=before.get("reason") or after.get("reason") or "device state unknown")
        return out
    mask = (polled_mask or 0) | (after.get("reasons_mask") or 0)
    why = reason_names(mask)
    grew = {}
    for name in VIOLATIONS:
        a, b = (before.get("violation_ns") or {}).get(name), (after.get("violation_ns") or {}).get(name)
        if a is not None and b is not None and b > a:
            grew[name] = b - a
            why.append(f"{name} violation {(b - a) / 1e6:.3f} ms")
    out.update(state="known", throttled=bool(why), reasons=why, violation_ns_during=grew)
    return out
