"""Rendering of ``splice spec --pressure``: the peak table (rich) and the curve (PNG)."""
from __future__ import annotations

import sys

from .plot import EPILOGUE, PHASE, LinePlot, render_line_plot
from .png import encode
from . import console
from .console import Table, clip, esc, make_console, more_entries

# occupancy thresholds for a 128-thread block on sm_90 (65 536 registers per SM)
THRESHOLDS = ((168, "168: 3 BLOCKS/SM", (44, 160, 44)), (128, "128: 4 BLOCKS/SM", (148, 103, 189)))


def pressure_chart(d: dict) -> bytes:
    """The curve of one entry's pressure dict (``Pressure.as_dict`` + ``ptxas``), PNG bytes."""
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
                            ("PREDICATES", c["predicates"])])
    return encode(render_line_plot(plot))


def print_pressure(results) -> None:
    """``results``: pressure dicts (one per entry) with ``ptxas`` and ``png`` added."""
    con = make_console(width=None if sys.stdout.isatty() else 200)
    for d in results[:console.MAX_ENTRIES]:
        px = d.get("ptxas") or {}
        regs = px.get("registers")
        con.print(f"[bold]{esc(d['entry'])}[/bold]  peak {d['max']:g} live 32-bit registers"
                  + (f"; ptxas {esc(px['arch'])}: {regs} registers, spill {px['spill_stores']} B stores"
                     f" / {px['spill_loads']} B loads, stack {px['stack_frame']} B" if regs else "")
                  + (f"  -> {esc(d['png'])}" if d.get("png") else ""))
        t = Table(title="pressure peaks (highest statement of each region)")
        for col in ("region", "statement", "live", "D", "C", "A", "B", "address", "temp", "text"):
            t.add_column(col, justify="right" if col not in ("region", "text", "statement") else "left")
        for p in d["peaks"]:
            br = p["by_role"]
            t.add_row(esc(p["region"]), f"s{p['statement']} L{p['line']}", f"{p['total']:g}",
                      *(f"{br.get(r, 0):g}" for r in ("D", "C", "A", "B", "address", "temp")),
                      esc(clip(p["text"])))
        con.print(t)
    more_entries(con, len(results), console.MAX_ENTRIES)


MIX_COLUMNS = ("total", "HMMA", "conversion", "LDL", "STL", "LDG", "STG", "LDS", "STS", "SHFL",
               "MUFU", "texture/surface", "barrier", "other")


def print_sass_mix(d: dict) -> None:
    """``splice sass-mix``: one table per module (regions) or per recipe (cuts before/after)."""
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
