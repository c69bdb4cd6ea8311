"""Summarise the perf recipes' results (docs/results/perf-enc5.md): `splice apply --json` (ptxas
figures) and `splice probe --json` (frames, timing, profile, Nsight Compute).

    python bench/perf_summary.py OUT/apply_enc5_stream.json OUT/enc5_stream.json …

Prints, per probe: frames identical, median/min frame ms of original and spliced and their
ratio (interleaved runs), and, when present, the profile (parts vs whole, overhead, top five
regions) and the Nsight Compute summaries side by side; then one table, last: per recipe the
ptxas registers and spill bytes, the frames, the ratio, and what ncu says about occupancy.
A file that is missing or unreadable (a step that ran out of time) is a row saying so.
"""
from __future__ import annotations

import json
import os
import sys


def _load(path: str):
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"


def _ms(t: dict, side: str, key: str):
    return ((t.get(side) or {}).get("events") or {}).get(key)


def details(path: str, r: dict) -> list:
    out = [f"== {path}: {r.get('target')}  identical={r.get('identical')} ok={r.get('ok')}"]
    t = r.get("timing")
    if t:
        o, s = t["original"]["events"], t["spliced"]["events"]
        out.append(f"  frame ms original median {o['median_ms']:.4f} min {o['min_ms']:.4f} | spliced median "
                   f"{s['median_ms']:.4f} min {s['min_ms']:.4f} | ratio {t.get('ratio', float('nan')):.4f} "
                   f"(min ratio {t.get('ratio_min', float('nan')):.4f}, runs {o['runs']})")
    for side, d in (r.get("profile") or {}).items():
        out.append(f"  profile {side}: whole {d['whole_median_cycles']} parts {d['parts_median_cycles']:.0f} "
                   f"off {d['parts_vs_whole']:.3f} agrees={d['agrees']} overhead {d['overhead']:+.3f} "
                   f"({d['frame_ms']:.3f} -> {d['instrumented_frame_ms']:.3f} ms) "
                   f"frame_equal_plain={d['frame_equal_plain']} top {d['top']}")
    n = r.get("ncu")
    if n:
        if n.get("error"):
            out.append(f"  ncu: {n['error'][:500]}")
        else:
            for k, v in n["original"]["summary"].items():
                out.append(f"  ncu {k}: {v} -> {n['spliced']['summary'].get(k)}")
            so = n["original"]["stalls"]
            for k in sorted(so, key=lambda x: -so[x])[:6]:
                out.append(f"  ncu stall {k}: {so[k]} -> {n['spliced']['stalls'].get(k)}")
            po = n["original"]["pipes"]
            for k in sorted(po, key=lambda x: -po[x])[:6]:
                out.append(f"  ncu pipe {k}: {po[k]} -> {n['spliced']['pipes'].get(k)}")
    return out


def _name(path: str) -> str:
    base = os.path.basename(path)[:-5] if path.endswith(".json") else os.path.basename(path)
    return base[len("apply_"):] if base.startswith("apply_") else base


def row(path: str, r, err) -> dict:
    """One table row: what a file says (apply: ptxas; probe: frames, ratio; --ncu: occupancy)."""
    d = {"name": _name(path)}
    if r is None:
        d["note"] = f"no result ({err})"
        return d
    if "ptxas" in r and "cuts" in r and "target" not in r:          # splice apply --json
        a, b = r["ptxas"].get("before", {}), r["ptxas"].get("after", {})
        d["ptxas"] = (f"{a.get('registers')}->{b.get('registers')} regs, "
                      f"spill {a.get('spill_stores')}->{b.get('spill_stores')} B")
        v = r.get("verify") or []
        d["verify"] = f"{sum(1 for c in v if c.get('verdict') == 'proved equal')}/{len(v)} proved equal"
        return d
    t = r.get("timing") or {}
    d["frames"] = "identical" if r.get("identical") else f"DIFFER (identical={r.get('identical')})"
    if t:
        d["ms"] = f"{_ms(t, 'original', 'median_ms'):.3f} -> {_ms(t, 'spliced', 'median_ms'):.3f}"
        d["ratio"] = f"{t.get('ratio', float('nan')):.3f} (min {t.get('ratio_min', float('nan')):.3f})"
    n = r.get("ncu") or {}
    if n and not n.get("error"):
        s, o = n["spliced"]["summary"], n["original"]["summary"]
        d["ncu"] = (f"regs {o.get('registers per thread')}->{s.get('registers per thread')}, blocks/SM "
                    f"{o.get('block limit (registers)')}->{s.get('block limit (registers)')}, theoretical "
                    f"{o.get('theoretical occupancy %')}->{s.get('theoretical occupancy %')} %, achieved "
                    f"{o.get('achieved occupancy %')}->{s.get('achieved occupancy %')} %, local "
                    f"{(o.get('local load requests') or 0) + (o.get('local store requests') or 0)}->"
                    f"{(s.get('local load requests') or 0) + (s.get('local store requests') or 0)} req")
    elif n.get("error"):
        d["ncu"] = "error: " + n["error"][:120]
    return d


def table(rows: list) -> list:
    merged: dict = {}
    for d in rows:
        key = d["name"][:-4] if d["name"].endswith("_ncu") else d["name"]
        m = merged.setdefault(key, {"name": key})
        for k, v in d.items():
            if k != "name" and v is not None:
                m[k] = m[k] + "; " + v if k == "note" and k in m else v
    cols = ["name", "ptxas", "verify", "frames", "ms", "ratio", "ncu", "note"]
    out = ["", "summary (ratio = spliced / original frame time, median of interleaved runs; ptxas sm_90 -O3)"]
    for m in merged.values():
        out.append("  " + " | ".join(f"{c}: {m[c]}" if c != "name" else m[c] for c in cols if c in m))
    return out


def main(paths: list) -> int:
    rows = []
    for p in paths:
        r, err = _load(p)
        try:                      # another probe version may shape its JSON otherwise: say so, go on
            if r is not None and "target" in r:
                print("\n".join(details(p, r)))
            rows.append(row(p, r, err))
        except (KeyError, TypeError, ValueError) as e:
            rows.append({"name": _name(p), "note": f"unexpected JSON ({type(e).__name__}: {e})"})
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
