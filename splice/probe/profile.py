"""Per-phase profile: ``%clock64`` stamps at every phase and epilogue boundary, per warp.

The instrumented module is the module's own text plus, like the debug stages (stages.py), whole
lines inserted at statement boundaries and a module-scope pointer the host sets:

    .global .align 8 .u64 __splice_profile_ptr;
    { .reg …;  mov.u64 t, %clock64;  warp id math;  @lane0 st.global.u64 [ptr + (warp·B + b)·8], t; }

Boundary *b* is the start of region *b* in program order (the prologue's first instruction, each
phase's first ``mma``, each epilogue's first statement; after a label, so jumps to it are
stamped too) and the last boundary is before every ``ret``/``exit``.  Every stamp block declares
its own registers inside ``{ }`` and recomputes its address, so nothing stays live across the
kernel: the instrumentation adds instructions, not register pressure (the report gives its
overhead as instrumented vs plain frame time).  Lane 0 of each warp writes; the buffer is
``warps × boundaries`` u64 (0 = not reached).

Cycles of region *r* in one warp = stamp[r+1] − stamp[r] (the next boundary that warp reached).
``%clock64`` is the SM's cycle counter, so differences within a warp are exact; what they
measure is *issue* time — an ``mma`` or load issued in one region and completing in the next is
charged where the warp waits for it.  Per region the report gives the median over warps and
its share of the sum of medians; the parts are checked against the whole (median warp lifetime,
last stamp − first) within ``TOLERANCE``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import SpliceError
from ..ptx.builder import Builder, NameScope, addr, linear_id

PTR = "__splice_profile_ptr"
TOLERANCE = 0.10
END = "end"


@dataclass
class Boundary:
    index: int
    name: str              # the region that starts here, or "end"
    line: int              # 1-based line of the module text
    after: bool            # insert after that line (a label) instead of before it
    first: int = 0         # statement numbers of the region
    last: int = 0


@dataclass
class ProfilePlan:
    entry: str
    boundaries: list
    warps_per_block: int
    blocks: int
    notes: list = field(default_factory=list)

    @property
    def regions(self) -> list:
        return [b for b in self.boundaries if b.name != END]

    @property
    def n(self) -> int:
        """Slots per warp: one per region plus the end stamp."""
        return len(self.regions) + 1

    @property
    def warps(self) -> int:
        return self.warps_per_block * self.blocks

    @property
    def bytes(self) -> int:
        return self.warps * self.n * 8

    def as_dict(self) -> dict:
        return {"entry": self.entry, "boundaries": len(self.boundaries), "regions": len(self.regions),
                "warps": self.warps, "bytes": self.bytes, "notes": self.notes}


def plan_profile(kernel, spec) -> ProfilePlan:
    """Boundaries of ``kernel`` (a ``splice.analysis.Kernel`` of the module to instrument)."""
    from ..analysis.pressure import regions
    from ..ptx import model as m
    from ..analysis import roles

    threads = spec.block[0] * spec.block[1] * spec.block[2]
    if threads % 32:
        raise SpliceError(f"--profile: block of {threads} threads is not whole warps", str(spec.path))
    first_insn = next((s for s in kernel.stmts if isinstance(s.node, m.Instruction)), None)
    if first_insn is None:
        raise SpliceError(f"{kernel.name}: no instruction to profile", kernel.path)
    bounds = []
    for name, a, b, _kind in regions(kernel):
        st = first_insn if name == "prologue" else kernel.stmt(a)
        is_label = isinstance(st.node, m.Label)
        line = _end_line(kernel.module.source, st.node) if is_label else st.line
        bounds.append(Boundary(0, name, line, is_label, a, b))
    exits = [s for s in kernel.stmts
             if isinstance(s.node, m.Instruction) and roles.is_exit(s.node.name)]
    if not exits:
        raise SpliceError(f"{kernel.name}: no ret/exit: nowhere to put the end stamp", kernel.path)
    for s in exits:
        bounds.append(Boundary(0, END, s.line, False))
    for i, b in enumerate(bounds):
        b.index = min(i, len(bounds) - len(exits))        # every end stamp shares one slot
    blocks = spec.grid[0] * spec.grid[1] * spec.grid[2]
    return ProfilePlan(kernel.name, bounds, threads // 32, blocks)


def _end_line(source: str, node) -> int:
    return source.count("\n", 0, node.span[1]) + 1


def _stamp(bd: Boundary, plan: ProfilePlan) -> str:
    """The PTX block that stores one stamp: ``%clock64`` read first, then lane 0 of each warp
    writes it to its warp's slot ``bd.index`` (its own registers in a ``{ }`` of its own;
    nothing stays live)."""
    scope = NameScope("%splprof")
    b = Builder(scope)
    clock, lane, first = scope.reg(".b64"), scope.reg(".b32"), scope.reg(".pred")
    b.ins("mov.u64", clock, "%clock64")
    b.ins("mov.u32", lane, "%laneid")
    b.ins("setp.eq.u32", first, lane, 0)
    warp = linear_id(b, "ctaid")
    t = linear_id(b, "tid")
    b.ins("shr.u32", t, t, 5)
    b.ins("mad.lo.u32", warp, warp, plan.warps_per_block, t)   # the warp's index in the grid
    off, base = scope.reg(".b64"), scope.reg(".b64")
    b.ins("mul.wide.u32", off, warp, plan.n * 8)
    b.ins("ld.global.u64", base, addr(PTR))
    b.ins("add.s64", base, base, off)
    b.ins("st.global.u64", addr(base, bd.index * 8), clock, guard="@" + first)
    head = [f"\t{{ // splice profile: boundary {bd.index} ({bd.name})"]
    return "\n".join(head + ["\t" + d for d in scope.decls()] + b.lines + ["\t}"]) + "\n"


def instrument(text: str, plan: ProfilePlan) -> str:
    """``text`` with every stamp inserted and the buffer pointer declared."""
    lines = text.splitlines(keepends=True)
    before: dict = {}
    after: dict = {}
    for b in plan.boundaries:
        (after if b.after else before).setdefault(b.line, []).append(_stamp(b, plan))
    from .stages import insert_code

    return insert_code(lines, before, after, PTR, "profile stamps")


def analyse(plan: ProfilePlan, stamps) -> dict:
    """Cycles per region from the stamp buffer (``stamps``: uint64 array, warps × n, host)."""
    import numpy as np

    t = np.asarray(stamps, dtype=np.uint64).reshape(plan.warps, plan.n).astype(np.int64)
    seen = t != 0
    regs = plan.regions
    by_index: dict = {}
    # scanning backwards: the next boundary each warp reached after r (a boundary inside a
    # branch may be skipped by some warps; the time then goes to the region before it)
    nxt = np.zeros(plan.warps, dtype=np.int64)
    have = np.zeros(plan.warps, dtype=bool)
    for r in range(len(regs) - 1, -1, -1):
        nxt = np.where(seen[:, r + 1], t[:, r + 1], nxt)
        have |= seen[:, r + 1]
        ok = seen[:, r] & have
        d = (nxt - t[:, r])[ok]
        b = regs[r]
        by_index[r] = {"region": b.name, "first": b.first, "last": b.last, "warps": int(ok.sum()),
                       "median_cycles": float(np.median(d)) if d.size else None,
                       "mean_cycles": float(d.mean()) if d.size else None,
                       "p90_cycles": float(np.percentile(d, 90)) if d.size else None}
    rows = [by_index[r] for r in range(len(regs))]
    life_ok = seen[:, 0] & seen[:, plan.n - 1]
    life = (t[:, plan.n - 1] - t[:, 0])[life_ok]
    whole = float(np.median(life)) if life.size else None
    parts = float(sum(row["median_cycles"] or 0.0 for row in rows))
    for row in rows:
        row["share"] = (row["median_cycles"] or 0.0) / parts if parts else None
    agree = abs(parts / whole - 1.0) if whole else None
    return {"regions": rows, "warps": plan.warps, "warps_complete": int(life_ok.sum()),
            "whole_median_cycles": whole, "parts_median_cycles": parts,
            "parts_vs_whole": agree, "tolerance": TOLERANCE,
            "agrees": bool(agree is not None and agree <= TOLERANCE),
            "top": [row["region"] for row in sorted(rows, key=lambda x: -(x["median_cycles"] or 0))[:5]]}


# --------------------------------------------------------------------------------------------
# the probe's side: modules to build, then one stamped launch per module and the overhead
# --------------------------------------------------------------------------------------------

@dataclass
class Profiling:
    """What ``splice probe --profile`` adds to a probe: two instrumented modules and their plans."""
    plans: dict                    # "original"/"spliced" -> ProfilePlan
    items: list                    # (module name, PTX text) for compile_many


def prepare(pair, spec) -> Profiling:
    """Plan and instrument the original and the spliced module (each with its own analysis)."""
    from ..analysis import Kernel
    from ..ptx import parse

    plans, items = {}, []
    for side, text, name in (("original", pair.original, str(pair.original_path)),
                             ("spliced", pair.spliced, pair.spliced_name)):
        k = Kernel(parse(text, name), pair.entry)
        plans[side] = plan_profile(k, spec)
        items.append((f"profile:{side}", instrument(text, plans[side])))
    return Profiling(plans, items)


def run(prof: Profiling, dev, built, entry: str, runs: int, warmup: int, report_dir=None,
        plain_sha: Optional[dict] = None, options=None) -> dict:
    """One stamped launch per module, the analysis, and instrumented vs plain frame time: the
    plain and stamped modules timed together by the probe's one timing method (timing.py, with
    its A/A control), the overhead as a ratio with its interval."""

    from dataclasses import replace

    from .device import digest, set_pointer
    from .timing import TimingOptions, ratio_interval, time_device

    cp = dev.cp
    out = {}
    for side, plan in prof.plans.items():
        name = f"profile:{side}"
        mod = dev.load(name, built[name].path, entry)
        buf = cp.zeros(plan.warps * plan.n, dtype=cp.uint64)
        set_pointer(cp, mod, PTR, int(buf.data.ptr))
        sha = digest(dev.render(name))
        out[side] = {**plan.as_dict(), **analyse(plan, cp.asnumpy(buf)),
                     "frame_sha256": sha,
                     "frame_equal_plain": (plain_sha or {}).get(side) == sha,
                     "registers": built[name].resources}
        del buf
    if "control" not in dev.modules:            # the probe ran without --runs: the A/A copy is loaded here
        dev.load("control", built["original"].path)
        dev.render("control")
    names = ["original", "control", "profile:original", "spliced", "profile:spliced"]
    opt = replace(options or TimingOptions(), runs=runs, warmup=warmup)
    tm = time_device(dev, names, "original", "control", opt)
    s = {n: m["samples_ms"] for n, m in tm["modules"].items()}
    for side in ("original", "spliced"):
        iv = ratio_interval(s[side], s[f"profile:{side}"], opt.confidence, opt.resamples, opt.seed)
        out[side]["frame_ms"] = tm["modules"][side]["events"]["median_ms"]
        out[side]["instrumented_frame_ms"] = tm["modules"][f"profile:{side}"]["events"]["median_ms"]
        out[side]["overhead"] = iv.ratio - 1.0
        out[side]["overhead_interval"] = [iv.lo - 1.0, iv.hi - 1.0]
    out["timing"] = {k: tm[k] for k in ("method", "aa", "rounds", "stopped", "device", "withheld")}
    if report_dir is not None:
        from ..report.plot_profile import profile_png

        for side in ("original", "spliced"):
            out[side]["png"] = profile_png(out[side], report_dir / f"profile-{side}.png", side)
    return out
