"""Summarise `splice probe --json` results of the perf recipes (docs/results/perf-enc5.md).

    python bench/perf_summary.py OUT/enc5_fence.json [OUT/other.json …]

Prints, per probe: frames identical, median/min frame ms of original and spliced and their
ratio (interleaved runs), and, when present, the profile (parts vs whole, overhead, top five
regions) and the Nsight Compute summaries side by side.
"""
from __future__ import annotations

import json
import sys


def summary(path: str) -> list:
    r = json.load(open(path))
    out = [f"== {path}: {r.get('target')}  identical={r.get('identical')} ok={r.get('ok')}"]
    t = r.get("timing")
    if t:
        o, s = t["original"]["events"], t["spliced"]["events"]
        out.append(f"  frame ms original median {o['median_ms']:.4f} min {o['min_ms']:.4f} | spliced median "
                   f"{s['median_ms']:.4f} min {s['min_ms']:.4f} | ratio {t['ratio']:.4f} "
                   f"(min ratio {t['ratio_min']:.4f}, runs {o['runs']})")
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


if __name__ == "__main__":
    for p in sys.argv[1:]:
        try:
            print("\n".join(summary(p)))
        except Exception as e:  # noqa: BLE001 - a truncated run still prints the others
            print(f"== {p}: unreadable ({type(e).__name__}: {e})")
