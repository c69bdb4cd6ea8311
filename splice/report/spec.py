"""Rendering of ``splice spec`` (rich tables).  The data comes from ``splice.analysis`` through the
command layer; this module only formats and prints."""
from __future__ import annotations

import sys

from . import console
from .console import Table, esc, make_console, more_entries


def print_spec(results, want_phases: bool, want_epilogues: bool, want_abi: bool, notes=None) -> None:
    """``results``: (entry name, spec dict) pairs; ``notes``: {entry name: a note on its tensor-core
    work in called functions} (the analysis words it: ``analysis.calls.describe``)."""
    # piped: do not truncate
    con = make_console(width=None if sys.stdout.isatty() else 200)
    for name, d in results[:console.MAX_ENTRIES]:
        _summary(con, name, d, (notes or {}).get(name, ""))
        if (want_phases or want_epilogues) and not d.get("phases"):
            _no_phases(con, d)
        else:
            if want_phases:
                _phase_table(con, d)
            if want_epilogues:
                _epilogue_table(con, d)
        if want_abi:
            _abi_table(con, d["abi"])
    more_entries(con, len(results), console.MAX_ENTRIES)


def _summary(con, name, d, note: str):
    img = d.get("weight_image_bytes") if d.get("weight_words") else None
    field = ""   # the weight-image words only from a profile whose rule holds (vocab.py)
    run = d.get("mma_executed")
    looped = any(p.get("loop") for p in d.get("phases", []))
    shown = d.get("display_name") or name
    con.print(f"[bold]{esc(shown)}[/bold]  {d['statements']} statements, "
              f"{len(d.get('phases', []))} phases, {d.get('mma_total', 0)} mma"
              + ((f" ({run} executed)" if run is not None else " (some per loop iteration)") if looped else "")
              + esc(field)
              + (f", weight image {img} bytes (W = {esc(d['weight_field'])})" if img else ""))
    if shown != name and "…" in shown:    # the headline's name is cut: the entry's own, whole
        con.print(f"  [dim]entry[/dim] {esc(name)}")
    if note:
        con.print(f"[yellow]note:[/yellow] {esc(note)}")


def _no_phases(con, d) -> None:
    """Two empty tables said nothing; an entry without tensor-core work of its own is still cut
    by statement range."""
    last = d.get("statements") or 1
    con.print(f"  no phases and no epilogues: the entry issues no mma, wmma or wgmma of its own. "
              f"Any statement range is still a cut: [bold]splice spec --abi s1-s{last}[/bold] gives its "
              "ABI, a recipe cuts it with [bold]statements: sA-sB[/bold].")


def _r(a, b):
    return f"s{a}–s{b}" if a != b else f"s{a}"


def _phase_table(con, d):
    """The phase table.  The stand-ins' columns always; ``form`` and ``loop`` only when an entry
    has a phase that is not a straight-line ``mma`` (so the stand-ins' tables read as before).
    An irregular phase shows no M/N/K: its tiles column says what it is."""
    phases = d["phases"]
    extra = any(p.get("form", "mma") != "mma" or p.get("loop") for p in phases)
    t = Table(title="phases", show_lines=False)
    words = _operand_words(d)
    cols = ["#", "range"] + (["form", "loop"] if extra else []) + [
        "M", "N", "K", "naive", "mma", "tiles", "grid"] + [h for h, _k in words] + ["B", "C", "epi"]
    for c in cols:
        t.add_column(c, justify="right" if c in ("#", "M", "N", "K", "mma", "epi") else "left")
    for p in phases:
        wb = p["weight_bytes"]
        bb = p["bias_bytes"]
        epi = p["epilogue"]
        naive = "×".join(map(str, p["naive_shape"]))
        shape = p["shape"] or ["–", "–", "–"]
        shape_changed = p["naive_shape"] != p["shape"]
        head = [str(p["index"]), _r(p["first"], p["last"])]
        if extra:
            head += [esc(_form(p)), _loop(p)]
        cells = {"weight_bytes": f"{wb[0]}..{wb[1]}" if wb else "–",
                 "bias_bytes": f"{bb[0]}..{bb[1]}" if bb else "–",
                 "slot_stride": str(p["slot_stride"] or "–")}
        t.add_row(*head, *map(str, shape),
                  f"[yellow]{naive}[/yellow]" if shape_changed else naive, _mma(p), _tiles(p),
                  esc(p["grid"]), *(cells[key] for _h, key in words),
                  esc(_src(p["b_source"], d)), esc(_src(p["c_source"], d)),
                  str(epi[1] - epi[0] + 1) if epi else "0")
    con.print(t)


def _operand_words(d) -> list:
    """(header, phase key) of the operand-load columns: the DLDN notes' weight bytes, bias bytes
    and slot where the profile's weight-image rule holds; else a column only where a phase has
    a value, named by what it is (bytes of B or C loaded off the field, a tid.z term)."""
    phases = d["phases"]
    if d.get("weight_words"):
        slot = "tid.z-slot" in d.get("vocabulary", ())
        return [("weight bytes", "weight_bytes"), ("bias bytes", "bias_bytes"),
                ("slot" if slot else "tid.z coef.", "slot_stride")]
    fld = esc(d.get("weight_field") or "?")
    out = []
    for head, key in ((f"B bytes ({fld})", "weight_bytes"), (f"C bytes ({fld})", "bias_bytes"),
                      ("tid.z coef.", "slot_stride")):
        if any(p.get(key) for p in phases):
            out.append((head, key))
    return out


def _src(src: str, d) -> str:
    """An operand source: ``W`` only where the weight-image words hold, else the field."""
    return d["weight_field"] if src == "W" and not d.get("weight_words") else src


def _form(p) -> str:
    ins = p.get("instr") or {}
    ty = ins.get("types") or {}
    txt = f"{p.get('form', 'mma')} {ins.get('shape') or ''} {ty.get('d', '')}.{ty.get('a', '')}"
    return txt.strip(" .")


def _loop(p) -> str:
    lp = p.get("loop")
    if not lp:
        return "–"
    trips = f"×{lp['trip_count']}" if lp.get("trip_count") else "×?"
    return f"s{lp['header']}–s{lp['latch']} {trips}" + (f" (depth {lp['depth']})" if lp["depth"] > 1 else "")


def _mma(p) -> str:
    """Static count; with a loop, the executions when the trip counts are static, else 'per
    iteration'."""
    if not p.get("loop"):
        return str(p["mma"])
    if p.get("mma_executed"):
        return f"{p['mma']} ({p['mma_executed']} run)"
    return f"{p['mma']} per iteration"


def _tiles(p) -> str:
    if p.get("regular", True):
        tiles = "×".join(map(str, p["tiles"]))
        return tiles + ("" if p["consistent"] else " [red]≠[/red]")
    prods = " + ".join(f"{n}×{k}" for k, n in p.get("products", {}).items())
    return (f"[red]irregular[/red]: {p.get('accumulators')} acc ({prods} products), "
            f"{p['distinct'][0]} A × {p['distinct'][1]} B")


def _epilogue_table(con, d):
    t = Table(title="epilogues")
    for c in ("E", "range", "stmts", "named operation", "sections", "top ops"):
        t.add_column(c)
    for e in d.get("epilogues", []):
        secs = "; ".join(f"{s['what']} {_r(s['first'], s['last'])} ×{s['count']}"
                         for s in e["sections"])
        top = ", ".join(f"{c} {nm}" for nm, c in list(e["histogram"].items())[:4])
        t.add_row(f"E{e['index']}", _r(e["first"], e["last"]), str(e["statements"]), esc(e["name"]),
                  esc(secs), esc(top))
    con.print(t)


def _abi_table(con, abi):
    for side in ("live_in", "live_out"):
        t = Table(title=f"cut ABI s{abi['first']}–s{abi['last']}: {side} ({len(abi[side])})")
        for c in ("role", "reg", "type", "value"):
            t.add_column(c)
        for r in abi[side]:
            t.add_row(f"{r['role']}{r['index']}", esc(r["reg"]), esc(r["type"]),
                      esc(abi["values"].get(r["reg"], "")) if side == "live_in" else "")
        con.print(t)
    for line in abi.get("carry", ()):       # condition-code state no register names
        con.print(f"[bold]not in the ABI:[/bold] {esc(line)}")
