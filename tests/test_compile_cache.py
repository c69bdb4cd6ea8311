"""The on-disk ptxas compile cache (splice.ptx.cache), against a fake ptxas that logs each
compile (tests/data/tools/fake_ptxas.py), so every test runs without the CUDA toolkit."""
from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from splice.cli import main
from splice.ptx import sass
from splice.ptx.cache import CompileCache, default_cache, default_cache_dir

from .userfiles import NATIVE, RECIPE, TINY, work, write_files  # noqa: F401 - work: the fixture

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "data" / "tools" / "fake_ptxas.py"
PTX = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """SPLICE_PTXAS -> the fake; returns a function giving the compile log's lines."""
    exe = tmp_path / "bin" / "ptxas"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} \"$@\"\n")
    exe.chmod(0o755)
    log = tmp_path / "ptxas.log"
    log.write_text("")
    monkeypatch.setenv("SPLICE_PTXAS", str(exe))
    monkeypatch.setenv("FAKE_PTXAS_LOG", str(log))
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path / "cache"))
    ns = types.SimpleNamespace(exe=exe, log=lambda: log.read_text().splitlines(), tmp=tmp_path)
    return ns


def test_hit_does_not_run_ptxas(fake, tmp_path):
    c = CompileCache(tmp_path / "c")
    a = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    b = sass.compile_ptx(PTX, "sm_90", 3, cache=c, name="other.ptx")
    assert len(fake.log()) == 1
    assert not a.cached and b.cached
    assert a.cubin == b.cubin and a.stderr == b.stderr and a.arch == b.arch
    assert a.resources == b.resources and a.resources["k"].registers is not None
    # without a cache ptxas runs every time
    sass.compile_ptx(PTX, "sm_90", 3)
    assert len(fake.log()) == 2


def test_key_changes_with_arch_opt_flags_text(fake, tmp_path):
    c = CompileCache(tmp_path / "c")
    variants = [(PTX, "sm_90", 3, ()), (PTX, "sm_90a", 3, ()), (PTX, "sm_90", 0, ()), (PTX, "sm_90", None, ()),
                (PTX, "sm_90", 3, ("-c",)), (PTX.replace("ret;", "ret; "), "sm_90", 3, ())]
    cubins = set()
    for text, arch, opt, extra in variants:
        cubins.add(sass.compile_ptx(text, arch, opt, extra, cache=c).cubin)
    assert len(fake.log()) == len(variants)
    assert len(cubins) == len(variants)
    keys = {c.key(t, str(fake.exe), sass.normalize_arch(a), [] if o is None else [f"-O{o}"], list(e))
            for t, a, o, e in variants}
    assert len(keys) == len(variants)
    for text, arch, opt, extra in variants:   # and every one of them is now a hit
        assert sass.compile_ptx(text, arch, opt, extra, cache=c).cached
    assert len(fake.log()) == len(variants)


def test_key_changes_with_ptxas_version(fake, tmp_path, monkeypatch):
    sass.compile_ptx(PTX, "sm_90", 3, cache=CompileCache(tmp_path / "c"))
    monkeypatch.setenv("FAKE_PTXAS_VERSION", "fake ptxas, release 13.1")
    again = sass.compile_ptx(PTX, "sm_90", 3, cache=CompileCache(tmp_path / "c"))
    assert not again.cached and len(fake.log()) == 2


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip", "empty"])
def test_corrupted_entry_is_a_miss_and_rewritten(fake, tmp_path, damage):
    c = CompileCache(tmp_path / "c")
    good = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    (entry,) = list((tmp_path / "c").rglob("*.entry"))
    blob = entry.read_bytes()
    entry.write_bytes({"garbage": b"not an entry at all", "truncate": blob[:-5], "empty": b"",
                       "flip": blob[:-1] + bytes([blob[-1] ^ 0xFF])}[damage])
    again = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert not again.cached and again.cubin == good.cubin and len(fake.log()) == 2
    assert entry.read_bytes()[-len(good.cubin):] == good.cubin      # rewritten whole
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=c).cached


def test_failures_are_not_cached(fake, tmp_path):
    c = CompileCache(tmp_path / "c")
    bad = PTX.replace("ret;", "BROKEN;")
    for _ in range(2):
        with pytest.raises(sass.PtxasError) as ei:
            sass.compile_ptx(bad, "sm_90", 3, cache=c, name="bad.ptx")
        assert ei.value.lines == (6,)
    assert len(fake.log()) == 2
    assert not list((tmp_path / "c").rglob("*.entry"))


def test_size_bound_evicts_least_recently_used(fake, tmp_path):
    c = CompileCache(tmp_path / "c", max_bytes=10 ** 9)
    texts = [PTX.replace("ret;", "ret;" + " " * i) for i in range(4)]
    for i, t in enumerate(texts):
        sass.compile_ptx(t, "sm_90", 3, cache=c)
        p = c.path(c.key(t, str(fake.exe), "sm_90", ["-O3"], ["-v"]))   # -v: the flags ptxas gets
        os.utime(p, ns=(10 ** 18 + i, 10 ** 18 + i))     # distinct, ordered ages
    paths = [c.path(c.key(t, str(fake.exe), "sm_90", ["-O3"], ["-v"])) for t in texts]
    size = paths[0].stat().st_size
    assert sass.compile_ptx(texts[0], "sm_90", 3, cache=c).cached   # a hit makes texts[0] the newest
    c.max_bytes = 2 * size + size // 2
    assert c.evict() == 2
    assert [p.exists() for p in paths] == [True, False, False, True]
    assert c.evict() == 0


def test_default_cache_dir(monkeypatch, tmp_path):
    env = {"HOME": str(tmp_path)}
    assert default_cache_dir(env) == Path(tmp_path) / ".cache" / "splice"
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    assert default_cache_dir(env) == tmp_path / "xdg" / "splice"
    env["SPLICE_CACHE"] = str(tmp_path / "mine")
    assert default_cache_dir(env) == tmp_path / "mine"
    monkeypatch.setenv("SPLICE_CACHE", str(tmp_path / "mine"))
    assert default_cache().root == tmp_path / "mine" / "ptxas"
    assert default_cache(False) is None


def test_validate_compiles_both_modules_at_once(fake, tmp_path, monkeypatch):
    from splice.cut.validate import validate

    rv = tmp_path / "rv"
    rv.mkdir()
    monkeypatch.setenv("FAKE_PTXAS_RENDEZVOUS", str(rv))
    recipe = types.SimpleNamespace(module=tmp_path / "m.ptx", arch="sm_90", opt_level=3)
    plan = types.SimpleNamespace(source=PTX, text=PTX.replace("ret;", "ret; ret;"), recipe=recipe)
    v = validate(plan)
    assert v.before.cubin != v.after.cubin
    assert sorted(fake.log()) == ["-arch=sm_90 -O3 -v -o together"] * 2


def test_apply_uses_the_cache(fake, tmp_path):
    from splice.cli import main

    def apply(*flags):
        out = tmp_path / "out.ptx"
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["apply", str(ROOT / "recipes" / "enc5_p8.yaml"), "-o", str(out), "--json", *flags]) == 0
        return json.loads(buf.getvalue())

    first = apply()
    assert len(fake.log()) == 2 and first["ptxas"]["cached"] == {"before": False, "after": False}
    assert "diff" not in first
    second = apply()
    assert len(fake.log()) == 2 and second["ptxas"]["cached"] == {"before": True, "after": True}
    assert second["ptxas"]["after"] == first["ptxas"]["after"]
    third = apply("--no-cache", "--diff")
    assert len(fake.log()) == 4 and third["ptxas"]["cached"] == {"before": False, "after": False}
    assert third["diff"].startswith("---")


def test_warm_identity_travels_with_the_cache(fake, tmp_path, monkeypatch):
    """roundtrip --jobs hands the cache to worker processes: the ptxas identity looked up once in
    the parent goes with it, so workers do not run ptxas --version per task."""
    import pickle

    c = CompileCache(tmp_path / "c")
    c.warm()
    copy = pickle.loads(pickle.dumps(c))
    calls = []
    real = sass.run_tool

    def spy(cmd, *a, **k):   # every child splice starts goes through sass.run_tool
        calls.append(list(cmd))
        return real(cmd, *a, **k)

    monkeypatch.setattr(sass, "run_tool", spy)
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=copy).cubin
    assert len(calls) == 1 and "-v" in calls[0]                  # the compile, and nothing else
    assert not any("--version" in cmd for cmd in calls)


# ---- entries that do not verify, or that another user wrote: recompiled, never trusted (found
# 2026-11-30 and 2026-12-01 with hostile inputs) ------------------------------------------------------

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
    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
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


@pytest.mark.parametrize("where", ["a-file", "under-a-file", "/dev/null", "read-only"])
def test_a_cache_that_cannot_be_written_costs_a_compile_not_the_run(where, fake_ptxas, tmp_path, monkeypatch,
                                                                     capsys):
    """The compile cache is an optimisation: a $SPLICE_CACHE that is a file, lies under one, is a
    device or cannot be written (simulated: every write under it fails with EROFS) must leave
    apply's result and exit status as they are, and the file as it was."""
    import errno

    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE, "cachefile": "keep\n"})
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


OTHER_UID = 54321


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_ptxas_cache_entry_of_another_user_is_not_trusted(fake, tmp_path):
    """regression: a well-formed entry (right key, checksum and ELF magic) was trusted whoever
    wrote it: in a shared $SPLICE_CACHE another user could plant a cubin for a module."""
    from splice.ptx import sass
    from splice.ptx.cache import CompileCache

    c = CompileCache(tmp_path / "c")
    sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=c).cached
    (entry,) = (tmp_path / "c").rglob("*.entry")
    os.chown(entry, OTHER_UID, OTHER_UID)
    again = sass.compile_ptx(PTX, "sm_90", 3, cache=c)
    assert not again.cached and len(fake.log()) == 2
    assert entry.stat().st_uid == os.geteuid()        # replaced by this user's own
    assert sass.compile_ptx(PTX, "sm_90", 3, cache=c).cached


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
@pytest.mark.parametrize("which", ["cubin", "json"])
def test_a_probe_cubin_of_another_user_is_not_trusted(which, fake, tmp_path):
    from splice.probe.run.modules import compile_one

    first = compile_one("k", PTX, "sm_90", tmp_path / "probe")
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached
    os.chown(first.path.with_suffix("." + which), OTHER_UID, OTHER_UID)
    assert not compile_one("k", PTX, "sm_90", tmp_path / "probe").cached
    assert compile_one("k", PTX, "sm_90", tmp_path / "probe").cached


_BUILD = "from splice.ptx.parser import lark_parser; lark_parser()"


class _Payload:
    """Unpickled, it creates the file ``MARKER`` names: the proof that a planted cache ran code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _build_grammar(env_extra: dict):
    import subprocess

    env = {**os.environ, **env_extra}
    r = subprocess.run([sys.executable, "-c", _BUILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_grammar_cache_is_not_read_from_tmpdir(tmp_path):
    """regression: Lark's default cache is ``$TMPDIR/.lark_cache_<user>_<sha>_<py>.tmp``, a name
    anyone can compute in a directory anyone can write, and Lark unpickles it (before checking
    its checksum): another user of a shared /tmp could plant one and run code as whoever parses a
    module next.  Here: after one build nothing of Lark's is in TMPDIR; were it there, the planted
    payload would run on the next build."""
    import pickle

    tmp, marker = tmp_path / "tmp", tmp_path / "PWNED"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "SPLICE_CACHE": str(tmp_path / "cache")}
    _build_grammar(env)
    planted = list(tmp.glob(".lark_*"))
    for f in planted:
        f.write_bytes(b"0\n" + pickle.dumps(_Payload(str(marker))))
    _build_grammar(env)
    assert not marker.exists() and not planted
    assert (tmp_path / "cache" / "lark" / "grammar.pickle").is_file()       # the cache is kept, privately


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_grammar_cache_planted_by_another_user_is_not_loaded(tmp_path):
    import pickle

    marker = tmp_path / "PWNED"
    lark_dir = tmp_path / "cache" / "lark"
    lark_dir.mkdir(parents=True, mode=0o700)
    f = lark_dir / "grammar.pickle"
    f.write_bytes(b"0\n" + pickle.dumps(_Payload(str(marker))))
    os.chown(f, OTHER_UID, OTHER_UID)
    _build_grammar({"SPLICE_CACHE": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)})
    assert not marker.exists()
    assert f.stat().st_uid == os.geteuid()        # replaced by this user's own build


def test_no_grammar_cache_in_a_folder_others_may_write(tmp_path, monkeypatch):
    from splice.ptx.cache import grammar_cache

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)        # SPLICE_CACHE=/tmp/shared: anyone could swap lark/ for their own
    monkeypatch.setenv("SPLICE_CACHE", str(shared))
    assert grammar_cache() is False
    shared.chmod(0o755)
    assert grammar_cache() == str(shared / "lark" / "grammar.pickle")
    assert (shared / "lark").stat().st_mode & 0o777 == 0o700


# ---- where the caches are --------------------------------------------------------------------------

@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("value, where", [("{tmp}/pc", "{tmp}/pc"), ("", "{cwd}/build/probe")],
                         ids=["set-late", "empty"])
def test_the_probe_cache_is_the_variable_as_set_when_the_probe_runs(value, where, work, monkeypatch):
    """regression: ``$SPLICE_PROBE_CACHE`` was read once, when splice.probe.run.modules was first
    imported: a value set later in the process (as every test sets it) was never seen and the
    cubins went into ./build/probe; ``SPLICE_PROBE_CACHE=`` (an unset shell variable) was
    ``Path('')``, the working directory, and the cubins were written there."""
    import splice.probe.run.modules as modules

    tmp = str(work.parent / (work.name + "-late"))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", value.format(tmp=tmp))
    built = modules.compile_one("tiny", TINY, "sm_90", use_cache=False)
    assert str(built.path.parent.parent.resolve()) == where.format(tmp=tmp, cwd=work.resolve())
    assert not (work / "cubins").exists()


@pytest.mark.parametrize("xdg", ["rel", "./x", "~/c"])
def test_a_relative_xdg_cache_home_is_ignored_as_the_spec_says(xdg, tmp_path):
    """regression: ``XDG_CACHE_HOME=rel`` put splice's cache under the working directory
    (``rel/splice/ptxas``: a new cache in each directory splice ran in); the XDG base directory
    spec makes a relative value invalid, to be ignored."""
    from splice.ptx.cache import default_cache_dir

    assert default_cache_dir({"XDG_CACHE_HOME": xdg, "HOME": str(tmp_path)}) == tmp_path / ".cache" / "splice"
    absolute = {"XDG_CACHE_HOME": str(tmp_path / "x"), "HOME": "/nonexistent"}
    assert default_cache_dir(absolute) == tmp_path / "x" / "splice"
