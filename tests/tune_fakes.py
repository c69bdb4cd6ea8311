"""Fakes for the tune tests: a CPU screen and a GPU bench with a deterministic clock.

The fake screen reads what the variant is from its recipe's description (the choices of the
point that made it: "order@1 k-major; fence@1 start; loads@1 as-is") and gives each point of
tests/data/tune/qkv.yaml a known fate (``FATES``, by cut 1's (order, fence, loads)): proved
different, a ptxas failure, not proven (the fake harness then finds it identical), a GPU fault,
a worker killed once; every other variant is equal.  The "cubin" it writes holds the variant's
true speed; the fake bench times each candidate as ``control × speed`` with a seeded ±0.5 %
jitter per round, so the best variant is known in advance.  The kills happen only when
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
from splice.tune.timer import BatchResult, TimeBatch, VariantTiming, judge

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


class FakeBench:
    """A GPU bench on a clock that is a function of (candidate, round, seed)."""

    def __init__(self, spec):
        self.spec = spec
        self.device = "fake-gpu"

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

    @staticmethod
    def _ms(name: str, base: float, r: int, seed: int) -> float:
        rng = random.Random(f"{name}/{r}/{seed}")
        return base * (1.0 + rng.uniform(-0.005, 0.005))

    def run(self, batch: TimeBatch) -> BatchResult:
        out = []
        for i, c in enumerate(batch.candidates):
            f = self._facts(c.cubin)
            if f["die"] == "1" and _once("TUNE_FAKE_KILL_GPU", c.key):
                os._exit(9)
            if f["fault"] == "1":
                fault = VariantTiming(c.key, fault="CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS (fake)")
                rest = tuple(x.key for x in batch.candidates[i + 1:])
                return BatchResult("", self.device, batch.rung, 0, tuple(out) + (fault,), (), 0.0, rest, os.getpid(),
                                   lost=True)
            speed = float(f["speed"])
            pairs = tuple((self._ms(c.key, 10.0 * speed, r, batch.seed), self._ms("control", 10.0, r, batch.seed))
                          for r in range(batch.rounds))
            out.append(VariantTiming(c.key, pairs, True, "identical" if c.harness else ""))
        aa = tuple((self._ms("copy", 10.0, r, batch.seed), self._ms("control", 10.0, r, batch.seed))
                   for r in range(batch.rounds))
        return BatchResult("", self.device, batch.rung, batch.rounds, judge(out, aa, batch.seed), aa, 0.01,
                           pid=os.getpid())
