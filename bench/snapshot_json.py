"""Every command's ``--json`` over every bundled kernel, recipe and probe spec: a snapshot to
compare a refactoring against (the output must not change, bar the fields it names).

    python bench/snapshot_json.py take DIR [--only SUBSTRING]     # write DIR/<case>.json
    python bench/snapshot_json.py compare BEFORE AFTER [--ignore KEY ...]

Bundled inputs: every ``.ptx`` under ``corpus/`` and ``tests/data/ptx/`` (modules), every recipe
under ``recipes/`` and ``tests/data/recipes/`` (``recipes/perf/`` included), every probe spec under
``probes/`` and ``tests/data/probe/`` (probed against its own module).  Per module: ``stats``,
``index``, ``roundtrip``, ``canonical``, ``spec``; per entry: ``notes``, ``probe init``, ``spec
--abi`` of each phase, ``extract`` of each phase and epilogue.  Per recipe: ``apply`` (to a
temporary file), ``verify``, ``probe`` (without a GPU this records the checks that run before
it: the spec against the entry, exit 2 naming what is wrong or that cupy is missing).  Per probe
spec: ``probe SPEC MODULE``.  Each case records argv, exit status, stdout (parsed as JSON when it
is) and stderr.  Commands run in this process through ``splice.cli.main`` (one interpreter:
minutes instead of an hour of interpreter starts); ``take`` is deterministic, so two takes of
one tree compare identical (the volatile keys below are dropped by ``compare``).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: keys whose values change from run to run (wall times, temporary paths, cache hits)
VOLATILE = {"seconds", "timings_s", "ptxas_s", "elapsed", "elapsed_s", "cached", "time_s", "wall_s",
            "parse_s", "analysis_s", "total_s"}


def _run(argv: list) -> dict:
    from splice.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:        # argparse usage errors
            rc = exc.code if isinstance(exc.code, int) else 2
        except Exception as exc:  # noqa: BLE001 - a traceback is an outcome to record
            if type(exc).__name__ == "Terminated":      # splice's SIGTERM: the snapshot is being stopped
                raise
            rc, err = "traceback", io.StringIO(f"{type(exc).__name__}: {exc}")
    text = out.getvalue()
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = text
    return {"argv": argv, "rc": rc, "stdout": body, "stderr": err.getvalue()}


def modules() -> list:
    out = sorted(str(p.relative_to(ROOT)) for d in ("corpus", "tests/data/ptx") for p in (ROOT / d).rglob("*.ptx"))
    return out


def recipes() -> list:
    return sorted(str(p.relative_to(ROOT)) for d in ("recipes", "tests/data/recipes")
                  for p in (ROOT / d).rglob("*.yaml"))


def specs() -> list:
    return sorted(str(p.relative_to(ROOT)) for d in ("probes", "tests/data/probe") for p in (ROOT / d).glob("*.yaml"))


def _entries(path: str) -> list:
    r = _run(["stats", path, "--json"])
    if r["rc"] != 0 or not isinstance(r["stdout"], dict):
        return []
    return [f["name"] for f in r["stdout"].get("functions", []) if f.get("kind") == ".entry"]


def cases(only: str = "", sections=("modules", "recipes", "specs")) -> list:
    """(case name, argv, a module path whose entries give more cases, or a spec) in a fixed order."""
    out = []
    tmp = tempfile.mkdtemp(prefix="splice-snapshot-")
    for path in modules() if "modules" in sections else ():
        if only and only not in path:
            continue
        for cmd in (["stats"], ["index"], ["roundtrip"], ["canonical"], ["spec"]):
            out.append((f"{cmd[0]}:{path}", cmd + [path, "--json"]))
        out.append((f"entries:{path}", path))
    for path in recipes() if "recipes" in sections else ():
        if only and only not in path:
            continue
        out.append((f"apply:{path}", ["apply", path, "--json", "--no-ptxas", "-o", f"{tmp}/{Path(path).stem}.ptx"]))
        out.append((f"verify:{path}", ["verify", path, "--json"]))
        out.append((f"probe:{path}", ["probe", path, "--json", "--report-dir", f"{tmp}/r"]))
    for path in specs() if "specs" in sections else ():
        if only and only not in path:
            continue
        out.append((f"probe-spec:{path}", ("spec", path)))
    return out


def _spec_module(path: str) -> str:
    """The module a spec names (looked for next to it, above it, in the repository): probed
    against itself."""
    import yaml

    try:
        ptx = str(yaml.safe_load(Path(path).read_text()).get("ptx"))
    except Exception:  # noqa: BLE001 - a spec that does not load: its own error is the case
        return "corpus/enc5.ptx"
    for base in (Path(path).parent, Path(path).parent.parent, Path(".")):
        if (base / ptx).is_file():
            return str(base / ptx)
    return ptx


def _entry_cases(path: str) -> list:
    out = []
    for e in _entries(path):
        tag = f"{path}[{e}]"
        out.append((f"notes:{tag}", ["notes", path, "--entry", e, "--json"]))
        out.append((f"probe-init:{tag}", ["probe", "init", path, "--entry", e, "--json"]))
        sp = _run(["spec", path, "--entry", e, "--json"])
        body = sp["stdout"] if isinstance(sp["stdout"], dict) else {}
        ent = (body.get("entries") or [{}])[0]
        for ph in ent.get("phases", []):
            out.append((f"abi-phase{ph['index']}:{tag}", ["spec", path, "--entry", e, "--abi", f"phase:{ph['index']}",
                                                         "--json"]))
            out.append((f"extract-phase{ph['index']}:{tag}", ["extract", path, "--entry", e, "--phase",
                                                             str(ph["index"]), "--json"]))
        for ep in ent.get("epilogues", []):
            out.append((f"extract-epi{ep['index']}:{tag}", ["extract", path, "--entry", e, "--epilogue",
                                                           str(ep["index"]), "--json"]))
    return out


def take(dest: Path, only: str = "", sections=("modules", "recipes", "specs")) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)
    os.environ.setdefault("SPLICE_PROBE_CACHE", tempfile.mkdtemp(prefix="splice-snapshot-probe-"))
    todo = cases(only, sections)
    n = 0
    t0 = time.perf_counter()
    while todo:
        name, what = todo.pop(0)
        if isinstance(what, str):
            todo[0:0] = _entry_cases(what)
            continue
        if isinstance(what, tuple):
            what = ["probe", what[1], _spec_module(what[1]), "--json", "--report-dir",
                    tempfile.mkdtemp(prefix="splice-snapshot-r-")]
        res = _run(what)
        tag = hashlib.sha1(name.encode()).hexdigest()[:10]
        fname = re.sub(r"[^A-Za-z0-9_.\-\[\]]+", "_", name)[:150] + f"-{tag}.json"
        (dest / fname).write_text(json.dumps({"case": name, **res}, indent=1, sort_keys=True) + "\n")
        n += 1
        if n % 100 == 0:
            print(f"{n} cases, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{n} cases in {time.perf_counter() - t0:.0f} s -> {dest}", file=sys.stderr)


def _clean(o, ignore: set):
    if isinstance(o, dict):
        return {k: _clean(v, ignore) for k, v in o.items() if k not in ignore}
    if isinstance(o, list):
        return [_clean(v, ignore) for v in o]
    if isinstance(o, str):
        return re.sub(r"/tmp/splice-snapshot[-\w]*", "<tmp>", o)
    return o


def compare(before: Path, after: Path, ignore: set) -> int:
    a = {p.name for p in before.glob("*.json")}
    b = {p.name for p in after.glob("*.json")}
    bad = 0
    for name in sorted(a ^ b):
        print(f"only in {'before' if name in a else 'after'}: {name}")
        bad += 1
    same = 0
    for name in sorted(a & b):
        x = _clean(json.loads((before / name).read_text()), ignore)
        y = _clean(json.loads((after / name).read_text()), ignore)
        if x == y:
            same += 1
            continue
        bad += 1
        keys = [k for k in ("rc", "stdout", "stderr") if x.get(k) != y.get(k)]
        print(f"DIFFERS {name}: {', '.join(keys)}")
    print(f"{same} identical, {bad} different or missing, of {len(a | b)} cases "
          f"(ignored keys: {', '.join(sorted(ignore))})")
    return 0 if bad == 0 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("take")
    t.add_argument("dest")
    t.add_argument("--only", default="", help="only inputs whose path holds this")
    t.add_argument("--sections", default="modules,recipes,specs", help="which inputs (comma-separated)")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--ignore", nargs="*", default=[])
    args = ap.parse_args()
    if args.cmd == "take":
        take(Path(args.dest).resolve(), args.only, tuple(args.sections.split(",")))
        return 0
    return compare(Path(args.before), Path(args.after), VOLATILE | set(args.ignore))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
