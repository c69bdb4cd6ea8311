"""The CPU side of one variant: apply, verify, ptxas -- the one module of splice.tune that calls
``splice.cut``, ``splice.verify`` and the probe's compile.

Each call is what the command of the same name does (``run_apply`` without writing, the same
``verify_plan`` with ``splice verify``'s per-cut ``--timeout``, the probe's own cubin build), so
a variant's verdict here is the verdict ``splice verify`` gives its recipe.  ``screen`` runs in a
worker process: its job and result are small picklable records.  Verify runs before ptxas: a
variant proved different costs no compile.  A cut verify leaves *not proven* -- a construct it
does not model, its budget spent ("not proven (budget)"), or an internal error of the checker
(``splice verify``'s exit status 4) -- makes the variant not proven: the GPU harness decides.
Each cut's record keeps verify's own verdict and reason, so the board says which it was.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..cut.pipeline import run_apply, search_path
from ..cut.recipe import load_recipe
from ..cut.recipe import resolve_module as find
from ..errors import SassToolError, SpliceError, ToolTimedOut
from ..probe.run.modules import compile_one
from ..util import home_dir, read_text
from ..verify.budget import DEFAULT_SECONDS
from ..verify.compare import DIFFERENT as V_DIFFERENT
from ..verify.compare import EQUAL as V_EQUAL
from ..verify import compare as verify_compare  # its verify_plan read at call time (tests stand in for it)
from ..verify.compare import INTERNAL

EQUAL, DIFFERENT, NOT_PROVEN = "equal", "different", "not proven"


@dataclass(frozen=True)
class ScreenJob:
    key: str
    recipe: str                  # the variant's recipe path
    arch: str                    # the cubin's target (the device's, or the recipe's without a GPU)
    store: str                   # the folder holding cubins/
    verify_timeout: Optional[float] = None   # verify's seconds per cut (None: splice verify's default)


@dataclass(frozen=True)
class ScreenResult:
    key: str
    stage: str                   # where it ended: apply | verify | ptxas | done, or timeout (ptxas ran out
                                 # of time: says nothing of the variant, the next run screens it again)
    verdict: str = ""            # equal | different | not proven
    cuts: tuple = ()             # per cut: {cut, title, verdict, reason}
    resources: dict = field(default_factory=dict)   # the entry's registers, spills, shared, stack
    cubin: str = ""              # path of the cubin (done only)
    cubin_sha: str = ""
    error: str = ""
    seconds: dict = field(default_factory=dict)

    @property
    def survives(self) -> bool:
        return self.stage == "done" and self.verdict in (EQUAL, NOT_PROVEN)


def resolve_module(recipe_path: str, recipe) -> Path:
    """The module a recipe's ``module:`` names, found as ``splice apply`` finds it."""
    spelled = recipe.get("module")
    where = (recipe_path, *recipe.vat("module")) if hasattr(recipe, "vat") else (recipe_path,)
    if not isinstance(spelled, str) or not spelled.strip():
        raise SpliceError(f"module: expected a file name, got {spelled!r}", *where)
    found = find(spelled, home_dir(recipe_path), search_path(recipe_path), recipe.get("entry"), where)
    if found is None:
        raise SpliceError(f"module {spelled!r} not found", *where)
    return Path(found)


def verdict_of(verdicts: list) -> str:
    """One variant's verdict from its cuts': different if any cut is, equal if all are."""
    if any(v == V_DIFFERENT for v in verdicts):
        return DIFFERENT
    return EQUAL if verdicts and all(v == V_EQUAL for v in verdicts) else NOT_PROVEN


def _verify(plan, timeout: Optional[float]) -> tuple:
    """Per cut {cut, title, verdict, reason, budget, seconds}, each cut within ``timeout``
    seconds (None: ``splice verify``'s default).  verify_plan turns a failure inside one cut into
    that cut's *internal error*; one before any cut is the whole plan's, recorded the same way."""
    try:
        results = verify_compare.verify_plan(plan, DEFAULT_SECONDS if timeout is None else timeout)
    except Exception as exc:  # noqa: BLE001 - verify's own failure is an internal error, never a verdict
        return ({"cut": 0, "title": "every cut", "verdict": INTERNAL, "budget": False, "seconds": 0.0,
                 "reason": f"internal error in splice verify ({type(exc).__name__}: {exc})"},)
    return tuple({"cut": r.cut, "title": r.title, "verdict": r.verdict, "reason": r.reason, "budget": r.budget,
                  "seconds": r.seconds} for r in results)


def why_not_proven(cuts) -> str:
    """What kept a not-proven variant from a proof, as the board says it: the first cut's
    internal error, spent budget or unmodelled construct."""
    for kind, test in (("internal error", lambda c: c["verdict"] == INTERNAL),
                       ("budget", lambda c: c.get("budget")),
                       ("not modelled", lambda c: c["verdict"] != V_EQUAL)):
        first = next((c for c in cuts if test(c)), None)
        if first is not None:
            return f"{kind}: cut {first['cut']}" if first["cut"] else kind
    return ""


def compile_cubin(name: str, text: str, arch: str, store: str) -> tuple:
    """(cubin path, its sha256, the entry's resources): the probe's own build, cached by content
    under ``store/cubins``."""
    built = compile_one(name, text, arch, Path(store))
    blob = Path(built.path).read_bytes()
    entry = next((r for r in built.resources.values() if r.get("entry")), {})
    res = {k: entry.get(k) for k in ("registers", "spill_stores", "spill_loads", "shared", "stack")}
    return str(built.path), hashlib.sha256(blob).hexdigest(), res


def screen(job: ScreenJob) -> ScreenResult:
    """apply -> verify -> ptxas for one variant; a user-level failure is the result, not a raise."""
    t = {}
    t0 = time.perf_counter()
    try:
        plan, _val, _out, _tm = run_apply(job.recipe, ptxas=False)
    except SpliceError as exc:
        return ScreenResult(job.key, "apply", error=exc.render(), seconds={"apply": time.perf_counter() - t0})
    t["apply"] = time.perf_counter() - t0
    cuts = _verify(plan, job.verify_timeout)
    t["verify"] = time.perf_counter() - t0 - t["apply"]
    verdict = verdict_of([c["verdict"] for c in cuts])
    if verdict == DIFFERENT:
        return ScreenResult(job.key, "verify", verdict, cuts, seconds=t)
    return _compile_stage(job, plan.text, verdict, cuts, t)


def _compile_stage(job: ScreenJob, text: str, verdict: str, cuts: tuple, t: dict) -> ScreenResult:
    t1 = time.perf_counter()
    try:
        path, sha, res = compile_cubin(job.key[:16], text, job.arch, job.store)
    except (SassToolError, SpliceError) as exc:
        t["ptxas"] = time.perf_counter() - t1
        stage = "timeout" if isinstance(exc, ToolTimedOut) else "ptxas"     # a timeout judged nothing
        return ScreenResult(job.key, stage, verdict, cuts, error=str(exc), seconds=t)
    t["ptxas"] = time.perf_counter() - t1
    return ScreenResult(job.key, "done", verdict, cuts, res, path, sha, seconds=t)


def compile_original(module: Path, arch: str, store: str) -> ScreenResult:
    """The original module's cubin: every timing is a ratio against it (loaded twice on the GPU:
    the baseline and its A/A control)."""
    t0 = time.perf_counter()
    path, sha, res = compile_cubin("original", read_text(module), arch, store)
    return ScreenResult("original", "done", EQUAL, (), res, path, sha, seconds={"ptxas": time.perf_counter() - t0})


def recipe_arch(recipe_path: str) -> str:
    """The recipe's ptxas target (its ``arch:``, or the default ``splice apply`` takes)."""
    return load_recipe(recipe_path, search_path(recipe_path)).arch
