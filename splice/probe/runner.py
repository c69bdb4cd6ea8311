"""GPU probe runner: one module, one spec -- render the outputs, check them, time the launch.

    python -m splice.probe.runner probes/enc5.yaml [PTX] [--cubin X.cubin] [--repeat 2]
        [--timing 20] [--perturb corpus/enc5.expect.yaml] [--json out.json]

The module is checked against the spec (``check.check``: the entry's .param list), compiled with
``ptxas -O3`` for the device's arch (``modules.compile_one``, which finds ptxas through
``splice.ptx.sass.find_tool``), or taken from ``--cubin``, and run through the probe's one device
path (:class:`splice.probe.device.Device`).  Each render poisons every output first, so full
coverage means no element still holds the poison.  cupy is imported lazily.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..util import read_text
from .spec import ProbeSpec, load_spec


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
        from .check import check, cluster_dims
        from .device import Device, device_arch, import_cupy
        from .modules import compile_one
        from .session import probe_arch

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
        from .compare import elements, output_coverage
        from .device import digest

        out = self.dev.render("main")
        f = self.frame_field
        e = elements(f, out[f.name])
        cov = output_coverage(f, e)
        rgba = f.kind == "surface" and e.shape[-1] == 4
        alpha = int((e[..., 3].view(f"<u{f.element.size}") != 0).sum()) if rgba else 0
        return Render(frame=np.ascontiguousarray(out[f.name]).tobytes(), sha256=digest({f.name: out[f.name]}),
                      nonfinite=cov["nonfinite"], uncovered=cov["uncovered"], alpha_nonzero=alpha)

    def time(self, runs: int) -> list[float]:
        """Per-launch ms of the module, timed by the probe's one method (timing.py) against its
        A/A control, a second load of the same cubin; ``runs`` caps the rounds."""
        from .timing import TimingOptions, time_device

        if "main:control" not in self.dev.modules:
            self.dev.load("main:control", self.cubin)
            self.dev.render("main:control")
        tm = time_device(self.dev, ["main", "main:control"], "main", "main:control",
                         TimingOptions(runs=runs, warmup=1))
        self.timing = tm
        return tm["modules"]["main"]["samples_ms"]


def weight_field(spec: ProbeSpec):
    for f in spec.fields:
        if f.kind == "buffer" and f.fill is not None and f.fill.rule == "weight_image":
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
    rows = []
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


def run(spec_path: str | Path, ptx: str | Path | None = None, cubin: str | Path | None = None,
        repeat: int = 2, timing: int = 20) -> ProbeResult:
    spec = load_spec(spec_path)
    t0 = time.perf_counter()
    probe = Probe(spec, Path(ptx) if ptx else None, Path(cubin) if cubin else None)
    res = ProbeResult(spec.name, spec.entry, probe.module_kind, spec.grid, spec.block,
                      setup_s=time.perf_counter() - t0)
    for _ in range(repeat):
        res.renders.append(probe.render())
    if timing:
        res.times_ms = probe.time(timing)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m splice.probe.runner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec")
    ap.add_argument("ptx", nargs="?", default=None, help="PTX to load (default: the spec's ptx)")
    ap.add_argument("--cubin", default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--timing", type=int, default=20)
    ap.add_argument("--json", default=None, help="write the summary here")
    ap.add_argument("--perturb", default=None,
                    help="expect.yaml: flip each phase's weights in turn and check the frame changes")
    args = ap.parse_args(argv)
    spec = load_spec(args.spec)
    t0 = time.perf_counter()
    probe = Probe(spec, Path(args.ptx) if args.ptx else None, Path(args.cubin) if args.cubin else None)
    res = ProbeResult(spec.name, spec.entry, probe.module_kind, spec.grid, spec.block,
                      setup_s=time.perf_counter() - t0)
    for _ in range(args.repeat):
        res.renders.append(probe.render())
    if args.timing:
        res.times_ms = probe.time(args.timing)
    summ = res.summary()
    if args.json:
        Path(args.json).write_text(json.dumps(summ, indent=2) + "\n")
    if args.perturb:
        import yaml  # noqa: PLC0415
        rows = perturb_run(probe, yaml.safe_load(Path(args.perturb).read_text()), res.renders[0])
        summ["perturb"] = rows
        tested = [r for r in rows if r["perturbed"]]
        summ["perturb_summary"] = {
            "phases_tested": len(tested),
            "frame_changed": sum(1 for r in tested if r["frame_changed"]),
            "min_pixels_changed": min((r["pixels_changed"] for r in tested), default=None),
            "untested": [r["phase"] for r in rows if not r["perturbed"]]}
    print(json.dumps(summ, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summ, indent=2) + "\n")
    ok = (res.identical and all(r.nonfinite == 0 and r.uncovered == 0 for r in res.renders))
    print(f"{res.name}: {'OK' if ok else 'FAIL'} identical={res.identical} "
          f"median={res.median_ms:.3f} ms over {len(res.times_ms)} runs")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
