"""Rendering of ``splice probe``'s result: progress UI and the rich summary."""
from __future__ import annotations

from .console import esc


class RichUI:
    def __init__(self, progress):
        self.p = progress

    def task(self, name: str, total: int):
        tid = self.p.add_task(esc(name), total=total)   # shown through "[bold]{task.description}"

        def step(n: int = 1):
            self.p.advance(tid, n)
        return step

    def note(self, text: str):
        self.p.console.print(esc(text))


def _ms(x):
    return "-" if x is None else f"{x:.4f}"


def _g(x):
    return "-" if x is None else (x if isinstance(x, str) else f"{x:.4g}")


def print_report(res: dict, con) -> None:
    ok = res["ok"]
    con.print(f"[bold]splice probe[/] {esc(res['target'])}: {esc(res['original'])} vs {esc(res['spliced'])} "
              f"[dim]({esc(res['entry'])}, {esc(res['arch'])})[/]")
    for c in res["cuts"]:
        func = f" ({c['function']})" if c.get("function") else ""
        con.print(f"  cut {c['cut']}: {esc(c['title'])} abi {esc(c['abi'])}{esc(func)}")
    _print_outputs(res, con)
    _print_stages(res, con)
    _print_harness(res, con)
    _print_timing(res, con)
    _print_roofline(res, con)
    con.print(f"report: {esc(res.get('report_dir'))}  [dim]({res['timings_s']['total']:.1f} s)[/]")
    con.print("[bold green]OK[/]" if ok else "[bold red]DIFFERENCE FOUND[/]")


def _print_outputs(res: dict, con) -> None:
    from .console import Table

    fr, cmp = res["frames"], res["compare"]
    con.print(f"[dim]cubins built for {esc(res.get('build_arch'))}; frame = {esc(', '.join(cmp.get('frame', [])))}[/]")
    t = Table(title="outputs (poisoned, launched, read back)")
    for col in ("module", "frame sha256", "deterministic", "uncovered", "non-finite", "outputs uncovered"):
        t.add_column(col)
    for n in ("original", "spliced"):
        f = fr[n]
        t.add_row(n, f["sha256"][0][:16] + "…", "yes" if f["deterministic"] else "[red]NO[/]",
                  str(f["uncovered"]), str(f["nonfinite"]),
                  esc(", ".join(f"{k} {v['uncovered']}/{v['elements']}" for k, v in f["outputs"].items()) or "-"))
    con.print(t)
    if cmp["identical"]:
        con.print("[bold green]outputs bit-identical[/]: "
                  + esc(", ".join(f"{k} ({v['dtype']}, {v['bytes']} bytes)" for k, v in cmp["outputs"].items())))
    else:
        t = Table(title="differences (original vs spliced)")
        for col in ("output", "dtype", "differ", "first", "values", "max ULP", "max |Δ|", "max rel", "ULP histogram"):
            t.add_column(col)
        for k, v in cmp["outputs"].items():
            if v["identical"]:
                t.add_row(esc(k), esc(v["dtype"]), "[green]identical[/]", "", "", "", "", "", "")
                continue
            fv = v.get("first_values", {})
            first = v.get("first_xy") or v["first_index"]
            t.add_row(esc(k), esc(v["dtype"]), f"{v['elements_differ']}/{v['elements']}", esc(first),
                      esc(f"{fv.get('original')} vs {fv.get('spliced')}"), str(v.get("max_ulp")),
                      _g(v.get("max_abs_err")), _g(v.get("max_rel_err")), esc(v.get("ulp_histogram") or ""))
        con.print(t)
        for k, v in cmp["outputs"].items():
            if v.get("heatmap"):
                con.print(f"  heatmap {esc(k)}: {esc(v['heatmap'])}")


def _print_stages(res: dict, con) -> None:
    from .console import Table

    st = res.get("stages")
    if st:
        t = Table(title=f"debug stages ({len(st['stages'])}; 1 block in {st['stride']}, "
                        f"{st['sampled_blocks']} blocks x {st['threads']} threads)")
        for col in ("stage", "name", "values differ", "slots differ", "first (block, wave, lane, reg)"):
            t.add_column(col)
        rows = st["rows"]
        fd = st["first_divergence"]
        shown = ([r for r in rows if not r["equal"]][:12] if fd else []) or rows[-3:]
        for r in shown:
            f = r.get("first")
            t.add_row(str(r["stage"]), esc(r["name"]), f"{r.get('values_differ', 0)}/{r.get('values', 0)}",
                      f"{r.get('slots_differ', 0)}/{r.get('slots', 0)}",
                      esc(f"{f['block']}, {f['wave']}, {f['lane']}, {f['register']} "
                          f"({f['original']} vs {f['spliced']})")
                      if f else "-")
        con.print(t)
        if fd and fd["stage"] == "memory":
            con.print(f"[bold red]first divergence[/]: {esc(fd['name'])} (outputs "
                      f"{esc(', '.join(fd['first']['outputs']))}: {esc(fd['first']['why'])})")
        elif fd:
            con.print(f"[bold red]first diverging stage[/]: {esc(fd['name'])} (stage {fd['stage']})")
        else:
            con.print(f"[green]all {len(rows)} stages equal[/]")
        for n in st.get("notes", []):
            con.print(f"  [yellow]note[/]: {esc(n)}")


def _print_harness(res: dict, con) -> None:
    from .console import Table

    h = res.get("harness")
    if h:
        t = Table(title=f"phase harness ({h['threads']} threads, random live-ins)")
        for col in ("cut", "title", "result", "live-outs differ", "memory", "first"):
            t.add_column(col)
        for r in h["rows"]:
            if r.get("skipped"):
                t.add_row(str(r["cut"]), esc(r["title"]), "[yellow]skipped[/]", "-", "-", esc(r["skipped"]))
                continue
            t.add_row(str(r["cut"]), esc(r["title"]), "[green]equal[/]" if r["equal"] else "[red]DIFFERS[/]",
                      f"{r['live_outs_differ']}/{r['live_outs']} ({r['threads_differ']}/{r['threads']} threads"
                      + (f" × {r['launches']} launches)" if r.get("launches") else ")"),
                      _memory_cell(r.get("memory")), _first_cell(r.get("first")))
        con.print(t)


def _memory_cell(mem) -> str:
    """A bound case's fields that the cut wrote or where the sides differ; "-" for a plain case."""
    if mem is None:
        return "-"
    parts = []
    for name, m in mem.items():
        if m["bytes_written"] or m["bytes_differ"]:
            verdict = "same" if m["identical"] else f"[red]{m['bytes_differ']} B differ[/]"
            parts.append(f"{esc(name)}: {m['bytes_written']} B written, {verdict}")
    return "; ".join(parts) or "nothing written"


def _first_cell(f) -> str:
    if not f:
        return "-"
    if "output" in f:
        return esc(f"{f['output']} at {f['index']}: {f['original']} vs {f['spliced']}")
    at = f"launch {f['launch']} thread {f['thread']}" if "launch" in f else f"thread {f['thread']}"
    return esc(f"{f['register']} ({f['role']}{f['index']}) {at}: {f['original']} vs {f['spliced']}")


def timing_record(tm: dict) -> dict:
    """The probe's ``timing`` (modules at its top level, next to the ratios) as the timing
    module's record (modules under ``modules``), for the renderers in report/timing.py."""
    return {**tm, "modules": {n: tm[n] for n in tm["names"]}}


def _print_timing(res: dict, con) -> None:
    from .timing import print_timing

    tm = res.get("timing")
    if tm:
        fr = tm.get("resolution")
        where = f" at {fr[0]}x{fr[1]}" if fr and all(fr) else ""
        print_timing(timing_record(tm), con,
                     title=f"frame time ({tm.get('launches_per_frame', 1)} launch(es) per frame{where})")
        v = tm["verdict"]
        con.print(f"spliced/original: [bold]{tm['ratio']:.4f}[/] [{tm['interval'][0]:.4f}, {tm['interval'][1]:.4f}]"
                  f" -> {v}" + (" (inside the A/A band)" if v == "indistinguishable" else ""))
        if tm.get("control_frame_equal") is False:
            con.print("[yellow]note[/]: the control's frame differs from the original's (a nondeterministic kernel?)")


def _print_roofline(res: dict, con) -> None:

    rf = res.get("roofline")
    if rf and "error" not in rf:
        d = rf["device"]
        shape = d["mma"]["op"].split(".")[3]
        con.print(f"roofline ({esc(d['device'])}): ceilings {d['mma']['tflops']:.0f} TFLOP/s ({shape} "
                  f"fp8 mma.sync), copy {d['copy']['bytes_per_s'] / 1e9:.0f} GB/s")
        for n in ("original", "spliced"):
            o = rf[n]
            w = o["work"]
            fl = "-" if o.get("tflops") is None else f"{o['tflops']:.2f} TFLOP/s"
            con.print(f"  {n}: {fl}, {o['gbps']:.1f} GB/s; floor {o['floor_ms']:.4f} ms ({o['bound']}), "
                      f"{o['of_floor']:.2f}x floor  [dim]flops: {esc(w.get('flops_source'))}, "
                      f"bytes: {esc(w['bytes_source'])}[/]"
                      if o.get("of_floor") else f"  {n}: {fl}, {o['gbps']:.1f} GB/s")
            if w.get("note"):
                con.print(f"  [yellow]note[/]: {esc(w['note'])}")
    elif rf:
        con.print(f"[yellow]roofline: {esc(rf['error'])}[/]")
