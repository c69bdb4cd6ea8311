"""One module, one spec: render the outputs, check them, time the launch (``splice probe render
SPEC [MODULE] [--cubin F] [--repeat N] [--runs N] [--perturb EXPECT.yaml]``).

The module is checked against the spec (``entry.check``: the entry's .param list), compiled with
``ptxas -O3`` for the device's arch (``modules.compile_one``, which finds ptxas through
``splice.ptx.sass.find_tool``), or taken from a cubin, and run through the probe's one device
path (:class:`splice.probe.run.device.Device`).  Each render poisons every output first, so full
coverage means no element still holds the poison.  With an expect file of a stand-in layer,
each phase's weights are flipped in turn: every phase must change the frame.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Optional
from pathlib import Path

import numpy as np

from ...util import read_text
from ..language.document import load_spec
from ..language.entry import check, cluster_dims
from ..language.records import ProbeSpec
from ..timing import TimingOptions, time_device
from .compare import elements, output_coverage
from .device import Device, device_arch, digest, import_cupy
from .modules import compile_one
from .session import probe_arch


@dataclass
class Render:
    frame: bytes
    sha256: str
    nonfinite: int
    uncovered: int
    alpha_nonzero: int


@dataclass
class ProbeResult:
    name: str
    entry: str
    module: str
    grid: tuple
    block: tuple
    renders: list = field(default_factory=list)
    times_ms: list = field(default_factory=list)
    setup_s: float = 0.0

    @property
    def identical(self) -> bool:
        return len({r.sha256 for r in self.renders}) == 1

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms else float("nan")

    def summary(self) -> dict:
        return {
            "name": self.name, "entry": self.entry, "module": self.module,
            "grid": list(self.grid), "block": list(self.block),
            "renders": len(self.renders), "identical": self.identical,
            "sha256": [r.sha256 for r in self.renders],
            "nonfinite": [r.nonfinite for r in self.renders],
            "uncovered": [r.uncovered for r in self.renders],
            "alpha_nonzero": [r.alpha_nonzero for r in self.renders],
            "timing_runs": len(self.times_ms),
            "median_ms": self.median_ms,
            "min_ms": min(self.times_ms) if self.times_ms else None,
            "max_ms": max(self.times_ms) if self.times_ms else None,
            "setup_s": self.setup_s,
        }


class Probe:
    """One module on the device: a :class:`Device` with the module loaded as "main"."""

    def __init__(self, spec: ProbeSpec, ptx: Path | None = None, cubin: Path | None = None):
        cp = import_cupy(spec.source)
        ptx = Path(ptx or spec.ptx)
        text = read_text(ptx)
        decl = check(spec, text, str(ptx))
        if cubin is None:
            arch = probe_arch(spec, device_arch(cp), decl.target)
            cubin = compile_one(spec.name, text, arch).path
            self.module_kind = f"cubin ({arch}, ptxas -O3)"
        else:
            self.module_kind = f"cubin ({Path(cubin).name})"
        self.dev = Device(spec, cp, cluster=cluster_dims(spec, decl))
        self.dev.load("main", cubin)
        self.cubin = cubin
        self.timing: dict = {}
        self.cp, self.spec = cp, spec
        self.frame_field = spec.field(spec.frames[0])

    def render(self) -> Render:
        out = self.dev.render("main")
        f = self.frame_field
        e = elements(f, out[f.name])
        cov = output_coverage(f, e)
        a = f.alpha(e)
        alpha = int((a.view(f"<u{f.element.size}") != 0).sum()) if a is not None else 0
        return Render(frame=np.ascontiguousarray(out[f.name]).tobytes(), sha256=digest({f.name: out[f.name]}),
                      nonfinite=cov["nonfinite"], uncovered=cov["uncovered"], alpha_nonzero=alpha)

    def time(self, runs: int) -> list[float]:
        """Per-launch ms of the module, timed by the probe's one method (timing.py) against its
        A/A control, a second load of the same cubin; ``runs`` caps the rounds."""
        if "main:control" not in self.dev.modules:
            self.dev.load("main:control", self.cubin)
            self.dev.render("main:control")
        tm = time_device(self.dev, ["main", "main:control"], "main", "main:control",
                         TimingOptions(runs=runs, warmup=1))
        self.timing = tm
        return tm["modules"]["main"]["samples_ms"]


def weight_field(spec: ProbeSpec):
    for f in spec.fields:
        if f.is_weight_image:
            return f
    raise KeyError("spec has no weight_image buffer")


def perturbations(expect: dict) -> list[tuple[int, list[tuple[int, int, str]]]]:
    """Per phase of an expect.yaml: the byte ranges to flip (every tid.z slot)."""
    waves = int(expect.get("waves", 1))
    out = []
    for ph in expect["phases"]:
        ranges = []
        for key, kind in (("weight_bytes", "e4m3"), ("bias_bytes", "f16")):
            rng = ph.get(key)
            if not rng:
                continue
            if kind == "f16" and ph.get("weight_bytes"):
                continue  # weights suffice
            stride = ph.get("slot_stride") or 0
            for z in range(waves if stride else 1):
                # whole 512-byte tiles: [first tile, last tile + 512)
                ranges.append((rng[0] + stride * z, rng[1] + 500 + stride * z, kind))
        out.append((int(ph["index"]), ranges))
    return out


def perturb_run(probe: "Probe", expect: dict, base: Render) -> list[dict]:
    """Flip the sign of one phase's weights (or its bias when it reads no weight)
    at a time and render: every phase must change the frame."""
    wf = weight_field(probe.spec)
    clean = probe.dev.host[wf.name]
    dev = probe.dev.views[wf.name]
    h, w = probe.frame_field.height, probe.frame_field.width
    basepx = np.frombuffer(base.frame, dtype=np.uint16).reshape(h, w, 4)
    rows: list = []
    for index, ranges in perturbations(expect):
        if not ranges:
            rows.append({"phase": index, "perturbed": None})
            continue
        img = clean.copy()
        for lo, hi, kind in ranges:
            if kind == "e4m3":
                img[lo:hi] ^= np.uint8(0x80)
            else:
                img[lo + 1:hi:2] ^= np.uint8(0x80)
        dev.set(img)
        r = probe.render()
        px = np.frombuffer(r.frame, dtype=np.uint16).reshape(h, w, 4)
        changed = (px != basepx).any(axis=-1)
        rows.append({"phase": index, "perturbed": [[a, b] for a, b, _ in ranges],
                     "frame_changed": r.sha256 != base.sha256,
                     "pixels_changed": float(changed.mean()),
                     "nonfinite": r.nonfinite, "uncovered": r.uncovered})
    dev.set(clean)
    return rows


def _renders(spec_path, ptx, cubin, repeat: int, timing: int) -> tuple:
    spec = load_spec(spec_path)
    t0 = time.perf_counter()
    probe = Probe(spec, Path(ptx) if ptx else None, Path(cubin) if cubin else None)
    res = ProbeResult(spec.name, spec.entry, probe.module_kind, spec.grid, spec.block,
                      setup_s=time.perf_counter() - t0)
    for _ in range(repeat):
        res.renders.append(probe.render())
    if timing:
        res.times_ms = probe.time(timing)
    return probe, res


def run(spec_path: str | Path, ptx: str | Path | None = None, cubin: str | Path | None = None,
        repeat: int = 2, timing: int = 20) -> ProbeResult:
    return _renders(spec_path, ptx, cubin, repeat, timing)[1]


def summary(probe: "Probe", res: ProbeResult, expect: Optional[dict] = None) -> dict:
    """The run's report: the renders, the timing and, with ``expect`` (a stand-in's expect
    file), each phase's perturbation; ``ok`` when the renders are identical, finite and covered."""
    summ = res.summary()
    if expect is not None:
        rows = perturb_run(probe, expect, res.renders[0])
        summ["perturb"] = rows
        tested = [r for r in rows if r["perturbed"]]
        summ["perturb_summary"] = {
            "phases_tested": len(tested),
            "frame_changed": sum(1 for r in tested if r["frame_changed"]),
            "min_pixels_changed": min((r["pixels_changed"] for r in tested), default=None),
            "untested": [r["phase"] for r in rows if not r["perturbed"]]}
    summ["ok"] = bool(res.identical and all(r.nonfinite == 0 and r.uncovered == 0 for r in res.renders))
    return summ


def render(spec_path, ptx=None, cubin=None, repeat: int = 2, runs: int = 20, expect: Optional[dict] = None) -> dict:
    """Load the spec, render its module (or ``ptx``; a ``cubin`` instead of compiling)
    ``repeat`` times, time ``runs`` launches: the report (``summary``)."""
    probe, res = _renders(spec_path, ptx, cubin, repeat, runs)
    return summary(probe, res, expect)
