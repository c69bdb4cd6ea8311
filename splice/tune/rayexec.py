"""``--executor ray``: the same tasks on every CPU and GPU of a Ray cluster.

Screening runs as Ray tasks (``num_cpus=1``), timing on one actor per GPU (``num_gpus=1``), each
holding a bench as the embedded GPU worker does.  Nothing travels as a path: a variant's recipe
and natives go as text, the module, the probe spec and every cubin by content (sha256) through
Ray's object store, put once and written once per node under a folder named by the hash, so
the cluster needs no shared file system (the phase harness of a variant verify could not prove
is the exception: it builds from the variant's recipe, which must be readable where it runs).

Failures: a task whose worker dies is retried by Ray on any node (``max_retries``); an actor
that dies is restarted by Ray, and the batch it held goes back to the queue as the embedded
executor's does (split in two; a single variant whose worker died twice is marked).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

from ..errors import SpliceError
from .embedded import MAX_DEATHS, Died
from .steps import ScreenJob, ScreenResult
from .timer import BatchResult, BenchSpec, TimeBatch, VariantTiming
from .worker import Failed

RETRIES = 3
RESTART_SECONDS = 300


def _ray():
    try:
        import ray
    except ImportError:
        raise SpliceError("--executor ray needs Ray: pip install -e '.[ray]'") from None
    return ray


def _local(sha: str, blob: bytes, suffix: str) -> str:
    """The node-local file holding ``blob`` (written once, named by its hash)."""
    d = Path(tempfile.gettempdir()) / f"splice-tune-{os.getuid()}" / "blobs"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{sha}{suffix}"
    if not p.is_file():
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, p)
    return str(p)


def bundle(job: ScreenJob) -> dict:
    """The recipe and its natives as text (natives renamed ``native/cutN.ptx``), for a node that
    does not see the driver's disk."""
    import yaml

    recipe = yaml.safe_load(Path(job.recipe).read_text())
    files = {}
    for i, cut in enumerate(recipe.get("cuts") or [], 1):
        name = f"native/cut{i}.ptx"
        files[name] = (Path(job.recipe).parent / cut["native"]).read_text()
        cut["native"] = name
    files["recipe.yaml"] = yaml.safe_dump(recipe, sort_keys=False, width=1 << 16)
    return files


def _materialize(files: dict, key: str, module: str) -> str:
    """Write a variant's files on this node, its recipe pointing at the node-local module."""
    import yaml

    d = Path(tempfile.gettempdir()) / f"splice-tune-{os.getuid()}" / "variants" / key[:16]
    (d / "native").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        if rel != "recipe.yaml":
            (d / rel).write_text(text)
    recipe = yaml.safe_load(files["recipe.yaml"])
    recipe["module"] = module
    (d / "recipe.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False, width=1 << 16))
    return str(d / "recipe.yaml")


def remote_screen(fn: Callable, job: ScreenJob, files: dict, module_name: str, module_sha: str,
                  module: bytes) -> tuple:
    """(result, cubin bytes) of ``fn`` on this node's copy of the variant."""
    local_mod = _local(module_sha, module, "-" + Path(module_name).name)
    recipe = _materialize(files, job.key, local_mod)
    store = Path(tempfile.gettempdir()) / f"splice-tune-{os.getuid()}" / "store"
    res = fn(replace(job, recipe=recipe, store=str(store)))
    blob = Path(res.cubin).read_bytes() if isinstance(res, ScreenResult) and res.cubin else b""
    return res, blob


class RayCpu:
    """``map(fn, items, key)`` as Ray tasks; cubins come back by content into ``store``."""

    def __init__(self, ray):
        self.ray = ray
        self.running: dict = {}
        self.modules: dict = {}          # module path -> (sha, ObjectRef)

    def _module(self, recipe: str) -> tuple:
        from ..util import read_utf8
        from ..yamlsafe import load_yaml_marked
        from .steps import resolve_module

        data = load_yaml_marked(read_utf8(recipe, "a recipe is UTF-8 YAML", 1 << 20), recipe)
        path = str(resolve_module(recipe, data).resolve())
        if path not in self.modules:
            blob = Path(path).read_bytes()
            self.modules[path] = (Path(path).name, hashlib.sha256(blob).hexdigest(), self.ray.put(blob))
        return self.modules[path]

    def map(self, fn: Callable, items: list, key: Callable) -> Iterator:
        task = self.ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(remote_screen)
        refs = {}
        for job in items:
            name, sha, ref = self._module(job.recipe)
            refs[task.remote(fn, job, bundle(job), name, sha, ref)] = job
            self.running[key(job)] = job
        while refs:
            done, _ = self.ray.wait(list(refs), num_returns=1)
            job = refs.pop(done[0])
            self.running.pop(key(job), None)
            yield job, self._collect(done[0], job)

    def _collect(self, ref, job: ScreenJob):
        from ray.exceptions import RayError, RayTaskError, WorkerCrashedError

        try:
            res, blob = self.ray.get(ref)
        except WorkerCrashedError as exc:
            return Died(f"its Ray worker died {RETRIES + 1} times: {exc}")
        except RayTaskError as exc:
            return Failed(f"{type(exc.cause).__name__}: {exc.cause}")
        except RayError as exc:        # out of memory, a lost object: this variant's, not the run's
            return Failed(f"{type(exc).__name__}: {exc}")
        if isinstance(res, ScreenResult) and blob:
            cub = Path(job.store) / "cubins" / f"{res.cubin_sha[:32]}.cubin"
            cub.parent.mkdir(parents=True, exist_ok=True)
            cub.write_bytes(blob)
            res = replace(res, cubin=str(cub))
        return res


class GpuActor:
    """One bench on one GPU of the cluster (a Ray actor: ``num_gpus=1``)."""

    def __init__(self, spec: BenchSpec, probe: bytes, module: bytes, original: bytes):
        from .timer import open_bench

        def put(blob: bytes, name: str) -> str:
            return _local(hashlib.sha256(blob).hexdigest(), blob, "-" + Path(name).name)

        local = replace(spec, probe=put(probe, spec.probe), module=put(module, spec.module),
                        original=_local(spec.original_sha, original, ".cubin"))
        self.bench = open_bench(local)

    def describe(self) -> str:
        return self.bench.device

    def run(self, batch: TimeBatch, shas: list, *cubins) -> BatchResult:
        paths = {sha: _local(sha, blob, ".cubin") for sha, blob in zip(shas, cubins)}
        cands = tuple(replace(c, cubin=paths[c.cubin_sha]) for c in batch.candidates)
        return self.bench.run(replace(batch, candidates=cands))


def describe_remote(factory_name: str) -> dict:
    from .timer import factory

    return factory(factory_name).describe()


class RayExecutor:
    """The executor the driver talks to, on Ray (see the module docstring)."""

    name = "ray"

    def __init__(self, address, gpus, factory_name: str):
        self.ray = _ray()
        self.owned = not self.ray.is_initialized()
        if self.owned:
            self.ray.init(address=address or None, include_dashboard=False, log_to_driver=False)
        self.cpu = RayCpu(self.ray)
        self.factory_name = factory_name
        self.want = None if gpus is None else len(gpus)
        self.actors: list = []
        self.held: list = []
        self.state: dict = {}
        self.cubins: dict = {}

    def device(self) -> dict:
        have = int(self.ray.cluster_resources().get("GPU", 0))
        if have < 1:
            raise SpliceError("the Ray cluster has no GPU: screen on the CPU with --no-gpu, or join a cluster "
                              "with GPUs (--address)")
        task = self.ray.remote(num_gpus=1, num_cpus=0)(describe_remote)
        d = dict(self.ray.get(task.remote(self.factory_name)))
        d["workers"] = min(have, self.want or have)
        return d

    def start_gpus(self, spec: BenchSpec) -> None:
        cls = self.ray.remote(num_gpus=1, num_cpus=0, max_restarts=-1, max_task_retries=0)(GpuActor)
        # put by this driver and held here: an actor restarted after a death reads its constructor's
        # arguments again, and arguments Ray put on its own are gone by then (ray-project/ray#53727)
        self.held = [self.ray.put(Path(p).read_bytes()) for p in (spec.probe, spec.module, spec.original)]
        n = self.device()["workers"] if self.want is None else self.want
        self.actors = [cls.remote(spec, *self.held) for _ in range(n)]
        self.state = {i: "idle" for i in range(n)}

    def states(self) -> list:
        cpu = [("ray cpu", f"{len(self.cpu.running)} tasks in flight")]
        return cpu + [(f"ray gpu{i}", s) for i, s in sorted(self.state.items())]

    def _refs(self, batch: TimeBatch) -> tuple:
        shas = []
        for c in batch.candidates:
            if c.cubin_sha not in self.cubins:
                self.cubins[c.cubin_sha] = self.ray.put(Path(c.cubin).read_bytes())
            shas.append(c.cubin_sha)
        return shas, [self.cubins[s] for s in shas]

    def time(self, batches: list) -> Iterator:
        from collections import deque

        work = deque((b, 0) for b in batches)
        free = list(range(len(self.actors)))
        inflight: dict = {}
        while work or inflight:
            while work and free:
                i, (b, deaths) = free.pop(), work.popleft()
                shas, refs = self._refs(b)
                inflight[self.actors[i].run.remote(b, shas, *refs)] = (i, b, deaths)
                self.state[i] = f"rung {b.rung}: {len(b.candidates)} variants x {b.rounds} rounds"
            done, _ = self.ray.wait(list(inflight), num_returns=1)
            i, b, deaths = inflight.pop(done[0])
            free.append(i)
            self.state[i] = "idle"
            yield from self._settle(done[0], i, b, deaths, work)

    def _settle(self, ref, i: int, b: TimeBatch, deaths: int, work) -> Iterator:
        from ray.exceptions import RayActorError

        try:
            res = self.ray.get(ref)
        except RayActorError as exc:            # Ray restarts the actor; the batch goes back
            self._ready(i)
            yield from _after_death(b, deaths, str(exc), work)
            return
        if res.lost:
            self.ray.kill(self.actors[i], no_restart=False)      # a lost context: a fresh actor
            self._ready(i)
        if res.undone:
            work.append((replace(b, candidates=tuple(c for c in b.candidates if c.key in res.undone)), 0))
        yield replace(res, worker=f"ray gpu{i}")

    def _ready(self, i: int) -> None:
        """Wait until actor ``i`` answers again (Ray restarts it after a death or a kill): a call
        sent while it restarts would fail and be taken for another death."""
        import time

        from ray.exceptions import RayActorError

        self.state[i] = "restarting"
        deadline = time.monotonic() + RESTART_SECONDS
        while time.monotonic() < deadline:
            try:
                self.ray.get(self.actors[i].describe.remote())
                self.state[i] = "idle"
                return
            except RayActorError:       # dead, or still restarting (ActorUnavailableError)
                time.sleep(0.5)
        raise SpliceError(f"the Ray GPU actor {i} did not come back within {RESTART_SECONDS} s of its restart")

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a, no_restart=True)
        self.actors = []
        if self.owned:
            self.ray.shutdown()


def _after_death(b: TimeBatch, deaths: int, why: str, work) -> Iterator:
    """The embedded executor's rule: split a batch; retry a single variant; mark it at the
    second death."""
    if len(b.candidates) > 1:
        half = len(b.candidates) // 2
        work.append((replace(b, candidates=b.candidates[:half]), 0))
        work.append((replace(b, candidates=b.candidates[half:]), 0))
    elif deaths + 1 < MAX_DEATHS:
        work.append((b, deaths + 1))
    else:
        c = b.candidates[0]
        yield BatchResult("", "", b.rung, 0, (VariantTiming(
            c.key, fault=f"its GPU worker died {deaths + 1} times while it ran: {why}"),))
