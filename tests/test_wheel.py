"""The wheel holds every package and data file of splice/ and grammars/.

The editable install the tests run from sees the source tree, so a package missing from the
wheel (``splice.verify`` once was: the packages were listed by hand) only shows when a user
installs the wheel.  This builds it the way ``pip wheel .`` does (offline: the build-system's
requirements come with the ``test`` extra) and compares its file list with the tree.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT


def _tree_files() -> dict[str, Path]:
    """Wheel path -> source file, for every file under splice/ and grammars/ that a build must
    ship (compiled bytecode left by a run is not source)."""
    want: dict[str, Path] = {}
    for top, prefix in (("splice", "splice/"), ("grammars", "splice/grammars/")):
        base = ROOT / top
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for n in filenames:
                if n.endswith((".pyc", ".pyo")):
                    continue
                p = Path(dirpath) / n
                want[prefix + p.relative_to(base).as_posix()] = p
    return want


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    src = out / "src"      # a copy: setuptools builds in place (build/, *.egg-info), never in the checkout
    keep = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("splice", "grammars"):
        shutil.copytree(ROOT / name, src / name, ignore=keep)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--no-cache-dir", str(src), "-w", str(out)],
                          capture_output=True, text=True, cwd=out)
    assert proc.returncode == 0, ("pip wheel failed (the build needs setuptools>=68 and wheel: "
                                  "pip install -e '.[test]')\n" + proc.stdout + proc.stderr)
    wheels = list(out.glob("splice-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_every_package_has_an_init():
    """A folder of modules without ``__init__.py`` is no package to ``find_packages``: it would
    be left out of the wheel as splice.verify was."""
    for dirpath, dirnames, filenames in os.walk(ROOT / "splice"):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        if any(n.endswith(".py") for n in filenames):
            assert "__init__.py" in filenames, f"{dirpath}: Python modules but no __init__.py"


def test_wheel_ships_every_package_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    want = _tree_files()
    missing = sorted(set(want) - names)
    assert not missing, f"not in {wheel.name}: {missing}"
    assert "splice/verify/compare.py" in want and "splice/grammars/ptx.lark" in want   # the two that were lost
    with zipfile.ZipFile(wheel) as z:
        assert z.read("splice/grammars/ptx.lark") == (ROOT / "grammars" / "ptx.lark").read_bytes()
    stray = sorted(n for n in names if not n.startswith(("splice/", "splice-")))
    assert not stray, f"{wheel.name} puts files outside splice/: {stray}"
