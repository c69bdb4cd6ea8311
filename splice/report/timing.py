"""Rendering of a timing result (``splice.probe.timing``'s record): the rich tables and the
distribution PNG.  Nothing here computes a statistic: medians, intervals, the A/A band and the
verdicts come from the record; the PNG bins the samples it draws.

A record has ``names``, ``roles.{baseline, control}``, ``modules.{name}.{events, samples_ms}``,
``ratios.{name}.{ratio, lo, hi, confidence, verdict}``, ``aa.band``, ``method``, ``rounds``,
``stopped``, ``device`` and ``withheld``.
"""
from __future__ import annotations

import numpy as np

from .console import esc

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "indistinguishable": "bold",
                 "withheld": "bold yellow"}
STOPPED = {"precision": "every interval narrower than the target", "budget": "time budget spent",
           "runs": "round cap (--runs) reached"}


def role(rec: dict, name: str) -> str:
    """A (the baseline), A' (its control copy: the A/A), B (anything else)."""
    roles = rec["roles"]
    return "A" if name == roles["baseline"] else "A'" if name == roles["control"] else "B"


def method_line(rec: dict) -> str:
    m = rec["method"]
    how = f"{m['batch']} launch{'es' if m['batch'] != 1 else ''} per sample" + \
        (" (one captured graph)" if m["launch"] == "graph" else "")
    return (f"{m['cache']} cache, {how}, spacer {m['spacer_us']:.0f} us, {rec['rounds']} rounds in "
            f"{rec['seconds']:.1f} s (stopped: {STOPPED.get(rec['stopped'], rec['stopped'])}), "
            f"order: seeded Latin square (seed {m['seed']})"
            + (f", {rec['late_rounds']} late round(s) discarded" if rec.get("late_rounds") else ""))


def device_line(dev: dict) -> str:
    if dev.get("state") != "known":
        return f"[yellow]device state unknown[/]: {esc(dev.get('reason'))}; throttling not checked"
    b, a = dev["before"], dev["after"]

    def pair(key, unit):
        x, y = b.get(key), a.get(key)
        return None if x is None and y is None else f"{x} -> {y} {unit}"
    parts = [p for p in (pair("sm_clock_mhz", "MHz SM"), pair("memory_clock_mhz", "MHz memory"),
                         pair("temperature_c", "C"), pair("power_w", "W")) if p]
    state = "[bold red]THROTTLED[/] (" + esc(", ".join(dev["reasons"])) + ")" if dev["throttled"] \
        else "[green]no throttling[/]"
    return f"device: {esc(', '.join(parts))}; {state}"


def print_timing(rec: dict, con, title: str = "time per launch") -> None:
    """The per-module table, the ratio table (A/A and every A/B with interval and verdict), the
    method and the device's state."""
    from .console import Table

    con.print(f"[dim]{esc(method_line(rec))}[/]")
    t = Table(title=title)
    for col in ("module", "role", "median ms", "min", "p10", "p90", "spread", "samples"):
        t.add_column(col, justify="left" if col in ("module", "role") else "right")
    for n in rec["names"]:
        e = rec["modules"][n]["events"]
        t.add_row(esc(n), role(rec, n), f"{e['median_ms']:.5f}", f"{e['min_ms']:.5f}", f"{e['p10_ms']:.5f}",
                  f"{e['p90_ms']:.5f}", f"{100 * (e['spread'] or 0):.2f}%", str(e["runs"]))
    con.print(t)
    base, control = rec["roles"]["baseline"], rec["roles"]["control"]
    conf = rec["aa"]["confidence"]
    t = Table(title=f"ratio of medians to {base}, {100 * conf:g}% bootstrap interval")
    for col in ("ratio", "median", "interval", "verdict"):
        t.add_column(col, justify="left" if col in ("ratio", "verdict") else "right")
    aa = rec["aa"]
    t.add_row(f"A/A {esc(control)}/{esc(base)}", f"{aa['ratio']:.4f}", f"[{aa['lo']:.4f}, {aa['hi']:.4f}]",
              f"the method's band: 1 ± {aa['band']:.4f}")
    for n in rec["names"]:
        if n in (base, control):
            continue
        r = rec["ratios"][n]
        v = r["verdict"]
        t.add_row(f"{esc(n)}/{esc(base)}", f"{r['ratio']:.4f}", f"[{r['lo']:.4f}, {r['hi']:.4f}]",
                  f"[{VERDICT_STYLE[v]}]{v}[/]")
    con.print(t)
    con.print(device_line(rec["device"]))
    if rec.get("withheld"):
        con.print(f"[bold yellow]verdict withheld[/]: {esc(rec['withheld'])}")


# --------------------------------------------------------------------------------------------
# the distribution PNG
# --------------------------------------------------------------------------------------------

ROW = 120          # pixels per module
LEFT, RIGHT, TOP = 300, 40, 50


def _x_range(rec: dict) -> tuple:
    allv = np.concatenate([np.asarray(rec["modules"][n]["samples_ms"], float) for n in rec["names"]])
    lo, hi = np.quantile(allv, [0.005, 0.995])
    pad = max((hi - lo) * 0.05, abs(hi) * 1e-4, 1e-9)
    return float(lo - pad), float(hi + pad)


def _row(img, rec: dict, i: int, n: str, xr: tuple, width: int) -> None:
    """One module: histogram of its samples (clipped to the shared range), its median."""
    from .plot import BLACK, GREY, PALETTE, line, text

    top = TOP + i * ROW
    base = top + ROW - 25
    s = np.clip(np.asarray(rec["modules"][n]["samples_ms"], float), *xr)
    counts, edges = np.histogram(s, bins=80, range=xr)
    span = width - LEFT - RIGHT
    colour = PALETTE[i % len(PALETTE)]
    peak = max(int(counts.max()), 1)
    for c, x0, x1 in zip(counts, edges[:-1], edges[1:]):
        if c:
            a = LEFT + int((x0 - xr[0]) / (xr[1] - xr[0]) * span)
            b = LEFT + int((x1 - xr[0]) / (xr[1] - xr[0]) * span)
            h = int((ROW - 40) * c / peak)
            img[base - h:base, a:max(b, a + 1)] = colour
    line(img, LEFT, base, LEFT + span, base, GREY)
    med = rec["modules"][n]["events"]["median_ms"]
    xm = LEFT + (med - xr[0]) / (xr[1] - xr[0]) * span
    line(img, xm, top + 5, xm, base, BLACK, thick=1)
    text(img, 10, top + 30, f"{n[:30]} ({role(rec, n)})", colour)
    text(img, 10, top + 50, f"MEDIAN {med:.5f} MS", BLACK)


def _footer(rec: dict) -> list:
    base, control = rec["roles"]["baseline"], rec["roles"]["control"]
    aa = rec["aa"]
    out = [f"A/A {control}/{base}: {aa['ratio']:.4f} ({aa['lo']:.4f} - {aa['hi']:.4f}), "
           f"BAND 1 +- {aa['band']:.4f}"]
    for n in rec["names"]:
        if n not in (base, control):
            r = rec["ratios"][n]
            out.append(f"{n}/{base}: {r['ratio']:.4f} ({r['lo']:.4f} - {r['hi']:.4f}) {r['verdict']}")
    dev = rec["device"]
    out.append(method_line(rec))
    out.append("DEVICE: " + ("UNKNOWN (" + str(dev.get("reason")) + ")" if dev.get("state") != "known" else
                             "THROTTLED: " + ", ".join(dev["reasons"]) if dev["throttled"] else "NO THROTTLING"))
    return out


def timing_png(rec: dict, title: str = "TIME PER LAUNCH") -> np.ndarray:
    """RGB array: per module a histogram of its per-launch samples on one shared axis (A, A', B
    one above the other), the medians marked, the ratios and verdicts written below."""
    from .plot import BLACK, line, nice_step, text

    width = 1400
    foot = _footer(rec)
    height = TOP + ROW * len(rec["names"]) + 40 + 22 * len(foot)
    img = np.full((height, width, 3), 255, np.uint8)
    text(img, 10, 10, title[:80], scale=3)
    xr = _x_range(rec)
    for i, n in enumerate(rec["names"]):
        _row(img, rec, i, n, xr, width)
    axis = TOP + ROW * len(rec["names"]) - 20
    span = width - LEFT - RIGHT
    step = nice_step(xr[1] - xr[0], 6)
    for xv in np.arange(np.ceil(xr[0] / step) * step, xr[1], step):
        xx = LEFT + (xv - xr[0]) / (xr[1] - xr[0]) * span
        line(img, xx, axis, xx, axis + 4, BLACK)
        text(img, int(xx) - 20, axis + 8, f"{xv:.5g}")
    text(img, 10, axis + 8, "MS PER LAUNCH")
    for j, s in enumerate(foot):
        text(img, 10, axis + 34 + 22 * j, s[:170])
    return img


def write_timing_png(rec: dict, path, title: str = "TIME PER LAUNCH", inputs=()) -> str:
    from ..util import write_atomic
    from .png import encode

    write_atomic(path, encode(timing_png(rec, title)), inputs=inputs)
    return str(path)
