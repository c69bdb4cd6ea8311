"""The two modules a probe compares, and their cubins.

``resolve(target, module)`` turns the CLI's arguments into a :class:`Pair`:

* ``splice probe RECIPE.yaml`` -- the original is the recipe's module, the spliced text comes
  from ``splice.cut`` in-process (``run_apply(..., ptxas=False)``: the same plan ``splice apply``
  writes), the probe spec is ``probes/<module stem>.yaml`` (next to the recipe's corpus, the
  repository, or the cwd);
* ``splice probe PROBE.yaml MODULE.ptx`` -- the original is the spec's ``ptx``, the spliced is
  ``MODULE`` (any module with the spec's entry and parameter block); no cut is known, so debug
  stages go by phase number and there is no phase harness.

``compile_many`` builds ``ptxas -arch=<arch> -O3`` cubins in parallel threads and caches them
under ``build/probe/cubins/<sha256 of text + arch>.cubin`` so a second probe of the same build
does not wait for ptxas.  Nothing here needs cupy.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ...errors import SpliceError
from ...signals import WorkerThreads, result_when_done
from ...util import home_dir, name_part, read_text
from ...cut.pipeline import recipe_inputs, run_apply
from ...ptx.cache import ELF_MAGIC, default_cache, ours
from ...ptx.sass import compile_ptx
from ...util import read_input, user_path, write_atomic
from ..language.document import load_spec
import json
import time
import yaml

ROOT = Path(__file__).resolve().parents[3]      # the repository (splice/probe/run/modules.py)


def probe_cache() -> Path:
    """``$SPLICE_PROBE_CACHE``, else ``build/probe``: read when the probe runs, not when this
    module is imported (a variable set later in the process, as the tests set it, was never
    seen: their cubins went into ./build/probe); an empty value is the default, as for
    ``$SPLICE_CACHE`` (``Path('')`` is the working directory: the cubins were written there);
    ``~`` is expanded."""
    raw = os.environ.get("SPLICE_PROBE_CACHE") or "build/probe"
    try:
        return user_path(raw)
    except SpliceError as exc:
        raise SpliceError(f"SPLICE_PROBE_CACHE: {exc.message}") from None


@dataclass
class Pair:
    name: str                  # report name (recipe stem, or spec name + module stem)
    spec_path: Path
    original_path: Path
    original: str              # PTX text
    spliced: str
    spliced_name: str          # where the spliced text comes from (output path or module)
    entry: str
    arch: str
    plan: Any = None           # splice.cut.splice.Plan (recipe targets)
    recipe: Any = None         # splice.cut.recipe.Recipe
    timings: dict = field(default_factory=dict)

    @property
    def cuts(self) -> list:
        return list(self.plan.cuts) if self.plan is not None else []

    @property
    def inputs(self) -> list:
        """Every file the probe reads: a report written onto one of them is refused."""
        if self.recipe is not None:

            return [self.spec_path, self.original_path, *recipe_inputs(self.recipe)]
        return [self.spec_path, self.original_path, self.spliced_name]


def _is_recipe(path: Path) -> bool:

    try:
        data = yaml.safe_load(read_text(path, 1 << 20))
    except Exception:  # noqa: BLE001 - a bad file is reported by the loader that owns it
        return False
    return isinstance(data, dict) and "cuts" in data


def find_spec(module: Path, recipe: Optional[Path] = None) -> Path:
    """probes/<stem>.yaml for a module: next to the module's corpus dir, the recipe's parents,
    the repository, the cwd."""
    stem = module.stem
    dirs = [module.parent.parent / "probes", module.parent / "probes"]
    if recipe is not None:
        dirs += [p / "probes" for p in Path(recipe).resolve().parents]
    dirs += [ROOT / "probes", Path.cwd() / "probes"]
    for d in dirs:
        p = d / f"{stem}.yaml"
        if p.exists():
            return p
    raise SpliceError(f"no probe spec probes/{stem}.yaml for module {module} "
                      f"(use: splice probe PROBE.yaml MODULE.ptx)", str(recipe or module))


def resolve(target: str, module: Optional[str] = None) -> Pair:

    t = Path(target)
    if not t.exists():
        raise SpliceError("no such file", target)
    if module is None and _is_recipe(t):

        plan, _, out, timings = run_apply(target, ptxas=False)
        mod = Path(plan.recipe.module)
        spec_path = find_spec(mod, t)
        spec = load_spec(spec_path)
        if spec.entry != plan.entry:
            raise SpliceError(f"probe spec {spec_path} runs {spec.entry}, the recipe splices {plan.entry}",
                              target)
        return Pair(name_part(t.stem), spec_path, mod, plan.source, plan.text, str(out), plan.entry,
                    plan.recipe.arch or spec.arch, plan=plan, recipe=plan.recipe, timings=timings)
    if module is None:
        raise SpliceError("a probe spec needs a module: splice probe PROBE.yaml MODULE.ptx", target)
    spec = load_spec(t)
    orig = Path(spec.ptx)
    if not orig.is_absolute():   # next to the spec first, as a recipe's module: not a namesake in the cwd
        home = home_dir(t)     # the working directory for a spec read from a stream (/dev/stdin)
        for base in (home, home.parent, Path.cwd(), ROOT):
            if os.path.lexists(base / spec.ptx):    # a link to nothing is that file, not a miss
                orig = base / spec.ptx
                break
    mp = Path(module)
    if not mp.exists():
        raise SpliceError("no such module", module)
    if not orig.is_file():   # named by the spec: the error is the spec's, at its ptx: line
        raise SpliceError(f"ptx: {spec.ptx!r} is not a file (looked next to the spec, above it, in the "
                          "working directory and in the repository)", str(t), *spec.where("ptx"))
    return Pair(name_part(f"{spec.name}-{mp.stem}"), t, orig, read_text(orig), read_text(mp), str(mp),
                spec.entry, spec.arch)


def text_key(text: str, arch: str) -> str:
    return hashlib.sha256(f"{arch}\n-O3\n".encode() + text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class Built:
    name: str
    path: Path
    key: str
    cached: bool
    seconds: float
    resources: dict


def compile_one(name: str, text: str, arch: str, cache: Optional[Path] = None, use_cache: bool = True) -> Built:
    """``use_cache=False`` (``probe --no-cache``) runs ptxas whatever build/probe and the shared
    compile cache (splice.ptx.cache) hold.  A cached cubin is used only when its metadata says
    what it is (length, sha256) and the file agrees: a truncated, garbage or swapped cubin would
    otherwise be loaded onto the GPU as the module under test."""
    key = text_key(text, arch)
    d = (probe_cache() if cache is None else cache) / "cubins"
    d.mkdir(parents=True, exist_ok=True)
    cub, meta = d / f"{key[:32]}.cubin", d / f"{key[:32]}.json"
    if use_cache:
        res = _cached_cubin(cub, meta, key)
        if res is not None:
            return Built(name, cub, key, True, 0.0, res)
    t0 = time.perf_counter()
    c = compile_ptx(text, arch, 3, name=name, cache=default_cache(use_cache))
    res = {}
    for fn, u in c.resources.items():
        res[fn] = {"registers": u.registers, "spill_stores": u.spill_stores, "spill_loads": u.spill_loads,
                   "shared": u.shared, "stack": u.stack_frame, "entry": u.is_entry}
    # atomic, with unique temp names: two threads compiling the same text race harmlessly; a
    # FIFO or link left in the cache's place is removed, not written through, and another
    # user's file too (write_atomic would keep its owner, and it would never be trusted)

    for p in (cub, meta):
        if p.is_symlink() or (p.exists() and not p.is_file() and not p.is_dir()) or \
                (p.is_file() and not ours(p.stat())):
            p.unlink()
    write_atomic(cub, c.cubin)
    write_atomic(meta, json.dumps({"key": key, "cubin_len": len(c.cubin),
                                   "cubin_sha256": hashlib.sha256(c.cubin).hexdigest(), "resources": res}))
    return Built(name, cub, key, False, time.perf_counter() - t0, res)


def _cached_cubin(cub: Path, meta: Path, key: str) -> Optional[dict]:
    """The resources of a cached cubin that verifies against its metadata, else None (the
    caller compiles again and replaces both files)."""
    try:
        if not (ours(os.stat(meta)) and ours(os.stat(cub))):   # planted by another user: recompiled
            return None
        head = json.loads(read_input(meta, 1 << 20))
        blob = read_input(cub, 1 << 30)
    except (OSError, SpliceError, ValueError, RecursionError):
        return None
    if not (isinstance(head, dict) and head.get("key") == key and isinstance(head.get("resources"), dict)):
        return None
    if len(blob) != head.get("cubin_len") or hashlib.sha256(blob).hexdigest() != head.get("cubin_sha256"):
        return None
    return head["resources"] if blob.startswith(ELF_MAGIC) else None


def compile_many(items: list, arch: str, done: Optional[Callable] = None, cache: Optional[Path] = None,
                 use_cache: bool = True) -> dict:
    """items: [(name, text)] -> {name: Built}; ``done(name, built)`` after each."""
    out = {}
    with WorkerThreads(max(1, min(len(items), os.cpu_count() or 2))) as ex:
        futs = {ex.submit(compile_one, n, t, arch, cache, use_cache): n for n, t in items}
        for f in futs:
            b = result_when_done(f)
            out[futs[f]] = b
            if done:
                done(futs[f], b)
    return out
