"""Bytes survive: a module with CRLF line endings and a Latin-1 (non-UTF-8) comment goes through
every command with every byte outside the cuts kept (docs: "every byte outside the cuts is the
original's"), and its statement index is the LF module's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from splice.cli import main
from splice.cut.recipe import load_recipe
from splice.cut.splice import plan as make_plan
from splice.util import encode, read_text

from .conftest import DATA
from .test_outputs import NATIVE

TINY = (DATA / "recipes" / "tiny.ptx").read_bytes()


def variant(lf: bytes, latin1: bool = True) -> bytes:
    """``lf`` with CRLF line endings and (optionally) a Latin-1 byte in its first comment."""
    out = lf.replace(b"// tiny: one", b"// caf\xe9 tiny: one", 1) if latin1 else lf
    assert out.count(b"\r") == 0
    return out.replace(b"\n", b"\r\n")


@pytest.fixture
def work(tmp_path):
    (tmp_path / "lf.ptx").write_bytes(TINY)
    (tmp_path / "tiny.ptx").write_bytes(variant(TINY))
    (tmp_path / "crlf.ptx").write_bytes(variant(TINY, latin1=False))
    (tmp_path / "n.ptx").write_bytes(variant(b"// native \xe9\n" + NATIVE.encode()))
    for name in ("tiny", "crlf"):
        (tmp_path / f"{name}.yaml").write_text(f"module: {name}.ptx\nentry: tiny\ncuts:\n"
                                               "  - phase: 1\n    native: n.ptx\n")
    return tmp_path


def run(*argv, cwd):
    """The CLI in a subprocess: stdout as bytes, exactly as a user's shell gets it."""
    return subprocess.run([sys.executable, "-m", "splice.cli", *map(str, argv)], cwd=cwd,
                          capture_output=True, timeout=120)


def test_read_text_keeps_every_byte(work):
    src = work / "tiny.ptx"
    text = read_text(src)
    assert "\r\n" in text and encode(text) == src.read_bytes()


def test_roundtrip_is_byte_identical(work, capsys):
    assert main(["roundtrip", str(work / "tiny.ptx"), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["parsed"] and rec["identical"], rec


def test_apply_keeps_every_byte_outside_the_cut(work, capsys):
    out = work / "out.ptx"
    assert main(["apply", str(work / "tiny.yaml"), "--no-ptxas", "-o", str(out)]) == 0
    p = make_plan(load_recipe(work / "tiny.yaml", search_path=[]))
    (cut,) = p.cuts
    lo, hi = cut.region
    src = (work / "tiny.ptx").read_bytes()
    got = out.read_bytes()
    head, tail = encode(p.source[:lo]), encode(p.source[hi:])
    assert b"caf\xe9" in head and b"\r\n" in head and b"\r\n" in tail
    assert src.startswith(head) and src.endswith(tail)
    assert got.startswith(head) and got.endswith(tail)
    assert got == encode(p.text)


@pytest.mark.needs("ptxas")
def test_apply_crlf_module_validates_with_ptxas(work, capsys):
    """ptxas takes CRLF (it refuses non-ASCII bytes, so the Latin-1 variant is --no-ptxas)."""
    out = work / "out.ptx"
    assert main(["apply", str(work / "crlf.yaml"), "-o", str(out)]) == 0, capsys.readouterr().err
    assert out.read_bytes().count(b"\r\n") >= (work / "crlf.ptx").read_bytes().count(b"\r\n") - 12


def test_canonical_to_file_and_stdout(work):
    """The canonical print is a function of the model: CRLF and comments do not change it, and
    stdout carries the same bytes as -o."""
    r = run("canonical", "tiny.ptx", "-o", "c.ptx", cwd=work)
    assert r.returncode == 0, r.stderr
    assert run("canonical", "lf.ptx", cwd=work).stdout == (work / "c.ptx").read_bytes()
    assert run("canonical", "tiny.ptx", cwd=work).stdout == (work / "c.ptx").read_bytes()


def test_extract_and_index_match_the_lf_module(work):
    for cmd in (["index", "{}"], ["extract", "{}", "--phase", "1"], ["spec", "{}", "--json"]):
        lf = run(*[c.format("lf.ptx") for c in cmd], cwd=work)
        cr = run(*[c.format("tiny.ptx") for c in cmd], cwd=work)
        assert lf.returncode == cr.returncode == 0, cr.stderr
        assert cr.stdout.replace(b"\r\n", b"\n").replace(b"tiny.ptx", b"lf.ptx") == lf.stdout, cmd


def test_printed_statements_keep_non_utf8_bytes(tmp_path):
    """A Latin-1 byte in a statement's trailing comment reaches stdout as that byte, even under a
    strict UTF-8 stdout (PYTHONIOENCODING=utf-8), never as a UnicodeEncodeError."""
    src = TINY.replace(b"\t{%r11, %r12},", b"\t{%r11, %r12}, // \xb5s", 1)
    assert src != TINY
    (tmp_path / "m.ptx").write_bytes(src)
    r = subprocess.run([sys.executable, "-m", "splice.cli", "index", "m.ptx"], cwd=tmp_path,
                       capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    assert b"{%r11, %r12}, // \xb5s" in r.stdout


def test_a_non_utf8_recipe_is_a_placed_error(work, capsys):
    """A recipe is YAML, which must be UTF-8: a Latin-1 byte is reported at its place."""
    bad = work / "bad.yaml"
    bad.write_bytes(b"module: tiny.ptx\r\nentry: tiny # caf\xe9\r\ncuts:\r\n  - phase: 1\r\n    native: n.ptx\r\n")
    assert main(["apply", str(bad), "--no-ptxas", "-o", str(work / "o.ptx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:2:18: byte 0xe9 is not UTF-8") and "Traceback" not in err, err
    assert not (work / "o.ptx").exists()


def test_a_crlf_recipe_applies(work, capsys):
    crlf = work / "crlf-recipe.yaml"
    crlf.write_bytes((work / "tiny.yaml").read_bytes().replace(b"\n", b"\r\n"))
    assert main(["apply", str(crlf), "--no-ptxas", "-o", str(work / "o.ptx")]) == 0
