"""GPU probe runner: load a spec, build its inputs, load the module through
cupy's RawModule, launch, read the frame back.

    python -m splice.probe.runner probes/enc5.yaml [--ptx corpus/enc5.ptx]
        [--cubin X.cubin] [--repeat 2] [--timing 20] [--json out.json]

The module is a ``ptxas -arch=<spec.arch> -O3`` cubin (built here when ptxas is
on PATH, or given with --cubin); without either the PTX itself is handed to
RawModule and the driver JIT compiles it (reported as ``module: ptx-jit``).
Each render first fills the frame surface with the spec's poison pattern, so
full coverage means no pixel still holds the poison.  cupy is imported lazily:
the package imports without it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .inputs import buffer_bytes, param_bytes, surface_poison, texture_texels
from .spec import ProbeSpec, load_spec


def _cupy():
    try:
        import cupy  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise RuntimeError("splice.probe.runner needs cupy (pip install cupy-cuda13x)") from e
    return cupy


def build_cubin(ptx: Path, arch: str, out: Path) -> Path:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        raise FileNotFoundError("ptxas not on PATH")
    subprocess.run([ptxas, f"-arch={arch}", "-O3", str(ptx), "-o", str(out)], check=True)
    return out


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
    """Device state of one spec: module, buffers, textures, surface, param block."""

    def __init__(self, spec: ProbeSpec, ptx: Path | None = None, cubin: Path | None = None):
        cp = _cupy()
        self.cp = cp
        self.spec = spec
        rt = cp.cuda.runtime
        tex = cp.cuda.texture
        ptx = Path(ptx or spec.ptx)
        self._tmp = tempfile.TemporaryDirectory()
        if cubin is None and shutil.which("ptxas"):
            cubin = build_cubin(ptx, spec.arch, Path(self._tmp.name) / f"{spec.name}.cubin")
        if cubin is not None:
            self.module_kind = f"cubin ({Path(cubin).name}, ptxas -O3)"
            self.module = cp.RawModule(path=str(cubin))
        else:
            self.module_kind = "ptx-jit"
            self.module = cp.RawModule(path=str(ptx))
        self.function_ptr = self._function_ptr(cp, cubin if cubin is not None else ptx, spec.entry)

        self.keep: list = []
        self.buffers: dict = {}
        self.host: dict = {}
        handles: dict[str, int] = {}
        self.surface_array = None
        self.surface_field = None
        desc = tex.ChannelFormatDescriptor(16, 16, 16, 16, rt.cudaChannelFormatKindFloat)
        for f in spec.fields:
            if f.kind == "buffer":
                host = buffer_bytes(f, spec.seed)
                dev = cp.zeros(f.bytes, dtype=cp.uint8) if host is None else cp.asarray(host)
                self.keep.append(dev)
                self.buffers[f.name] = dev
                if f.fill is not None and f.fill.rule == "weight_image":
                    self.host[f.name] = host
                handles[f.name] = int(dev.data.ptr)
            elif f.kind == "texture":
                arr = tex.CUDAarray(desc, f.width, f.height)
                arr.copy_from(np.ascontiguousarray(texture_texels(f, spec.seed)))
                res = tex.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=arr)
                td = tex.TextureDescriptor(
                    addressModes=(rt.cudaAddressModeClamp, rt.cudaAddressModeClamp),
                    filterMode=rt.cudaFilterModePoint, readMode=rt.cudaReadModeElementType,
                    normalizedCoords=0)
                obj = tex.TextureObject(res, td)
                self.keep += [arr, res, td, obj]
                handles[f.name] = int(obj.ptr)
            elif f.kind == "surface":
                arr = tex.CUDAarray(desc, f.width, f.height, flags=rt.cudaArraySurfaceLoadStore)
                res = tex.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=arr)
                obj = tex.SurfaceObject(res)
                self.keep += [arr, res, obj]
                handles[f.name] = int(obj.ptr)
                if f.name == spec.frame.field:
                    self.surface_array, self.surface_field = arr, f
        self.handles = handles
        self.params = np.frombuffer(param_bytes(spec, handles), dtype=np.uint8).copy()
        self.kernel_params = np.array([self.params.ctypes.data], dtype=np.uint64)
        self.stream = cp.cuda.Stream(non_blocking=False)
        cp.cuda.Device().synchronize()

    def _function_ptr(self, cp, path, entry: str) -> int:
        """CUfunction of ``entry``: RawModule's RawKernel wraps a cupy Function
        (``.kernel``); fall back to the low-level Module if that ever changes."""
        k = self.module.get_function(entry)
        for obj in (getattr(k, "kernel", None), k):
            ptr = getattr(obj, "ptr", None) if obj is not None else None
            if ptr:
                self.function = obj
                return int(ptr)
        mod = cp.cuda.function.Module()
        mod.load_file(str(path))
        self._lowmod = mod
        self.function = mod.get_function(entry)
        return int(self.function.ptr)

    def launch(self) -> None:
        s = self.spec
        self.cp.cuda.driver.launchKernel(
            self.function_ptr, *s.grid, *s.block, s.shared_dynamic, self.stream.ptr,
            int(self.kernel_params.ctypes.data), 0)

    def render(self) -> Render:
        f = self.surface_field
        poison = surface_poison(f)
        self.surface_array.copy_from(poison, self.stream)
        self.launch()
        out = np.empty((f.height, 4 * f.width), dtype=np.float16)
        self.surface_array.copy_to(out, self.stream)
        self.stream.synchronize()
        px = out.reshape(f.height, f.width, 4)
        u16 = out.view(np.uint16).reshape(f.height, f.width, 4)
        raw = out.tobytes()
        return Render(
            frame=raw, sha256=hashlib.sha256(raw).hexdigest(),
            nonfinite=int((~np.isfinite(px[..., :3])).sum()),
            uncovered=int((u16 == np.uint16(f.poison)).all(axis=-1).sum()),
            alpha_nonzero=int((u16[..., 3] != 0).sum()))

    def time(self, runs: int) -> list[float]:
        cp = self.cp
        self.launch()  # warm-up
        self.stream.synchronize()
        times = []
        for _ in range(runs):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(self.stream)
            self.launch()
            b.record(self.stream)
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b))
        return times


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
    clean = probe.host[wf.name]
    dev = probe.buffers[wf.name]
    h, w = probe.surface_field.height, probe.surface_field.width
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
