"""The cut pipeline as one call: load a recipe, plan the splice, validate with ptxas.

Shared by ``splice apply`` and ``splice probe RECIPE`` (the probe splices before it runs), so
it lives in splice.cut, below both commands; it prints nothing and writes nothing.
"""
from __future__ import annotations

import contextlib
import difflib
import os
import time

from ..errors import SpliceError
from ..signals import WorkerThreads
from ..util import check_output, collector_paused, home_dir
from .recipe import default_search_path, load_recipe
from .splice import plan as make_plan
from .validate import start_original, validate

DIFF_CONTEXT = 2


def search_path(recipe_path: str) -> list:
    """Directories searched for a recipe's module: ``$SPLICE_CORPUS`` first, then the defaults."""
    extra = [p for p in os.environ.get("SPLICE_CORPUS", "").split(os.pathsep) if p]
    for p in extra:
        if not os.path.isdir(os.path.expanduser(p)):   # a typo would silently find the stand-in
            raise SpliceError(f"SPLICE_CORPUS names {p!r}, which is not a directory (the corpus "
                              "directories, separated by " + repr(os.pathsep) + ")", recipe_path)

    return default_search_path(home_dir(recipe_path), extra)


def recipe_inputs(recipe) -> list:
    """Every file a recipe reads: the recipe, its module, its native phases (an output must be
    none of them)."""
    return [recipe.path, recipe.module, *(c.native for c in recipe.cuts)]


def run_apply(recipe_path: str, output=None, ptxas: bool = True, cache=None):
    """Load, plan, validate.  Returns (plan, validation or None, output path, timings).
    Writes nothing (except ptxas results into ``cache``, a splice.ptx.cache.CompileCache).

    Everything before the spliced module's compile is on the critical path (the original's
    compile runs meanwhile), so it runs with the collector paused (``collector_paused``: the
    plan's objects all stay alive until it is done, so a collection would walk them for
    nothing); the analyses after the parse get that too, not only the parse."""
    with contextlib.ExitStack() as stack:
        with collector_paused():
            t0 = time.perf_counter()
            recipe = load_recipe(recipe_path, search_path(recipe_path), output)
            check_output(recipe.output, recipe_inputs(recipe))   # refused before any work, nothing written
            if ptxas:
                # no thread outlives the call, and a recipe error found meanwhile kills the
                # original's ptxas rather than waiting for it (WorkerThreads)
                pool = stack.enter_context(WorkerThreads(1))
                before = start_original(recipe, pool, cache)  # ptxas on the original overlaps the planning
            p = make_plan(recipe)
            t1 = time.perf_counter()
        if not ptxas:
            return p, None, recipe.output, {"apply": t1 - t0, "ptxas": 0.0, **p.timings}
        val = validate(p, output_name=str(recipe.output), cache=cache, before=before)
    t2 = time.perf_counter()
    return p, val, recipe.output, {"apply": t1 - t0, "ptxas": t2 - t1, **p.timings}


def unified_diff(plan, out_name: str, context: int = DIFF_CONTEXT) -> list:
    a = plan.source.splitlines(keepends=True)
    b = plan.text.splitlines(keepends=True)
    return list(difflib.unified_diff(a, b, str(plan.recipe.module), out_name, n=context))
