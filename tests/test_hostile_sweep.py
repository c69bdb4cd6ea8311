"""A hostile user against every command: the invariants checked generically over cross products
(command x hostile input, writer x output target, recipe key x wrong type, probe-spec key x
wrong value), where tests/test_bad_inputs.py lists one reproducer per row.

Every run must: exit with a documented status (0/1/2/3 -- 1 and 3 only where the command
documents them), never let an exception out of ``main`` (a traceback), name the file at fault
when it exits 2, leave every input byte-identical and leave nothing behind but the outputs the
run was asked for (no temp file, no file named after a ``str()`` of a YAML null).  Each fix made
by this sweep has a case here that failed before it (see the ``regression:`` comments).
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from splice.cli import main

from .conftest import DATA, TINY_SWAPPED, tree_digest

TINY = (DATA / "recipes" / "tiny.ptx").read_text()
NATIVE = "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED
RECIPE = "module: tiny.ptx\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n"
BIG = "99999999999999999999"       # more than a C ssize_t




def sweep(argv, files, tmp_path, monkeypatch, capsysbinary, allowed=(0, 2), outputs=(), named=None, setup=None):
    """Run ``main(argv)`` in a fresh directory holding ``files`` and check the invariants;
    returns (status, stderr).  ``outputs``: the only new names the run may leave (prefixes)."""
    work = tmp_path / "w"
    work.mkdir()
    for name, content in files.items():
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogateescape"))
    monkeypatch.chdir(work)
    monkeypatch.setenv("SPLICE_CORPUS", str(work))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path / "probe-cache"))
    if setup:
        setup(work)
    before = tree_digest(work)
    try:
        rc = main(argv)
    except SystemExit as exc:     # argparse's own usage errors: status 2 and a message
        rc = exc.code
    out, err = (b.decode("utf-8", "replace") for b in capsysbinary.readouterr())   # bytes kept: not UTF-8
    monkeypatch.chdir(tmp_path)
    after = tree_digest(work)
    assert rc in allowed, (argv, rc, err[-1500:])
    assert "Traceback" not in out + err
    if rc == 2:
        assert err.strip(), "status 2 without a message"
        if named:
            assert named in err, err[-1500:]
    changed = [k for k, v in before.items() if after.get(k) != v]
    assert not changed, f"inputs changed or removed: {changed}"
    new = [k for k in after if k not in before and not any(k.startswith(o) for o in outputs)]
    assert not new, f"left behind: {new}"
    return rc, err


# ---- hostile modules x every command that reads a module -------------------------------------

def _truncations(n=6, seed=7):
    rnd = random.Random(seed)
    return {f"truncated-at-{i}": TINY[:i] for i in sorted(rnd.sample(range(1, len(TINY)), n))}


HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
MODULES = {
    "empty": "",
    "nul-byte": TINY.replace("ret;", "ret;\x00"),
    "binary": bytes(range(256)) * 8,
    "non-utf8-comment": TINY.encode().replace(b"// tiny:", b"// t\xe9\xff:"),
    "non-utf8-operand": TINY.encode().replace(b"%r10, 0;", b"%r10, 0\xff;"),
    "utf8-bom": "\ufeff" + TINY,
    "crlf": TINY.replace("\n", "\r\n"),
    "cr-only": TINY.replace("\n", "\r"),
    "1MB-comment-line": TINY + "// " + "x" * (1 << 20) + "\n",
    "huge-immediate": TINY.replace("mov.u32 \t%r10, 0;", f"mov.u32 \t%r10, {BIG}{BIG};"),
    "huge-register-range": TINY.replace("%r<40>", f"%r<{BIG}>"),
    "huge-offset": TINY.replace("[%rd6+512]", "[%rd6+0xffffffffffffffffffffffff]"),
    # regression: notes walked a [False] * size list over the declared size (OverflowError)
    "huge-param-array": TINY.replace(".param .u64 tiny_param_1", f".param .align 8 .b8 tiny_param_1[{BIG}]"),
    "huge-align": TINY.replace(".param .u64 tiny_param_1", f".param .align {BIG} .b8 tiny_param_1[8]"),
    "huge-version": TINY.replace(".version 8.7", f".version {BIG}.{BIG}"),
    "deep-braces": HEAD + ".visible .entry k()\n{\n" + "{\n" * 3000 + "ret;\n" + "}\n" * 3000 + "}\n",
    "deep-parens": TINY.replace("[%rd6+512]", "[%rd6+" + "(" * 2000 + "1" + ")" * 2000 + "]"),
    "deep-initializer": HEAD + ".global .b32 g[1] = " + "{" * 2000 + "1" + "}" * 2000 + ";\n",
    "only-header": HEAD,
    "lone-brace": "}\n",
    "unterminated-comment": TINY + "/* never closed\n",
    "unterminated-string": TINY.replace("ret;", '.pragma "abc\nret;'),
    **_truncations(),
}

# (id, argv, documented statuses): every command and flag that reads a module
READERS = [
    ("stats", ["stats", "m.ptx", "--json"], (0, 2)),
    ("stats-entry", ["stats", "m.ptx", "--entry", "tiny"], (0, 2)),
    ("index-range", ["index", "m.ptx", "--range", "s1-s5"], (0, 2)),
    ("canonical", ["canonical", "m.ptx", "-o", "o.ptx"], (0, 2)),
    ("spec", ["spec", "m.ptx", "--json"], (0, 2)),
    ("spec-abi", ["spec", "m.ptx", "--abi", "phase:1"], (0, 2)),
    ("spec-pressure", ["spec", "m.ptx", "--pressure", "--no-ptxas", "--png", "p.png"], (0, 2)),
    ("notes", ["notes", "m.ptx", "-o", "n.md"], (0, 2)),
    ("extract-epilogue", ["extract", "m.ptx", "--epilogue", "1", "--fused"], (0, 2)),
    ("extract-statements", ["extract", "m.ptx", "--statements", "s1-s3"], (0, 2)),
    ("roundtrip", ["roundtrip", "m.ptx", "--json"], (0, 1, 2)),
    ("probe-init", ["probe", "init", "m.ptx", "-o", "s.yaml"], (0, 2)),
]


@pytest.mark.parametrize("module", MODULES, ids=list(MODULES))
def test_hostile_module(module, tmp_path, monkeypatch, capsysbinary):
    """One module, every reader: run in one test so the sweep stays a few seconds."""
    for i, (_id, argv, allowed) in enumerate(READERS):
        sub = tmp_path / str(i)
        sub.mkdir()
        sweep(argv, {"m.ptx": MODULES[module]}, sub, monkeypatch, capsysbinary, allowed,
              outputs=("o.ptx", "n.md", "s.yaml", "p.png"), named="m.ptx")


# ---- -o and --png: never onto an input, never over what is not a regular file -------------------

WRITERS = {
    "canonical": ["canonical", "m.ptx", "-o"],
    "notes": ["notes", "m.ptx", "-o"],
    "extract": ["extract", "m.ptx", "--phase", "1", "-o"],
    "probe-init": ["probe", "init", "m.ptx", "-o"],
    # regression: --png was written with no inputs: `--png m.ptx` replaced the module by a PNG
    "pressure-png": ["spec", "m.ptx", "--pressure", "--no-ptxas", "--png"],
    "apply": ["apply", "r.yaml", "--no-ptxas", "-o"],
}


def _links(work: Path) -> None:
    os.symlink("m.ptx", work / "sym.ptx")
    os.link(work / "m.ptx", work / "hard.ptx")
    os.symlink("n.ptx", work / "sym-native.ptx")
    (work / "d").mkdir()


# (target, statuses): an input by any name is refused; a directory is refused; /dev/null is
# written through; an empty name is a usage error, not "no -o"
TARGETS = [("m.ptx", (2,)), ("./../w/m.ptx", (2,)), ("sym.ptx", (2,)), ("hard.ptx", (2,)), ("d", (2,)),
           ("d/", (2,)), (".", (2,)), ("/dev/null", (0,)), ("", (2,)), ("new/dir/out", (0,))]


@pytest.mark.parametrize("writer", WRITERS, ids=list(WRITERS))
def test_output_targets(writer, tmp_path, monkeypatch, capsysbinary):
    files = {"m.ptx": TINY, "tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE.replace("tiny.ptx", "m.ptx")}
    targets = TARGETS + ([("sym-native.ptx", (2,)), ("r.yaml", (2,))] if writer == "apply" else [])
    for i, (target, allowed) in enumerate(targets):
        sub = tmp_path / str(i)
        sub.mkdir()
        rc, err = sweep([*WRITERS[writer], target], files, sub, monkeypatch, capsysbinary, allowed,
                        outputs=("new",), setup=_links)
        if rc == 2 and target:
            assert target.rstrip("/") in err or os.path.normpath(target) in err, (target, err)


# ---- numbers and names on the command line -------------------------------------------------

ARGS = [
    ["index", "m.ptx", "--range", "s3-s1"],
    ["index", "m.ptx", "--range", "s-1"],
    ["index", "m.ptx", "--range", "s\u0661-s\u0663"],      # regression: Arabic-Indic digits were s1-s3
    ["index", "m.ptx", "--range", "s\uff11-s\uff13"],      # regression: full-width digits
    ["spec", "m.ptx", "--abi", "phase:\u0661"],             # regression: phase:١ was phase 1
    ["spec", "m.ptx", "--abi", f"s1-s{BIG}"],
    ["spec", "m.ptx", "--abi", f"phase:{BIG}"],
    ["spec", "m.ptx", "--abi", "s0-s3"],
    ["spec", "m.ptx", "--abi", "phase:-1"],
    ["extract", "m.ptx", "--phase", BIG],
    ["extract", "m.ptx", "--phase", "-1"],
    ["extract", "m.ptx", "--epilogue", BIG],
    ["extract", "m.ptx", "--statements", f"s{BIG}-s{BIG}"],
    ["extract", "m.ptx", "--statements", "s0-s1"],
    ["stats", "m.ptx", "--entry", "nope"],
    ["spec", "m.ptx", "--entry", "nope"],
    ["extract", "m.ptx", "--phase", "1", "--entry", "nope"],
    ["sass-mix", "m.ptx", "--entry", "nope"],
    ["probe", "init", "m.ptx", "--entry", "nope"],
    # regression: normalize_arch's ValueError reached the user as a traceback
    ["spec", "m.ptx", "--pressure", "--png", "none", "--arch", "sm_xx"],
    ["spec", "m.ptx", "--pressure", "--png", "none", "--arch", "sm_90 -v"],
    ["sass-mix", "m.ptx", "--arch", "sm_1"],
]


@pytest.mark.parametrize("argv", ARGS, ids=[" ".join(a) for a in ARGS])
def test_hostile_arguments_are_user_errors(argv, tmp_path, monkeypatch, capsysbinary):
    sweep(argv, {"m.ptx": TINY}, tmp_path, monkeypatch, capsysbinary, (2,), named="m.ptx")


@pytest.mark.parametrize("jobs", ["100000", BIG])
def test_jobs_is_bounded_before_any_fork(jobs, tmp_path, monkeypatch, capsysbinary):
    """regression: ``--jobs 100000`` forked 100000 workers (a fork bomb).  Forking is replaced
    by a failure here, so a lost bound fails this test instead of taking the machine down."""
    from splice.commands import roundtrip_split

    def no_fork(*_a, **_k):
        raise AssertionError("workers were forked for an unbounded --jobs")
    monkeypatch.setattr(roundtrip_split, "fork_workers", no_fork)
    _rc, err = sweep(["roundtrip", "m.ptx", "--jobs", jobs], {"m.ptx": TINY}, tmp_path, monkeypatch,
                     capsysbinary, (2,), named="m.ptx")
    assert "--jobs" in err


@pytest.mark.parametrize("rng", [f"s1-s{BIG}", f"s{BIG}-s{BIG}"])
def test_index_range_is_a_filter(rng, tmp_path, monkeypatch, capsysbinary):
    """``index --range`` selects the statements inside it (past the end: the rest, or none),
    where ``spec --abi`` and ``extract --statements`` need every statement to exist."""
    sweep(["index", "m.ptx", "--range", rng], {"m.ptx": TINY}, tmp_path, monkeypatch, capsysbinary, (0,))


EMPTY = [["stats", ""], ["index", "m.ptx", "--entry", ""], ["index", "m.ptx", "--range", ""],
         ["canonical", "m.ptx", "-o", ""], ["notes", "m.ptx", "--entry", ""], ["spec", "m.ptx", "--profile", ""],
         ["spec", "m.ptx", "--pressure", "--png", ""], ["extract", "m.ptx", "--statements", ""],
         ["probe", "init", "m.ptx", "-o", ""], ["roundtrip", "m.ptx", "--arch", " "], ["apply", ""]]


@pytest.mark.parametrize("argv", EMPTY, ids=[" ".join(a) for a in EMPTY])
def test_an_empty_value_is_refused_not_dropped(argv, tmp_path, monkeypatch, capsysbinary):
    """regression: ``-o ''`` printed to stdout, ``--entry ''`` took every entry, ``--range ''``
    every statement: an unset shell variable silently changed what the command did."""
    _rc, err = sweep(argv, {"m.ptx": TINY}, tmp_path, monkeypatch, capsysbinary, (2,))
    assert "empty value" in err


# ---- recipes: every key x a value of the wrong type --------------------------------------------

WRONG = {"null": "null", "list": "[a]", "map": "{a: 1}", "int": "5", "huge": BIG, "float": "1.5",
         "bool": "true", "empty": "''", "negative": "-1"}
TOP = ("module", "entry", "output", "arch", "opt_level", "cuts", "description", "name")
CUT = ("phase", "native", "abi", "threads", "sync", "expect", "params", "values", "title")


def _with(key: str, value: str) -> str:
    """The valid recipe with ``key`` (top level or the cut's) set to ``value``."""
    top = {"module": "tiny.ptx", "entry": "tiny", "output": "out.ptx"}
    cut = {"phase": "1", "native": "n.ptx"}
    (top if key in TOP else cut)[key] = value
    text = "".join(f"{k}: {v}\n" for k, v in top.items() if k != "cuts")
    if key == "cuts":
        return text + f"cuts: {value}\n"
    return text + "cuts:\n  - " + "\n    ".join(f"{k}: {v}" for k, v in cut.items()) + "\n"


@pytest.mark.parametrize("key", TOP + CUT)
def test_recipe_key_of_every_wrong_type(key, tmp_path, monkeypatch, capsysbinary):
    """regression: ``output: null`` (or 5, or [a]) wrote a file named ``None`` (``5``, ``['a']``)."""
    for kind, value in WRONG.items():     # apply plans, writes and verifies: every stage
        sub = tmp_path / kind
        sub.mkdir()
        files = {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": _with(key, value)}
        sweep(["apply", "r.yaml", "--no-ptxas"], files, sub, monkeypatch, capsysbinary, (0, 2),
              outputs=("out.ptx",), named="r.yaml")


@pytest.mark.parametrize("phases", [f"1-{BIG}", "1-99999999", "1-3/\u00b2", "1-70000,1-70000"])
def test_phase_ranges_are_bounded_before_they_are_expanded(phases, tmp_path, monkeypatch, capsysbinary):
    """regression: ``phases: 1-99999999999999999999`` was expanded into a list (OverflowError;
    a smaller bound would have eaten the memory first) and ``/²`` passed ``isdigit``."""
    files = {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE.replace("phase: 1", f"phases: '{phases}'")}
    _rc, err = sweep(["verify", "r.yaml"], files, tmp_path, monkeypatch, capsysbinary, (2,), named="r.yaml:5")


@pytest.mark.parametrize("corpus", ["missing", "file"])
def test_splice_corpus_that_is_not_a_directory(corpus, tmp_path, monkeypatch, capsysbinary):
    """regression: a SPLICE_CORPUS naming nothing, or a file, was skipped in silence (and the
    stand-in found instead)."""
    def setup(work):
        monkeypatch.setenv("SPLICE_CORPUS", str(work / ("gone" if corpus == "missing" else "tiny.ptx")))
    files = {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE}
    _rc, err = sweep(["apply", "r.yaml", "--no-ptxas"], files, tmp_path, monkeypatch, capsysbinary, (2,),
                     named="r.yaml", setup=setup)
    assert "SPLICE_CORPUS" in err


# ---- probe specs (probe init's output, edited badly): validated before any GPU is needed ---------

SPEC = """name: tiny
ptx: tiny.ptx
entry: tiny
seed: 1
launch:
  grid: [1, 1, 1]
  block: [32, 1, 1]
params:
- name: param_0
  kind: buffer
  dtype: f32
  shape: [1024]
  role: input
  fill: {rule: uniform, range: [-1.0, 1.0], seed: 1}
- name: param_1
  kind: buffer
  dtype: f32
  shape: [1024]
  role: output
frame: all
"""
SPEC_KEYS = ("name:", "ptx:", "entry:", "seed:", "  grid:", "  block:", "  kind:", "  dtype:", "  shape:",
             "  role:", "  fill:", "frame:")


@pytest.mark.parametrize("key", SPEC_KEYS, ids=[k.strip() for k in SPEC_KEYS])
def test_probe_spec_key_of_every_wrong_value(key, tmp_path, monkeypatch, capsysbinary):
    """Without cupy or a GPU every run ends in status 2; none may end in a traceback, and the
    spec is named.  regression: ``ptx: null`` (or a missing file) was opened as ``None`` and
    reported without the spec's name or line."""
    for kind, value in WRONG.items():
        sub = tmp_path / kind
        sub.mkdir()
        spec = "".join(f"{key} {value}\n" if ln.startswith(key) else ln + "\n" for ln in SPEC.splitlines())
        sweep(["probe", "spec.yaml", "tiny.ptx"], {"spec.yaml": spec, "tiny.ptx": TINY}, sub, monkeypatch,
              capsysbinary, (2,), named="spec.yaml")


def test_probe_spec_ptx_not_found_is_placed(tmp_path, monkeypatch, capsysbinary):
    spec = SPEC.replace("ptx: tiny.ptx", "ptx: gone.ptx")
    _rc, err = sweep(["probe", "spec.yaml", "tiny.ptx"], {"spec.yaml": spec, "tiny.ptx": TINY}, tmp_path,
                     monkeypatch, capsysbinary, (2,), named="spec.yaml:2:6")
    assert "gone.ptx" in err and "^" in err


def test_param_gaps_are_computed_from_the_reads_alone():
    from splice.analysis.notes_facts import _gaps

    assert _gaps(10 ** 30, [(0, 8)]) == [(8, 10 ** 30)]
    assert _gaps(16, [(4, 8), (-4, 2), (6, 6), (30, 40)]) == [(2, 4), (8, 16)]
    assert _gaps(0, []) == []
