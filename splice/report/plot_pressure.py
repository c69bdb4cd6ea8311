"""Rendering of ``splice spec --pressure``: the peak table (rich) and the curve (PNG)."""
from __future__ import annotations

import sys

from .plot import EPILOGUE, PHASE, LinePlot, render_line_plot

# occupancy thresholds for a 128-thread block on sm_90 (65 536 registers per SM)
THRESHOLDS = ((168, "168: 3 BLOCKS/SM", (44, 160, 44)), (128, "128: 4 BLOCKS/SM", (148, 103, 189)))


def pressure_png(d: dict, path) -> str:
    """Write the curve of one entry's pressure dict (``Pressure.as_dict`` + ``ptxas``)."""
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
                            ("PREDICATES", c["predicates"])])
    write_atomic(str(path), encode(render_line_plot(plot)))
    return str(path)


def print_pressure(results) -> None:
    """``results``: pressure dicts (one per entry) with ``ptxas`` and ``png`` added."""
    from rich.console import Console
    from rich.table import Table

    con = Console() if sys.stdout.isatty() else Console(width=200)
    for d in results:
        px = d.get("ptxas") or {}
        regs = px.get("registers")
        con.print(f"[bold]{d['entry']}[/bold]  peak {d['max']:g} live 32-bit registers"
                  + (f"; ptxas {px['arch']}: {regs} registers, spill {px['spill_stores']} B stores"
                     f" / {px['spill_loads']} B loads, stack {px['stack_frame']} B" if regs else "")
                  + (f"  -> {d['png']}" if d.get("png") else ""))
        t = Table(title="pressure peaks (highest statement of each region)")
        for col in ("region", "statement", "live", "D", "C", "A", "B", "address", "temp", "text"):
            t.add_column(col, justify="right" if col not in ("region", "text", "statement") else "left")
        for p in d["peaks"]:
            br = p["by_role"]
            t.add_row(p["region"], f"s{p['statement']} L{p['line']}", f"{p['total']:g}",
                      *(f"{br.get(r, 0):g}" for r in ("D", "C", "A", "B", "address", "temp")),
                      p["text"][:60])
        con.print(t)
