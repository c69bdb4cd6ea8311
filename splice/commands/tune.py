"""``splice tune SPACE``: search the space of a recipe's variants for the fastest one that is
provably equal to the original (splice.tune), with a live view, a leaderboard, a plot and the
best variant written as an ordinary recipe.

    splice tune recipes/tune/enc5.yaml --plan            # the space's size, nothing run
    splice tune recipes/tune/enc5.yaml --no-gpu          # apply, verify, ptxas only (a CPU screen)
    splice tune recipes/tune/enc5.yaml [-o build/tune/enc5] [--jobs N] [--gpus N]
    splice tune … --executor ray [--address HOST:PORT]   # every GPU of a Ray cluster

Exit status: 0 when the run finished with a best recipe (a GPU run) or with at least one
survivor (``--no-gpu``); 1 when no variant survived; 2 for user errors.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..cut.recipe import load_recipe
from ..errors import SpliceError
from ..report import jsonout
from ..report.console import Table, esc, make_console
from ..report.plot_tune import tune_png
from ..report.png import encode
from ..report.tune import LiveView, print_board
from ..tune import driver, steps
from ..tune.embedded import Embedded
from ..tune.rayexec import RayExecutor
from ..tune.results import board as make_board
from ..tune.space import load_space, search_error
from ..tune.store import Store
from ..tune.timer import DEFAULT_FACTORY, factory
from ..util import check_output, names_a_directory, write_atomic
from . import checked_arch

SEARCH_FLAGS = ("rounds", "eta", "final", "final_rounds", "max_variants", "seed", "cache", "min_sample_ms",
                "ci_width", "time_budget")


def _search(space, args):
    over = {k: getattr(args, k) for k in SEARCH_FLAGS if getattr(args, k, None) is not None}
    for k, v in over.items():
        why = search_error(k, v)
        if why:
            raise SpliceError(f"--{k.replace('_', '-')}: {why}", args.space)
    return dataclasses.replace(space.search, **over)


def plan_json(space, search) -> dict:
    return {"space": space.path, "recipe": space.recipe_path, "size": space.size,
            "sampled": min(space.size, search.max_variants), "search": vars(search),
            "dimensions": [{"name": d.name, "key": d.key, "cuts": list(d.cuts), "choices": list(d.choices),
                            "line": d.line} for d in space.dims]}


def _output(args, space) -> Path:
    out = Path(args.output) if args.output else Path("build/tune") / Path(space.path).stem
    if args.output and not names_a_directory(args.output) and Path(args.output).is_file():
        raise SpliceError("-o names a directory for the store, the variants and the best recipe; this is a file",
                          args.output)
    inputs = [space.path, space.recipe_path, *(args.reference or ())]
    for name in ("best.yaml", "tune.db", "leaderboard.json"):      # refused before any work
        check_output(out / name, inputs)
    if args.png not in (None, "none"):
        check_output(args.png, inputs)
    # absolute: the store records paths (recipes, cubins) a run from another directory resumes from
    return out.resolve()


def make_executor(args, factory: str):
    jobs = args.jobs or len(os.sched_getaffinity(0))
    gpus = None if args.gpus is None else list(range(args.gpus))
    if args.executor == "ray":
        return RayExecutor(args.address, gpus, factory)
    if args.address:
        raise SpliceError("--address names a Ray cluster: it needs --executor ray", args.space)
    return Embedded(jobs, gpus, factory)


def cmd_tune(args) -> int:
    """The command; an error that names no file (no GPU, no Ray) names the tune file."""
    try:
        return _tune(args)
    except SpliceError as exc:
        if exc.path is not None:
            raise
        raise SpliceError(exc.message, args.space, detail=exc.detail) from None


def _tune(args) -> int:
    space = load_space(args.space)
    search = _search(space, args)
    for ref in args.reference or ():     # a reference's typo said now, not after the screen
        load_recipe(ref)
    if args.plan:
        return _print_plan(space, search, args.json)
    if args.no_gpu and args.gpus is not None:
        raise SpliceError("--no-gpu runs no GPU worker: drop --gpus", args.space)
    out = _output(args, space)
    board = _run(space, search, out, args)
    _write_outputs(board, out, args, [space.path, space.recipe_path, *(args.reference or ())])
    if args.json:
        print(jsonout.dumps(board, indent=1))
    else:
        print_board(board)
    ok = board["best"] is not None if not args.no_gpu else board["counts"].get("screened", 0) > 0
    return 0 if ok else 1


def _hooks() -> tuple:
    """(bench class, screen function): the probe's and splice.tune.steps' unless
    ``SPLICE_TUNE_BENCH`` / ``SPLICE_TUNE_SCREEN`` name others as ``module:attr`` (the tests'
    fakes, run through the whole command)."""
    bench = os.environ.get("SPLICE_TUNE_BENCH") or DEFAULT_FACTORY
    screen = os.environ.get("SPLICE_TUNE_SCREEN")
    return bench, factory(screen) if screen else steps.screen


def _run(space, search, out: Path, args) -> dict:
    factory, screen = _hooks()
    executor = make_executor(args, factory)
    try:
        dev = None if args.no_gpu else executor.device()      # no GPU: said before anything is written
    except BaseException:
        executor.close()
        raise
    store = Store(out / "tune.db")
    opts = driver.Options(out, not args.no_gpu, search, factory, screen, verify_timeout=args.timeout,
                          references=tuple(args.reference or ()), arch=checked_arch(args.arch, args.space))
    try:
        with LiveView(executor.states) as view:
            summary = driver.run(space, store, executor, opts, view.note, dev)
        summary.update(size=space.size, points=min(space.size, search.max_variants))
        board = make_board(store, summary)
    finally:
        executor.close()
        store.close()
    if board["best"] is None:
        board["note"] = ("no best recipe: --no-gpu screens on the CPU only" if args.no_gpu
                         else "no best recipe: no variant survived to the end of the search")
    return board


def _write_outputs(board: dict, out: Path, args, inputs: list) -> None:
    """leaderboard.json and the plot, never onto an input (``--png`` naming the tune file)."""
    write_atomic(out / "leaderboard.json", jsonout.dumps(board, indent=1) + "\n", inputs=inputs)
    png = args.png if args.png is not None else str(out / "tune.png")
    if png == "none":
        return
    img = tune_png(board)
    if img is not None:
        write_atomic(png, encode(img), inputs=inputs)
        board["png"] = png


def _print_plan(space, search, as_json: bool) -> int:
    data = plan_json(space, search)
    if as_json:
        print(jsonout.dumps(data, indent=1))
        return 0
    con = make_console()
    t = Table(title=f"splice tune --plan: {esc(space.path)} over {esc(space.recipe_path)}")
    for col in ("dimension", "cuts", "choices", "line"):
        t.add_column(col)
    for d in space.dims:
        t.add_row(esc(d.key), esc(",".join(map(str, d.cuts)) or "-"), esc(", ".join(map(str, d.choices))), str(d.line))
    con.print(t)
    con.print(f"space size {space.size} (the product of {len(space.dims)} dimensions, before identical "
              f"variants are merged); a run takes {data['sampled']} of them"
              + (f" (seed {search.seed})" if space.size > search.max_variants else ""))
    return 0
