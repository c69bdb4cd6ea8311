"""``splice probe``: the whole run, without printing.

    pair = modules.resolve(target, module)
    result = run_probe(pair, ProbeOptions(...), ui)      # ui: progress callbacks (or None)

Steps: analysis (when stages or the harness are asked for), cubins for every module in parallel
(original, spliced, instrumented pair, harness pairs; cached), the spec's inputs once (one
:class:`splice.probe.runner.Probe`: buffers, textures, surface, the by-value parameter block),
then for each module: poison every output (the frame surface with the spec's poison, every
zero-filled buffer -- the arenas -- with 0xFF), launch, read back, check coverage, compare;
debug stages; the phase harness; interleaved timing (+ graph replay); the roofline.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from .inputs import surface_poison
from .modules import CACHE, Pair, compile_many


@dataclass
class ProbeOptions:
    runs: int = 50
    warmup: int = 5
    graph: bool = False
    stages: Optional[str] = None
    harness: bool = False
    report_dir: Optional[Path] = None
    repeat: int = 2
    stage_budget: int = 1 << 30
    harness_blocks: int = 8
    roofline: bool = True
    profile: bool = False          # per-phase %clock64 profile (profile.py)
    ncu: bool = False              # Nsight Compute side by side (ncu.py)


class _NullUI:
    def task(self, name: str, total: int):
        return lambda n=1: None

    def note(self, text: str):
        pass


def _ptr_of(module, entry: str) -> int:
    k = module.get_function(entry)
    for obj in (getattr(k, "kernel", None), k):
        ptr = getattr(obj, "ptr", None) if obj is not None else None
        if ptr:
            return int(ptr)
    raise RuntimeError(f"cannot find the CUfunction of {entry}")


class Device:
    """The spec's inputs (built once) and any number of loaded modules sharing them."""

    def __init__(self, spec, original_ptx: Path, original_cubin: Path):
        from .runner import Probe

        self.probe = Probe(spec, original_ptx, original_cubin)
        self.cp = cp = self.probe.cp
        self.spec = spec
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.probe.stream = self.stream
        self.outputs = {f.name: self.probe.buffers[f.name] for f in spec.fields
                        if f.kind == "buffer" and f.fill is not None and f.fill.rule == "zeros"}
        self.modules = {}
        f = self.probe.surface_field
        self.poison = surface_poison(f)
        self.poison_value = f.poison

    def load(self, name: str, cubin: Path, entry: str):
        mod = self.cp.RawModule(path=str(cubin))
        self.modules[name] = (mod, _ptr_of(mod, entry))
        return mod

    def launcher(self, name: str):
        s = self.spec
        ptr = self.modules[name][1]
        params = int(self.probe.kernel_params.ctypes.data)
        drv = self.cp.cuda.driver

        def launch(stream):
            drv.launchKernel(ptr, *s.grid, *s.block, s.shared_dynamic, stream.ptr, params, 0)
        return launch

    def render(self, name: str, keep_outputs: bool = False) -> dict:
        cp, f = self.cp, self.probe.surface_field
        st = self.stream
        with st:
            self.probe.surface_array.copy_from(self.poison, st)
            for buf in self.outputs.values():
                buf.fill(0xFF)
            self.launcher(name)(st)
            out = np.empty((f.height, 4 * f.width), dtype=np.float16)
            self.probe.surface_array.copy_to(out, st)
            outs = {}
            for bn, buf in self.outputs.items():
                words = buf[: buf.size // 4 * 4].view(cp.uint32)
                outs[bn] = {"bytes": int(buf.size),
                            "unwritten_words": int((words == np.uint32(0xFFFFFFFF)).sum()),
                            "copy": buf.copy() if keep_outputs else None}
            st.synchronize()
        px = out.view(np.uint16).reshape(f.height, f.width, 4)
        raw = px.tobytes()
        return {"px": px, "sha256": hashlib.sha256(raw).hexdigest(), "outputs": outs}


def run_probe(pair: Pair, opt: ProbeOptions, ui=None) -> dict:
    from .compare import compare_frames, coverage, heatmap
    from .spec import load_spec

    ui = ui or _NullUI()
    t_start = time.perf_counter()
    spec = load_spec(pair.spec_path)
    res: dict = {"target": pair.name, "spec": str(pair.spec_path), "entry": pair.entry, "arch": pair.arch,
                 "original": str(pair.original_path), "spliced": pair.spliced_name,
                 "cuts": [{"cut": c.cut.index, "title": c.title, "phase": c.phase, "abi": c.binding.abi,
                           "statements": [c.first, c.last], "function": c.binding.func}
                          for c in pair.cuts],
                 "options": {"runs": opt.runs, "warmup": opt.warmup, "graph": opt.graph,
                             "stages": opt.stages, "harness": opt.harness},
                 "timings_s": {}}
    report_dir = Path(opt.report_dir) if opt.report_dir else None

    # ---- analysis, instrumented and harness modules -------------------------------------
    kernel = sp = None
    hcases = []
    items = [("original", pair.original), ("spliced", pair.spliced)]
    if opt.stages or opt.harness:
        from ..analysis import Kernel

        t0 = time.perf_counter()
        kernel = Kernel.load(str(pair.original_path), pair.entry)
        if opt.stages:
            from .stages import instrument, plan_stages

            kspl = None
            if pair.plan is None:
                from ..ptx import parse

                kspl = Kernel(parse(pair.spliced, pair.spliced_name), pair.entry)
            sp = plan_stages(kernel, pair, opt.stages, spec, opt.stage_budget, kernel_spl=kspl)
            items += [("stages:original", instrument(pair.original, sp, "orig")),
                      ("stages:spliced", instrument(pair.spliced, sp, "spl"))]
        if opt.harness:
            from .harness import cases

            hcases = cases(pair, kernel, spec, opt.harness_blocks)
            for i, hc in enumerate(hcases):
                if not hc.skipped:
                    items += [(f"harness{i}:original", hc.orig_ptx), (f"harness{i}:spliced", hc.spl_ptx)]
        res["timings_s"]["analysis"] = time.perf_counter() - t0
    if opt.profile:                                   # issue 14: splice/probe/profile.py
        from . import profile as prof_mod
        prof = prof_mod.prepare(pair, spec)
        items += prof.items
    if report_dir:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / f"{pair.name}.spliced.ptx").write_text(pair.spliced)
        if sp is not None:
            for n, t in items:
                if n.startswith("stages:"):
                    (report_dir / f"{pair.name}.{n.replace(':', '.')}.ptx").write_text(t)

    t0 = time.perf_counter()
    step = ui.task("compile (ptxas -O3)", len(items))
    built = compile_many(items, pair.arch, lambda n, b: step())
    res["timings_s"]["compile"] = time.perf_counter() - t0
    res["modules"] = {n: {"cubin": str(b.path), "cached": b.cached, "ptxas_s": round(b.seconds, 3),
                          "resources": b.resources} for n, b in built.items()}

    # ---- inputs, frames -------------------------------------------------------------------
    t0 = time.perf_counter()
    step = ui.task("inputs (seeded buffers, textures, surface)", 1)
    dev = Device(spec, pair.original_path, built["original"].path)
    step()
    res["timings_s"]["inputs"] = time.perf_counter() - t0
    cp = dev.cp
    dev.load("original", built["original"].path, pair.entry)
    dev.load("spliced", built["spliced"].path, pair.entry)

    t0 = time.perf_counter()
    step = ui.task("render original + spliced", 2 * opt.repeat)
    renders = {"original": [], "spliced": []}
    for r in range(opt.repeat):
        for name in ("original", "spliced"):
            renders[name].append(dev.render(name, keep_outputs=(r == 0)))
            step()
    res["timings_s"]["render"] = time.perf_counter() - t0
    frames = {}
    for name, rs in renders.items():
        cov = coverage(rs[0]["px"], dev.poison_value)
        frames[name] = {"sha256": [x["sha256"] for x in rs],
                        "deterministic": len({x["sha256"] for x in rs}) == 1, **cov,
                        "outputs": {bn: {"bytes": o["bytes"], "unwritten_words": o["unwritten_words"]}
                                    for bn, o in rs[0]["outputs"].items()}}
    cmp = compare_frames(renders["original"][0]["px"], renders["spliced"][0]["px"])
    ulp_map = cmp.pop("ulp_map")
    if ulp_map is not None and report_dir:
        cmp["heatmap"] = heatmap(ulp_map, report_dir / f"{pair.name}.frame-diff.png")
    out_cmp = {}
    for bn in dev.outputs:
        a = renders["original"][0]["outputs"][bn]["copy"]
        b = renders["spliced"][0]["outputs"][bn]["copy"]
        nd = int((a != b).sum())
        out_cmp[bn] = {"identical": nd == 0, "bytes_differ": nd}
        if nd:
            out_cmp[bn]["first_byte"] = int(cp.argmax(a != b))
    for rs in renders.values():
        for x in rs:
            for o in x["outputs"].values():
                o["copy"] = None
    a = b = None
    cmp["outputs"] = out_cmp
    covered = all(frames[n]["uncovered"] == 0 for n in frames)
    res["frames"] = frames
    res["compare"] = cmp
    res["identical"] = bool(cmp["identical"] and all(v["identical"] for v in out_cmp.values()))
    res["covered"] = covered

    # ---- debug stages ---------------------------------------------------------------------
    if sp is not None:
        from .stages import PTR, compare as stage_compare, first_divergence

        t0 = time.perf_counter()
        step = ui.task(f"debug stages ({len(sp.stages)})", 3)
        m_o = dev.load("stages:original", built["stages:original"].path, pair.entry)
        m_s = dev.load("stages:spliced", built["stages:spliced"].path, pair.entry)
        buf = cp.empty(max(sp.total, 256), dtype=cp.uint8)
        saved = cp.empty_like(buf)
        host_ptr = np.array([int(buf.data.ptr)], dtype=np.uint64)
        for m in (m_o, m_s):
            g = m.get_global(PTR)
            cp.cuda.runtime.memcpy(int(g.ptr), int(host_ptr.ctypes.data), 8,
                                   cp.cuda.runtime.memcpyHostToDevice)
        step()
        with dev.stream:
            buf.fill(0xFF)
        r_o = dev.render("stages:original")
        with dev.stream:
            saved[...] = buf
            buf.fill(0xFF)
        r_s = dev.render("stages:spliced")
        dev.stream.synchronize()
        step()
        rows = stage_compare(sp, saved, buf, xp=cp)
        step()
        fd = first_divergence(rows)
        res["stages"] = {**sp.as_dict(), "rows": rows,
                         "first_divergence": ({"stage": fd["stage"], "name": fd["name"], "phase": fd["phase"],
                                               "cut": fd.get("cut"), "first": fd.get("first")}
                                              if fd else None),
                         "instrumented_frames_equal_plain": {
                             "original": r_o["sha256"] == frames["original"]["sha256"][0],
                             "spliced": r_s["sha256"] == frames["spliced"]["sha256"][0]}}
        del buf, saved
        res["timings_s"]["stages"] = time.perf_counter() - t0

    # ---- phase harness --------------------------------------------------------------------
    if opt.harness:
        from .harness import compare_outs, random_live_ins

        t0 = time.perf_counter()
        rows = []
        step = ui.task(f"phase harness ({len(hcases)} cut{'s' if len(hcases) != 1 else ''})", max(len(hcases), 1))
        block = tuple(spec.block)
        threads = block[0] * block[1] * block[2] * opt.harness_blocks
        for i, hc in enumerate(hcases):
            if hc.skipped:
                rows.append({"cut": hc.cut, "title": hc.title, "phase": hc.phase, "skipped": hc.skipped,
                             "equal": None})
                step()
                continue
            ins = cp.asarray(random_live_ins(hc.live_in, threads, seed=i))
            outs = {}
            for side in ("original", "spliced"):
                m = cp.RawModule(path=str(built[f"harness{i}:{side}"].path))
                k = m.get_function("splice_harness")
                o = cp.full((max(len(hc.live_out), 1), threads), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=cp.uint64)
                with dev.stream:
                    k((opt.harness_blocks,), block, (ins, o))
                dev.stream.synchronize()
                outs[side] = cp.asnumpy(o)
            row = compare_outs(hc, outs["original"], outs["spliced"])
            row["unwritten"] = int((outs["original"][:len(hc.live_out)] == np.uint64(0xFFFFFFFFFFFFFFFF)).sum())
            rows.append(row)
            step()
        first = next((r for r in rows if r.get("equal") is False), None)
        res["harness"] = {"blocks": opt.harness_blocks, "block": list(block), "threads": threads,
                          "rows": rows,
                          "first_divergence": ({"cut": first["cut"], "title": first["title"],
                                                "phase": first["phase"], "first": first.get("first")}
                                               if first else None)}
        res["timings_s"]["harness"] = time.perf_counter() - t0

    # ---- timing -------------------------------------------------------------------------------
    if opt.runs > 0:
        from .timing import time_interleaved

        t0 = time.perf_counter()
        step = ui.task(f"timing ({opt.runs} runs{' + graph replay' if opt.graph else ''})",
                       opt.runs * (2 if opt.graph else 1))
        tm = time_interleaved(cp, dev.stream, {n: dev.launcher(n) for n in ("original", "spliced")},
                              opt.runs, opt.warmup, opt.graph, progress=step)
        tres = {n: {k: v for k, v in d.items() if k != "times_ms"} for n, d in tm.items()}
        for n in tm:
            tres[n]["times_ms"] = [round(x, 5) for x in tm[n]["times_ms"]]
        eo, es = tm["original"]["events"], tm["spliced"]["events"]
        tres["ratio"] = es["median_ms"] / eo["median_ms"]
        tres["ratio_min"] = es["min_ms"] / eo["min_ms"]
        if opt.graph:
            tres["graph_ratio"] = tm["spliced"]["graph"]["median_ms"] / tm["original"]["graph"]["median_ms"]
        f = dev.probe.surface_field
        tres["resolution"] = [f.width, f.height]
        res["timing"] = tres
        res["timings_s"]["timing"] = time.perf_counter() - t0
        if opt.roofline:
            from .timing import frame_work, measure_device, roofline

            try:
                devinfo = measure_device(cp, CACHE, pair.arch)
                res["roofline"] = {"device": devinfo}
                for n, text in (("original", pair.original), ("spliced", pair.spliced)):
                    w = frame_work(text, pair.entry, spec)
                    res["roofline"][n] = {"work": w, **roofline(tres[n]["events"]["median_ms"], w, devinfo)}
            except Exception as e:  # noqa: BLE001 - the roofline is a side report
                res["roofline"] = {"error": f"{type(e).__name__}: {e}"}

    if opt.profile:
        res["profile"] = prof_mod.run(prof, dev, built, pair.entry, max(opt.runs, 10), opt.warmup, report_dir,
                                      {n: frames[n]["sha256"][0] for n in frames})
    if opt.ncu:
        from .ncu import run as run_ncu
        res["ncu"] = run_ncu(pair, built)
    res["timings_s"]["total"] = time.perf_counter() - t_start
    st_ok = res.get("stages", {}).get("first_divergence") is None
    h_ok = res.get("harness", {}).get("first_divergence") is None
    det = all(frames[n]["deterministic"] for n in frames)
    res["ok"] = bool(res["identical"] and covered and det and st_ok and h_ok)
    return res
