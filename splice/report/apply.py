"""Rendering of ``splice apply``'s result (rich tables, diff preview)."""
from __future__ import annotations
from .console import Table, esc, make_console
from rich.syntax import Syntax

DIFF_PREVIEW_LINES = 80


def print_report(plan, val, out, timings, diff, full_diff):


    con = make_console()
    con.print(f"[bold]splice apply[/] {esc(plan.recipe.path)}: {esc(plan.recipe.module)} "
              f"[dim]({esc(plan.entry)})[/] -> [bold green]{esc(out)}[/]")
    t = Table(title="cuts", show_lines=False)
    for col in ("cut", "selection", "removed", "added", "abi", "native", "facts"):
        t.add_column(col)
    for c in plan.cuts:
        f = c.facts
        facts = f"mma {f['mma']}" + (f", {f['shape']}" if f.get("shape") else "") + \
            (f", W+{f['weight_bytes']}" if f.get("weight_bytes") else "") + \
            f", in {f['live_in']} / out {f['live_out']}"
        t.add_row(str(c.cut.index), esc(c.title),
                  f"{c.removed} stmts (s{c.first}-s{c.last}, L{c.lines[0]}-L{c.lines[1]})",
                  f"{c.binding.added} stmts", esc(c.binding.abi + (f" {c.binding.func}" if c.binding.func else "")),
                  esc(c.native), esc(facts))
    con.print(t)
    for c in plan.cuts:
        rows = c.binding.table
        b = Table(title=f"cut {c.cut.index} binding ({esc(c.title)})", show_header=True)
        for col in ("symbol", "register", "type", "role", "dir"):
            b.add_column(col)
        shown = rows if len(rows) <= 24 or full_diff else rows[:8] + rows[-8:]
        for r in shown:
            b.add_row(*(esc(r[k]) for k in ("symbol", "register", "type", "role", "dir")))
        if len(shown) < len(rows):
            b.caption = f"{len(rows) - len(shown)} more rows (--diff or --json shows all)"
        con.print(b)
        for n in c.binding.notes:
            con.print(f"  [yellow]note[/]: {esc(n)}")
    if val is not None:
        u = val.usage(plan.entry)
        r = Table(title=f"ptxas -arch={esc(val.arch)} -O{plan.recipe.opt_level} resource usage ({esc(plan.entry)})")
        for col in ("", "registers", "spill stores", "spill loads", "shared", "stack"):
            r.add_column(col, justify="right")
        for k in ("before", "after"):
            x = u[k] or {}
            r.add_row(k, *(str(x.get(f, "-")) for f in ("registers", "spill_stores", "spill_loads", "shared", "stack")))
        for name, x in u["functions"].items():
            r.add_row(f"after: .func {esc(name)}", str(x.get("registers") or "-"), str(x["spill_stores"]),
                      str(x["spill_loads"]), "-", str(x["stack"]))
        con.print(r)
    else:
        con.print("[yellow]ptxas validation skipped (--no-ptxas)[/]")
    text = "".join(diff)
    lines = text.splitlines()
    if not full_diff and len(lines) > DIFF_PREVIEW_LINES:
        more = len(lines) - DIFF_PREVIEW_LINES
        text = "\n".join(lines[:DIFF_PREVIEW_LINES]) + f"\n... {more} more diff lines (--diff)\n"
    # whole lines, as diff prints them (the terminal wraps a long one): the console cut each line
    # at its width, so a long native line or a cut's comment lost its end without a mark
    con.print(Syntax(text, "diff", theme="ansi_dark", word_wrap=False), soft_wrap=True)
    con.print(f"[dim]apply {timings['apply']:.3f}s (load {timings['load']:.3f}s, bind {timings['bind']:.3f}s, "
              f"assemble {timings['assemble']:.3f}s), ptxas {timings['ptxas']:.3f}s[/]")

