"""Timing, the one entry point of every timed path (frames, ``--graph``, ``--profile`` totals,
``splice probe render``), and the roofline.

* :func:`time_device` -- modules loaded on a probe :class:`~splice.probe.run.device.Device` timed
  against a baseline, with the A/A control (a second loaded copy of the baseline) in the same
  interleaved rounds: per-module samples, every ratio of medians with its bootstrap interval,
  the verdict, the device's state (``device_state``), how the samples were taken.
* :func:`time_launchers` -- the same for any ``{name: callable(stream)}`` on a cupy stream,
  without a probe spec (what a search over variants needs): ``baseline`` and ``control`` name
  two of the launchers, the control launching a second loaded copy of the baseline's cubin.
* The method itself is ``timing_engine`` (pure logic over an injectable device, tested on the
  CPU with a fake clock), its statistics ``timing_stats``, the cupy device ``timing_cupy``.
* Roofline: :func:`measure_device` runs once per device (cached in
  ``build/probe/roofline-<device>.json``): a generated PTX micro-kernel issuing independent
  ``mma.sync.m16n8k32.row.col.f16.e4m3.e4m3.f16`` chains (the kernels' own mma) for the mma
  rate, and a cupy device-to-device copy for the copy bandwidth (bytes read + written / s).
  :func:`roofline` puts a frame time against ``max(mma count / rate, bytes moved / bandwidth)``.
"""
from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ..analysis import Kernel
from ..ptx import parse
from .device_state import DeviceState
from .run.modules import compile_one
from .timing_cupy import CupyBackend, Restorer
from .timing_engine import TimingOptions, measure
from .timing_stats import ratio_interval, summary

__all__ = ["TimingOptions", "measure", "ratio_interval", "stats", "time_device", "time_launchers"]

MMA_FLOP = 2 * 16 * 8 * 32          # one m16n8k32 mma.sync per warp

#: median/min/max/mean/stdev, p10/p90, spread, fps of per-launch milliseconds
stats = summary


def time_launchers(cp, stream, launchers: dict, baseline: str, control: str, options: TimingOptions,
                   restore: Optional[Callable] = None, restored: tuple = (),
                   progress: Optional[Callable] = None) -> dict:
    """Time ``launchers`` ({name: callable(stream)}) on ``stream``: ``timing_engine.measure``
    over the cupy device, with the device's state read through NVML when pynvml is there.
    ``restore(name, stream)`` puts back the inputs module ``name`` writes (``restored`` names
    them in the report)."""
    be = CupyBackend(cp, stream, launchers, graph=options.graph, cold=options.cache == "cold",
                     restore=restore, restored=restored)
    state = DeviceState(getattr(cp.cuda.Device(), "pci_bus_id", None))
    collecting = gc.isenabled()
    gc.disable()               # as timeit does: a collection mid-sample would make its round late
    try:
        return measure(be, list(launchers), baseline, control, options, state, progress)
    finally:
        if collecting:
            gc.enable()
        state.close()


def time_device(dev, names: list, baseline: str, control: str, options: TimingOptions,
                progress: Optional[Callable] = None) -> dict:
    """Modules ``names`` loaded on ``dev`` (a probe Device; ``control`` loaded from the
    baseline's cubin), every inout buffer, surface, table and inout global restored before each
    sample."""
    rs = Restorer(dev)
    return time_launchers(dev.cp, dev.stream, {n: dev.launcher(n) for n in names}, baseline, control, options,
                          restore=None if rs.empty else rs, restored=tuple(rs.names), progress=progress)


# --------------------------------------------------------------------------------------------
# roofline
# --------------------------------------------------------------------------------------------

CHAINS = 8
UNROLL = 4
MMA_OP = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"


def mma_bench_ptx(version: str = "8.7", arch: str = "sm_90") -> str:
    """CHAINS independent accumulation chains x UNROLL mma per loop iteration per warp.

    Every mma of an iteration multiplies a different (A, B) pair, and the A registers change
    every iteration, so ptxas can neither share a product between chains nor hoist it out of
    the loop (an earlier version with loop-invariant operands was folded to 4 HMMA + HADD2 per
    iteration and overstated the rate ~8x; ``tests/test_probe_tools.py`` now counts the MMA
    instructions ptxas emits)."""
    body = []
    for u in range(UNROLL):
        for c in range(CHAINS):
            q = (c + u) % 4
            a = f"{{%a{4 * q}, %a{4 * q + 1}, %a{4 * q + 2}, %a{4 * q + 3}}}"
            body.append(f"\t{MMA_OP} {{%c{2 * c}, %c{2 * c + 1}}}, {a}, {{%b{2 * c}, %b{2 * c + 1}}}, "
                        f"{{%c{2 * c}, %c{2 * c + 1}}};")
    init = "\n".join(f"\tmov.b32 %c{i}, 0;" for i in range(2 * CHAINS))
    fold = "\n".join(f"\txor.b32 %x, %x, %c{i};" for i in range(2 * CHAINS))
    seed_a = "\n".join(f"\tor.b32 %a{i}, %x, {0x08080800 ^ (i * 0x01000101):#010x};" for i in range(16))
    seed_b = "\n".join(f"\tor.b32 %b{i}, %x, {0x01020300 ^ (i * 0x00010001):#010x};" for i in range(2 * CHAINS))
    # keep the e4m3 bytes small and finite: toggle bit 0 of every byte with the loop counter
    step = "\n".join(f"\txor.b32 %a{i}, %a{i}, %s;" for i in range(16))
    return f"""//
// splice probe: fp8 mma.sync throughput micro-kernel (generated)
.version {version}
.target {arch}
.address_size 64

.visible .entry splice_mma_bench(.param .u64 out, .param .u32 iters)
{{
\t.reg .b32 %a<16>;
\t.reg .b32 %b<{2 * CHAINS}>;
\t.reg .b32 %c<{2 * CHAINS}>;
\t.reg .b32 %t, %i, %n, %x, %s;
\t.reg .pred %p;
\t.reg .b64 %o, %off;
\tmov.u32 %t, %tid.x;
\tand.b32 %x, %t, 7;
{seed_a}
{seed_b}
{init}
\tld.param.u32 %n, [iters];
\tmov.u32 %i, 0;
$Lloop:
{chr(10).join(body)}
\tand.b32 %s, %i, 1;
\tmul.lo.u32 %s, %s, 0x01010101;
{step}
\tadd.u32 %i, %i, 1;
\tsetp.lt.u32 %p, %i, %n;
\t@%p bra $Lloop;
\tmov.u32 %x, 0;
{fold}
\tld.param.u64 %o, [out];
\tcvta.to.global.u64 %o, %o;
\tmov.u32 %t, %ctaid.x;
\tmov.u32 %i, %ntid.x;
\tmov.u32 %n, %tid.x;
\tmad.lo.u32 %t, %t, %i, %n;
\tmul.wide.u32 %off, %t, 4;
\tadd.s64 %o, %o, %off;
\tst.global.u32 [%o], %x;
\tret;
}}
"""


def measure_device(cp, cache_dir: Path, arch: str = "sm_90", version: str = "8.7",
                   force: bool = False) -> dict:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    sms = int(props["multiProcessorCount"])
    cache = Path(cache_dir) / f"roofline-{name.replace(' ', '_')}.json"
    if cache.exists() and not force:
        data = json.loads(cache.read_text())
        data["cached"] = str(cache)
        return data
    b = compile_one("mma_bench", mma_bench_ptx(version, arch), arch, Path(cache_dir))
    mod = cp.RawModule(path=str(b.path))
    k = mod.get_function("splice_mma_bench")
    blocks, threads, iters = sms * 4, 256, 2048
    out = cp.zeros(blocks * threads, dtype=cp.uint32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        k((blocks,), (threads,), (out, np.uint32(64)))
        s.synchronize()
        ts = []
        for _ in range(5):
            a, e = cp.cuda.Event(), cp.cuda.Event()
            a.record(s)
            k((blocks,), (threads,), (out, np.uint32(iters)))
            e.record(s)
            e.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, e))
    ms = min(ts)
    mmas = blocks * (threads // 32) * iters * CHAINS * UNROLL
    rate = mmas / (ms * 1e-3)
    n = 1 << 30
    src = cp.ones(n, dtype=cp.uint8)
    dst = cp.empty(n, dtype=cp.uint8)
    cts = []
    for i in range(6):
        a, e = cp.cuda.Event(), cp.cuda.Event()
        a.record(s)
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, n, cp.cuda.runtime.memcpyDeviceToDevice, s.ptr)
        e.record(s)
        e.synchronize()
        if i:
            cts.append(cp.cuda.get_elapsed_time(a, e))
    del src, dst
    cms = min(cts)
    data = {"device": name, "sms": sms,
            "mma": {"op": MMA_OP, "blocks": blocks, "threads": threads, "iters": iters,
                    "chains_per_warp": CHAINS, "ms": ms, "mma_per_s": rate,
                    "tflops": rate * MMA_FLOP / 1e12},
            "copy": {"bytes": n, "ms": cms, "bytes_per_s": 2 * n / (cms * 1e-3),
                     "note": "device-to-device memcpy, read + write counted"}}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(data, indent=1) + "\n")
    data["cached"] = None
    return data


_SHAPE = re.compile(r"\.m(\d+)n(\d+)k(\d+)")


def _mma_flops(node) -> int:
    """2·M·N·K of one mma/wgmma statement (0 when its shape is not in the opcode)."""
    sh = _SHAPE.search(node.name)
    return 2 * int(sh.group(1)) * int(sh.group(2)) * int(sh.group(3)) if sh else 0


def kernel_work(text: str, entry: str, spec) -> dict:
    """What one frame executes, for the roofline: mma/wgmma flops counted from the analysis'
    phases (splice.analysis), each times the static trip counts of the loops around it, where
    every such loop has one; otherwise the spec's declared ``work: {flops}``.  Bytes are the
    spec's ``work: {bytes}`` or every input read once and every output written once.  A phase in
    a loop of unknown trip count is never counted "once per warp": the flops stay unknown (None)
    and the reason is given."""
    k = Kernel(parse(text, "<probe>"), entry)
    threads = spec.block[0] * spec.block[1] * spec.block[2]
    warps = spec.grid[0] * spec.grid[1] * spec.grid[2] * (-(-threads // 32))
    flops, mma, unknown = 0, 0, []
    for ph in k.phases:
        units = warps // 4 if ph.form.startswith("wgmma") else warps     # wgmma: one per warpgroup
        if ph.executions is None:
            unknown.append(ph)
            continue
        mma += units * ph.executions * len(ph.mma)
        flops += units * ph.executions * sum(_mma_flops(st.node) for st in ph.mma)
    declared = dict(spec.work)
    out = {"warps": warps, "mma_static": sum(len(ph.mma) for ph in k.phases),
           "loops": sum(1 for ph in k.phases if ph.loop), "mma": mma if not unknown else None,
           "flops": flops if not unknown else None, "flops_source": "analysis"}
    if unknown:
        out["flops_source"] = "declared" if "flops" in declared else None
        out["flops"] = declared.get("flops")
        out["note"] = (f"{len(unknown)} phase(s) in loops without a static trip count "
                       f"(first: phase {unknown[0].index}, s{unknown[0].first}): "
                       + ("flops from the spec's work:" if "flops" in declared
                          else "declare work: {flops: N} in the spec"))
    elif "flops" in declared:
        out["flops_declared"] = declared["flops"]
    out["bytes"], out["bytes_source"] = (declared["bytes"], "declared") if "bytes" in declared \
        else (_moved_bytes(spec), "inputs read once + outputs written once")
    return out


def _moved_bytes(spec) -> int:
    """Every field's bytes a frame reads or writes once, as its kind counts them."""
    return sum(f.moved_bytes() for f in spec.fields)


def frame_work(text: str, entry: str, spec) -> dict:
    """Compatibility name of :func:`kernel_work`."""
    return kernel_work(text, entry, spec)


def roofline(frame_ms: float, work: dict, dev: dict) -> dict:
    """Achieved TFLOP/s and GB/s next to the measured ceilings, and the frame time against
    max(flops / mma ceiling, bytes / copy bandwidth).  Unknown flops leave the mma side out."""
    peak_flops = dev["mma"]["mma_per_s"] * MMA_FLOP
    t_mma = work["flops"] / peak_flops * 1e3 if work.get("flops") is not None else None
    t_mem = work["bytes"] / dev["copy"]["bytes_per_s"] * 1e3
    floor = max(t_mma or 0.0, t_mem)
    s = frame_ms * 1e-3
    return {"mma_ms": t_mma, "memory_ms": t_mem, "floor_ms": floor,
            "bound": "mma" if (t_mma or 0.0) >= t_mem else "memory",
            "frame_ms": frame_ms, "of_floor": frame_ms / floor if floor else None,
            "efficiency": floor / frame_ms if frame_ms else None,
            "tflops": work["flops"] / s / 1e12 if work.get("flops") is not None and s else None,
            "gbps": work["bytes"] / s / 1e9 if s else None,
            "ceiling_tflops": peak_flops / 1e12, "ceiling_gbps": dev["copy"]["bytes_per_s"] / 1e9}
