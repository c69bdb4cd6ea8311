"""One tune run: enumerate the space, screen every variant on the CPU, time the survivors with
successive halving on the GPU, write the best recipe.  Everything goes through the store first,
so the run can stop at any point and start again where it was.

The driver talks to an executor (``embedded.Embedded`` or ``rayexec.RayExecutor``) through
four calls -- ``cpu.map(fn, items, key)``, ``device()``, ``start_gpus(spec)``, ``time(batches)``
-- and reports progress through ``note(event, **data)`` (the live view; nothing here prints).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol

from ..errors import SpliceError
from ..signals import WorkerThreads, result_when_done
from . import halving, steps
from .space import Search, Space
from .store import Store
from .timer import WITHHELD, BenchSpec, Candidate, TimeBatch, Timing, probe_spec, summarize
from .variants import Base, load_base, materialize, reference_key, write_variant


class Executor(Protocol):
    """What the driver needs of an executor (``embedded.Embedded``, ``rayexec.RayExecutor``)."""
    cpu: Any                           # .map(fn, items, key) -> (item, result) as they finish

    def device(self) -> dict: ...

    def start_gpus(self, spec: BenchSpec) -> None: ...

    def time(self, batches: list) -> Iterator: ...

    def states(self) -> list: ...

    def close(self) -> None: ...


@dataclass
class Options:
    out: Path
    gpu: bool = True
    search: Search = field(default_factory=Search)
    factory: str = "splice.tune.timer:ProbeBench"
    screen: Callable = steps.screen
    verify_timeout: Optional[float] = None   # verify's seconds per cut (None: splice verify's default)
    references: tuple = ()            # recipes timed beside the variants (a hand-made best so far)
    arch: Optional[str] = None        # the cubins' arch (--arch); default the GPU's, or the recipe's


@dataclass
class Context:
    space: Space
    base: Base
    store: Store
    executor: Executor
    opts: Options
    note: Callable
    workers: int = 1


def _quiet(event: str, **data) -> None:
    del event, data


def run(space: Space, store: Store, executor: Executor, opts: Options, note: Callable = _quiet,
        dev: Optional[dict] = None) -> dict:
    """The whole run; returns {keys, survivors, best, arch, original} (the store has the rest).
    ``dev``: the executor's ``device()``, when the caller asked it first (before making the
    store: no GPU is said before anything is written)."""
    ctx = Context(space, load_base(space), store, executor, opts, note)
    if opts.gpu and dev is None:
        dev = executor.device()
    if dev is not None and opts.arch is not None and opts.arch != dev["arch"]:
        raise SpliceError(f"--arch {opts.arch}: the GPU runs {dev['arch']} cubins ({dev.get('name', 'the GPU')})",
                          space.path)
    keys = prepare(ctx)
    arch = choose_arch(ctx, keys, dev)
    with WorkerThreads(1) as ctl:
        original = ctl.submit(steps.compile_original, ctx.base.module, arch, str(opts.out))
        survivors = screen(ctx, keys, arch)
        summary: dict = {"keys": keys, "survivors": survivors, "arch": arch, "best": None}
        original_res = result_when_done(original)
    store.set_meta("original", {"cubin_sha": original_res.cubin_sha, "resources": original_res.resources})
    summary["original"] = original_res.resources
    if not opts.gpu or not survivors:
        return summary
    t0 = time.perf_counter()
    executor.start_gpus(bench_spec(ctx, original_res))
    halve(ctx, survivors)
    summary["timing_seconds"] = time.perf_counter() - t0
    summary["best"] = write_best(ctx)
    return summary


# --------------------------------------------------------------------------------------------
# the variants
# --------------------------------------------------------------------------------------------

def prepare(ctx: Context) -> list:
    """Materialize the points to run, write each new variant, record it: the distinct keys."""
    s = ctx.opts.search
    keys, seen = [], set()
    points = list(ctx.space.indices(s.max_variants, s.seed))
    ctx.note("plan", size=ctx.space.size, points=len(points))
    for i in points:
        v = materialize(ctx.base, i)
        new = ctx.store.add(v.key, i, v.choices)
        if v.error:
            if new:
                ctx.store.drop(v.key, f"generation: {v.error}")
            continue
        if v.key in seen:
            continue
        seen.add(v.key)
        # written again every run: its module path is relative to where the store is now (a
        # store copied to another machine or folder still gives recipes apply can read)
        path = write_variant(v, ctx.opts.out / "variants" / v.key[:16], ctx.base.module)
        ctx.store.update(v.key, recipe=str(path))
        keys.append(v.key)
    keys += [reference(ctx, r) for r in ctx.opts.references]
    ctx.note("variants", distinct=len(keys))
    return keys


def reference(ctx: Context, recipe: str) -> str:
    """A recipe timed beside the variants (``--reference``): screened and timed as they are,
    never halved away, never the best; its key is its content."""
    key = reference_key(recipe)
    if not ctx.store.add(key, -1, {"reference": recipe}, str(recipe)):
        ctx.store.update(key, recipe=str(recipe))        # where it is now (a store carried elsewhere)
    return key


def is_reference(row: dict) -> bool:
    return "reference" in row["choices"]


def choose_arch(ctx: Context, keys: list, dev: Optional[dict]) -> str:
    """The cubins' arch: the GPU's, or without one the recipe's; a store of another arch is
    refused (its cubins and timings would be mixed with these)."""
    if dev is not None:
        arch = dev["arch"]
        ctx.workers = max(1, int(dev.get("workers", 1)))
    elif ctx.opts.arch is not None:
        arch = ctx.opts.arch
    else:
        first = next((ctx.store.get(k)["recipe"] for k in keys), None)
        if first is None:
            raise SpliceError("no variant of the space could be generated", ctx.space.path)
        arch = steps.recipe_arch(first)
    held = ctx.store.get_meta("arch")
    if held is not None and held != arch:
        raise SpliceError(f"the store {ctx.store.path} holds {held} cubins and timings; this run builds "
                          f"{arch}: give another -o, or remove the store")
    ctx.store.set_meta("arch", arch)
    return arch


def screen(ctx: Context, keys: list, arch: str) -> list:
    """apply, verify, ptxas for every variant not screened yet; the survivors' keys."""
    todo = [k for k in keys if ctx.store.get(k)["state"] == "pending"]
    jobs = [steps.ScreenJob(k, ctx.store.get(k)["recipe"], arch, str(ctx.opts.out), ctx.opts.verify_timeout)
            for k in todo]
    ctx.note("screen", total=len(keys), done=len(keys) - len(todo))
    for job, res in ctx.executor.cpu.map(ctx.opts.screen, jobs, lambda j: j.key):
        record_screen(ctx.store, job.key, res)
        ctx.note("screened", key=job.key, row=ctx.store.get(job.key))
    return [k for k in keys if ctx.store.get(k)["state"] in ("screened", "timed")]


def record_screen(store: Store, key: str, res) -> None:
    if not isinstance(res, steps.ScreenResult):         # Died / Failed: the worker's reason
        store.update(key, stage="worker", error=res.reason if hasattr(res, "reason") else res.message)
        store.drop(key, f"screen: {store.get(key)['error']}")
        return
    store.update(key, stage=res.stage, verdict=res.verdict, cuts=list(res.cuts), resources=res.resources,
                 cubin=res.cubin, cubin_sha=res.cubin_sha, error=res.error, seconds=res.seconds)
    if res.stage == "timeout":          # not the variant's doing: left pending, screened again next run
        return
    if res.survives:
        store.update(key, state="screened")
    else:
        store.drop(key, drop_reason(res))


def drop_reason(res) -> str:
    if res.stage == "verify":
        first = next((c for c in res.cuts if c["verdict"] == "proved different"), None)
        where = f" (cut {first['cut']} {first['title']}: {first['reason']})" if first else ""
        return f"verify: proved different{where}"
    head = (res.error.strip().splitlines() or ["failed"])[0]
    return f"{res.stage}: {head}"


# --------------------------------------------------------------------------------------------
# the GPU: successive halving
# --------------------------------------------------------------------------------------------

def bench_spec(ctx: Context, original) -> BenchSpec:
    entry = ctx.space.recipe.get("entry")
    spec = probe_spec(ctx.base.module, ctx.space.recipe_path, entry)
    return BenchSpec(str(spec), str(ctx.base.module), entry or "", original.cubin, original.cubin_sha,
                     ctx.opts.factory)


def timing_of(search: Search) -> Timing:
    """The timing method's settings every batch of the run is given."""
    return Timing(cache=search.cache, min_sample_ms=search.min_sample_ms, ci_width=search.ci_width,
                  time_budget=search.time_budget)


def halve(ctx: Context, survivors: list) -> None:
    s = ctx.opts.search
    alive = [k for k in survivors if ctx.store.get(k)["state"] != "dropped"]
    rung = 0
    while alive:
        n = sum(not is_reference(ctx.store.get(k)) for k in alive)
        last = halving.final(s, n)
        time_to(ctx, alive, halving.target(s, rung, n), rung)
        alive = [k for k in alive if ctx.store.get(k)["state"] != "dropped"]
        if last or not alive:
            for k in alive:
                ctx.store.update(k, state="timed", rung=rung)
            return
        alive = decide(ctx, rung, alive)
        rung += 1


def decide(ctx: Context, rung: int, alive: list) -> list:
    """The variants promoted past ``rung``: recorded once, so a restarted run takes the same
    decision for the same candidates instead of halving the halved set again."""
    rec = ctx.store.get_meta(f"rung{rung}")
    if rec is not None and rec["candidates"] == sorted(alive):
        return [k for k in rec["kept"] if ctx.store.get(k)["state"] != "dropped"]
    rows = [ctx.store.get(k) for k in alive]
    standings = [halving.Standing(r["key"], r["ratio"], r["low"], r["high"]) for r in rows
                 if r["ratio"] is not None and not is_reference(r)]
    kept, dropped = halving.promote(ctx.opts.search, rung, standings)
    kept += [r["key"] for r in rows if is_reference(r)]
    for k, why in dropped.items():
        ctx.store.drop(k, why)
        ctx.note("dropped", key=k, reason=why)
    for k in kept:
        ctx.store.update(k, rung=rung + 1)
    ctx.store.set_meta(f"rung{rung}", {"candidates": sorted(alive), "kept": kept})
    return kept


def time_to(ctx: Context, alive: list, target: int, rung: int) -> None:
    """Ask for ``target`` rounds of every alive variant: batches per missing count, spread over
    the GPU workers.  Rounds are caps -- a batch stops earlier once its intervals are narrow
    enough -- so what a variant still needs counts the rounds it was asked for (``asked``),
    not only those it got: a precise variant is not timed again for the same rung."""
    by_need: dict = {}
    for k in alive:
        row = ctx.store.get(k)
        need = target - max(row["rounds"], row["asked"])
        if need > 0:
            by_need.setdefault(need, []).append(k)
    batches = []
    timing = timing_of(ctx.opts.search)
    for need, ks in sorted(by_need.items()):
        per = math.ceil(len(ks) / ctx.workers)
        for i in range(0, len(ks), per):
            cands = tuple(candidate(ctx.store.get(k)) for k in ks[i:i + per])
            batches.append(TimeBatch(rung, need, cands, ctx.opts.search.seed + rung, timing))
    ctx.note("rung", rung=rung, alive=len(alive), target=target, batches=len(batches))
    for res in ctx.executor.time(batches):
        record_batch(ctx, res)


def candidate(row: dict) -> Candidate:
    return Candidate(row["key"], row["cubin"], row["cubin_sha"], row["recipe"],
                     harness=row["verdict"] == steps.NOT_PROVEN and row["harness"] != "identical")


def record_batch(ctx: Context, res) -> None:
    st = ctx.store
    if res.timings:
        st.add_call(res.worker, res.device, res.rung, res.rounds, [t.key for t in res.timings], res.aa, res.seconds,
                    res.pid, {**res.record, "asked": res.asked, "stopped": res.stopped, "withheld": res.withheld})
    aa = st.aa_pairs()
    for t in res.timings:
        row = st.get(t.key)
        why = gpu_drop_reason(t, row)
        if why:
            st.update(t.key, identical=None if t.identical is None else int(t.identical), harness=t.harness)
            st.drop(t.key, why)
            ctx.note("dropped", key=t.key, reason=why)
            continue
        if not t.pairs:            # checked, not timed (the batch had no rounds): nothing to record
            continue
        pairs = st.add_pairs(t.key, t.pairs)
        withheld = row["withheld"] or res.withheld
        st.update(t.key, identical=1, harness=t.harness or row["harness"], asked=row["asked"] + res.asked,
                  withheld=withheld)
        sm = summarize(pairs, aa, ctx.opts.search.seed)
        st.update(t.key, ratio=sm["ratio"], low=sm["low"], high=sm["high"],
                  timing=WITHHELD if withheld else sm["verdict"])
        ctx.note("timed", key=t.key, row=st.row(t.key))


def gpu_drop_reason(t, row: dict) -> str:
    if t.fault:
        return f"GPU fault: {t.fault}"
    if t.identical is False:
        told = " although verify proved it equal" if row["verdict"] == steps.EQUAL else ""
        return f"GPU: the whole outputs differ from the original's{told}"
    if t.harness and t.harness != "identical":
        return f"GPU harness: {t.harness}"
    return ""


# --------------------------------------------------------------------------------------------
# the result
# --------------------------------------------------------------------------------------------

def best_row(store: Store) -> Optional[dict]:
    timed = [r for r in store.rows() if r["state"] == "timed" and r["ratio"] is not None and not is_reference(r)]
    return min(timed, key=lambda r: (r["ratio"], r["high"], r["key"])) if timed else None


def write_best(ctx: Context) -> Optional[dict]:
    """The best variant as ``best.yaml`` beside the store: an ordinary recipe whose natives are
    its variant's files."""
    row = best_row(ctx.store)
    if row is None:
        return None
    v = materialize(ctx.base, row["idx"])
    natives = f"variants/{v.key[:16]}/native"
    path = write_variant(v, ctx.opts.out, ctx.base.module, natives=natives, name="best.yaml")
    return {"key": row["key"], "recipe": str(path), "ratio": row["ratio"], "low": row["low"],
            "high": row["high"], "verdict": row["timing"]}
