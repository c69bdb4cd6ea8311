"""Fakes for the tune tests: a CPU screen and a GPU bench on the timing module's simulated device.

The fake screen reads what the variant is from its recipe's description (the choices of the
point that made it: "order@1 k-major; fence@1 start; loads@1 as-is") and gives each point of
tests/data/tune/qkv.yaml a known fate (``FATES``, by cut 1's (order, fence, loads)): proved
different, a ptxas failure, not proven (the fake harness then finds it identical), a GPU fault,
a worker killed once; every other variant is equal.  The "cubin" it writes holds the variant's
true speed.  The fake bench is ``splice.tune.timer.TimingBench`` itself -- the same checks, the
same call of the probe's timing method (``splice.probe.timing.measure``), the same conversion of
its record -- on ``tests/timing_fake.FakeDevice`` (the timing tests' simulated host and GPU
clocks), each launch of a module costing ``10 ms x speed`` with a ±0.5 % jitter that depends
only on (module, launch number, seed): the best variant is known in advance and the figures do
not depend on which variants share a batch.  ``TUNE_FAKE_THROTTLE`` (a mask) makes the device
state report throttling, so the batch's verdicts are withheld.  The kills happen only when
``TUNE_FAKE_KILL_CPU`` / ``TUNE_FAKE_KILL_GPU`` name a folder (a marker file there records
that the kill happened, so the retry succeeds).  ``TUNE_FAKE_LOG`` (a folder) records every
screen call; ``TUNE_FAKE_SLOW`` makes each screen take that many seconds.
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import time
from pathlib import Path

from splice.tune.steps import DIFFERENT, EQUAL, NOT_PROVEN, ScreenJob, ScreenResult
from splice.tune.timer import BASELINE, CONTROL, Candidate, TimingBench, VariantTiming

from .timing_fake import FakeDevice, FakeState

FENCE = {"none": 1.0, "start": 0.86, "end": 0.9, "both": 0.88, "every-k": 0.95}
ORDER = {"original": 1.0, "k-major": 0.97, "chain-major": 1.03, "n-major": 0.99, "m-major": 1.01}
_CHOICE = re.compile(r"(order|fence|loads)@([0-9,]+) (\S+)")


def shapes(recipe: str) -> dict:
    """{cut number: (order, fence, loads)} from the choices the variant's description lists."""
    import yaml

    desc = yaml.safe_load(Path(recipe).read_text()).get("description", "")
    out: dict = {}
    for key, cuts, value in _CHOICE.findall(desc):
        for c in cuts.split(","):
            cur = dict(zip(("order", "fence", "loads"), out.get(int(c), ("original", "none", "as-is"))))
            cur[key] = value.rstrip(";]")
            out[int(c)] = (cur["order"], cur["fence"], cur["loads"])
    return out


def speed(sh: dict) -> float:
    s = 1.0
    for order, fence, _loads in sh.values():
        s *= FENCE[fence] ** 0.25 * ORDER.get(order, 1.0) ** 0.25
    return s


FATES = {
    ("k-major", "none", "as-is"): "different",
    ("original", "none", "sunk"): "ptxas",
    ("original", "end", "as-is"): "fault",
    ("k-major", "start", "as-is"): "kill-cpu",
    ("k-major", "end", "as-is"): "kill-gpu",
}


def fate(sh: dict) -> str:
    return FATES.get(sh.get(1, ()), "not proven" if any(x[2] == "sunk" for x in sh.values()) else "equal")


def _once(env: str, key: str) -> bool:
    """True the first time for this key (a marker file under the directory ``env`` names)."""
    d = os.environ.get(env)
    if not d:
        return False
    marker = Path(d) / key
    if marker.exists():
        return False
    marker.write_text("x")
    return True


def fake_screen(job: ScreenJob) -> ScreenResult:
    sh = shapes(job.recipe)
    what = fate(sh)
    if os.environ.get("TUNE_FAKE_LOG"):
        (Path(os.environ["TUNE_FAKE_LOG"]) / f"{job.key[:16]}-{os.getpid()}-{time.monotonic_ns()}").write_text("")
    time.sleep(float(os.environ.get("TUNE_FAKE_SLOW", "0")))
    if what == "kill-cpu" and _once("TUNE_FAKE_KILL_CPU", job.key):
        os._exit(3)
    if what == "different":
        return ScreenResult(job.key, "verify", DIFFERENT, ({"cut": 1, "title": "phase 3", "verdict": "proved different",
                                                             "reason": "d0 differs"},))
    if what == "ptxas":
        return ScreenResult(job.key, "ptxas", EQUAL, (), error="ptxas fatal: made-up failure")
    body = f"speed={speed(sh):.6f}\nfault={int(what == 'fault')}\ndie={int(what == 'kill-gpu')}\n"
    cub = Path(job.store) / "cubins" / f"{job.key[:16]}.cubin"
    cub.parent.mkdir(parents=True, exist_ok=True)
    cub.write_text(body)
    res = {"registers": 200 + int(1000 * speed(sh)) % 55, "spill_stores": 0, "spill_loads": 0, "shared": 0,
           "stack": 0}
    return ScreenResult(job.key, "done", NOT_PROVEN if what == "not proven" else EQUAL, (), res, str(cub),
                        hashlib.sha256(body.encode()).hexdigest(), seconds={"apply": 0.0})


class CUDADriverError(RuntimeError):
    """Named as cupy names its driver errors: the bench tells a GPU fault by the class name."""


class JitterDevice(FakeDevice):
    """The timing tests' simulated device, each launch's cost a function of (module, its launch
    number, seed) alone."""

    def __init__(self, cost_ms: dict, seed: int):
        super().__init__(cost_ms)
        self.seed = seed
        self.launches: dict = {}

    def _one(self, name: str) -> float:
        k = self.launches[name] = self.launches.get(name, 0) + 1
        return self.cost[name] * (1.0 + random.Random(f"{name}/{k}/{self.seed}").uniform(-0.005, 0.005))


class FakeBench(TimingBench):
    """A GPU bench on the simulated device: the original and its control cost 10 ms a launch,
    each candidate ``10 ms x speed``."""

    def __init__(self, spec):
        self.spec = spec
        self.device = "fake-gpu"
        self.cost = {BASELINE: 10.0, CONTROL: 10.0}
        self.harnessed: set = set()

    @staticmethod
    def describe() -> dict:
        return {"name": "fake-gpu", "arch": os.environ.get("TUNE_FAKE_ARCH", "sm_90"),
                "count": int(os.environ.get("TUNE_FAKE_GPUS", "1"))}

    @staticmethod
    def _facts(cubin: str) -> dict:
        """The fake screen's facts; a real cubin (a real screen) gets a speed from its bytes."""
        blob = Path(cubin).read_bytes()
        if not blob.startswith(b"speed="):
            h = int.from_bytes(hashlib.sha256(blob).digest()[:4], "big")
            return {"speed": str(0.9 + 0.2 * h / 2 ** 32), "fault": "0", "die": "0"}
        return dict(line.split("=", 1) for line in blob.decode().split())

    def _check(self, c: Candidate) -> VariantTiming:
        f = self._facts(c.cubin)
        if f["die"] == "1" and _once("TUNE_FAKE_KILL_GPU", c.key):
            os._exit(9)
        if f["fault"] == "1":
            raise CUDADriverError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (fake)")
        self.cost[c.key] = 10.0 * float(f["speed"])
        return VariantTiming(c.key, identical=True, harness="identical" if c.harness else "")

    def _measure(self, names: list, opts) -> dict:
        from splice.probe.timing import measure

        mask = int(os.environ.get("TUNE_FAKE_THROTTLE", "0"), 0)
        state = FakeState(masks=(0, mask)) if mask else None
        return measure(JitterDevice({n: self.cost[n] for n in names}, opts.seed), names, BASELINE, CONTROL, opts,
                       state)
