"""Rendering of ``splice spec --pressure``: the peak table (rich) and the curve (PNG)."""
from __future__ import annotations

import sys

from .plot import EPILOGUE, PHASE, LinePlot, render_line_plot

# occupancy thresholds for a 128-thread block on sm_90 (65 536 registers per SM)
THRESHOLDS = ((168, "168: 3 BLOCKS/SM", (44, 160, 44)), (128, "128: 4 BLOCKS/SM", (148, 103, 189)))


def pressure_png(d: dict, path, inputs=()) -> str:
    """Write the curve of one entry's pressure dict (``Pressure.as_dict`` + ``ptxas``); never onto
    one of the command's ``inputs`` (``--png`` naming the module must not replace it)."""
    from ..util import write_atomic
    from .png import encode

    c = d["curve"]
    bands = [(r["first"], r["last"], PHASE if r["kind"] == "phase" else EPILOGUE)
             for r in d["regions"] if r["kind"] != "prologue"]
    hl = [(y, lab, rgb) for y, lab, rgb in THRESHOLDS]
    px = d.get("ptxas") or {}
    if px.get("registers"):
        hl.append((px["registers"], f"PTXAS {px['registers']} REGS, "
                   f"{px['spill_stores']}/{px['spill_loads']} B SPILL", (214, 39, 40)))
    plot = LinePlot(title=f"{d['entry']}: LIVE 32-BIT REGISTERS (PEAK {d['max']:g})",
                    x=c["statement"], bands=bands, hlines=hl,
                    series=[("LIVE (32-BIT EQUIV.)", c["total"]),
                            ("D+C FRAGMENTS", [a + b for a, b in zip(c["by_role"]["D"], c["by_role"]["C"])]),
                            ("A+B FRAGMENTS", [a + b for a, b in zip(c["by_role"]["A"], c["by_role"]["B"])]),
                            ("PREDICATES", c["predicates"])]
                    + ([("PTXAS LIVE (SASS)", _filled(c["sass"]))] if c.get("sass") else []))
    write_atomic(str(path), encode(render_line_plot(plot)), inputs=inputs)
    return str(path)


def _filled(values: list) -> list:
    """A curve with gaps (statements without SASS of their own) carried forward from the last
    value, 0 before the first."""
    out, last = [], 0
    for v in values:
        last = v if v is not None else last
        out.append(last)
    return out


def print_pressure(results) -> None:
    """``results``: pressure dicts (one per entry) with ``ptxas`` and ``png`` added."""
    from .console import Table

    from .console import MAX_ENTRIES, clip, esc, make_console, more_entries

    con = make_console(width=None if sys.stdout.isatty() else 200)
    for d in results[:MAX_ENTRIES]:
        px = d.get("ptxas") or {}
        regs = px.get("registers")
        con.print(f"[bold]{esc(d['entry'])}[/bold]  peak {d['max']:g} live 32-bit registers"
                  + (f"; ptxas {esc(px['arch'])}: {regs} registers, spill {px['spill_stores']} B stores"
                     f" / {px['spill_loads']} B loads, stack {px['stack_frame']} B" if regs else "")
                  + (f"  -> {esc(d['png'])}" if d.get("png") else ""))
        tg = d.get("target") or {}
        if tg.get("note"):
            con.print(f"  ({esc(tg['kind'])}: {esc(tg['note'])})")
        sass = d.get("sass") or {}
        if sass.get("error"):
            con.print(f"  ptxas's own live registers: {esc(sass['error'])}")
        elif sass:
            where = f" ({esc(sass['cut'])})" if sass.get("cut") else ""
            con.print(f"  ptxas's own live registers peak {sass['max']} in {esc(str(sass['region']))}{where} "
                      "(nvdisasm life ranges, per PTX line: column 'ptxas')")
        t = Table(title="pressure peaks (highest statement of each region)")
        cols = ("region", "statement", "live") + (("ptxas",) if sass and not sass.get("error") else ()) + \
            ("D", "C", "A", "B", "address", "temp", "text")
        for col in cols:
            t.add_column(col, justify="right" if col not in ("region", "text", "statement") else "left")
        for p in d["peaks"]:
            br = p["by_role"]
            extra = (str(p.get("sass") if p.get("sass") is not None else "-"),) if "ptxas" in cols else ()
            line = f"L{p['line']}" if p.get("line") is not None else "(wrapper)"
            region = p["region"] + (f" ({p['cut'].split(' s')[0]})" if p.get("cut") else "")
            t.add_row(esc(region), f"s{p['statement']} {line}", f"{p['total']:g}", *extra,
                      *(f"{br.get(r, 0):g}" for r in ("D", "C", "A", "B", "address", "temp")),
                      esc(clip(p["text"])))
        con.print(t)
        if d.get("live"):
            _print_live(con, d["live"])
    more_entries(con, len(results), MAX_ENTRIES)


#: rows of the --live table printed (the JSON has them all)
LIVE_ROWS = 40


def _print_live(con, live: dict) -> None:
    """``--live``: the registers live before one statement, longest-carried first."""
    from .console import Table, clip, esc

    vals = live["values"]
    total = sum(v["weight"] for v in vals)
    t = Table(title=f"live before s{live['statement']} L{live['line']}: {len(vals)} registers, {total:g} "
                    f"32-bit equivalents — {clip(live['text'])}")
    for col in ("register", "type", "weight", "role", "defined", "last use", "reads"):
        t.add_column(col, justify="right" if col in ("weight", "reads") else "left")
    for v in vals[:LIVE_ROWS]:
        t.add_row(esc(v["register"]), esc(str(v["type"])), f"{v['weight']:g}", esc(v["role"]),
                  ", ".join(f"s{n}" for n in v["defined"]) or "(live-in)",
                  f"s{v['last_use']}" if v["last_use"] is not None else "-", str(v["reads"]))
    con.print(t)
    if len(vals) > LIVE_ROWS:
        con.print(f"  … {len(vals) - LIVE_ROWS} more (--json lists them all)")


MIX_COLUMNS = ("total", "HMMA", "conversion", "LDL", "STL", "LDG", "STG", "LDS", "STS", "SHFL",
               "MUFU", "texture/surface", "barrier", "other")


def print_sass_mix(d: dict) -> None:
    """``splice sass-mix``: one table per module (regions) or per recipe (cuts before/after)."""
    from .console import Table

    from .console import esc, make_console

    con = make_console(width=None if sys.stdout.isatty() else 220)
    if d["kind"] == "module":
        con.print(f"[bold]{esc(d['entry'])}[/bold] ({esc(d['arch'])}): {d['registers']} registers, spill "
                  f"{d['spill_stores']} B stores / {d['spill_loads']} B loads")
        t = Table(title="SASS instruction mix per region (PTX lines via .loc / nvdisasm -g)")
        t.add_column("region")
        t.add_column("lines")
        for c in MIX_COLUMNS:
            t.add_column(c, justify="right")
        for r in d["regions"]:
            lo, hi = r["lines"]
            t.add_row(esc(r["name"]), f"s{r['first']}-s{r['last']} L{lo}-" + (f"L{hi}" if hi < 10 ** 9 else ""),
                      *(str(r.get(c, 0)) for c in MIX_COLUMNS))
        con.print(t)
        return
    b, a = d["before"], d["after"]
    con.print(f"[bold]{esc(d['recipe'])}[/bold] {esc(d['entry'])} ({esc(d['arch'])}): registers "
              f"{b.get('registers')} -> {a.get('registers')}, spill stores {b.get('spill_stores')} -> "
              f"{a.get('spill_stores')} B, loads {b.get('spill_loads')} -> {a.get('spill_loads')} B")
    t = Table(title="SASS instruction mix per cut: original -> spliced")
    t.add_column("cut")
    for c in MIX_COLUMNS:
        t.add_column(c, justify="right")
    for cut in d["cuts"]:
        t.add_row(f"{cut['cut']} {esc(cut['title'])}",
                  *(f"{cut['before'].get(c, 0)} -> {cut['after'].get(c, 0)}" for c in MIX_COLUMNS))
    con.print(t)
