"""A second hostile user: classes of failure tests/test_hostile_sweep.py and test_bad_inputs.py
do not reach.  Each class names the fix it guards (``regression:``); every case failed before it.

* inputs that are not files: devices (``/dev/zero``, ``/dev/urandom``: an unbounded read), a
  FIFO nobody writes (a hang), an endless pipe, a file over the input bound, a FIFO in a corpus
  directory the recipe's module is searched in -- bounded reads, ``splice.util.read_input``;
* outputs that are file descriptors: ``-o /dev/stdout >> log`` replaced the log file it was
  appended to (``splice.util._descriptor``);
* terminal control in error messages: the quoted source line carried ESC sequences and bidi
  overrides to the user's terminal (``splice.errors.printable``);
* profiles (``spec --profile``, ``$SPLICE_PROFILES``): read with plain ``yaml.safe_load``, no
  schema, a missing directory skipped in silence (``splice.analysis.vocab.load_profile``).

Runs that could hang or eat memory when a fix regresses run in a subprocess under a memory
limit and a timeout, so a regression fails the test instead of the machine.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from splice.cli import main

from .conftest import DATA, TINY_SWAPPED, tree_digest

ROOT = DATA.parents[1]
TINY = (DATA / "recipes" / "tiny.ptx").read_text()
NATIVE = "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED
RECIPE = "module: tiny.ptx\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n"


def _files(work: Path, files: dict) -> None:
    for name, content in files.items():
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogateescape"))


def run_cli(argv, work: Path, env=None, timeout=60, stdout=subprocess.PIPE, pass_fds=()):
    """``splice ARGV`` in a child with 2 GiB of address space and a timeout: an unbounded read
    ends in a MemoryError and a hang in TimeoutExpired, both test failures, not a dead runner."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "from splice.cli import main; sys.exit(main(sys.argv[1:]))")
    full = {**os.environ, "SPLICE_CORPUS": str(work), **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=work, env=full, timeout=timeout,
                          stdout=stdout, stderr=subprocess.PIPE, pass_fds=pass_fds)


def check_refused(proc, named: str, says: str = "") -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "Traceback" not in err and "MemoryError" not in err
    assert named in err, err[-2000:]
    if says:
        assert says in err, err[-2000:]
    return err


# ---- inputs that are not files ---------------------------------------------------------------

# every command and every input slot a user names: module, recipe, native file, probe spec, profile
SLOTS = {
    "stats": lambda x: ["stats", x],
    "index": lambda x: ["index", x],
    "canonical": lambda x: ["canonical", x, "-o", "o.ptx"],
    "spec": lambda x: ["spec", x],
    "spec-pressure": lambda x: ["spec", x, "--pressure", "--no-ptxas", "--png", "none"],
    "notes": lambda x: ["notes", x, "-o", "n.md"],
    "extract": lambda x: ["extract", x, "--phase", "1"],
    "roundtrip": lambda x: ["roundtrip", x],
    "sass-mix": lambda x: ["sass-mix", x],
    "apply": lambda x: ["apply", x, "--no-ptxas"],
    "verify": lambda x: ["verify", x],
    "probe-init": lambda x: ["probe", "init", x, "-o", "s.yaml"],
    "probe-spec": lambda x: ["probe", x, "tiny.ptx"],
    "probe-module": lambda x: ["probe", "spec.yaml", x],
    "spec-profile": lambda x: ["spec", "tiny.ptx", "--profile", x],
}
SPEC = ("name: tiny\nptx: tiny.ptx\nentry: tiny\nlaunch:\n  grid: [1, 1, 1]\n  block: [32, 1, 1]\nparams:\n"
        "- {name: param_0, kind: buffer, dtype: f32, shape: [1024], role: input}\n"
        "- {name: param_1, kind: buffer, dtype: f32, shape: [1024], role: output}\n")


DEVICE_CASES = [(slot, "/dev/zero") for slot in SLOTS] + [("stats", "/dev/urandom"), ("apply", "/dev/urandom")]


@pytest.mark.parametrize("slot, device", DEVICE_CASES, ids=[f"{s}-{d}" for s, d in DEVICE_CASES])
def test_a_device_is_not_an_input(slot, device, tmp_path):
    """regression: every reader did ``fh.read()`` of the whole file: ``splice stats /dev/zero``
    read until the memory ran out and ended in a MemoryError traceback (exit 1)."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "spec.yaml": SPEC})
    before = tree_digest(tmp_path)
    proc = run_cli(SLOTS[slot](device), tmp_path)
    if slot == "probe-module":       # no cupy here: the spec's own check comes first, or the device
        assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    else:
        check_refused(proc, device, "character device")
    assert tree_digest(tmp_path) == before


def test_recipe_native_that_is_a_device(tmp_path):
    _files(tmp_path, {"tiny.ptx": TINY, "r.yaml": RECIPE.replace("n.ptx", "/dev/zero")})
    check_refused(run_cli(["apply", "r.yaml", "--no-ptxas"], tmp_path), "/dev/zero", "character device")
    assert not (tmp_path / "out.ptx").exists()


class Watchdog:
    """Opens ``fifo`` for writing (which ends a reader's blocking open) if the test is still
    running after ``after`` seconds: a regression fails the test instead of hanging it."""

    def __init__(self, fifo: Path, after: float = 30.0, flags: int = os.O_WRONLY | os.O_NONBLOCK):
        self.done, self.fired = threading.Event(), False
        self.fifo, self.after, self.flags = fifo, after, flags
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        if not self.done.wait(self.after):
            self.fired = True
            for _ in range(100):       # keep releasing: the command may open it more than once
                try:
                    os.close(os.open(self.fifo, self.flags))
                except OSError:
                    pass
                if self.done.wait(0.1):
                    break

    def stop(self) -> bool:
        self.done.set()
        self.thread.join()
        return self.fired


@pytest.mark.parametrize("slot", ["stats", "spec", "roundtrip", "apply", "verify", "probe-spec", "spec-profile",
                                  "probe-module"])
def test_a_fifo_nobody_writes_is_refused_not_a_hang(slot, tmp_path, monkeypatch, capsys):
    """regression: ``splice stats pipe`` (a FIFO no process writes) blocked in open() for ever;
    then (the same fix's first try) the error message re-opened the file to quote its line and
    blocked there.  Now the FIFO is waited for ``FIFO_WAIT_S`` and refused, naming it."""
    from splice import util

    monkeypatch.setattr(util, "FIFO_WAIT_S", 0.2)
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "spec.yaml": SPEC})
    os.mkfifo(tmp_path / "pipe")
    monkeypatch.chdir(tmp_path)
    dog = Watchdog(tmp_path / "pipe")
    try:
        rc = main(SLOTS[slot]("pipe"))
    finally:
        fired = dog.stop()
    err = capsys.readouterr().err
    assert not fired, "the command blocked on the FIFO"
    if slot == "probe-module":      # without cupy the probe stops before it reads the module
        assert rc == 2 and "Traceback" not in err
        return
    assert rc == 2 and err.strip().startswith("pipe: a FIFO that no process writes"), (rc, err[-1500:])


def test_a_fifo_with_a_writer_is_read_like_a_file(tmp_path, capsys):
    """``splice stats <(gen)`` keeps working: a pipe with a writer is read to its end."""
    fifo = tmp_path / "pipe.ptx"
    os.mkfifo(fifo)
    (tmp_path / "tiny.ptx").write_text(TINY)
    writer = threading.Thread(target=lambda: fifo.write_text(TINY), daemon=True)
    writer.start()
    assert main(["stats", str(fifo), "--json"]) == 0
    via_fifo = capsys.readouterr().out
    writer.join(timeout=30)
    assert main(["stats", str(tmp_path / "tiny.ptx"), "--json"]) == 0
    assert capsys.readouterr().out.replace(str(tmp_path / "tiny.ptx"), str(fifo)) == via_fifo


def test_an_endless_pipe_is_cut_at_the_input_bound(tmp_path, monkeypatch, capsys):
    """regression: ``yes | splice stats /dev/stdin`` read until the memory ran out."""
    from splice import util

    monkeypatch.setattr(util, "MAX_INPUT_BYTES", 1 << 20)
    fifo = tmp_path / "endless.ptx"
    os.mkfifo(fifo)

    def endless():
        try:
            with open(fifo, "wb") as fh:
                while True:
                    fh.write(b"// " + b"y" * 65536 + b"\n")
        except (BrokenPipeError, OSError):
            pass          # the reader stopped at the bound: what a bounded read must do
    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    assert main(["stats", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{fifo}: more than the {1 << 20} bytes"), err
    writer.join(timeout=30)
    assert not writer.is_alive()


@pytest.mark.parametrize("argv", [["stats", "m.ptx"], ["apply", "r.yaml", "--no-ptxas"],
                                  ["spec", "tiny.ptx", "--profile", "p.yaml"]])
def test_a_file_over_the_bound_is_refused_before_it_is_read(argv, tmp_path, monkeypatch, capsys):
    from splice import util

    monkeypatch.setattr(util, "MAX_INPUT_BYTES", 4096)
    _files(tmp_path, {"m.ptx": TINY + "// " + "x" * 8192 + "\n", "tiny.ptx": TINY, "n.ptx": NATIVE,
                      "r.yaml": RECIPE.replace("n.ptx", "big.ptx"), "big.ptx": NATIVE + "//" + "x" * 8192 + "\n",
                      "p.yaml": "entries: ['*']\n#" + "x" * (2 << 20) + "\n"})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    named = {"stats": "m.ptx", "apply": "big.ptx", "spec": "p.yaml"}[argv[0]]
    assert err.startswith(named + ": ") and "bytes an input may hold" in err, err
    assert tree_digest(tmp_path) == before


def test_a_fifo_in_the_corpus_directory_does_not_hang_the_module_search(tmp_path):
    """regression: a module named by entry was searched by reading every *.ptx of the corpus
    directory, a FIFO too: ``apply`` blocked for ever on a FIFO it was never asked to read."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    os.mkfifo(corpus / "a-fifo.ptx")
    (corpus / "z-layer.ptx").write_text(TINY)
    _files(tmp_path, {"n.ptx": NATIVE, "r.yaml": RECIPE.replace("module: tiny.ptx", "module: layer.ptx")})
    proc = run_cli(["apply", "r.yaml", "--no-ptxas", "--json"], tmp_path, env={"SPLICE_CORPUS": str(corpus)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out.ptx").read_text().startswith("//")


# ---- outputs that are this process's file descriptors ---------------------------------------

WRITERS = {"canonical": ["canonical", "tiny.ptx", "-o"], "notes": ["notes", "tiny.ptx", "-o"],
           "extract": ["extract", "tiny.ptx", "--phase", "1", "-o"], "apply": ["apply", "r.yaml", "--no-ptxas", "-o"],
           "probe-init": ["probe", "init", "tiny.ptx", "-o"]}
STDOUT_CASES = ([(w, "/dev/stdout") for w in WRITERS]
                + [("canonical", s) for s in ("/proc/self/fd/1", "/dev/fd/1", "link-to-stdout")])


@pytest.mark.parametrize("writer, spelling", STDOUT_CASES, ids=[f"{w}-{s}" for w, s in STDOUT_CASES])
def test_output_to_stdout_appends_to_the_redirection(writer, spelling, tmp_path):
    """regression: ``splice canonical m.ptx -o /dev/stdout >> log`` resolved /dev/stdout to
    ``log`` and replaced it atomically: the log's earlier lines were gone."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    os.symlink("/dev/stdout", tmp_path / "link-to-stdout")
    log = tmp_path / "log.txt"
    log.write_text("precious line\n")
    with open(log, "ab") as fh:
        proc = run_cli([*WRITERS[writer], spelling], tmp_path, stdout=fh)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = log.read_text()
    assert text.startswith("precious line\n") and len(text) > 200, text[:300]


def test_output_to_an_open_descriptor_and_a_closed_one(tmp_path):
    _files(tmp_path, {"tiny.ptx": TINY})
    log = tmp_path / "fd.txt"
    log.write_text("kept\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        proc = run_cli(["canonical", "tiny.ptx", "-o", f"/dev/fd/{fd}"], tmp_path, pass_fds=(fd,))
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().startswith("kept\n.version 8.7\n")
    err = check_refused(run_cli(["canonical", "tiny.ptx", "-o", "/dev/fd/57"], tmp_path), "/dev/fd/57")
    assert "cannot write the output" in err


def test_stdout_redirected_onto_the_input_is_still_refused(tmp_path):
    _files(tmp_path, {"tiny.ptx": TINY})
    with open(tmp_path / "tiny.ptx", "ab") as fh:
        proc = run_cli(["canonical", "tiny.ptx", "-o", "/dev/stdout"], tmp_path, stdout=fh)
    check_refused(proc, "/dev/stdout", "refusing to write the output onto an input")
    assert (tmp_path / "tiny.ptx").read_text() == TINY


# ---- terminal control characters in error messages -----------------------------------------

HOSTILE_CHARS = {"esc-title": "\x1b]0;pwned\x07", "csi-clear": "\x1b[2J", "c1-csi": "\x9b2J",
                 "bidi-override": "\u202e", "nul": "\x00", "backspace": "\x08\x08\x08",
                 "line-separator": "\u2028", "zero-width": "\u200b"}
UNPRINTABLE = set(map(chr, [*range(0, 9), *range(11, 32), *range(0x7f, 0xa0), 0x200b, 0x202e, 0x2028]))


@pytest.mark.parametrize("chars", HOSTILE_CHARS, ids=list(HOSTILE_CHARS))
@pytest.mark.parametrize("cmd", [["stats"], ["spec"], ["canonical"], ["extract", "--phase", "1"]])
def test_error_lines_carry_no_terminal_control(cmd, chars, tmp_path, monkeypatch, capsys):
    """regression: the caret display printed the offending source line raw: an ESC sequence in a
    module retitled or cleared the user's terminal when the module failed to parse."""
    bad = TINY.replace("\tret;", "\tret; " + HOSTILE_CHARS[chars] + " x")
    _files(tmp_path, {"m.ptx": bad})
    monkeypatch.chdir(tmp_path)
    assert main([cmd[0], "m.ptx", *cmd[1:]]) == 2
    err = capsys.readouterr().err
    assert not (set(err) & UNPRINTABLE), repr(err[:400])
    head, shown, caret = err.splitlines()[:3]
    assert head.startswith("m.ptx:42:7: ")
    assert caret.index("^") == shown.index("\ufffd")          # the caret still under the character


def test_a_recipe_path_with_escapes_is_shown_escaped(tmp_path, monkeypatch, capsys):
    _files(tmp_path, {"tiny.ptx": TINY, "r.yaml": RECIPE.replace("native: n.ptx", 'native: "\\e[2Jn.ptx"')})
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "n.ptx" in err, repr(err)


# ---- profiles ---------------------------------------------------------------------------------

def _bomb(levels=9):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "fields:\n  " + "\n  ".join(lines) + "\n"


BAD_PROFILES = {   # regression (each): traceback, silent str() of a list, or an unnamed file
    "entries-int": ("entries: 5\n", (1, 10)),                  # TypeError: 'int' object is not iterable
    "entries-list-of-ints": ("entries: [1]\n", (1, 10)),       # matched nothing, in silence
    "fields-value-list": ("entries: ['*']\nfields: {param_0+0: [a]}\n", (2, 21)),   # named "['a']"
    "fields-value-binary": ("entries: ['*']\nfields: {param_0+0: !!binary aGk=}\n", (2, 21)),
    "fields-not-a-mapping": ("entries: ['*']\nfields: [a]\n", (2, 9)),
    "unknown-key": ("entries: ['*']\nfeilds: {}\n", (2, 1)),
    "not-utf8": (b"entries: ['caf\xe9']\n", (1, 15)),           # "input is not text", no file named
    "alias-bomb": (_bomb(), ()),
    "python-tag": ("entries: !!python/object/apply:os.system [true]\n", (1, 10)),
    "scalar": ("just a string\n", (1,)),
    "empty": ("", (1,)),
}


@pytest.mark.parametrize("name", BAD_PROFILES, ids=list(BAD_PROFILES))
@pytest.mark.parametrize("how", ["--profile", "SPLICE_PROFILES"])
def test_a_bad_profile_is_a_placed_user_error(name, how, tmp_path, monkeypatch, capsys):
    text, loc = BAD_PROFILES[name]
    _files(tmp_path, {"m.ptx": TINY, "profiles/p.yaml": text})
    monkeypatch.chdir(tmp_path)
    if how == "--profile":
        argv, named = ["spec", "m.ptx", "--profile", "profiles/p.yaml"], "profiles/p.yaml"
    else:
        monkeypatch.setenv("SPLICE_PROFILES", str(tmp_path / "profiles"))
        argv, named = ["spec", "m.ptx"], str(tmp_path / "profiles" / "p.yaml")
    before = tree_digest(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    at = ":".join([named, *map(str, loc)])
    assert err.startswith(at + ":") or (not loc and err.startswith(named + ":")), err[:600]
    assert "Traceback" not in err
    if len(loc) == 2:
        assert "^" in err
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("what", ["missing", "file"])
def test_splice_profiles_that_is_not_a_directory(what, tmp_path, monkeypatch, capsys):
    """regression: a SPLICE_PROFILES naming nothing (a typo) was skipped in silence and the
    user's field names were simply not used."""
    _files(tmp_path, {"m.ptx": TINY})
    named = str(tmp_path / ("gone" if what == "missing" else "m.ptx"))
    monkeypatch.setenv("SPLICE_PROFILES", named)
    monkeypatch.chdir(tmp_path)
    assert main(["spec", "m.ptx"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(named + ": SPLICE_PROFILES"), err


def test_a_good_profile_still_names_fields(tmp_path, monkeypatch, capsys):
    _files(tmp_path, {"p.yaml": "entries: tiny\nfields:\n  param_0+0: my_input\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["spec", str(DATA / "recipes" / "tiny.ptx"), "--profile", "p.yaml", "--json"]) == 0
    assert "my_input" in capsys.readouterr().out


def test_memory_limit_of_the_child_is_real():
    """The subprocess guard above must be able to fail: 2 GiB of address space is enforced."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "b = bytearray(3 << 30)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode != 0 and b"MemoryError" in proc.stderr


# ---- compile caches: an entry that does not verify is recompiled, never trusted ----------------

from .test_compile_cache import PTX, fake  # noqa: E402,F401  (``fake``: the fixture, shared)


@pytest.fixture
def fake_ptxas(fake):
    """SPLICE_PTXAS -> tests/data/tools/fake_ptxas.py (no toolkit needed); returns the compile log."""
    return fake.log


def _entry_parts(path: Path):
    from splice.ptx.cache import MAGIC

    blob = path.read_bytes()
    n = int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "big")
    import json

    return json.loads(blob[len(MAGIC) + 8:len(MAGIC) + 8 + n]), blob[len(MAGIC) + 8 + n:]


def _entry(head: dict, cubin: bytes) -> bytes:
    import hashlib
    import json

    from splice.ptx.cache import MAGIC

    head = {**head, "cubin_len": len(cubin), "cubin_sha256": hashlib.sha256(cubin).hexdigest(), **{
        k: v for k, v in head.items() if k in ("cubin_len", "cubin_sha256") and v is None}}
    hb = json.dumps({k: v for k, v in head.items() if v is not None}).encode()
    return MAGIC + len(hb).to_bytes(8, "big") + hb + cubin


DAMAGE = {   # name -> (head, cubin) -> bytes of the entry, or a callable making the path something else
    "stderr-not-a-string": lambda h, c: _entry({**h, "stderr": 5}, c),       # regression: TypeError
    "src-missing": lambda h, c: _entry({k: v for k, v in h.items() if k != "src"}, c),   # regression: KeyError
    "command-not-a-list": lambda h, c: _entry({**h, "command": "ptxas"}, c),
    "command-of-ints": lambda h, c: _entry({**h, "command": [1, 2]}, c),
    "arch-null": lambda h, c: _entry({**h, "arch": 90}, c),
    "cubin-not-elf": lambda h, c: _entry(h, b"garbage, checksummed"),         # regression: loaded as a cubin
    "cubin-truncated": lambda h, c: _entry(h, c)[:-5],
    "header-length-huge": lambda h, c: _entry(h, c)[:15] + (2 ** 62).to_bytes(8, "big") + _entry(h, c)[23:],
    "header-deep-json": lambda h, c: (lambda hb: _entry(h, c)[:15] + len(hb).to_bytes(8, "big") + hb + c)(
        b"[" * 100000 + b"]" * 100000),
}


@pytest.mark.parametrize("damage", [*DAMAGE, "fifo", "directory"])
def test_a_damaged_ptxas_cache_entry_is_recompiled(damage, fake_ptxas, tmp_path):
    from splice.ptx import sass
    from splice.ptx.cache import CompileCache, _decode

    c = CompileCache(tmp_path / "c")
    fresh = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    (entry,) = (tmp_path / "c").rglob("*.entry")
    head, cubin = _entry_parts(entry)
    entry.unlink()
    if damage == "fifo":
        os.mkfifo(entry)          # regression: read_bytes() on it blocked for ever
    elif damage == "directory":
        entry.mkdir()
    else:
        entry.write_bytes(DAMAGE[damage](head, cubin))
    again = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert not again.cached and again.cubin == fresh.cubin and len(fake_ptxas()) == 2
    if damage != "directory":     # the next store replaced the damaged entry with a good one
        assert _decode(entry.read_bytes(), entry.name[:-len(".entry")]) is not None


def test_a_damaged_cache_entry_is_not_a_traceback_in_apply(fake_ptxas, tmp_path, monkeypatch, capsys):
    """regression: ``splice apply`` ended in ``KeyError: 'src'`` on an entry whose checksum was
    right and whose header lacked a field."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml"]) == 0
    entries = list((tmp_path / "cache").rglob("*.entry"))
    assert entries
    for e in entries:
        head, cubin = _entry_parts(e)
        e.write_bytes(DAMAGE["src-missing"](head, cubin))
    capsys.readouterr()
    assert main(["apply", "r.yaml"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert len(fake_ptxas()) == 2 * len(entries) and len(entries) == 2


PROBE_DAMAGE = {
    "cubin-truncated": lambda cub, meta: cub.write_bytes(cub.read_bytes()[:10]),    # regression: trusted
    "cubin-garbage": lambda cub, meta: cub.write_bytes(b"\x7fELF" + b"\0" * 60),
    "cubin-of-another-module": lambda cub, meta: cub.write_bytes(b"\x7fELF-fake" + b"x" * 32),
    "meta-not-json": lambda cub, meta: meta.write_text("{"),                         # regression: traceback
    "meta-a-list": lambda cub, meta: meta.write_text("[1]"),
    "meta-old-format": lambda cub, meta: meta.write_text('{"k": {"registers": 8}}'),  # no length/sha
    "meta-wrong-key": lambda cub, meta: meta.write_text(meta.read_text().replace('"key": "', '"key": "0')),
    "cubin-missing": lambda cub, meta: cub.unlink(),
    "cubin-fifo": lambda cub, meta: (cub.unlink(), os.mkfifo(cub)),
}


@pytest.mark.parametrize("damage", PROBE_DAMAGE, ids=list(PROBE_DAMAGE))
def test_a_damaged_probe_cubin_is_recompiled(damage, fake_ptxas, tmp_path, monkeypatch):
    """The probe's own cubin cache (build/probe/cubins) trusted any file with the right name:
    a truncated or swapped cubin would have been loaded onto the GPU as the module under test."""
    from splice import util
    from splice.probe.run.modules import compile_one

    monkeypatch.setattr(util, "FIFO_WAIT_S", 0.1)
    first = compile_one("k", PTX, "sm_90", tmp_path / "probe")
    good = first.path.read_bytes()
    cub, meta = first.path, first.path.with_suffix(".json")
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached
    PROBE_DAMAGE[damage](cub, meta)
    again = compile_one("k", PTX, "sm_90", tmp_path / "probe")
    assert not again.cached and again.path.read_bytes() == good and again.resources == first.resources
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached        # and the repair is trusted
    assert sorted(p.name for p in cub.parent.iterdir()) == sorted([cub.name, meta.name])    # no temp files


# ---- one very long line --------------------------------------------------------------------

def test_many_statements_on_one_line_are_not_quadratic(tmp_path):
    """regression: the lossless printer sliced the whole line before every statement to find its
    indent: 160k statements on one line took 96 s to round-trip (40k: 3.6 s), 300k more than
    two minutes -- a hang for a minified module.  Not a timing test: the bound is 30x what
    the linear printer needs on a loaded machine; the quadratic one needs minutes."""
    text = TINY.replace("\tret;", "\t" + "add.s32 %r20, %r20, 1; " * 200_000 + "\n\tret;")
    _files(tmp_path, {"m.ptx": text})
    proc = run_cli(["roundtrip", "m.ptx", "--json"], tmp_path, timeout=90)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert b'"identical": true' in proc.stdout, proc.stdout[:300]


@pytest.mark.parametrize("seed", range(5))
def test_indent_before_is_the_line_prefix_when_it_is_blank(seed):
    import random

    from splice.ptx.printer import _indent_before

    rnd = random.Random(seed)
    alphabet = [" ", "\t", "\n", "\r", "\x0b", "a", ";", "\u2028", "\x85"]
    for _ in range(300):
        source = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        pos = rnd.randint(0, len(source))
        prefix = source[source.rfind("\n", 0, pos) + 1:pos]           # the definition
        assert _indent_before(source, pos) == (prefix if not prefix.strip() else ""), (source, pos)


# ---- counts and options that were accepted and then ignored ---------------------------------

@pytest.mark.parametrize("argv", [["stats", "m.ptx", "--top", "0"], ["stats", "m.ptx", "--top", "-5"],
                                  ["stats", "m.ptx", "--top", "nan"], ["stats", "m.ptx", "--top", "1e3"],
                                  ["spec", "m.ptx", "--pressure", "--no-ptxas", "--png", "none", "--top", "-1"]])
def test_top_is_a_count(argv, tmp_path, monkeypatch, capsys):
    """regression: ``--top -5`` printed an empty histogram (``most_common(-5)``), exit 0."""
    _files(tmp_path, {"m.ptx": TINY})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --top" in err and "Traceback" not in err


PROBE_ONLY_INIT = [(["-o", "x.yaml"], "-o is an option of `splice probe init`"),
                   (["--entry", "tiny"], "--entry is an option of `splice probe init`"),
                   (["--report-dir", "tiny.ptx"], "--report-dir: not a directory")]


@pytest.mark.parametrize("extra, says", PROBE_ONLY_INIT, ids=[e[0] for e, _ in PROBE_ONLY_INIT])
@pytest.mark.parametrize("target", [["spec.yaml", "tiny.ptx"], ["r.yaml"]], ids=["spec", "recipe"])
def test_probe_options_are_checked_before_the_gpu(target, extra, says, tmp_path, monkeypatch, capsys):
    """regression: ``splice probe SPEC MODULE -o x.yaml`` (or ``--entry``) was accepted and
    ignored, and ``--report-dir FILE`` failed only after the whole GPU run; without cupy the
    message was about cupy.  Both are usage errors, found before anything needs a GPU."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "spec.yaml": SPEC})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main(["probe", *target, *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "cupy" not in err, err
    assert err.startswith("tiny.ptx: " if "report" in says else target[0] + ": "), err
    assert tree_digest(tmp_path) == before


# ---- a recipe's native: path ----------------------------------------------------------------

@pytest.mark.parametrize("cmd", ["apply", "verify", "sass-mix", "probe"])
@pytest.mark.parametrize("native, says", [("gone.ptx", "native phase file not found"),
                                          ("~/splice-no-such-native.ptx", "not found: " + os.path.expanduser("~")),
                                          (".", "native phase file is a directory"),
                                          ("sub", "native phase file is a directory")])
def test_a_native_path_that_names_no_file_is_placed_in_the_recipe(cmd, native, says, tmp_path, monkeypatch,
                                                                    capsys):
    """regression: ``native: gone.ptx`` was reported as ``gone.ptx: native phase file not found``
    (no recipe, no line), ``native: .`` as ``.: is a directory``, and ``~`` was expanded in
    ``module:`` but not in ``native:``."""
    _files(tmp_path, {"tiny.ptx": TINY, "sub/x": "", "r.yaml": RECIPE.replace("native: n.ptx", f"native: {native}")})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main([cmd, "r.yaml"] + (["--no-ptxas"] if cmd == "apply" else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith("r.yaml:6:5: cut 1: ") and says in err and "^" in err, err
    assert tree_digest(tmp_path) == before


def test_native_tilde_is_the_home_directory(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    recipe = RECIPE.replace("native: n.ptx", "native: ~/n.ptx")
    _files(tmp_path, {"tiny.ptx": TINY, "home/n.ptx": NATIVE, "r.yaml": recipe})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas"]) == 0
    assert (tmp_path / "out.ptx").is_file()


# ---- an output name that can only be a directory ---------------------------------------------

DIR_WRITERS = {**WRITERS, "pressure-png": ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png"]}


@pytest.mark.parametrize("name", ["newdir/", "x.ptx/.", "newdir/..", "deep/new/"])
@pytest.mark.parametrize("writer", DIR_WRITERS, ids=list(DIR_WRITERS))
def test_an_output_ending_in_a_slash_is_refused(writer, name, tmp_path, monkeypatch, capsys):
    """regression: ``-o newdir/`` wrote a *file* ``newdir`` (and ``-o x.ptx/.`` a file ``x.ptx``):
    write_atomic resolved the name first, and apply's ``Path(output)`` dropped the slash."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main([*DIR_WRITERS[writer], name]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{name}: cannot write the output: the name ends in /"), err
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("output", ["outd/", "build/.", "..", "."])
def test_a_recipe_output_ending_in_a_slash_is_placed(output, tmp_path, monkeypatch, capsys):
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE.replace("output: out.ptx",
                                                                                   f"output: '{output}'")})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("r.yaml:3:9: output: expected a file name"), err
    assert tree_digest(tmp_path) == before


# ---- probe specs: numbers no device can honour -------------------------------------------------

ABSURD = [("  grid: [1, 1, 1]", "  grid: [99999999999, 1, 1]", "spec.yaml:5:9: launch.grid[0]: 99999999999 blocks"),
          ("  grid: [1, 1, 1]", "  grid: [1, 65536, 1]", "spec.yaml:5:9: launch.grid[1]: 65536 blocks"),
          ("  grid: [1, 1, 1]", "  grid: [1, 1, 70000]", "spec.yaml:5:9: launch.grid[2]: 70000 blocks"),
          ("shape: [1024], role: input", "shape: [99999999999, 99999999999], role: input",
           "spec.yaml:8:52: params[0].shape: 39999999999200000000004 bytes"),
          ("shape: [1024], role: input", "shape: [1024], bytes: 99999999999999999999, role: input",
           "params[0].shape: 99999999999999999999 bytes")]


@pytest.mark.parametrize("old, new, says", ABSURD, ids=[n.strip() for _o, n, _s in ABSURD])
def test_probe_spec_numbers_beyond_any_device_are_placed(old, new, says, tmp_path, monkeypatch, capsys):
    """regression: a grid past CUDA's limits and a buffer of 10^22 elements passed the spec
    check; the run would have built the inputs on the host first (an allocation no machine
    has) and failed in cupy, not at the spec's line."""
    _files(tmp_path, {"tiny.ptx": TINY, "spec.yaml": SPEC.replace(old, new, 1)})
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "spec.yaml", "tiny.ptx"]) == 2
    err = capsys.readouterr().err
    assert says in err and "cupy" not in err and "^" in err, err
    assert err.startswith("spec.yaml:")


# ---- ptxas' messages name the user's file, not splice's temporary copy -------------------------

@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("argv", [["sass-mix", "m.ptx"], ["spec", "m.ptx", "--pressure", "--png", "none"],
                                  ["roundtrip", "m.ptx", "--sass", "--json"]])
def test_a_missing_version_names_the_module_not_a_temp_file(argv, tmp_path, monkeypatch, capsys):
    """regression: ``fatal: Missing .version directive at start of file
    '/tmp/splice-ptxas-XXXX/input.ptx'`` -- a path that no longer exists when the user reads it."""
    import re

    _files(tmp_path, {"m.ptx": re.sub(r"\.version [0-9.]+\n", "", TINY)})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path / "cache"))
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "splice-ptxas-" not in out + err, out + err
    if argv[0] != "roundtrip":
        assert rc == 2 and "fatal: Missing .version directive at start of file 'm.ptx'" in err, err
    else:                            # roundtrip reports the file as not compiled, exit 0
        assert rc == 0 and "fatal: Missing .version directive at start of file" in out, out


# ---- a tool that floods its output -------------------------------------------------------------

FLOODS = {
    "exec": "#!/bin/sh\nexec head -c 8000000 /dev/zero\n",
    # the shell is killed; its grandchild keeps the pipe open: it must not be drained to its end
    "grandchild": "#!/bin/sh\nhead -c 8000000 /dev/zero\nsleep 60\n",
}


@pytest.mark.parametrize("flood", FLOODS, ids=list(FLOODS))
@pytest.mark.parametrize("argv", [["apply", "r.yaml"], ["sass-mix", "tiny.ptx"],
                                  ["spec", "tiny.ptx", "--pressure", "--png", "none"]])
def test_a_tool_that_floods_its_output_is_stopped(argv, flood, tmp_path, monkeypatch, capsys):
    """regression: ptxas' output was collected whole (``communicate``): a SPLICE_PTXAS that
    printed without end filled the memory (a MemoryError traceback under a limit).  The flood
    here is 8 MB against a bound lowered to 1 MiB, so a regression fails instead of swapping."""
    import time

    from splice.ptx import sass

    monkeypatch.setattr(sass, "MAX_TOOL_OUTPUT", 1 << 20, raising=False)
    tool = tmp_path / "ptxas"
    tool.write_text(FLOODS[flood])
    tool.chmod(0o755)
    monkeypatch.setenv("SPLICE_PTXAS", str(tool))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path / "cache"))
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and f"printed more than {1 << 20} bytes" in err and "Traceback" not in err, err[-1500:]
    assert time.monotonic() - t0 < 45, "waited for the grandchild's pipe instead of closing it"
    assert not (tmp_path / "out.ptx").exists()


@pytest.mark.parametrize("path", ["/dev/zero", ".", "fifo.npy"])
def test_a_probe_fill_from_something_not_a_file_is_placed(path, tmp_path, monkeypatch, capsys):
    """regression: ``fill: {rule: from, path: /dev/zero}`` passed the spec check (it exists);
    the GPU run's ``np.load`` would have read it without end (a FIFO: blocked for ever)."""
    os.mkfifo(tmp_path / "fifo.npy")
    spec = SPEC.replace("role: input}", "role: input, fill: {rule: from, path: '" + path + "'}}")
    _files(tmp_path, {"tiny.ptx": TINY, "spec.yaml": spec})
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "spec.yaml", "tiny.ptx"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spec.yaml:8:") and "is not a regular file" in err and "cupy" not in err, err


# ---- --entry naming a .func ------------------------------------------------------------------

WITH_FUNC = TINY.replace(".visible .entry tiny(", ".visible .func helper()\n{\n\tret;\n}\n.visible .entry tiny(", 1)


@pytest.mark.parametrize("argv", [["notes", "m.ptx"], ["extract", "m.ptx", "--phase", "1"], ["probe", "init", "m.ptx"],
                                  ["sass-mix", "m.ptx"], ["stats", "m.ptx"], ["spec", "m.ptx"], ["index", "m.ptx"]])
def test_entry_naming_a_func_is_refused(argv, tmp_path, monkeypatch, capsys):
    """regression: ``probe init --entry helper`` (a .func) was an AttributeError traceback, and
    notes, extract and sass-mix analysed the .func as if it were a kernel, exit 0."""
    _files(tmp_path, {"m.ptx": WITH_FUNC})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main([*argv, "--entry", "helper"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("m.ptx: ") and ("names a .func" in err or "no entry 'helper'" in err), err
    assert "Traceback" not in err
    assert tree_digest(tmp_path) == before


def test_recipe_entry_naming_a_func_is_refused(tmp_path, monkeypatch, capsys):
    _files(tmp_path, {"tiny.ptx": WITH_FUNC, "n.ptx": NATIVE, "r.yaml": RECIPE.replace("entry: tiny", "entry: helper")})
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("r.yaml:2:1: entry 'helper': --entry 'helper' names a .func, not an .entry"), err  # placed at the recipe's line
    assert not (tmp_path / "out.ptx").exists()


# ---- concurrent runs onto one output ---------------------------------------------------------

def test_concurrent_runs_onto_one_output_leave_one_whole_file(tmp_path):
    """Eight processes writing the same output at once: the output is one whole run's text
    (never interleaved, never truncated) and no temporary file is left."""
    big = TINY.replace("\tret;", "\t" + "add.s32 %r20, %r20, 1;\n\t" * 20000 + "ret;")
    _files(tmp_path, {"m.ptx": big})
    code = "import sys; from splice.cli import main; sys.exit(main(sys.argv[1:]))"
    procs = [subprocess.Popen([sys.executable, "-c", code, "canonical", "m.ptx", "-o", "out.ptx"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(8)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()[-1000:]
        p.stderr.close()
    assert main(["canonical", str(tmp_path / "m.ptx"), "-o", str(tmp_path / "ref.ptx")]) == 0
    assert (tmp_path / "out.ptx").read_bytes() == (tmp_path / "ref.ptx").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ptx", "out.ptx", "ref.ptx"]


@pytest.mark.parametrize("writer", DIR_WRITERS, ids=list(DIR_WRITERS))
def test_an_output_fifo_nobody_reads_is_refused_not_a_hang(writer, tmp_path, monkeypatch, capsys):
    """regression: ``-o fifo`` with no reader blocked in open() for ever.  Now the reader is
    waited for ``FIFO_WAIT_S``, then the output is refused, naming the FIFO."""
    from splice import util

    monkeypatch.setattr(util, "FIFO_WAIT_S", 0.2)
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    os.mkfifo(tmp_path / "out.fifo")
    monkeypatch.chdir(tmp_path)
    dog = Watchdog(tmp_path / "out.fifo", flags=os.O_RDONLY | os.O_NONBLOCK)
    try:
        rc = main([*DIR_WRITERS[writer], "out.fifo"])
    finally:
        fired = dog.stop()
    err = capsys.readouterr().err
    assert not fired, "the command blocked on the FIFO"
    assert rc == 2 and err.startswith("out.fifo: cannot write the output: a FIFO that no process reads"), err


# ---- a terminal that is not UTF-8 -------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("argv", [["stats", "tiny.ptx"], ["spec", "tiny.ptx"], ["verify", "r.yaml"],
                                  ["apply", "r.yaml", "--no-ptxas"]])
def test_a_terminal_that_is_not_utf8_gets_no_traceback(argv, encoding, tmp_path):
    """regression: under ``PYTHONIOENCODING=ascii`` (or a Latin-1 locale) the tables' "—" and
    "…" ended in a UnicodeEncodeError traceback, exit 1."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    proc = run_cli(argv, tmp_path, env={"PYTHONIOENCODING": encoding})
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert b"Traceback" not in proc.stderr and proc.stdout.strip()


@pytest.mark.parametrize("argv", [["stats", "tiny.ptx"], ["canonical", "tiny.ptx", "-o", "c.ptx"],
                                  ["stats", "gone.ptx"]])
def test_closed_standard_streams_are_no_traceback(argv, tmp_path):
    """regression: ``splice stats m.ptx >&-`` (stdout closed) ended in ``AttributeError:
    'NoneType' object has no attribute 'flush'``, exit 1; with stderr closed likewise."""
    import shlex

    _files(tmp_path, {"tiny.ptx": TINY})
    code = shlex.quote("import sys; from splice.cli import console_main; console_main()")
    cmd = f"{shlex.quote(sys.executable)} -c {code} {shlex.join(argv)}"
    closed_out = subprocess.run(["sh", "-c", cmd + " >&- 2>err.txt"], cwd=tmp_path, timeout=60)
    err = (tmp_path / "err.txt").read_text()
    assert closed_out.returncode == 2 and err.startswith("splice: standard output is closed"), err
    assert not (tmp_path / "c.ptx").exists()            # refused before any work
    closed_err = subprocess.run(["sh", "-c", cmd + " 2>&- >out.txt"], cwd=tmp_path, timeout=60)
    assert closed_err.returncode == (2 if "gone.ptx" in argv else 0)
    assert (tmp_path / "c.ptx").exists() == (argv[0] == "canonical")


# ---- probe --stages ranges -------------------------------------------------------------------

STAGE_RANGES = [("parse_selection", "'1-99999999999', 3, set()", "phase 99999999999 does not exist"),
                ("parse_selection", "'0-2', 3, set()", "phase 0 does not exist"),
                ("parse_selection", "'3-1', 3, set()", "empty phase range"),
                ("split_selection", "'E1-E99999999999', 5", "epilogue E99999999999 does not exist")]


@pytest.mark.parametrize("func, args, says", STAGE_RANGES, ids=[a for _f, a, _s in STAGE_RANGES])
def test_stage_ranges_are_bounded_before_they_are_expanded(func, args, says, tmp_path):
    """regression: ``--stages 1-99999999999`` (or ``E1-E99999999999``) was expanded into a set
    of 10^11 numbers before being checked against the kernel: the memory ran out.  Run in a
    child under a 2 GiB limit, so a regression fails instead of swapping."""
    mod = "instrument.stages" if func == "parse_selection" else "instrument.epilogue_stages"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            f"from splice.probe.{mod} import {func}\nfrom splice.errors import SpliceError\n"
            f"try:\n    {func}({args})\nexcept SpliceError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0 and says in proc.stdout.decode(), proc.stderr[-800:]


@pytest.mark.parametrize("count", ["99999999999", "65537"])
def test_a_native_scratch_range_is_bounded(count, tmp_path, monkeypatch, capsys):
    """regression: ``scratch: {'t<99999999999>': .b32}`` in a native header was expanded name by
    name into a dict: apply never ended (and ate the memory)."""
    native = "// splice-native: {scratch: {'t<" + count + ">': .b32}}\n" + TINY_SWAPPED
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": native, "r.yaml": RECIPE})
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("n.ptx:1: scratch register range") and f"{count} registers" in err, err
    assert not (tmp_path / "out.ptx").exists()


@pytest.mark.parametrize("value", ["%rd999", "%r99999999999999999999", "%nope"])
@pytest.mark.parametrize("cmd", ["apply", "verify"])
def test_a_named_value_the_entry_does_not_declare_is_placed(cmd, value, tmp_path, monkeypatch, capsys):
    """regression: ``values: {W: "%rd999"}`` (tiny declares %rd<8>) was accepted; the register
    would reach the output and be found by ptxas at the output's line, or with --no-ptxas never."""
    recipe = RECIPE + f'    values: {{W: "{value}"}}\n'
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": recipe})
    monkeypatch.chdir(tmp_path)
    assert main([cmd, "r.yaml"] + (["--no-ptxas"] if cmd == "apply" else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"r.yaml:7:5: cut 1: values: W: {value} is not a register tiny declares"), err
    assert not (tmp_path / "out.ptx").exists()


@pytest.mark.parametrize("what", ["file", "directory"])
def test_probe_init_is_the_subcommand_whatever_the_cwd_holds(what, tmp_path, monkeypatch, capsys):
    """regression: with a file (or directory) named ``init`` in the working directory,
    ``splice probe init m.ptx -o s.yaml`` was read as a probe run of a spec called init."""
    _files(tmp_path, {"tiny.ptx": TINY})
    if what == "file":
        (tmp_path / "init").write_text("x\n")
    else:
        (tmp_path / "init").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "init", "tiny.ptx", "-o", "s.yaml"]) == 0, capsys.readouterr().err
    assert (tmp_path / "s.yaml").read_text().count("name: param_") == 2


@pytest.mark.parametrize("argv, says", [
    (["spec", "m.ptx", "--png", "x.png"], "--png is an option of --pressure"),
    (["spec", "m.ptx", "--no-ptxas"], "--no-ptxas is an option of --pressure"),
    (["spec", "m.ptx", "--arch", "sm_90"], "--arch is an option of --pressure"),
    (["roundtrip", "m.ptx", "--arch", "sm_90"], "--arch is the ptxas target of --sass")])
def test_an_option_of_another_mode_is_refused_not_dropped(argv, says, tmp_path, monkeypatch, capsys):
    """regression: ``spec m.ptx --png x.png`` (no --pressure) exited 0 and wrote no PNG;
    ``roundtrip --arch`` without --sass dropped the arch in silence."""
    _files(tmp_path, {"m.ptx": TINY})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("m.ptx: " + says), err
    assert tree_digest(tmp_path) == before


# ---- a NUL written as a YAML escape -----------------------------------------------------------

NUL_CASES = [("output: out.ptx", 'output: "o\\x00b.ptx"', "r.yaml:3:9:"),
             ("native: n.ptx", 'native: "n\\0.ptx"', "r.yaml:6:13:"),
             ("entry: tiny", 'entry: "tiny\\0"', "r.yaml:2:8:"),
             ("output: out.ptx", 'output: "\\ud800.ptx"', "r.yaml:3:9:"),     # UnicodeEncodeError
             ("native: n.ptx", 'native: "n\\udfff.ptx"', "r.yaml:6:13:")]


@pytest.mark.parametrize("old, new, at", NUL_CASES, ids=[n for _o, n, _a in NUL_CASES])
@pytest.mark.parametrize("cmd", ["apply", "verify", "sass-mix"])
def test_a_nul_escape_in_a_recipe_is_placed(cmd, old, new, at, tmp_path, monkeypatch, capsys):
    """regression: ``output: "o\\x00b.ptx"`` (a YAML escape passes the reader's check for raw
    control characters) reached the OS: ``ValueError: embedded null byte`` traceback, exit 1."""
    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE.replace(old, new)})
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path)
    assert main([cmd, "r.yaml"] + (["--no-ptxas"] if cmd == "apply" else [])) == 2
    err = capsys.readouterr().err
    assert (err.startswith(at + " YAML: a NUL character") or err.startswith(at + " YAML: a lone surrogate")), err
    assert "^" in err and "Traceback" not in err
    assert tree_digest(tmp_path) == before


def test_a_nul_escape_in_a_probe_spec_is_placed(tmp_path, monkeypatch, capsys):
    _files(tmp_path, {"tiny.ptx": TINY, "spec.yaml": SPEC.replace("ptx: tiny.ptx", 'ptx: "tiny\\0.ptx"')})
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "spec.yaml", "tiny.ptx"]) == 2
    assert capsys.readouterr().err.startswith("spec.yaml:2:6: YAML: a NUL character")


@pytest.mark.parametrize("where", ["a-file", "under-a-file", "/dev/null", "read-only"])
def test_a_cache_that_cannot_be_written_costs_a_compile_not_the_run(where, fake_ptxas, tmp_path, monkeypatch,
                                                                     capsys):
    """The compile cache is an optimisation: a $SPLICE_CACHE that is a file, lies under one, is a
    device or cannot be written (simulated: every write under it fails with EROFS) must leave
    apply's result and exit status as they are, and the file as it was."""
    import errno

    _files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "cachefile": "keep\n"})
    cache = {"a-file": tmp_path / "cachefile", "under-a-file": tmp_path / "cachefile" / "sub",
             "/dev/null": Path("/dev/null"), "read-only": tmp_path / "rocache"}[where]
    monkeypatch.setenv("SPLICE_CACHE", str(cache))
    if where == "read-only":
        real_mkstemp = __import__("tempfile").mkstemp

        def refuse(*a, dir=None, **kw):
            if dir is not None and str(cache) in str(dir):
                raise OSError(errno.EROFS, "Read-only file system", str(dir))
            return real_mkstemp(*a, dir=dir, **kw)
        monkeypatch.setattr("tempfile.mkstemp", refuse)
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml"]) == 0, capsys.readouterr().err[-1500:]
    assert main(["apply", "r.yaml"]) == 0      # a second run compiles again: nothing could be kept
    assert len(fake_ptxas()) == 4
    assert (tmp_path / "cachefile").read_text() == "keep\n" and (tmp_path / "out.ptx").is_file()
