"""Rendering of ``splice verify`` (and the verify lines of ``splice apply``)."""
from __future__ import annotations

STYLE = {"proved equal": "bold green", "proved different": "bold red", "not proven": "bold yellow",
         "internal error": "bold magenta"}
MAX_ROWS = 12


def verdict_line(r) -> str:
    """One line per cut: ``cut 1 phase 8 s1186-s1209: proved equal (48 live-outs, memory)``."""
    s = STYLE.get(r.verdict, "bold")
    entries = f", {r.entries} entries" if getattr(r, "entries", 1) > 1 else ""
    tail = f"{len(r.rows)} live-outs and memory{entries}" if r.verdict == "proved equal" else r.reason
    verdict = r.verdict + (" (budget)" if getattr(r, "budget", False) else "")
    from .console import esc

    return f"cut {r.cut} {esc(r.title)} [dim]({esc(r.abi)})[/]: [{s}]{verdict}[/] — {esc(tail)}"


def print_verify(plan, results, timings):
    from .console import Table

    from .console import esc, make_console

    con = make_console()
    con.print(f"[bold]splice verify[/] {esc(plan.recipe.path)}: {esc(plan.recipe.module)} [dim]({esc(plan.entry)})[/]")
    for r in results:
        con.print(verdict_line(r))
        bad = r.differing
        if not bad:
            continue
        t = Table(title=f"cut {r.cut}: first differing operation per output", show_lines=True)
        for col in ("output", "", "original", "native"):
            t.add_column(col, overflow="fold")
        for d in bad[:MAX_ROWS]:
            t.add_row(esc(d.name), "[red]different[/]" if d.definite else "[yellow]?[/]",
                      f"{esc(d.original)}\n[dim]{esc(d.where_original)}[/]",
                      f"{esc(d.native)}\n[dim]{esc(d.where_native)}[/]")
        if len(bad) > MAX_ROWS:
            t.caption = f"{len(bad) - MAX_ROWS} more (--json lists all)"
        con.print(t)
        for d in bad[:3]:
            con.print(f"  {esc(d.message)}")
    con.print(f"[dim]plan {timings['plan']:.3f}s, verify {timings['verify']:.3f}s[/]")
    if any(r.verdict == "not proven" for r in results):
        import shlex    # a line to copy into a shell: the path quoted (a recipe named `x;rm -r ~.yaml`)

        line = shlex.join(["splice", "probe", str(plan.recipe.path), "--harness"])
        con.print(f"[yellow]not proven cuts: run the GPU probe ({esc(line)})[/]")


def print_verify_status(status: str, recipe: str):
    """``splice apply``'s verify line when it did not verify: --no-verify, or Ctrl-C."""
    import shlex

    from .console import esc, make_console

    again = shlex.join(["splice", "verify", recipe])
    what = {"skipped": "skipped (--no-verify)",
            "interrupted": "interrupted (the output is written, as reported above)"}[status]
    make_console().print(f"verify: [yellow]{what}[/]; {esc(again)} proves the cuts")


def print_verify_lines(results):
    """``splice apply``'s verify section: one line per cut."""
    from .console import make_console

    con = make_console()
    for r in results:
        con.print("verify: " + verdict_line(r))
