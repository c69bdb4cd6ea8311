"""``splice tune``'s PNG: each timed variant's ratio with its interval (best first), and ratio
against registers -- drawn with the report's own rasteriser (``plot.py``), like every splice
chart."""
from __future__ import annotations

import numpy as np

from .plot import BLACK, GREY, PALETTE, Axes, line, nice_step, text

BAND = (224, 236, 224)      # the A/A interval


def _span(values: list, pad: float = 0.05) -> tuple:
    lo, hi = min(values), max(values)
    d = (hi - lo) or max(abs(hi), 1.0) * 0.01
    return lo - pad * d, hi + pad * d


def _frame(img, ax: Axes, title: str, xlabel: str) -> None:
    step = nice_step(ax.y1 - ax.y0, 6)
    for yv in np.arange(np.ceil(ax.y0 / step) * step, ax.y1, step):
        yy = int(ax.py(yv))
        line(img, ax.left, yy, ax.left + ax.width - 1, yy, GREY)
        text(img, 4, yy - 5, f"{yv:.3f}")
    xstep = max(1.0, float(nice_step(ax.x1 - ax.x0, 10)))
    for xv in np.arange(np.ceil(ax.x0 / xstep) * xstep, ax.x1, xstep):
        xx = int(ax.px(xv))
        line(img, xx, ax.top + ax.height, xx, ax.top + ax.height + 4, BLACK)
        text(img, xx - 8, ax.top + ax.height + 8, f"{int(round(xv))}")
    line(img, ax.left, ax.top, ax.left, ax.top + ax.height, BLACK)
    line(img, ax.left, ax.top + ax.height, ax.left + ax.width, ax.top + ax.height, BLACK)
    text(img, ax.left, 8, title, scale=3)
    text(img, ax.left + ax.width // 2 - 4 * len(xlabel), ax.top + ax.height + 24, xlabel)


def _marks(img, ax: Axes, xs, rows, colour) -> None:
    for x, r in zip(xs, rows):
        px = int(ax.px(x))
        line(img, px, ax.py(r["high"]), px, ax.py(r["low"]), colour, thick=1)
        yy = int(ax.py(r["ratio"]))
        img[max(yy - 2, 0):yy + 3, max(px - 2, 0):px + 3] = colour


def _band(aa) -> tuple:
    """The A/A band the verdicts clear (1 ± band), or the A/A interval for a board without it."""
    if aa.get("band") is not None:
        return 1.0 - aa["band"], 1.0 + aa["band"]
    return aa["low"], aa["high"]


def _panel(rows: list, xs: list, title: str, xlabel: str, aa, width: int = 1200, height: int = 420) -> np.ndarray:
    img = np.full((height, width, 3), 255, np.uint8)
    ys = [r["low"] for r in rows] + [r["high"] for r in rows] + [1.0] + (list(_band(aa)) if aa else [])
    y0, y1 = _span(ys)
    x0, x1 = _span([float(x) for x in xs])
    ax = Axes(x0, x1, y0, y1, 80, 40, width - 110, height - 90)
    if aa:
        lo, hi = _band(aa)
        top, bottom = int(ax.py(hi)), int(ax.py(lo))
        img[top:bottom + 1, ax.left:ax.left + ax.width] = BAND
    _frame(img, ax, title, xlabel)
    one = int(ax.py(1.0))
    line(img, ax.left, one, ax.left + ax.width - 1, one, PALETTE[1])
    text(img, ax.left + ax.width - 90, one - 14, "ORIGINAL", PALETTE[1])
    _marks(img, ax, xs, rows, PALETTE[0])
    return img


def tune_png(board: dict) -> "np.ndarray | None":
    """The two panels stacked, or None when no variant was timed."""
    rows = sorted((r for r in board["variants"] if r["ratio"] is not None), key=lambda r: r["ratio"])
    if not rows:
        return None
    aa = board.get("aa")
    first = _panel(rows, list(range(1, len(rows) + 1)), "RATIO TO THE ORIGINAL, 95% INTERVAL",
                   "VARIANTS, BEST FIRST", aa)
    with_regs = [r for r in rows if r["registers"] is not None]
    if not with_regs:
        return first
    second = _panel(with_regs, [r["registers"] for r in with_regs], "RATIO AGAINST REGISTERS PER THREAD",
                    "REGISTERS (PTXAS)", aa)
    return np.vstack([first, second])
