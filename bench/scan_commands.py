"""Every splice command on PTX that splice has not seen: a table of (file, command) outcomes.

    python bench/scan_commands.py KERNEL.ptx ... [--arch sm_90a] [--json]

For each file and each of its entries: ``stats``, ``roundtrip --sass``, ``canonical``, ``index``,
``spec`` (``--json``, ``--phases``, ``--epilogues``, ``--pressure``, ``--abi phase:N`` and
``--abi s1-s5``), ``notes``, ``extract`` of every phase and epilogue, ``apply`` + ``verify`` +
``sass-mix`` of an identity recipe of phase 1 (its spliced module must compile to the original's
SASS), ``probe init`` and ``sass-mix`` of the module.  Each command runs as the CLI does (a
subprocess), so a traceback, a wrong exit status or a hang is seen as a user would see it.  An
outcome is ``ok``, ``refused`` (exit 2 with a message: the message is shown, to judge whether it
names what is unsupported), ``FAIL`` (any other status, a traceback, or a check below) or
``timeout``.  Checks beyond the exit status: ``roundtrip`` is byte-identical and SASS-equal; each
phase's tile is its opcode's shape and a regular phase's M/N/K is tile × tiles of one opcode; the identity
cut's SASS equals the original's.  docs/results/unseen-kernels.md records a run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TIMEOUT = 600


def splice(args, timeout=TIMEOUT):
    cmd = [sys.executable, "-c", "import sys; from splice.cli import console_main; sys.exit(console_main())"]
    try:
        p = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout, p.stderr


def outcome(res) -> str:
    rc, out, err = res
    if rc is None:
        return "timeout"
    if "Traceback" in err or "Traceback" in out:
        return "FAIL traceback: " + err.strip().splitlines()[-1][:160]
    if rc == 0:
        return "ok"
    first = (err.strip() or out.strip()).splitlines()[:1]
    return ("refused: " if rc == 2 else f"FAIL exit {rc}: ") + (first[0][:200] if first else "")


def phase_checks(phases) -> list:
    """Each phase's tile is its opcode's shape; a regular phase's shape is tile × tiles."""
    bad = []
    for p in phases:
        mt = re.search(r"\.m(\d+)n(\d+)k(\d+)\b", p["opcode"])
        tile = tuple(int(x) for x in mt.groups()) if mt else None
        if tile is None or tuple(p["tile"]) != tile:
            bad.append(f"phase {p['index']}: tile {p['tile']} but the opcode says {tile}")
        elif p["regular"] and tuple(p["shape"]) != tuple(t * n for t, n in zip(tile, p["tiles"])):
            bad.append(f"phase {p['index']}: shape {p['shape']} is not tile {tile} x tiles {p['tiles']}")
        elif p["regular"] and any(n.startswith("mixed opcodes") for n in p.get("notes", [])):
            bad.append(f"phase {p['index']}: regular with several tiles ({p['notes'][0]})")
    return bad


def _entry(path, e, arch, tmp, rec):
    tag = e[:24]
    res = splice(["spec", path, "--entry", e, "--json"])
    rec(f"spec --json [{tag}]", res)
    if res[0] != 0:
        return
    sp = json.loads(res[1])["entries"][0]
    phases, epis = sp.get("phases", []), sp.get("epilogues", [])
    bad = phase_checks(phases)
    rec(f"phase shapes [{tag}]", (0, "", "") if not bad else (1, "", "; ".join(bad)))
    rec(f"index [{tag}]", splice(["index", path, "--entry", e]))
    for flag in ("--phases", "--epilogues"):
        rec(f"spec {flag} [{tag}]", splice(["spec", path, "--entry", e, flag]))
    rec(f"spec --pressure [{tag}]", splice(["spec", path, "--entry", e, "--pressure", "--png", "none", "--json"]))
    for p in phases[:2]:
        rec(f"spec --abi phase:{p['index']} [{tag}]",
            splice(["spec", path, "--entry", e, "--abi", f"phase:{p['index']}"]))
    rec(f"spec --abi s1-s5 [{tag}]", splice(["spec", path, "--entry", e, "--abi", "s1-s5", "--json"]))
    rec(f"notes [{tag}]", splice(["notes", path, "--entry", e, "-o", str(tmp / "notes.md")]))
    for p in phases:
        rec(f"extract --phase {p['index']} [{tag}]",
            splice(["extract", path, "--entry", e, "--phase", str(p["index"]), "-o", str(tmp / f"p{p['index']}.ptx")]))
    for ep in epis:
        rec(f"extract --epilogue {ep['index']} [{tag}]",
            splice(["extract", path, "--entry", e, "--epilogue", str(ep["index"]), "-o", str(tmp / "e.ptx")]))
    if phases and (tmp / "p1.ptx").exists():
        _identity(path, e, arch, tmp, rec, tag)
    rec(f"probe init [{tag}]", splice(["probe", "init", path, "--entry", e, "-o", str(tmp / "probe.yaml")]))


def _identity(path, e, arch, tmp, rec, tag):
    from splice.ptx.sass import compile_ptx, normalized_sass

    r = tmp / "r.yaml"
    r.write_text(f"module: {os.path.abspath(path)}\nentry: '{e}'\n" + (f"arch: {arch}\n" if arch else "")
                 + f"output: {tmp / 'spliced.ptx'}\ncuts:\n  - phase: 1\n    native: p1.ptx\n")
    res = splice(["apply", str(r), "--json"])
    rec(f"apply phase 1 [{tag}]", res)
    rec(f"verify phase 1 [{tag}]", splice(["verify", str(r), "--json"]))
    rec(f"sass-mix recipe [{tag}]", splice(["sass-mix", str(r), "--json"]))
    if res[0] == 0:
        from splice.cut.recipe import _default_opt_level

        a = (json.loads(res[1]).get("ptxas") or {}).get("arch") or arch or "sm_90"
        opt = _default_opt_level(Path(path))
        try:
            same = (normalized_sass(compile_ptx(Path(path), a, opt).cubin)
                    == normalized_sass(compile_ptx(tmp / "spliced.ptx", a, opt).cubin))
            rec(f"identity SASS [{tag}]", (0 if same else 1, "", "" if same else "spliced SASS differs"))
        except Exception as exc:  # noqa: BLE001 - reported as the outcome
            rec(f"identity SASS [{tag}]", (1, "", f"{type(exc).__name__}: {exc}"))


def scan(path: str, arch) -> dict:
    res = {}

    def rec(cmd, r):
        res[cmd] = outcome(r)
        print(f"{Path(path).name:40s} {cmd:44s} {res[cmd]}", flush=True)

    r = splice(["stats", path, "--json"])
    rec("stats", r)
    entries = [f["name"] for f in json.loads(r[1]).get("functions", [])
               if f.get("kind") == ".entry" and f.get("statements")] if r[0] == 0 else []
    rec("roundtrip --sass", splice(["roundtrip", path, "--sass"] + (["--arch", arch] if arch else [])))
    rec("canonical", splice(["canonical", path]))
    rec("sass-mix module", splice(["sass-mix", path, "--json"]))
    with tempfile.TemporaryDirectory(prefix="splice-scan-") as td:
        for e in entries:
            _entry(path, e, arch, Path(td), rec)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--arch", help="ptxas arch (default: each module's own .target, at least sm_90)")
    ap.add_argument("--json", action="store_true", help="print {file: {command: outcome}} at the end")
    args = ap.parse_args(argv)
    table = {f: scan(f, args.arch) for f in args.files}
    bad = {f: {c: o for c, o in t.items() if o != "ok"} for f, t in table.items()}
    print("\nnot ok:" if any(bad.values()) else "\nevery command ok")
    for f, t in bad.items():
        for c, o in t.items():
            print(f"  {Path(f).name}: {c}: {o}")
    if args.json:
        json.dump(table, sys.stdout, indent=1)
        print()
    return 1 if any(o.startswith(("FAIL", "timeout")) for t in table.values() for o in t.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
