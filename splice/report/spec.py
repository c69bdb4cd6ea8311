"""Rendering of ``splice spec`` (rich tables).  The data comes from ``splice.analysis`` through the
command layer; this module only formats and prints."""
from __future__ import annotations

import sys


def print_spec(results, want_phases: bool, want_epilogues: bool, want_abi: bool) -> None:
    """``results``: (entry name, spec dict) pairs."""
    from rich.console import Console

    con = Console() if sys.stdout.isatty() else Console(width=200)   # piped: do not truncate
    for name, d in results:
        _summary(con, name, d)
        if want_phases:
            _phase_table(con, d)
        if want_epilogues:
            _epilogue_table(con, d)
        if want_abi:
            _abi_table(con, d["abi"])


def _summary(con, name, d):
    img = d.get("weight_image_bytes")
    con.print(f"[bold]{name}[/bold]  {d['statements']} statements, "
              f"{len(d.get('phases', []))} phases, {d.get('mma_total', 0)} mma"
              + (f", weight image {img} bytes (W = {d['weight_field']})" if img else ""))


def _r(a, b):
    return f"s{a}–s{b}" if a != b else f"s{a}"


def _phase_table(con, d):
    from rich.table import Table

    t = Table(title="phases", show_lines=False)
    for c in ("#", "range", "M", "N", "K", "naive", "mma", "tiles", "grid", "weight bytes",
              "bias bytes", "slot", "B", "C", "epi"):
        t.add_column(c, justify="right" if c in ("#", "M", "N", "K", "mma", "epi") else "left")
    for p in d["phases"]:
        wb = p["weight_bytes"]
        bb = p["bias_bytes"]
        epi = p["epilogue"]
        naive = "×".join(map(str, p["naive_shape"]))
        shape_changed = p["naive_shape"] != p["shape"]
        t.add_row(str(p["index"]), _r(p["first"], p["last"]), *map(str, p["shape"]),
                  f"[yellow]{naive}[/yellow]" if shape_changed else naive, str(p["mma"]),
                  "×".join(map(str, p["tiles"])) + ("" if p["consistent"] else " [red]≠[/red]"),
                  p["grid"], f"{wb[0]}..{wb[1]}" if wb else "–",
                  f"{bb[0]}..{bb[1]}" if bb else "–", str(p["slot_stride"] or "–"),
                  p["b_source"], p["c_source"],
                  str(epi[1] - epi[0] + 1) if epi else "0")
    con.print(t)


def _epilogue_table(con, d):
    from rich.table import Table

    t = Table(title="epilogues")
    for c in ("E", "range", "stmts", "named operation", "sections", "top ops"):
        t.add_column(c)
    for e in d.get("epilogues", []):
        secs = "; ".join(f"{s['what']} {_r(s['first'], s['last'])} ×{s['count']}"
                         for s in e["sections"])
        top = ", ".join(f"{c} {nm}" for nm, c in list(e["histogram"].items())[:4])
        t.add_row(f"E{e['index']}", _r(e["first"], e["last"]), str(e["statements"]), e["name"],
                  secs, top)
    con.print(t)


def _abi_table(con, abi):
    from rich.table import Table

    for side in ("live_in", "live_out"):
        t = Table(title=f"cut ABI s{abi['first']}–s{abi['last']}: {side} ({len(abi[side])})")
        for c in ("role", "reg", "type", "value"):
            t.add_column(c)
        for r in abi[side]:
            t.add_row(f"{r['role']}{r['index']}", r["reg"], r["type"],
                      abi["values"].get(r["reg"], "") if side == "live_in" else "")
        con.print(t)
