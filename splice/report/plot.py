"""A small rasteriser for line plots and bar charts (numpy in, RGB array out, PNG via png.py).

No plotting library is a dependency of splice, and the charts it draws are simple: one or more
series over statement numbers, shaded bands (phases, epilogues), horizontal reference lines
(ptxas's register count, the occupancy thresholds) and bars.  Text is a 3×5 pixel font scaled
by an integer factor: enough for axis ticks and short labels, upper case only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# 3x5 glyphs, one string of 15 bits per character (rows top to bottom, 3 columns each)
_GLYPHS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001111", "A": "010101111101101", "B": "110101110101110",
    "C": "011100100100011", "D": "110101101101110", "E": "111100110100111",
    "F": "111100110100100", "G": "011100101101011", "H": "101101111101101",
    "I": "111010010010111", "J": "001001001101010", "K": "101101110101101",
    "L": "100100100100111", "M": "101111111101101", "N": "110101101101101",
    "O": "010101101101010", "P": "110101110100100", "Q": "010101101110011",
    "R": "110101110101101", "S": "011100010001110", "T": "111010010010010",
    "U": "101101101101111", "V": "101101101101010", "W": "101101111111101",
    "X": "101101010101101", "Y": "101101010010010", "Z": "111001010100111",
    " ": "000000000000000", "-": "000000111000000", ".": "000000000000010",
    ":": "000010000010000", "%": "101001010100101", "/": "001001010100100",
    "(": "010100100100010", ")": "010001001001010", "=": "000111000111000",
    "<": "001010100010001", ">": "100010001010100", "_": "000000000000111",
    "+": "000010111010000", ",": "000000000010100", "'": "010010000000000",
}

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (200, 200, 200)
PHASE = (214, 228, 245)      # light blue band
EPILOGUE = (248, 232, 208)   # light orange band
PALETTE = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (188, 189, 34)]


def text(img, x: int, y: int, s: str, colour=BLACK, scale: int = 2) -> int:
    """Draw ``s`` with its top-left corner at (x, y); returns the x after the last glyph."""
    h, w = img.shape[:2]
    for ch in s.upper():
        g = _GLYPHS.get(ch, _GLYPHS[" "])
        for i, bit in enumerate(g):
            if bit == "1":
                r, c = divmod(i, 3)
                y0, x0 = y + r * scale, x + c * scale
                if 0 <= y0 and y0 + scale <= h and 0 <= x0 and x0 + scale <= w:
                    img[y0:y0 + scale, x0:x0 + scale] = colour
        x += 4 * scale
    return x


def line(img, x0, y0, x1, y1, colour, thick: int = 1) -> None:
    """A straight segment (enough samples that consecutive pixels touch)."""
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, n)).astype(int)
    ys = np.rint(np.linspace(y0, y1, n)).astype(int)
    h, w = img.shape[:2]
    for d in range(thick):
        ok = (xs >= 0) & (xs < w) & (ys + d >= 0) & (ys + d < h)
        img[ys[ok] + d, xs[ok]] = colour


@dataclass
class Axes:
    """Data -> pixel mapping of the plot area."""
    x0: float
    x1: float
    y0: float
    y1: float
    left: int
    top: int
    width: int
    height: int

    def px(self, x):
        span = max(self.x1 - self.x0, 1e-12)
        return self.left + (np.asarray(x, float) - self.x0) / span * (self.width - 1)

    def py(self, y):
        span = max(self.y1 - self.y0, 1e-12)
        return self.top + self.height - 1 - (np.asarray(y, float) - self.y0) / span * (self.height - 1)


@dataclass
class LinePlot:
    """Series over a shared x axis with shaded bands and reference lines."""
    title: str
    x: list
    series: list = field(default_factory=list)      # (label, [y]) drawn in PALETTE order
    bands: list = field(default_factory=list)       # (x_first, x_last, rgb)
    hlines: list = field(default_factory=list)      # (y, label, rgb)
    width: int = 1400
    height: int = 520


def nice_step(span: float, ticks: int = 8) -> float:
    raw = span / max(ticks, 1)
    mag = 10 ** np.floor(np.log10(max(raw, 1e-12)))
    for f in (1, 2, 5, 10):
        if raw <= f * mag:
            return f * mag
    return 10 * mag


def render_line_plot(p: LinePlot) -> np.ndarray:
    """RGB array of the plot: title, bands, grid, series, reference lines, legend."""
    img = np.full((p.height, p.width, 3), 255, np.uint8)
    ys = [v for _, s in p.series for v in s] + [h[0] for h in p.hlines]
    ymax = max(ys) * 1.08 if ys and max(ys) > 0 else 1.0
    # a kernel of one statement has one x: the axis still spans one unit (a zero span made the
    # tick step 1e-12 and the ticks an array of 10^12)
    x0 = min(p.x) if p.x else 0
    ax = Axes(x0, max(max(p.x) if p.x else x0, x0 + 1), 0.0, ymax, 70, 40, p.width - 90, p.height - 90)
    for a, b, rgb in p.bands:
        xa, xb = int(ax.px(a)), int(ax.px(b))
        img[ax.top:ax.top + ax.height, xa:max(xb, xa + 1)] = rgb
    step = nice_step(ymax)
    for yv in np.arange(0, ymax, step):
        yy = int(ax.py(yv))
        line(img, ax.left, yy, ax.left + ax.width - 1, yy, GREY)
        text(img, 4, yy - 5, f"{yv:g}")
    xstep = nice_step(ax.x1 - ax.x0)
    for xv in np.arange(np.ceil(ax.x0 / xstep) * xstep, ax.x1 + 1, xstep):
        xx = int(ax.px(xv))
        line(img, xx, ax.top + ax.height, xx, ax.top + ax.height + 4, BLACK)
        text(img, xx - 8, ax.top + ax.height + 8, f"S{int(xv)}")
    for i, (_label, s) in enumerate(p.series):
        _polyline(img, ax, p.x, s, PALETTE[i % len(PALETTE)])
    for yv, label, rgb in p.hlines:
        yy = int(ax.py(yv))
        line(img, ax.left, yy, ax.left + ax.width - 1, yy, rgb)
        text(img, ax.left + ax.width - 8 * (len(label) + 1), yy - 12, label, rgb)
    line(img, ax.left, ax.top, ax.left, ax.top + ax.height, BLACK)
    line(img, ax.left, ax.top + ax.height, ax.left + ax.width, ax.top + ax.height, BLACK)
    text(img, ax.left, 8, p.title, scale=3)
    x = ax.left
    for i, (label, _s) in enumerate(p.series):
        img[p.height - 22:p.height - 12, x:x + 10] = PALETTE[i % len(PALETTE)]
        x = text(img, x + 14, p.height - 22, label) + 16
    return img


def _polyline(img, ax: Axes, xs, ys, colour) -> None:
    """Per pixel column the min..max of the values falling in it, joined column to column (a
    curve of 10 000 points on 1 300 columns keeps its spikes)."""
    px = np.rint(ax.px(xs)).astype(int)
    vals = np.asarray(ys, float)
    cols = {}
    for c, v in zip(px, vals):
        lo, hi = cols.get(c, (v, v))
        cols[c] = (min(lo, v), max(hi, v))
    prev = None
    for c in sorted(cols):
        lo, hi = cols[c]
        line(img, c, ax.py(hi), c, ax.py(lo), colour, thick=2)
        if prev is not None:
            line(img, prev[0], ax.py(prev[1]), c, ax.py(hi), colour, thick=2)
        prev = (c, lo)


@dataclass
class BarChart:
    """Horizontal bars, one per label, in the given order."""
    title: str
    labels: list
    values: list
    note: list = field(default_factory=list)       # text after each bar (e.g. "12.3%")
    width: int = 1000
    bar: int = 18


def render_bar_chart(c: BarChart) -> np.ndarray:
    h = 50 + (c.bar + 6) * len(c.labels) + 20
    img = np.full((h, c.width, 3), 255, np.uint8)
    text(img, 10, 8, c.title, scale=3)
    left = 10 + 8 * max((len(s) for s in c.labels), default=4) + 10
    span = c.width - left - 160
    vmax = max(c.values) if c.values else 1.0
    for i, (lab, v) in enumerate(zip(c.labels, c.values)):
        y = 44 + i * (c.bar + 6)
        text(img, 10, y + c.bar // 2 - 5, lab)
        w = int(span * (v / vmax)) if vmax > 0 else 0
        img[y:y + c.bar, left:left + max(w, 1)] = PALETTE[0] if "E" not in lab[:1] else PALETTE[1]
        if i < len(c.note):
            text(img, left + w + 8, y + c.bar // 2 - 5, c.note[i])
    return img
