"""``splice probe``: the whole run as named stages, without printing or writing images.

    pair = modules.resolve(target, module)
    run = run_probe(pair, ProbeOptions(...), ui)     # ui: progress callbacks (or None)
    run.result   # the JSON-able report;  run.maps  # {output: 2-D difference map} for PNGs

Stages, each a function returning a small frozen dataclass:

    check      the spec against the entry's .param list and directives (before the GPU)
    build      cubins for the device's arch (original, spliced, instrumented, harness; cached)
    inputs     the spec's objects on the device, argument packs (one ``device.Device``)
    outputs    per module: poison, launch sequence, read back, coverage; bit-for-bit compare
    stages     debug stages: first diverging phase / cut (``stages.py``)
    harness    per-cut micro-kernels on random live-ins (``harness.py``)
    timing     original, its A/A control and spliced, interleaved (timing.py: verdict, interval)
    roofline   achieved TFLOP/s and GB/s against the ceilings measured once per device
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..errors import SpliceError
from .modules import Pair, compile_many, probe_cache
from .timing_engine import TimingOptions


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
    compile_cache: bool = True     # False: --no-cache
    profile: bool = False          # per-phase %clock64 profile (profile.py)
    ncu: bool = False              # Nsight Compute side by side (ncu.py)
    # --cache, --ci-width, --time-budget, --confidence, --min-sample-ms, --timing-seed; its runs,
    # warmup and graph are the three above (timing_options)
    timing: TimingOptions = field(default_factory=TimingOptions)


class _NullUI:
    def task(self, name: str, total: int):
        return lambda n=1: None

    def note(self, text: str):
        pass


@dataclass(frozen=True)
class CheckStage:
    decl: Any                    # check.EntryDecl
    cluster: Optional[tuple]


@dataclass(frozen=True)
class BuildStage:
    arch: str
    target: str                  # the module's .target
    modules: dict                # name -> modules.Built
    texts: dict                  # name -> PTX text that was built
    stage_plan: Any = None
    harness_cases: tuple = ()
    seconds: float = 0.0
    profiling: object = None     # profile.Profiling (--profile)


@dataclass(frozen=True)
class InputsStage:
    device: Any                  # device.Device
    seconds: float


@dataclass(frozen=True)
class OutputsStage:
    modules: dict                # name -> {output: {sha256[], deterministic, uncovered, ...}}
    compare: dict                # output -> statistics (compare.compare_output)
    maps: dict                   # output -> 2-D difference map (np.ndarray)
    renders: dict                # module -> first render's {output: host array}
    identical: bool
    covered: bool
    deterministic: bool
    seconds: float


@dataclass(frozen=True)
class StagesStage:
    result: dict
    ok: bool
    seconds: float


@dataclass(frozen=True)
class HarnessStage:
    result: dict
    ok: bool
    seconds: float


@dataclass(frozen=True)
class TimingStage:
    result: dict
    seconds: float


@dataclass(frozen=True)
class RooflineStage:
    result: dict


@dataclass(frozen=True)
class ProbeRun:
    result: dict
    maps: dict = field(default_factory=dict)        # output -> 2-D difference map
    texts: dict = field(default_factory=dict)       # instrumented module name -> PTX


# --------------------------------------------------------------------------------------------

def check_stage(spec, pair: Pair) -> CheckStage:
    from .check import check, cluster_dims

    decl = check(spec, pair.original, str(pair.original_path))
    spl = check(spec, pair.spliced, pair.spliced_name)
    if [p.size for p in spl.params] != [p.size for p in decl.params]:
        raise SpliceError("the spliced module's .param list differs from the original's", pair.spliced_name)
    return CheckStage(decl, cluster_dims(spec, decl))


def probe_arch(spec, device_sm: str, target: str) -> str:
    """The arch the cubins are built for: the spec's ``build_arch``, else the device's (with the
    ``a`` suffix when the module targets that exact arch-specific variant, e.g. sm_90a)."""
    if spec.build_arch:
        return spec.build_arch
    t = target.split(",")[0].strip()
    if t.endswith("a") and t[:-1] == device_sm:
        return t
    tnum = int("".join(ch for ch in t if ch.isdigit()) or 0)
    dnum = int("".join(ch for ch in device_sm if ch.isdigit()) or 0)
    if tnum > dnum:
        raise SpliceError(f"the module targets {t}, newer than this device ({device_sm})",
                          spec.source, *spec.where("ptx"))
    return device_sm


@dataclass(frozen=True)
class BuildPlan:
    """What ``build_stage`` compiles, decided before cupy is imported: every error it can raise
    (``--stages 99``, an instrumentation that does not fit) is a usage error, and a usage error
    is said before "no GPU", not after it."""
    items: list                  # (name, PTX text)
    stage_plan: Any = None
    harness_cases: tuple = ()
    profiling: object = None


def plan_build(pair: Pair, spec, opt: ProbeOptions) -> BuildPlan:
    try:
        return _plan_build(pair, spec, opt)
    except SpliceError as exc:      # an option's error (``--stages 99``) names the target it was about
        if exc.path is not None:
            raise
        target = pair.recipe.path if pair.recipe is not None else pair.spec_path
        raise SpliceError(exc.message, target, detail=exc.detail) from None


def _plan_build(pair: Pair, spec, opt: ProbeOptions) -> BuildPlan:
    items = [("original", pair.original), ("spliced", pair.spliced)]
    sp, hcases = None, ()
    if opt.graph and opt.runs and spec.launch.stream == "default":    # known now, not after the renders
        from .timing_cupy import GRAPH_ON_DEFAULT_STREAM

        raise SpliceError(GRAPH_ON_DEFAULT_STREAM, pair.spec_path, *spec.where("launch.stream"))
    if opt.ncu:     # a tool asked for and missing: said now, not as a note after the whole GPU run
        from .ncu import find_ncu

        if find_ncu() is None:
            raise SpliceError("--ncu: ncu (Nsight Compute) is not on PATH; put it there or leave --ncu out")
    if opt.harness and pair.plan is None:   # no cut to compare: the harness would run nothing
        raise SpliceError("--harness compares each cut of a recipe with its native phase: a probe spec "
                          "and a module have no cut (probe the recipe instead)", pair.spec_path)
    if opt.stages or opt.harness:
        from ..analysis import Kernel

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

            hcases = tuple(cases(pair, kernel, spec, opt.harness_blocks))
            for i, hc in enumerate(hcases):
                if not hc.skipped:
                    items += [(f"harness{i}:original", hc.orig_ptx), (f"harness{i}:spliced", hc.spl_ptx)]
    prof = None
    if opt.profile:                     # per-phase %clock64 stamps (profile.py)
        from .profile import prepare

        prof = prepare(pair, spec)
        items += prof.items
    return BuildPlan(items, sp, hcases, prof)


def build_stage(plan: BuildPlan, opt: ProbeOptions, ui, arch: str, target: str) -> BuildStage:
    t0 = time.perf_counter()
    step = ui.task(f"compile (ptxas -arch={arch} -O3)", len(plan.items))
    built = compile_many(plan.items, arch, lambda n, b: step(), use_cache=opt.compile_cache)
    return BuildStage(arch, target, built, dict(plan.items), plan.stage_plan, plan.harness_cases,
                      time.perf_counter() - t0, plan.profiling)


def inputs_stage(spec, build: BuildStage, check: CheckStage, cp, ui) -> InputsStage:
    from .device import Device

    t0 = time.perf_counter()
    step = ui.task("inputs (seeded buffers, textures, surfaces, argument packs)", 1)
    dev = Device(spec, cp, cluster=check.cluster)
    for name in ("original", "spliced"):
        dev.load(name, build.modules[name].path)
    step()
    return InputsStage(dev, time.perf_counter() - t0)


def outputs_stage(spec, dev, repeat: int, ui) -> OutputsStage:
    """Render each module ``repeat`` times (interleaved); keep the first render's outputs."""
    from .compare import compare_output, elements, output_coverage
    from .device import digest

    t0 = time.perf_counter()
    step = ui.task("render original + spliced", 2 * repeat)
    first: dict = {}
    shas: dict = {"original": {}, "spliced": {}}
    for r in range(max(repeat, 1)):
        for name in ("original", "spliced"):
            out = dev.render(name)
            for f in spec.outputs:
                shas[name].setdefault(f.name, []).append(digest({f.name: out[f.name]}))
            if r == 0:
                first[name] = out
            step()
    step = ui.task("coverage renders (complement poison)", 2)
    alt = {}
    for name in ("original", "spliced"):
        alt[name] = dev.render(name, alt=True)
        step()
    mods = {name: {f.name: {"sha256": shas[name][f.name], "deterministic": len(set(shas[name][f.name])) == 1,
                            "frame": f.name in spec.frames,
                            **output_coverage(f, elements(f, first[name][f.name]), elements(f, alt[name][f.name]))}
                   for f in spec.outputs} for name in first}
    del alt
    cmp, maps = {}, {}
    for f in spec.outputs:
        a, b = elements(f, first["original"][f.name]), elements(f, first["spliced"][f.name])
        cmp[f.name], m = compare_output(f, a, b)
        if m is not None:
            maps[f.name] = m
    identical = all(c["identical"] for c in cmp.values())
    # the frame output(s) must be fully written and deterministic; other outputs (scratch,
    # arenas) are compared bit for bit and their coverage/determinism reported
    covered = all(o["uncovered"] == 0 for per in mods.values() for o in per.values() if o["frame"])
    det = all(o["deterministic"] for per in mods.values() for o in per.values() if o["frame"])
    return OutputsStage(mods, cmp, maps, first, identical, covered, det, time.perf_counter() - t0)


def stages_stage(spec, pair: Pair, build: BuildStage, dev, outputs: OutputsStage, ui) -> StagesStage:
    """Instrumented modules dump each stage into a probe-owned buffer; compare stage by stage."""
    from .device import digest, set_pointer
    from .stages import PTR, compare as stage_compare, first_divergence

    cp, sp = dev.cp, build.stage_plan
    t0 = time.perf_counter()
    step = ui.task(f"debug stages ({len(sp.stages)})", 3)
    mods = {side: dev.load(f"stages:{side}", build.modules[f"stages:{side}"].path)
            for side in ("original", "spliced")}
    buf = cp.empty(max(sp.total, 256), dtype=cp.uint8)
    saved = cp.empty_like(buf)
    for m in mods.values():
        set_pointer(cp, m, PTR, int(buf.data.ptr))
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
    plain = {n: digest(outputs.renders[n]) for n in ("original", "spliced")}
    if fd is None:                   # registers agree everywhere: memory written by a cut?
        from .epilogue_stages import memory_divergence

        fd = memory_divergence(pair, _outputs_differ(outputs))
    res = {**sp.as_dict(), "rows": rows,
           "first_divergence": ({"stage": fd["stage"], "name": fd["name"], "phase": fd["phase"],
                                 "cut": fd.get("cut"), "first": fd.get("first")} if fd else None),
           "instrumented_frames_equal_plain": {"original": digest(r_o) == plain["original"],
                                               "spliced": digest(r_s) == plain["spliced"]}}
    return StagesStage(res, fd is None, time.perf_counter() - t0)


def _outputs_differ(outputs: OutputsStage) -> list:
    """Names of the outputs whose first renders differ between original and spliced."""
    o, s = outputs.renders["original"], outputs.renders["spliced"]
    return [k for k in o if not np.array_equal(np.asarray(o[k]).view(np.uint8), np.asarray(s[k]).view(np.uint8))]


def harness_stage(spec, build: BuildStage, dev, blocks: int, ui) -> HarnessStage:
    from .harness import compare_outs

    hcases = build.harness_cases
    t0 = time.perf_counter()
    rows = []
    step = ui.task(f"phase harness ({len(hcases)} cut{'s' if len(hcases) != 1 else ''})", max(len(hcases), 1))
    block = tuple(spec.block)
    threads = block[0] * block[1] * block[2] * blocks
    for i, hc in enumerate(hcases):
        if hc.skipped:
            rows.append({"cut": hc.cut, "title": hc.title, "phase": hc.phase, "skipped": hc.skipped, "equal": None})
            step()
            continue
        outs, mem = _harness_pair(spec, build, dev, i, hc, blocks, threads)
        row = _per_launch(compare_outs(hc, outs["original"], outs["spliced"]), threads)
        row["unwritten"] = int((outs["original"][:len(hc.live_out)] == np.uint64(0xFFFFFFFFFFFFFFFF)).sum())
        if mem is not None:
            _compare_memory(spec, row, mem, dev.cp)
        rows.append(row)
        step()
    first = next((r for r in rows if r.get("equal") is False), None)
    res = {"blocks": blocks, "block": list(block), "threads": threads, "rows": rows,
           "first_divergence": ({"cut": first["cut"], "title": first["title"], "phase": first["phase"],
                                 "first": first.get("first")} if first else None)}
    return HarnessStage(res, first is None, time.perf_counter() - t0)


def _per_launch(row: dict, threads: int) -> dict:
    """A bound case run over a launch sequence compares (thread, launch) columns: say so, and
    name the launch of the first difference."""
    n = row["threads"] // threads
    if n > 1:
        row["launches"], row["threads"] = n, threads
        if "first" in row:
            row["first"]["launch"], row["first"]["thread"] = divmod(row["first"]["thread"], threads)
    return row


def _harness_pair(spec, build: BuildStage, dev, i: int, hc, blocks: int, threads: int) -> tuple:
    """Both sides of one harness case on the same inputs: (live-out rows per side, and for a
    bound case the device states of every writable field -- before, after each side -- or
    None).  Outputs are poisoned and inputs restored before each side."""
    from .harness import harness_inputs

    ins = dev.cp.asarray(harness_inputs(hc, threads, seed=i))
    bound = getattr(hc, "bound", False)
    outs, mem = {}, ({} if bound else None)
    for side in ("original", "spliced"):
        run = _bound_side if bound else _plain_side
        outs[side] = run(spec, build, dev, f"harness{i}:{side}", hc, ins, blocks, threads, mem)
    return outs, mem


def _live_out_rows(cp, hc, threads: int):
    return cp.full((max(len(hc.live_out), 1), threads), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=cp.uint64)


def _plain_side(spec, build, dev, name: str, hc, ins, blocks: int, threads: int, _mem) -> np.ndarray:
    """A harness kernel on its random live-ins alone."""
    from .device import gpu_errors
    from .harness import ENTRY

    cp, st = dev.cp, dev.stream
    o = _live_out_rows(cp, hc, threads)
    with gpu_errors(f"the {name} module", spec.source):
        k = cp.RawModule(path=str(build.modules[name].path)).get_function(ENTRY)
        with st:
            k((blocks,), tuple(spec.block), (ins, o))
        st.synchronize()
    return cp.asnumpy(o)


def _bound_side(spec, build, dev, name: str, hc, ins, blocks: int, threads: int, mem: dict) -> np.ndarray:
    """A bound harness kernel, once per launch of the spec's sequence with that launch's
    arguments, in order (a launch sees what the one before it wrote, as in the frame run): its
    live-outs are the launches' side by side, (n_out, threads × launches).  The original side
    snapshots the device state before; the spliced side starts from that snapshot."""
    from . import memory
    from .harness import ENTRY

    cp, st = dev.cp, dev.stream
    dev.load(name, build.modules[name].path, entry=ENTRY)
    dev.prepare(st)
    if name.endswith(":original"):
        mem["before"] = memory.snapshot(dev, st)
    else:
        memory.restore(dev, mem["before"], st)
    per = []
    for k in range(spec.launch.launches):
        o = _live_out_rows(cp, hc, threads)
        dev.launch_bound(name, blocks, (int(ins.data.ptr), int(o.data.ptr)), hc.dynamic_smem, st, launch=k)
        per.append(o)
    mem[name.rsplit(":", 1)[1]] = memory.snapshot(dev, st)
    st.synchronize()               # the snapshot copies are done before anything reads them
    return np.concatenate([cp.asnumpy(o) for o in per], axis=1)


def _compare_memory(spec, row: dict, mem: dict, xp) -> None:
    """Every writable field after each side, bit for bit: a difference makes the row unequal,
    named by field and element; ``bytes_written`` shows what the original's cut wrote."""
    from . import memory

    report = {}
    for w in memory.compare(xp, spec, mem["before"], mem["original"], mem["spliced"]):
        report[w.name] = w.as_dict()
        if not w.identical and row.get("equal", True):
            row["equal"] = False
            row["first"] = {"output": w.name, "index": w.first_index, "original": w.original,
                            "spliced": w.spliced}
    row["memory"] = report


def timing_options(opt: ProbeOptions) -> TimingOptions:
    """The timing's options: ``opt.timing`` with the probe's --runs (the cap), --warmup, --graph."""
    return replace(opt.timing, runs=opt.runs, warmup=opt.warmup, graph=opt.graph)


def timing_stage(spec, dev, opt: ProbeOptions, ui, original_cubin, original_sha: Optional[str] = None) -> TimingStage:
    """Original, control (a second RawModule of the original's cubin: the A/A) and spliced in
    the same interleaved rounds (timing.time_device).  The control renders once first: that
    sets its module globals as the original's were set, and its frame must be the original's."""
    from .device import digest, gpu_errors
    from .timing import time_device

    t0 = time.perf_counter()
    topt = timing_options(opt)
    step = ui.task(f"timing ({topt.cache} cache, A/A control, at most {topt.runs} rounds or "
                   f"{topt.budget_s:g} s{', graph replay' if topt.graph else ''})", topt.runs)
    with gpu_errors("timing the original and spliced modules", spec.source):
        dev.load("control", original_cubin)
        control_sha = digest(dev.render("control"))
        tm = time_device(dev, ["original", "control", "spliced"], "original", "control", topt, progress=step)
    res = {k: v for k, v in tm.items() if k != "modules"}
    res["control_frame_equal"] = None if original_sha is None else control_sha == original_sha
    res.update(tm["modules"])             # timing.{original,control,spliced}.{events,samples_ms}
    sp = tm["ratios"]["spliced"]
    res["ratio"], res["interval"], res["verdict"] = sp["ratio"], [sp["lo"], sp["hi"]], sp["verdict"]
    res["ratio_min"] = tm["modules"]["spliced"]["events"]["min_ms"] / tm["modules"]["original"]["events"]["min_ms"]
    fr = spec.frame
    res["resolution"] = [fr.width, fr.height] if fr is not None else None
    res["launches_per_frame"] = spec.launch.launches
    return TimingStage(res, time.perf_counter() - t0)


def roofline_stage(spec, pair: Pair, dev, timing: TimingStage, arch: str) -> RooflineStage:
    """Measured once per device (cached); a failure here is reported, never fatal."""
    from .timing import kernel_work, measure_device, roofline

    try:
        devinfo = measure_device(dev.cp, probe_cache(), arch if arch.startswith("sm_9") else "sm_90")
        res = {"device": devinfo}
        for n, text in (("original", pair.original), ("spliced", pair.spliced)):
            w = kernel_work(text, pair.entry, spec)
            res[n] = {"work": w, **roofline(timing.result[n]["events"]["median_ms"], w, devinfo)}
    except Exception as e:  # noqa: BLE001 - the roofline is a side report
        res = {"error": f"{type(e).__name__}: {e}"}
    return RooflineStage(res)


# --------------------------------------------------------------------------------------------

def _header(pair: Pair, opt: ProbeOptions) -> dict:
    return {"target": pair.name, "spec": str(pair.spec_path), "entry": pair.entry, "arch": pair.arch,
            "original": str(pair.original_path), "spliced": pair.spliced_name,
            "cuts": [{"cut": c.cut.index, "title": c.title, "phase": c.phase, "abi": c.binding.abi,
                      "statements": [c.first, c.last], "function": c.binding.func} for c in pair.cuts],
            "options": {"runs": opt.runs, "warmup": opt.warmup, "graph": opt.graph,
                        "stages": opt.stages, "harness": opt.harness, "cache": opt.timing.cache},
            "timings_s": {}}


def _frame_view(spec, out: OutputsStage) -> tuple:
    """The report's "frames"/"compare" keys: the frame output(s) (all outputs by default)."""
    names = list(spec.frames) or [f.name for f in spec.outputs]
    frames = {}
    for n, per in out.modules.items():
        f0 = per[names[0]]
        frames[n] = {"sha256": f0["sha256"], "deterministic": all(per[x]["deterministic"] for x in names),
                     "uncovered": sum(per[x]["uncovered"] for x in names),
                     "nonfinite": sum(per[x]["nonfinite"] for x in names),
                     "outputs": {x: {"uncovered": o["uncovered"], "elements": o["elements"],
                                     "deterministic": o["deterministic"], "frame": o["frame"]}
                                 for x, o in per.items()}}
    cmp = dict(out.compare[names[0]])
    cmp["identical"] = out.identical
    cmp["frame"] = names
    cmp["outputs"] = out.compare
    return frames, cmp


def run_probe(pair: Pair, opt: ProbeOptions, ui=None, cp=None) -> ProbeRun:
    from .device import device_arch, import_cupy
    from .spec import load_spec

    ui = ui or _NullUI()
    t_start = time.perf_counter()
    spec = load_spec(pair.spec_path)
    res = _header(pair, opt)
    chk = check_stage(spec, pair)                       # before cupy, cubins or the GPU
    plan = plan_build(pair, spec, opt)                  # --stages, --harness, --profile: before cupy too
    cp = cp or import_cupy(pair.recipe.path if pair.recipe is not None else pair.spec_path)
    arch = probe_arch(spec, device_arch(cp), chk.decl.target)
    res["build_arch"] = arch
    build = build_stage(plan, opt, ui, arch, chk.decl.target)
    res["timings_s"]["build"] = build.seconds
    res["modules"] = {n: {"cubin": str(b.path), "cached": b.cached, "ptxas_s": round(b.seconds, 3),
                          "resources": b.resources} for n, b in build.modules.items()}
    inp = inputs_stage(spec, build, chk, cp, ui)
    res["timings_s"]["inputs"] = inp.seconds
    out = outputs_stage(spec, inp.device, opt.repeat, ui)
    res["timings_s"]["render"] = out.seconds
    res["frames"], res["compare"] = _frame_view(spec, out)
    res["identical"], res["covered"] = out.identical, out.covered
    ok = out.identical and out.covered and out.deterministic
    if build.stage_plan is not None:
        st = stages_stage(spec, pair, build, inp.device, out, ui)
        res["stages"], res["timings_s"]["stages"] = st.result, st.seconds
        ok = ok and st.ok
    if opt.harness:
        h = harness_stage(spec, build, inp.device, opt.harness_blocks, ui)
        res["harness"], res["timings_s"]["harness"] = h.result, h.seconds
        ok = ok and h.ok
    if opt.runs > 0:
        from .device import digest

        tm = timing_stage(spec, inp.device, opt, ui, build.modules["original"].path,
                          digest(out.renders["original"]))
        res["timing"], res["timings_s"]["timing"] = tm.result, tm.seconds
        if opt.roofline:
            res["roofline"] = roofline_stage(spec, pair, inp.device, tm, arch).result
    if opt.profile and build.profiling is not None:
        from .device import digest
        from .profile import run as run_profile

        res["profile"] = run_profile(build.profiling, inp.device, build.modules, pair.entry, max(opt.runs, 10),
                                     opt.warmup, opt.report_dir,
                                     {n: digest(out.renders[n]) for n in ("original", "spliced")},
                                     options=timing_options(opt))
    if opt.ncu:
        from .ncu import run as run_ncu

        res["ncu"] = run_ncu(pair, build.modules)
    res["timings_s"]["total"] = time.perf_counter() - t_start
    res["ok"] = bool(ok)
    return ProbeRun(res, out.maps, {n: t for n, t in build.texts.items() if n.startswith("stages:")})
