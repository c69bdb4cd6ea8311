"""Outputs are written atomically, with ordinary permissions, and never half-written."""
from __future__ import annotations

import os

import pytest

from splice.util import write_atomic


def test_write_atomic_text_bytes_and_mode(tmp_path):
    p = write_atomic(tmp_path / "a" / "out.ptx", "x\n")
    assert p.read_text() == "x\n"
    umask = os.umask(0)
    os.umask(umask)
    assert (p.stat().st_mode & 0o777) == (0o666 & ~umask)
    write_atomic(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    assert [f.name for f in p.parent.iterdir()] == ["out.ptx"]


def test_write_atomic_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "out.ptx"
    p.write_text("old")

    class Boom:
        def __str__(self):
            raise RuntimeError

    with pytest.raises(TypeError):
        write_atomic(p, Boom())  # not str/bytes: the write fails
    assert p.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["out.ptx"]
