"""Every command x hostile inputs x hostile environments: the runs a user would see go wrong.

    python bench/hostile_inputs.py [ENV ...] [--timeout 90] [--keep DIR]

Builds, in a temporary directory, modules that are hostile by their shape (50000 kernels, a 10 MB
line, a 3000-deep ``.func`` call chain, ``.func`` recursion, CRLF, names that are not UTF-8, hold
terminal control or are NFC/NFD spellings) and recipes hostile by their YAML (alias bombs,
duplicate and merge keys, a 900 KB line, tabs), then runs each command on each as the CLI does
(a subprocess) under each environment (``plain``, ``COLUMNS=0``/``1``, ``LANG=C``, ``HOME``
unset, a read-only ``TMPDIR`` or cache, ``SPLICE_CORPUS`` a file or a symlink loop).  A run is a
problem when it prints a traceback, ends with a status other than 0/1/2/3 (or 1 where 1 means
nothing: only roundtrip, verify and probe report a difference with it), runs past the timeout,
prints nothing with status 0, or prints ``--json`` that a strict parser refuses (not UTF-8,
NaN/Infinity, an escaped lone surrogate).  Prints one line per problem and exits 1 when there is
one.  docs/hostile-inputs.md says what it found (2026-12-01).  Inputs that must be refused
(``EXPECT``: a function defined twice, a recipe number YAML 1.1 reads as octal, a module
name that several corpus files could be, an entry of 20000 parameters for ``probe init``): a run
of one of them that does not end with its status is a problem too (a silent wrong answer).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = ".version 8.7\n.target sm_90\n.address_size 64\n\n"
RECIPE = "module: tiny.ptx\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n"
SPEC = ("name: tiny\nptx: tiny.ptx\nentry: tiny\nlaunch:\n  grid: [1, 1, 1]\n  block: [32, 1, 1]\nparams:\n"
        "- {name: param_0, kind: buffer, dtype: f32, shape: [1024], role: input}\n"
        "- {name: param_1, kind: buffer, dtype: f32, shape: [1024], role: output}\n")
ENVS = {"plain": {}, "COLUMNS=0": {"COLUMNS": "0"}, "COLUMNS=1": {"COLUMNS": "1"},
        "LANG=C": {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
        "no-HOME": {"HOME": None, "XDG_CACHE_HOME": None, "SPLICE_CACHE": None},
        "TMPDIR-ro": {"TMPDIR": "{ro}"}, "cache-ro": {"SPLICE_CACHE": "{ro}/cache"},
        "CORPUS-file": {"SPLICE_CORPUS": "tiny.ptx"}, "CORPUS-loop": {"SPLICE_CORPUS": "loop/self/self"},
        "XDG-relative": {"XDG_CACHE_HOME": "rel", "SPLICE_CACHE": None},
        "PROBE_CACHE-empty": {"SPLICE_PROBE_CACHE": ""}, "COLUMNS=80": {"COLUMNS": "80"}}
#: inputs every command that looks an entry up (or reads the recipe) must refuse: (file, commands)
EXPECT = {"dup.ptx": ("spec", "notes", "extract", "index", "probe"),
          "dupfunc.ptx": ("spec", "notes", "extract", "probe"),
          "wide.ptx": ("probe",), "octal.yaml": ("apply", "verify"), "typo.yaml": ("apply", "verify")}
#: the commands whose status 1 means "a difference was found"
DIFFERENCE = ("verify", "roundtrip", "probe")


def modules(w: Path) -> dict:
    """{label: file name} of the hostile modules, written into ``w``."""
    tiny = (ROOT / "tests" / "data" / "recipes" / "tiny.ptx").read_text()
    n = 3000
    chain = "".join(f".func f{i}()\n{{\n\tcall f{i + 1};\n\tret;\n}}\n" for i in range(n, 0, -1))
    files = {
        "tiny.ptx": tiny,
        "crlf.ptx": tiny.replace("\n", "\r\n"),
        "chain.ptx": (HEAD + f".func f{n + 1}()\n{{\n\tret;\n}}\n" + chain
                      + ".visible .entry k()\n{\n\tcall f1;\n\tret;\n}\n"),
        "rec.ptx": HEAD + ".func f()\n{\n\tcall f;\n\tret;\n}\n.visible .entry k()\n{\n\tcall f;\n\tret;\n}\n",
        "many.ptx": HEAD + "".join(f".visible .entry k{i}()\n{{\n\tret;\n}}\n" for i in range(50000)),
        "long.ptx": HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<2>;" + " mov.b32 %r1, 1;" * 600000 + "\n\tret;\n}\n",
        "nfc\u00e9.ptx": tiny, "nfde\u0301.ptx": tiny, "a\x1b[2J.ptx": tiny, "-x.ptx": tiny,
        # names defined twice, 20000 parameters, a 250-character name (2026-12-01)
        "dup.ptx": HEAD + ".visible .entry k()\n{\n\tret;\n}\n.visible .entry k()\n{\n\tret;\n}\n",
        "dupfunc.ptx": (HEAD + ".func f()\n{\n\tret;\n}\n.func f()\n{\n\tret;\n}\n"
                        ".visible .entry k()\n{\n\tcall f;\n\tret;\n}\n"),
        "wide.ptx": (HEAD + ".visible .entry k(" + ", ".join(f".param .u64 p{i}" for i in range(20000))
                     + ")\n{\n\tret;\n}\n"),
        "longname.ptx": HEAD + ".visible .entry _Z" + "x" * 250 + "v()\n{\n\tret;\n}\n",
    }
    for name, text in files.items():
        (w / name).write_text(text, newline="")
    (w / os.fsdecode(b"caf\xe9.ptx")).write_text(tiny)
    (w / "cmt.ptx").write_bytes(tiny.replace("// tiny:", "// caf\xe9 tiny:").encode("latin-1"))
    (w / "loop").mkdir()
    os.symlink(".", w / "loop" / "self")
    return {name: name for name in [*files, os.fsdecode(b"caf\xe9.ptx"), "cmt.ptx", "loop"]}


def recipes(w: Path) -> list:
    """The hostile recipes' file names, written into ``w`` (with the native they name)."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import TINY_SWAPPED

    (w / "n.ptx").write_text("// n\n" + TINY_SWAPPED)
    (w / "spec.yaml").write_text(SPEC)
    bomb = "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9 if p else ['x'] * 9)}]\n"
                   for p, c in zip(["", "a", "b", "c", "d", "e", "f"], "abcdefg"))
    texts = {"r.yaml": RECIPE, "laughs.yaml": bomb + RECIPE, "dupkey.yaml": RECIPE + "module: tiny.ptx\n",
             "dupcut.yaml": RECIPE.replace("    native: n.ptx\n", "    native: n.ptx\n    native: n.ptx\n"),
             "merge.yaml": "b: &b {phase: 1, native: n.ptx}\nmodule: tiny.ptx\nentry: tiny\noutput: o2.ptx\n"
                           "cuts:\n  - <<: *b\n",
             "longline.yaml": RECIPE.replace("cuts:", "description: " + "x" * 900000 + "\ncuts:"),
             "tabs.yaml": RECIPE.replace("  - phase", "\t- phase"),
             # a YAML 1.1 octal, a module name several corpus files could be, a comment after a header (2026-12-01)
             "octal.yaml": RECIPE + "    abi: call-shared\n    threads: 0100\n",
             "typo.yaml": RECIPE.replace("module: tiny.ptx", "module: tinyy.ptx"),
             "comment.yaml": RECIPE.replace("n.ptx", "nc.ptx")}
    (w / "nc.ptx").write_text("// splice-native:\n//   scratch: {t: .b32}\n// a comment, not YAML\n" + TINY_SWAPPED)
    for name, text in texts.items():
        (w / name).write_text(text)
    return list(texts)


def commands(mods, recs) -> list:
    out = []
    for m in mods:
        for argv in (["stats", m], ["index", m], ["roundtrip", m], ["canonical", m], ["spec", m],
                     ["spec", m, "--phases", "--epilogues"], ["spec", m, "--pressure", "--no-ptxas", "--png", "none"],
                     ["notes", m], ["extract", m, "--phase", "1"], ["probe", "init", m]):
            out += [argv, [*argv, "--json"]]
    for r in recs:
        out += [["apply", r, "--no-ptxas", "-o", "ao.ptx"], ["apply", r, "--no-ptxas", "-o", "ao.ptx", "--json"],
                ["verify", r], ["verify", r, "--json"]]
    return out + [["probe", "r.yaml"], ["probe", "spec.yaml", "tiny.ptx", "--json"], ["index", "--", "-x.ptx"],
                  # an output on stdout beside the JSON document (was: one unreadable stream; 2026-12-01)
                  ["canonical", "tiny.ptx", "-o", "/dev/stdout", "--json"],
                  ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png", "/dev/fd/1", "--json"],
                  ["apply", "/dev/stdin", "--no-ptxas", "-o", "ao.ptx", "--json"]]


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _texts(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from _texts(v)
    elif isinstance(o, list):
        for v in o:
            yield from _texts(v)


def strict_json(out: bytes, lines: bool) -> None:
    """Raise ValueError unless ``out`` is what a strict parser takes (a pair of surrogate escapes
    is one character; a lone one is refused by serde_json and RFC 8259)."""
    text = out.decode("utf-8")
    for doc in text.splitlines() if lines else [text]:
        if any(_SURROGATE.search(t) for t in _texts(json.loads(doc, parse_constant=_no_constant))):
            raise ValueError("an escaped lone surrogate")


_SURROGATE = re.compile("[\ud800-\udfff]")


def judge(argv, rc, out: bytes, err: str):
    """The problem with one run, or None."""
    if rc is None:
        return "timeout"
    if "Traceback" in err:
        return "traceback"
    if rc not in (0, 1, 2, 3) or (rc == 1 and argv[0] not in DIFFERENCE):
        return f"exit {rc}"
    refused = next((f for f in EXPECT if f in argv and argv[0] in EXPECT[f]), None)
    if refused and rc != 2:
        return f"{refused} taken, exit {rc}"
    if "--json" in argv and rc != 2:
        try:
            strict_json(out, lines=argv[0] == "roundtrip")
        except ValueError as exc:
            return f"json: {exc}"[:100]
    if rc == 0 and not out and "-o" not in argv:
        return "status 0, nothing printed"
    return None


def environment(name: str, w: Path, ro: Path) -> dict:
    env = {**os.environ, "SPLICE_CORPUS": str(w), "SPLICE_CACHE": str(w / "cache")}
    for k, v in ENVS[name].items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v.format(ro=ro)
    return env


def run(argv, env, cwd, timeout):
    cmd = [sys.executable, "-c", "from splice.cli import console_main; console_main()", *argv]
    stdin = open(Path(cwd) / "r.yaml", "rb") if "/dev/stdin" in argv else subprocess.DEVNULL   # a recipe on stdin
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, timeout=timeout, stdin=stdin)
    except subprocess.TimeoutExpired:
        return None, b"", ""
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("envs", nargs="*", metavar="ENV", help=f"some of: {', '.join(ENVS)} (default: all)")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--keep", help="build the inputs here and keep them")
    ap.add_argument("--small", action="store_true",
                    help="leave out the two big modules (50000 kernels, a 10 MB line): an environment in minutes")
    a = ap.parse_args()
    for e in a.envs:
        if e not in ENVS:
            ap.error(f"no environment {e!r}: one of {', '.join(ENVS)}")
    a.envs = a.envs or list(ENVS)
    w = Path(a.keep or tempfile.mkdtemp(prefix="splice-hostile-"))
    w.mkdir(parents=True, exist_ok=True)
    ro = w / "ro"
    ro.mkdir(exist_ok=True)
    ro.chmod(0o555)
    mods = [m for m in modules(w) if not (a.small and m in ("many.ptx", "long.ptx"))]
    runs = commands(mods, recipes(w))
    problems = 0
    for name in a.envs:
        env = environment(name, w, ro)
        for argv in runs:
            t0 = time.monotonic()
            rc, out, err = run(argv, env, w, a.timeout)
            why = judge(argv, rc, out, err)
            if why:
                problems += 1
                last = (err.strip().splitlines() or [""])[-1][:200]
                took = time.monotonic() - t0
                print(f"{name:12s} {why:28s} {took:5.1f}s  splice {' '.join(map(ascii, argv))}  | {last}", flush=True)
    print(f"{len(runs) * len(a.envs)} runs, {problems} problem(s)")
    if not a.keep:
        ro.chmod(0o755)
        shutil.rmtree(w, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
