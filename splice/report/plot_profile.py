"""Rendering of ``splice probe --profile`` and ``--ncu``: bar chart PNG and rich tables."""
from __future__ import annotations

from .console import esc
from .plot import BarChart, render_bar_chart


def profile_png(d: dict, path, side: str) -> str:
    """Median cycles per region, in statement order, as a bar chart."""
    from ..util import write_atomic
    from .png import encode

    rows = [r for r in d["regions"] if r["median_cycles"] is not None]
    chart = BarChart(title=f"{side}: MEDIAN CYCLES PER WARP AND REGION "
                           f"(SUM {d['parts_median_cycles']:.0f}, WHOLE {d['whole_median_cycles'] or 0:.0f})",
                     labels=[r["region"] for r in rows],
                     values=[r["median_cycles"] for r in rows],
                     note=[f"{r['median_cycles']:.0f} {100 * (r['share'] or 0):.1f}%" for r in rows])
    write_atomic(str(path), encode(render_bar_chart(chart)))
    return str(path)


def print_perf(res: dict, con) -> None:
    """The --profile and --ncu parts of a probe result (nothing when neither was asked for)."""
    if res.get("profile"):
        print_profile(res["profile"], con)
    if res.get("ncu"):
        print_ncu(res["ncu"], con)


def print_profile(prof: dict, con) -> None:
    from .console import Table

    o, s = prof.get("original", {}), prof.get("spliced", {})
    for side, d in (("original", o), ("spliced", s)):
        if not d:
            continue
        con.print(f"[bold]profile {side}[/bold]: whole {d['whole_median_cycles']:.0f} cycles/warp "
                  f"(median), parts sum {d['parts_median_cycles']:.0f} "
                  f"({100 * d['parts_vs_whole']:.1f}% off, tolerance {100 * d['tolerance']:.0f}%: "
                  f"{'ok' if d['agrees'] else 'DISAGREE'}); instrumentation overhead "
                  f"{100 * d['overhead']:+.1f}%{_interval_pct(d.get('overhead_interval'))} "
                  f"({d['frame_ms']:.3f} -> {d['instrumented_frame_ms']:.3f} ms)"
                  f"; top: {esc(', '.join(d['top']))}")
    t = Table(title="median cycles per warp and region (statement order)")
    for c in ("region", "statements", "original", "share", "spliced", "share", "ratio"):
        t.add_column(c, justify="left" if c in ("region", "statements") else "right")
    srows = {r["region"]: r for r in s.get("regions", [])}
    for r in o.get("regions", []):
        q = srows.get(r["region"], {})
        a, b = r["median_cycles"], q.get("median_cycles")
        t.add_row(esc(r["region"]), f"s{r['first']}-s{r['last']}", _f(a), _pct(r.get("share")),
                  _f(b), _pct(q.get("share")), f"{b / a:.2f}" if a and b else "")
    con.print(t)


def _interval_pct(iv) -> str:
    return f" [{100 * iv[0]:+.1f}%, {100 * iv[1]:+.1f}%]" if iv else ""


def print_ncu(n: dict, con) -> None:
    from .console import Table

    if n.get("error"):
        con.print(f"[yellow]ncu[/yellow]: {esc(n['error'])}")
        return
    t = Table(title="Nsight Compute (one launch each)")
    for c in ("metric", "original", "spliced"):
        t.add_column(c, justify="left" if c == "metric" else "right")
    o, s = n["original"]["summary"], n["spliced"]["summary"]
    for key in o:
        t.add_row(key, _v(o.get(key)), _v(s.get(key)))
    con.print(t)
    for what in ("stalls", "pipes"):
        tt = Table(title=f"ncu {what} (top 8 of the original)")
        for c in ("name", "original", "spliced"):
            tt.add_column(c, justify="left" if c == "name" else "right")
        so, ss = n["original"][what], n["spliced"][what]
        for k in sorted(so, key=lambda x: -so[x])[:8]:
            tt.add_row(k, _v(so[k]), _v(ss.get(k)))
        con.print(tt)


def _f(x):
    return "" if x is None else f"{x:.0f}"


def _pct(x):
    return "" if x is None else f"{100 * x:.1f}%"


def _v(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:,.2f}"
    return f"{x:,}" if isinstance(x, int) else str(x)
