"""The on-disk ptxas compile cache (splice.ptx.cache), against a fake ptxas that logs each
compile (tests/data/tools/fake_ptxas.py), so every test runs without the CUDA toolkit."""
from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from splice.ptx import sass
from splice.ptx.cache import CompileCache, default_cache, default_cache_dir

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
