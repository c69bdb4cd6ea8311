"""A tune store as a Markdown table (docs/results): one row per variant -- its choices, verify's
verdict, ptxas' registers and spills, where it stopped, and the GPU figures when it was timed.

    python bench/tune_table.py build/tune/enc5-screen/tune.db > table.md
"""
from __future__ import annotations

import sys
from pathlib import Path


def main(db: str) -> None:
    from splice.tune.results import board
    from splice.tune.store import Store

    st = Store(Path(db))
    b = board(st, {})
    st.close()
    ctl = (b.get("original") or {}).get("resources") or {}
    print(f"store `{db}`: {', '.join(f'{n} {k}' for k, n in sorted(b['counts'].items()))}; arch {b['arch']}; "
          f"original: {ctl.get('registers')} registers, spills {ctl.get('spill_stores')}/{ctl.get('spill_loads')} "
          f"bytes, stack {ctl.get('stack')}")
    print()
    print("| # | choices | verify | registers | spill st/ld | stack | apply / verify / ptxas s "
          "| ratio [95 %] | rounds | state |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, v in enumerate(b["variants"], 1):
        sec = v["seconds"] or {}
        t = " / ".join(f"{sec[k]:.1f}" if k in sec else "-" for k in ("apply", "verify", "ptxas"))
        ratio = f"{v['ratio']:.4f} [{v['low']:.4f}, {v['high']:.4f}]" if v["ratio"] is not None else "-"
        spill = f"{v['spill_stores']}/{v['spill_loads']}" if v["spill_stores"] is not None else "-"
        choices = ", ".join(f"{k} {Path(str(c)).name if k.startswith('native') else c}"
                            for k, c in v["choices"].items())
        state = (v["dropped"] or v["state"]).split(";")[0]
        print(f"| {i} | {choices} | {v['verify'] or '-'} | {v['registers'] or '-'} | {spill} | "
              f"{v['stack'] if v['stack'] is not None else '-'} | {t} | {ratio} | {v['rounds']} | {state} |")


if __name__ == "__main__":
    main(sys.argv[1])
