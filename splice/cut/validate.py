"""ptxas validation of a spliced module: resource usage before and after, and ptxas errors
mapped back to the native phase file, the recipe, or the original module."""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..ptx.sass import Compiled, exit_text
import re
from ..ptx.sass import PtxasError, ToolNotFoundError, compile_ptx
import dataclasses

from ..signals import WorkerThreads, result_when_done


@dataclass
class Validation:
    before: Optional[Compiled]   # of the original module (None: not compiled)
    after: Compiled              # of the spliced module
    arch: str

    def usage(self, entry: str) -> dict:
        def pick(c):
            r = c.resources.get(entry)
            return None if r is None else {
                "registers": r.registers, "spill_stores": r.spill_stores, "spill_loads": r.spill_loads,
                "shared": r.shared, "stack": r.stack_frame}
        funcs = {name: {"registers": r.registers, "stack": r.stack_frame, "spill_stores": r.spill_stores,
                        "spill_loads": r.spill_loads}
                 for name, r in self.after.resources.items() if name != entry}
        return {"before": pick(self.before), "after": pick(self.after), "functions": funcs}


def start_original(recipe, pool, cache=None, arch: Optional[str] = None, opt_level: Optional[int] = None):
    """Start compiling the recipe's unchanged module on ``pool`` and return the future.

    Called as soon as the recipe is loaded: ptxas runs in its own process, so it overlaps the
    planning (pure Python) and the spliced module's compile; ``validate`` picks the result up."""
    opt = recipe.opt_level if opt_level is None else opt_level
    return pool.submit(compile_ptx, Path(recipe.module), arch or recipe.arch, opt, name=str(recipe.module),
                       cache=cache)


def validate(plan, arch: Optional[str] = None, opt_level: Optional[int] = None, output_name: str = "",
             compile_before: bool = True, cache=None, before=None) -> Validation:
    """Compile the original (for the before/after comparison) and the spliced module.  The two
    ptxas runs are independent processes, so they run at the same time; ``before`` is the future
    from :func:`start_original` when the caller started the original's compile earlier.  With
    ``cache`` (a :class:`splice.ptx.cache.CompileCache`) an unchanged module costs a file read."""
    arch = arch or plan.recipe.arch
    opt = plan.recipe.opt_level if opt_level is None else opt_level
    with WorkerThreads(2) as pool:
        if before is None and compile_before:
            before = pool.submit(compile_ptx, plan.source, arch, opt, name=str(plan.recipe.module),
                                 cache=cache)
        fut_after = pool.submit(compile_ptx, plan.text, arch, opt, name=output_name or "<spliced>",
                                cache=cache)
        try:
            original = result_when_done(before) if before is not None else None
        except ToolNotFoundError as exc:
            raise _not_found(plan, exc) from None
        except PtxasError as exc:
            if not _diagnosed(exc):
                raise _broken_ptxas(plan, exc) from None
            raise SpliceError("ptxas rejects the original module (nothing to compare against)",
                              str(plan.recipe.module), exc.lines[0] if exc.lines else None,
                              detail=str(exc)) from None
        try:
            after = result_when_done(fut_after)
        except ToolNotFoundError as exc:
            raise _not_found(plan, exc) from None
        except PtxasError as exc:
            if not _diagnosed(exc):
                raise _broken_ptxas(plan, exc) from None
            raise map_ptxas_error(plan, exc, _repro(plan, exc, output_name)) from None
    return Validation(original, after, arch)


def _repro(plan, exc, output_name: str) -> str:
    """A repro line that leaves nothing behind until it is run: write the spliced module with
    ``splice apply --no-ptxas``, then the same ptxas command on it."""
    out = output_name or "spliced.ptx"
    return (f"{shlex.join(['splice', 'apply', str(plan.recipe.path), '--no-ptxas', '-o', out])}"
            f" && {exc.command_for(out)}")


def _not_found(plan, exc) -> SpliceError:
    # the tool's own message already says "ptxas not found (looked at ...)": say it once
    return SpliceError(f"{exc}; rerun with --no-ptxas to skip validation", plan.recipe.path)


def _diagnosed(exc) -> bool:
    """Did ptxas say what it rejects?  A ptxas that exits non-zero without one ``ptxas ...``
    diagnostic (``/bin/false``, a crash, a wrong binary, one stopped for printing without end)
    judged nothing about the module.  (A timeout is no PtxasError: ``ToolTimedOut`` reaches the
    CLI, which says it and exits 124.)"""
    return bool(exc.diagnostics)


def _broken_ptxas(plan, exc) -> SpliceError:
    tool = exc.command[0] if exc.command else "ptxas"
    what = ("exited 0 without writing a cubin" if exc.returncode == 0
            else f"failed ({exit_text(exc.returncode)})")
    return SpliceError(f"ptxas ({tool}) {what} and no diagnostic: it did not judge the module; check "
                       "SPLICE_PTXAS / PATH, or rerun with --no-ptxas",
                       plan.recipe.path, detail=(exc.stderr.strip() or "(no output)") + f"\nRepro command: {exc.repro}")


def map_ptxas_error(plan, exc, repro: Optional[str] = None) -> SpliceError:
    """The first ptxas error, placed where the user can fix it."""
    errs = [d for d in exc.diagnostics if d.severity in ("error", "fatal")]
    lines = []
    where = None

    for d in errs:
        mt = re.search(r"on line (\d+)", d.message) if d.line is None else None
        if mt:

            d = dataclasses.replace(d, line=int(mt.group(1)))
        if d.line is None:
            lines.append(f"  ptxas {d.severity}: {d.message}")
            continue
        path, line, what = plan.origin(d.line)
        tag = {"native": "native phase", "generated": "generated glue of the cut", "module": "outside the cuts"}[what]
        at = f"{path}:{line}" if line else path      # generated glue outside any cut has no line ("r.yaml:None")
        lines.append(f"  {at}: ptxas {d.severity}: {d.message}   [output line {d.line}; {tag}]")
        if where is None:
            where = (path, line, what, d.message)
    detail = "\n".join(lines[:10]) + f"\nRepro command: {repro or exc.repro}"
    if where is None:
        return SpliceError("ptxas rejected the spliced module", plan.recipe.path, None, None,
                           detail + "\n" + exc.stderr.strip())
    path, line, what, msg = where
    return SpliceError(f"ptxas: {msg}", path, line, None, detail)
