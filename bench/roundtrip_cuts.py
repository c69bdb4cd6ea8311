"""Identity round trip of the cut engine over every corpus: extract each phase (and each epilogue
as a ``statements:`` cut), apply it unchanged, compare ptxas' SASS with the original's.

    python bench/roundtrip_cuts.py                 # stand-ins, tests/data/ptx/modern, shared corpus
    python bench/roundtrip_cuts.py FILE.ptx ...    # just these
    python bench/roundtrip_cuts.py --no-epilogues --json

Prints per file the trials and a summary (phases tried, SASS-identical, failures by stage with
their reasons); docs/results/cut-roundtrip.md records a run.  Needs ptxas and cuobjdump or
nvdisasm (the ``sass`` extra); files ptxas rejects as they are are skipped with the reason.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _manifest() -> dict:
    import yaml

    p = ROOT / "tests" / "data" / "ptx" / "modern" / "manifest.yaml"
    data = yaml.safe_load(p.read_text())
    return {f["file"]: f for f in data["files"]}


def default_files(standins: bool = True) -> list:
    files = sorted((ROOT / "corpus").glob("*.ptx")) if standins else []
    files += sorted((ROOT / "tests" / "data" / "ptx").rglob("*.ptx"))
    shared = ROOT.parent / "shared" / "ptx-corpus"
    for cand in (shared, Path("/work/shared/ptx-corpus")):
        if cand.exists():
            files += sorted(cand.rglob("*.ptx"))
            break
    return files


def options(path: Path, manifest: dict):
    from splice.commands.roundtrip_check import ptxas_options

    m = manifest.get(path.name)
    if m is not None and path.parent.name == "modern":
        return m["arch"], m.get("opt_level", 3), tuple(m.get("ptxas_flags") or ())
    arch, opt = ptxas_options(path.read_text(errors="replace"))
    return arch, opt, ()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--no-epilogues", action="store_true")
    ap.add_argument("--no-phases", action="store_true")
    ap.add_argument("--limit", type=int, help="at most N phases and N epilogues per entry")
    ap.add_argument("--no-standins", action="store_true", help="leave corpus/*.ptx out of the default set")
    ap.add_argument("--timeout", type=float, help="seconds per ptxas run (default: splice.ptx.sass')")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from splice.cut.identity import run_module
    from splice.errors import SpliceError
    from splice.ptx.sass import SassToolError

    files = [Path(f) for f in args.files] or default_files(not args.no_standins)
    manifest = _manifest()
    trials, skipped = [], []
    t0 = time.perf_counter()
    for f in files:
        arch, opt, extra = options(f, manifest)
        try:
            got = run_module(str(f), arch, opt, extra, not args.no_epilogues, limit=args.limit,
                             phases=not args.no_phases, on_trial=None if args.json else _progress,
                             timeout=args.timeout)
        except (SassToolError, SpliceError, Exception) as e:  # noqa: BLE001 - reported per file
            skipped.append({"path": str(f), "reason": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"})
            continue
        trials += got
        if not args.json:
            c = Counter(t.stage for t in got)
            print(f"{f}: {len(got)} cuts " + " ".join(f"{k}={v}" for k, v in sorted(c.items())), flush=True)
    summary = _summary(trials, skipped, time.perf_counter() - t0)
    if args.json:
        json.dump({"summary": summary, "trials": [t.as_dict() for t in trials], "skipped": skipped},
                  sys.stdout, indent=1)
        print()
    else:
        _print(summary, skipped)
    return 0


def _progress(t) -> None:
    print(f"  {t.entry[:40]} {t.kind} {t.target} {t.statements}: {t.stage}"
          + (f" ({t.reason})" if t.reason else ""), flush=True)


def _summary(trials, skipped, seconds) -> dict:
    out = {"files_skipped": len(skipped), "seconds": round(seconds, 1)}
    for kind in ("phase", "epilogue"):
        ts = [t for t in trials if t.kind == kind]
        fails = [t for t in ts if not t.identical]
        reasons = Counter(f"{t.stage}: {_reason_class(t.reason)}" for t in fails)
        out[kind] = {"tried": len(ts), "sass_identical": sum(t.identical for t in ts),
                     "failed": len(fails), "reasons": dict(reasons.most_common()),
                     "examples": [f"{t.path}:{t.entry[:40]} {t.kind} {t.target} {t.statements}: "
                                  f"{t.stage}: {t.reason}" for t in fails[:8]]}
    return out


def _reason_class(reason) -> str:
    import re

    return re.sub(r"%\w+|s\d+|\d+", "N", reason or "")[:120]


def _print(s, skipped=()):
    print(f"\nfiles skipped (ptxas rejects the original, parse errors): {s['files_skipped']}; {s['seconds']} s")
    for sk in skipped:
        print(f"  skipped {sk['path']}: {sk['reason']}")
    for kind in ("phase", "epilogue"):
        d = s[kind]
        print(f"{kind}s: tried {d['tried']}, SASS-identical {d['sass_identical']}, failed {d['failed']}")
        for r, n in d["reasons"].items():
            print(f"  {n:5d}  {r}")
        for e in d["examples"]:
            print(f"    e.g. {e}")


if __name__ == "__main__":
    sys.exit(main())
