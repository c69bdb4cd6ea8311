"""``splice apply`` and ``splice extract``: the report side (this module prints; splice.cut does
not)."""
from __future__ import annotations

import difflib
import json
import os
import sys
import time
from pathlib import Path

DIFF_CONTEXT = 2
DIFF_PREVIEW_LINES = 80


def _search_path(recipe_path: str) -> list:
    from ..cut.recipe import default_search_path

    extra = [p for p in os.environ.get("SPLICE_CORPUS", "").split(os.pathsep) if p]
    return default_search_path(Path(recipe_path).parent, extra)


def run_apply(recipe_path: str, output=None, ptxas: bool = True):
    """Load, plan, validate.  Returns (plan, validation or None, output path, timings).
    Writes nothing."""
    from ..cut.recipe import load_recipe
    from ..cut.splice import plan as make_plan

    t0 = time.perf_counter()
    recipe = load_recipe(recipe_path, _search_path(recipe_path), output)
    p = make_plan(recipe)
    t1 = time.perf_counter()
    val = None
    if ptxas:
        from ..cut.validate import validate

        val = validate(p, output_name=str(recipe.output))
    t2 = time.perf_counter()
    return p, val, recipe.output, {"apply": t1 - t0, "ptxas": t2 - t1, **p.timings}


def unified_diff(plan, out_name: str, context: int = DIFF_CONTEXT) -> list:
    a = plan.source.splitlines(keepends=True)
    b = plan.text.splitlines(keepends=True)
    return list(difflib.unified_diff(a, b, str(plan.recipe.module), out_name, n=context))


def to_json(plan, val, out, timings, diff_lines=None) -> dict:
    cuts = []
    for c in plan.cuts:
        cuts.append({
            "cut": c.cut.index, "title": c.title, "phase": c.phase, "statements": [c.first, c.last],
            "removed_statements": c.removed, "removed_lines": list(c.lines), "added_statements": c.binding.added,
            "abi": c.binding.abi, "native": c.native, "params": c.params, "function": c.binding.func,
            "facts": {k: v for k, v in c.facts.items() if not k.endswith("_regs")},
            "binding": c.binding.table, "notes": c.binding.notes,
        })
    data = {"recipe": plan.recipe.path, "module": str(plan.recipe.module), "entry": plan.entry,
            "output": str(out), "cuts": cuts, "shared_scratch_bytes": plan.added_shared,
            "timings": {k: round(v, 4) for k, v in timings.items()}}
    if val is not None:
        data["ptxas"] = {"arch": val.arch, **val.usage(plan.entry)}
    if diff_lines is not None:
        data["diff"] = "".join(diff_lines)
    return data


def cmd_apply(args) -> int:
    from ..util import write_atomic

    p, val, out, timings = run_apply(args.recipe, args.output, not args.no_ptxas)
    write_atomic(out, p.text)
    diff = unified_diff(p, str(out))
    if args.json:
        print(json.dumps(to_json(p, val, out, timings, diff if args.diff else None), indent=1))
        return 0
    _print_report(p, val, out, timings, diff, args.diff)
    return 0


def _print_report(plan, val, out, timings, diff, full_diff):
    from rich.console import Console
    from rich.syntax import Syntax
    from rich.table import Table

    con = Console()
    con.print(f"[bold]splice apply[/] {plan.recipe.path}: {plan.recipe.module} "
              f"[dim]({plan.entry})[/] -> [bold green]{out}[/]")
    t = Table(title="cuts", show_lines=False)
    for col in ("cut", "selection", "removed", "added", "abi", "native", "facts"):
        t.add_column(col)
    for c in plan.cuts:
        f = c.facts
        facts = f"mma {f['mma']}" + (f", {f['shape']}" if f.get("shape") else "") + \
            (f", W+{f['weight_bytes']}" if f.get("weight_bytes") else "") + \
            f", in {f['live_in']} / out {f['live_out']}"
        t.add_row(str(c.cut.index), c.title,
                  f"{c.removed} stmts (s{c.first}-s{c.last}, L{c.lines[0]}-L{c.lines[1]})",
                  f"{c.binding.added} stmts", c.binding.abi + (f" {c.binding.func}" if c.binding.func else ""),
                  c.native, facts)
    con.print(t)
    for c in plan.cuts:
        rows = c.binding.table
        b = Table(title=f"cut {c.cut.index} binding ({c.title})", show_header=True)
        for col in ("symbol", "register", "type", "role", "dir"):
            b.add_column(col)
        shown = rows if len(rows) <= 24 or full_diff else rows[:8] + rows[-8:]
        for r in shown:
            b.add_row(r["symbol"], r["register"], str(r["type"]), r["role"], r["dir"])
        if len(shown) < len(rows):
            b.caption = f"{len(rows) - len(shown)} more rows (--diff or --json shows all)"
        con.print(b)
        for n in c.binding.notes:
            con.print(f"  [yellow]note[/]: {n}")
    if val is not None:
        u = val.usage(plan.entry)
        r = Table(title=f"ptxas -arch={val.arch} -O{plan.recipe.opt_level} resource usage ({plan.entry})")
        for col in ("", "registers", "spill stores", "spill loads", "shared", "stack"):
            r.add_column(col, justify="right")
        for k in ("before", "after"):
            x = u[k] or {}
            r.add_row(k, *(str(x.get(f, "-")) for f in ("registers", "spill_stores", "spill_loads", "shared", "stack")))
        for name, x in u["functions"].items():
            r.add_row(f"after: .func {name}", str(x.get("registers") or "-"), str(x["spill_stores"]),
                      str(x["spill_loads"]), "-", str(x["stack"]))
        con.print(r)
    else:
        con.print("[yellow]ptxas validation skipped (--no-ptxas)[/]")
    text = "".join(diff)
    lines = text.splitlines()
    if not full_diff and len(lines) > DIFF_PREVIEW_LINES:
        text = "\n".join(lines[:DIFF_PREVIEW_LINES]) + f"\n... {len(lines) - DIFF_PREVIEW_LINES} more diff lines (--diff)\n"
    con.print(Syntax(text, "diff", theme="ansi_dark", word_wrap=False))
    con.print(f"[dim]apply {timings['apply']:.3f}s (load {timings['load']:.3f}s, bind {timings['bind']:.3f}s, "
              f"assemble {timings['assemble']:.3f}s), ptxas {timings['ptxas']:.3f}s[/]")


def cmd_extract(args) -> int:
    from ..cut.extract import extract
    from ..cut.kernel import load_kernel
    from ..cut.recipe import _range
    from ..errors import SpliceError
    from ..util import write_atomic

    if (args.phase is None) == (args.statements is None):
        raise SpliceError("extract needs exactly one of --phase N or --statements sA-sB", args.file)
    k = load_kernel(args.file, args.entry)
    st = _range(args.statements, args.file, (None, None), "s") if args.statements else None
    r = extract(k, phase=args.phase, statements=st, source_name=args.file)
    if args.output:
        write_atomic(args.output, r["text"])
    if args.json:
        print(json.dumps({k2: v for k2, v in r.items()}, indent=1, default=str))
    elif not args.output:
        sys.stdout.write(r["text"])
    else:
        print(f"wrote {args.output}: s{r['first']}-s{r['last']}, {r['facts'].get('mma')} mma, "
              f"{r['facts']['live_in']} live-in, {r['facts']['live_out']} live-out")
    return 0
