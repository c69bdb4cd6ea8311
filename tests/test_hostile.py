"""Hostile inputs, kept as data: every case of ``tests/hostile/<subject>/*.yaml``, run here.

A case is what a hostile user hands splice -- a command line, the files of a fresh working
directory (text, bytes, a base text edited, a generated input), links, FIFOs, modes, the
environment -- and what splice must do about it: the exit status, the message (substrings, its
start, a pattern), what it prints, the files it leaves.  Every run also keeps the rules of
docs/hostile-inputs.md whatever the case says: no traceback, a message with every exit 2.
``tests/hostile/README.md`` lists the keys.  A case that needs Python logic (a FIFO no process
writes, threads, signals, cache entries damaged byte by byte) is a test of its subject instead:
tests/test_fifos.py, tests/test_signals.py, tests/test_compile_cache.py …
"""
from __future__ import annotations

import fnmatch
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from splice.cli import main

from .conftest import DATA, ROOT, TINY_SWAPPED

CASES = Path(__file__).parent / "hostile"
TINY = (DATA / "recipes" / "tiny.ptx").read_text()
BASES = {
    "tiny": TINY,
    "body": TINY_SWAPPED,                                       # tiny's phase 1, n-tiles swapped
    "native": "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED,
    **{p.stem: p.read_text() for p in (CASES / "base").glob("*")},     # recipe.yaml, spec.yaml …
}
RUNTIME = ("work", "tmp", "root", "data", "home")        # ${…} names known only when a case runs
_VAR = re.compile(r"(?<!\$)\$\{([^}]+)\}")     # ``$${`` is a ``${`` kept as written


# ---- cases: files of YAML, each case expanded over its rows ------------------------------------

def _get(env: dict, name: str):
    """``name`` in ``env``; ``a.b`` is the key b of the mapping a (a row's value of several parts),
    ``a.-1`` the last item of the list a."""
    if name in env:
        return env[name]
    head, _, key = name.partition(".")
    return env[head][int(key)] if isinstance(env[head], list) else env[head][key]


def _has(env: dict, name: str) -> bool:
    if name in env:
        return True
    head, _, key = name.partition(".")
    if isinstance(env.get(head), list):           # ``argv.-1``: an item of a list
        return bool(re.fullmatch(r"-?\d+", key)) and -len(env[head]) <= int(key) < len(env[head])
    return isinstance(env.get(head), dict) and key in env[head]


def _subst(obj, env: dict, keep_unknown: bool = True):
    """``obj`` with each ``${name}`` replaced from ``env``; a string that is one ``${name}`` of a
    non-string value becomes that value (a list of arguments, a number)."""
    if isinstance(obj, str):
        whole = _VAR.fullmatch(obj)
        if whole and _has(env, whole.group(1)) and not isinstance(_get(env, whole.group(1)), str):
            return _get(env, whole.group(1))

        def one(mt):
            name = mt.group(1)
            if _has(env, name):
                return str(_get(env, name))
            if keep_unknown:
                return mt.group(0)
            raise KeyError(f"no value for ${{{name}}}")
        text = _VAR.sub(one, obj)
        return text if keep_unknown else text.replace("$${", "${")
    if isinstance(obj, list):
        return [_subst(x, env, keep_unknown) for x in obj]
    if isinstance(obj, dict):
        return {_subst(k, env, keep_unknown): _subst(v, env, keep_unknown) for k, v in obj.items()}
    return obj


def _rows(case: dict) -> list:
    """(id, variables) of each run of ``case``: its ``each`` rows times its ``product`` axes."""
    common = case.get("vars") or {}             # variables of every row
    rows = [(str(r.get("id", i)), {**common, **{k: v for k, v in r.items() if k != "id"}})
            for i, r in enumerate(case.get("each") or [{"id": ""}])]
    for axis, values in (case.get("product") or {}).items():
        if isinstance(values, str):                  # "@wrong-values": a table of tests/hostile/base
            values = yaml.safe_load((CASES / "base" / (values[1:] + ".yaml")).read_text())
        pairs = values.items() if isinstance(values, dict) else [(_id_of(v), v) for v in values]
        rows = [("-".join(filter(None, (rid, vid))), {**row, axis: v}) for (rid, row), (vid, v)
                in itertools.product(rows, pairs)]
    return rows


def _id_of(value) -> str:
    text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if text.isprintable() and len(text) < 60 else ascii(text)[1:-1][:60]


def _merge(defaults: dict, case: dict) -> dict:
    out = dict(defaults)
    for k, v in case.items():
        out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _marks(case: dict) -> list:
    marks = [pytest.mark.needs(*case["needs"])] if case.get("needs") else []
    if case.get("slow"):                 # a table run command by command, each in its own child
        marks.append(pytest.mark.slow)
    if "skip_if" in case:
        root = os.geteuid() == 0
        why = {"root": (root, "root ignores file permissions"), "not-root": (not root, "needs root")}
        cond, reason = why[case["skip_if"]]
        marks.append(pytest.mark.skipif(cond, reason=reason))
    for path in case.get("skip_unless_exists", []):
        marks.append(pytest.mark.skipif(not os.path.exists(path), reason=f"no {path} here"))
    return marks


#: what a case may say (tests/hostile/README.md); a row (``each``) may give any of them too
KEYS = {"id", "about", "argv", "steps", "expect", "files", "dirs", "links", "hardlinks", "fifos", "modes", "env",
        "patch", "forbid", "no_cupy", "cwd", "run", "stdin", "stdout", "timeout", "needs", "slow", "skip_if",
        "skip_unless_exists", "each", "product", "vars"}


def case_files() -> list:
    """Every case file: tests/hostile/<subject>/*.yaml (``base/`` holds the texts cases edit)."""
    return sorted(f for f in CASES.glob("*/*.yaml") if f.parent.name != "base")


def load_cases() -> list:
    params, seen = [], set()
    for f in case_files():
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            case = _merge(doc.get("defaults", {}), case)
            text = json.dumps({k: v for k, v in case.items() if k not in ("each", "vars")}, ensure_ascii=False)
            clash = [k for _r, row in _rows(case) for k in row if k in KEYS and "${" + k in text]
            assert not clash, f"{f}: {case['id']}: a row's {clash[0]} is the case's own key, not a variable"
            for rid, variables in _rows(case):
                variables = _subst(variables, variables)      # a row's value may name a product's
                run = _subst({k: v for k, v in case.items() if k not in ("each", "product", "vars")}, variables)
                run = _merge(run, {k: v for k, v in variables.items() if k in KEYS})   # a row's own expect …
                cid = f"{f.parent.name}/{f.stem}/{case['id']}" + (f"[{rid}]" if rid else "")
                assert cid not in seen, f"two cases named {cid}"
                seen.add(cid)
                params.append(pytest.param(run, id=cid, marks=_marks(run)))
    return params


# ---- the working directory ----------------------------------------------------------------------

def _generate(spec: dict):
    """The inputs too large, too deep or too binary to write into a case."""
    kind, n = spec["generate"], spec.get("n", 0)
    made = {
        "binary": lambda: bytes(range(256)) * 8,
        "truncated": lambda: TINY[:n],
        "deep-braces": lambda: BASES["head"] + ".visible .entry k()\n{\n" + "{\n" * n + "ret;\n" + "}\n" * n + "}\n",
        "deep-parens": lambda: TINY.replace("[%rd6+512]", "[%rd6+" + "(" * n + "1" + ")" * n + "]"),
        "deep-initializer": lambda: BASES["head"] + ".global .b32 g[1] = " + "{" * n + "1" + "}" * n + ";\n",
        "alias-bomb": lambda: _alias_bomb(n),
        "recipe-with": lambda: _recipe_with(spec["key"], spec["value"]),
        "spec-with": lambda: "".join(f"{spec['key']} {spec['value']}\n" if ln.startswith(spec["key"]) else ln + "\n"
                                     for ln in BASES["spec-block"].splitlines()),
        "scratch-ranges": lambda: "// splice-native:\n//   scratch: {" + ", ".join(
            f"r{i}<65536>: .b32" for i in range(n)) + "}\n\n" + TINY_SWAPPED,
        "npy": lambda: _npy(spec["shape"], spec["dtype"]),
    }
    return made[kind]()


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "fields:\n  " + "\n  ".join(lines) + "\n"


def _recipe_with(key: str, value: str) -> str:
    """The valid recipe with ``key`` (top level or the cut's) set to the YAML text ``value``."""
    top = {"module": "tiny.ptx", "entry": "tiny", "output": "out.ptx"}
    cut = {"phase": "1", "native": "n.ptx"}
    (top if key in ("module", "entry", "output", "arch", "opt_level", "cuts", "description", "name")
     else cut)[key] = value
    text = "".join(f"{k}: {v}\n" for k, v in top.items() if k != "cuts")
    if key == "cuts":
        return text + f"cuts: {value}\n"
    return text + "cuts:\n  - " + "\n    ".join(f"{k}: {v}" for k, v in cut.items()) + "\n"


def _npy(shape, dtype) -> bytes:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.zeros(shape, dtype))
    return buf.getvalue()


def content(spec) -> bytes:
    """A file's bytes from its case entry: text, or a base text or generated input, edited."""
    if isinstance(spec, str):
        return spec.encode("utf-8", "surrogateescape")
    if "generate" in spec:
        made = _generate(spec)
    elif "copy" in spec:
        made = (ROOT / spec["copy"]).read_text()
    else:
        made = BASES[spec["base"]] if "base" in spec else spec.get("text", "")
    if isinstance(made, bytes):
        return made
    for edit in spec.get("replace", []):
        made = made.replace(edit[0], edit[1], *edit[2:])
    made = spec.get("prepend", "") + made + spec.get("append", "")
    if "pad" in spec:                          # [text, n]: text n times, then ``end``
        made += spec["pad"][0] * spec["pad"][1] + spec.get("end", "")
    return made.encode(spec.get("encoding", "utf-8"), "surrogateescape")


def build(case: dict, work: Path) -> None:
    """The case's files, directories, links, FIFOs and modes under ``work``."""
    for name in case.get("dirs", []):
        (work / name).mkdir(parents=True, exist_ok=True)
    for name, spec in (case.get("files") or {}).items():
        if spec is None:
            continue                                # a default file this case leaves out
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content(spec))
        if isinstance(spec, dict) and "mode" in spec:
            p.chmod(int(spec["mode"], 0))         # written 0o755
    for name, target in (case.get("links") or {}).items():
        os.symlink(target, work / name)
    for name, target in (case.get("hardlinks") or {}).items():
        os.link(work / target, work / name)
    for name in case.get("fifos", []):
        os.mkfifo(work / name)
    for name, mode in (case.get("modes") or {}).items():
        (work / name).chmod(int(mode, 0))


# ---- one run: in this process, or in a child with a memory limit and a timeout -----------------

CHILD = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
         "from splice.cli import main; sys.exit(main(sys.argv[1:]))")


def _flatten(argv) -> list:
    return [str(x) for a in argv for x in (_flatten(a) if isinstance(a, list) else [a])]


def _run_here(argv, cwd: Path, capsysbinary) -> tuple:
    capsysbinary.readouterr()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        rc = main(argv)
    except SystemExit as exc:                 # argparse's own usage errors: status 2 and a message
        rc = exc.code
    finally:
        os.chdir(here)
    out, err = capsysbinary.readouterr()
    return rc, out, err


def _run_child(argv, cwd: Path, case: dict) -> tuple:
    stdin = open(cwd / case["stdin"], "rb") if case.get("stdin") else subprocess.DEVNULL
    stdout = subprocess.DEVNULL if case.get("stdout") == "devnull" else subprocess.PIPE
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, *argv], cwd=cwd, env=dict(os.environ), stdin=stdin,
                              stdout=stdout, stderr=subprocess.PIPE, timeout=case.get("timeout", 60))
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
    return proc.returncode, proc.stdout or b"", proc.stderr


def _environment(case: dict, monkeypatch, env: dict) -> None:
    for name, value in (case.get("env") or {}).items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, _subst(str(value), env, keep_unknown=False))
    for target, value in (case.get("patch") or {}).items():
        module, attr = target.split(":")
        monkeypatch.setattr(importlib.import_module(module), attr, value, raising=False)
    for target in case.get("forbid", []):
        module, attr = target.split(":")

        def forbidden(*_a, _what=target, **_k):
            raise AssertionError(f"{_what} was called")
        monkeypatch.setattr(importlib.import_module(module), attr, forbidden)
    if case.get("no_cupy"):
        monkeypatch.setitem(sys.modules, "cupy", None)      # the probe's import of cupy fails


# ---- what a run must show ----------------------------------------------------------------------

UNPRINTABLE = set(map(chr, [*range(0, 9), *range(11, 32), *range(0x7f, 0xa0), 0x200b, 0x202e, 0x2028]))


def _list(x) -> list:
    return x if isinstance(x, list) else [x]


def _dig(doc, path: str):
    for part in path.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def _strict_json(raw: bytes, lines: bool) -> list:
    """The documents in ``raw`` as a strict parser reads them: UTF-8, no NaN/Infinity, no escape
    of a lone surrogate (serde_json and others refuse ``\\udce9``)."""
    def no_constant(name):
        raise AssertionError(f"{name} is not JSON")

    text = raw.decode("utf-8")
    docs = [json.loads(ln, parse_constant=no_constant) for ln in text.splitlines()] if lines else \
        [json.loads(text, parse_constant=no_constant)]
    assert not any("\ud800" <= ch <= "\udfff" for ch in json.dumps(docs, ensure_ascii=False)), docs
    return docs


def check_text(expect: dict, stream: str, text: str, raw: bytes) -> None:
    for s in _list(expect.get(f"{stream}_has", [])):
        assert s in text, (s, text[-2000:])
    for s in _list(expect.get(f"{stream}_lacks", [])):
        assert s not in text, (s, text[-2000:])
    if f"{stream}_starts" in expect:
        assert text.startswith(tuple(_list(expect[f"{stream}_starts"]))), text[-2000:]
    if f"{stream}_re" in expect:
        assert re.search(expect[f"{stream}_re"], text), (expect[f"{stream}_re"], text[-2000:])
    if f"{stream}_lacks_re" in expect:
        assert not re.search(expect[f"{stream}_lacks_re"], text), text[-2000:]
    for s, n in (expect.get(f"{stream}_count") or {}).items():
        assert text.count(s) == n, (s, text.count(s), n)
    if f"{stream}_empty" in expect:              # true: nothing printed; false: something
        assert (raw.strip() == b"") == expect[f"{stream}_empty"], raw[:400]
    words = " ".join(text.split())              # a table's cell wrapped at the console's width
    for s in _list(expect.get(f"{stream}_words_has", [])):
        assert s in words, (s, words[-2000:])


def check_output(expect: dict, out: bytes) -> None:
    if "json" in expect or "json_len" in expect or "json_strict" in expect:
        docs = _strict_json(out, lines=expect.get("json_strict") == "lines")
        for path, want in (expect.get("json") or {}).items():
            assert _dig(docs[0], path) == want, (path, _dig(docs[0], path), want)
        for path, n in (expect.get("json_len") or {}).items():
            assert len(_dig(docs[0], path)) == n, (path, _dig(docs[0], path))


def check_message(expect: dict, err: str) -> None:
    if expect.get("printable"):
        assert not (set(err) & UNPRINTABLE), repr(err[:400])
    if "caret_under" in expect:
        _head, shown, caret = err.splitlines()[:3]
        assert caret.index("^") == shown.index(expect["caret_under"]), (shown, caret)


def check_tree(expect: dict, work: Path, before: dict, after: dict) -> None:
    if expect.get("unchanged"):
        assert after == before, {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    if "outputs" in expect:                  # inputs as they were; only the named outputs are new
        changed = [k for k, v in before.items() if after.get(k) != v]
        assert not changed, f"inputs changed or removed: {changed}"
        new = [k for k in after if k not in before and not k.startswith(tuple(expect["outputs"]))]
        assert not new, f"left behind: {new}"
    for pattern in expect.get("absent", []):
        assert not fnmatch.filter(after, pattern), (pattern, fnmatch.filter(after, pattern))
    for name in expect.get("present", []):
        assert (work / name).exists(), name
    for name in expect.get("links", []):
        assert (work / name).is_symlink(), name
    for dev in expect.get("devices", []):                 # still the device, not a file put there
        assert not os.path.isfile(dev) and os.stat(dev).st_rdev != 0, dev
    for name, want in (expect.get("files") or {}).items():
        data = (work / name).read_bytes()
        text = data.decode("utf-8", "replace")
        for s in _list(want.get("has", [])):
            assert s in text, (name, s, text[:2000])
        for s, n in (want.get("count") or {}).items():
            assert text.count(s) == n, (name, s, text.count(s), n)
        if "starts" in want:
            assert text.startswith(want["starts"]), (name, text[:400])
        if want.get("ascii"):
            assert data.isascii() and b"\x1b" not in data, (name, data[:400])


def check(expect: dict, rc, out: bytes, err: bytes, work: Path, before: dict, after: dict) -> None:
    sout, serr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    assert "Traceback" not in sout + serr, serr[-3000:]
    want = expect.get("exit", 2)
    assert rc in _list(want), (rc, want, serr[-2000:])
    if rc == 2:
        assert serr.strip(), "status 2 without a message"
        for s in _list(expect.get("named", [])):        # where a run may also succeed: named on exit 2
            assert s in serr, (s, serr[-2000:])
    check_text(expect, "stderr", serr, err)
    check_text(expect, "stdout", sout, out)
    check_output(expect, out)
    check_message(expect, serr)
    check_tree(expect, work, before, after)


# ---- the test -----------------------------------------------------------------------------------

def tree_digest(work: Path) -> dict:
    """Every entry under ``work``: path -> sha256 of a regular file, or what else it is (a FIFO is
    never opened: that would wait for a writer).  Equal before and after: inputs as they were."""
    import hashlib
    import stat

    out = {}
    for dirpath, dirnames, filenames in os.walk(work):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            mode = p.lstat().st_mode
            rel = str(p.relative_to(work))
            if stat.S_ISLNK(mode):
                out[rel] = "link -> " + os.readlink(p)
            elif stat.S_ISREG(mode):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir" if stat.S_ISDIR(mode) else f"mode {stat.S_IFMT(mode):o}"
    return out


def _steps(case: dict) -> list:
    return case.get("steps") or [{"argv": case["argv"], "expect": case.get("expect", {})}]


@pytest.mark.parametrize("case", load_cases())
def test_hostile_input(case, tmp_path, monkeypatch, capsysbinary):
    work = tmp_path / "w"
    work.mkdir()
    env = {"work": str(work), "tmp": str(tmp_path), "root": str(ROOT), "data": str(DATA),
           "home": os.path.expanduser("~"), **{f"env:{k}": v for k, v in os.environ.items()}}
    case = _subst(case, env, keep_unknown=False)
    monkeypatch.setenv("SPLICE_CORPUS", str(work))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path / "probe-cache"))
    _environment(case, monkeypatch, env)
    build(case, work)
    try:
        for step in _steps(case):
            build(step, work)
            cwd = work / step.get("cwd", case.get("cwd", "."))
            before = tree_digest(work)
            t0 = time.monotonic()
            argv = _flatten(step["argv"])
            run = _run_child(argv, cwd, case) if case.get("run") == "child" else _run_here(argv, cwd, capsysbinary)
            after = tree_digest(work)
            check(step.get("expect", {}), *run, work, before, after)
            if "seconds_under" in step.get("expect", {}):
                assert time.monotonic() - t0 < step["expect"]["seconds_under"]
    finally:
        for name in case.get("modes") or {}:         # let pytest remove what the case locked
            (work / name).chmod(0o755)


def test_the_child_memory_limit_is_real():
    """The child runs' guard must be able to fail: 2 GiB of address space is enforced, so an
    unbounded read fails its case instead of the machine."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "b = bytearray(3 << 30)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode != 0 and b"MemoryError" in proc.stderr


def test_every_case_file_is_read():
    """A YAML file outside a subject folder, or a key the runner does not know, would be a case
    that silently tests nothing."""
    known = KEYS
    assert not list(CASES.glob("*.yaml")), "case files belong in a subject folder"
    for f in case_files():
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        assert set(doc) <= {"about", "defaults", "cases"}, (f, set(doc))
        for case in doc["cases"]:
            assert set(case) | set(doc.get("defaults", {})) <= known, (f, case.get("id"), set(case) - known)
