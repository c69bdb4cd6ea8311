"""Shared test set-up: where the corpora are, and one way to say what a test needs.

* ``@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")``: the one way a test says which CUDA tools
  it runs.  It is skipped, with the reason, unless every named tool is found by
  ``splice.ptx.sass.find_tool`` (``SPLICE_<TOOL>``, PATH, the nvidia wheels) -- the same look-up
  splice itself uses, so a test runs exactly when splice could.  Names are the tools' own;
  ``a|b`` is either (``splice.ptx.sass.disassemble`` takes cuobjdump, else nvdisasm; ``sass-mix``
  and ``nvdisasm -g`` line attribution need nvdisasm itself).  A ``SPLICE_<TOOL>`` naming a
  missing file is a configuration error, not a skip.  ``.ci/tool-matrix`` reruns the default
  suite with ptxas alone and with no CUDA tool: every undeclared need fails there.
* ``@pytest.mark.slow``: heavy cases (ptxas over whole layers, every cut of a module, hostile
  tables run command by command); deselected by default, ``python -m pytest -q -m slow`` runs
  them, as ``.ci/run`` does.
* External PTX corpora come from one setting, ``SPLICE_TEST_CORPUS`` (default: ``../shared/
  ptx-corpus`` beside the clone when it is there).  Tests over it carry ``@pytest.mark.corpus``
  (deselected by default in pyproject.toml; ``pytest -m corpus`` runs them, as CI does when the
  corpus is there) and take the ``ptx_corpus`` fixture, which skips with a reason when the
  default is absent and fails when the variable names a missing directory.
  ``tests/data/ptx/thirdparty`` is a small licensed subset of that corpus (its README says where
  each file comes from), so the default run on a bare clone still tests the hard cases.
* ``@pytest.mark.gpu``: skipped without cupy and a CUDA device.
* The run is spread over the machine's CPUs (``-n auto``) when pytest-xdist is installed (the
  ``test`` extra) and ``-n`` is not given (``-n0``: one process); the GPU tests stay on one worker
  (one GPU, timings), the others go where a worker is free.  Without pytest-xdist the run uses one
  process and says so at its end.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from splice.ptx import sass

ROOT = Path(__file__).resolve().parents[1]
_CORPUS_ENV = os.environ.get("SPLICE_TEST_CORPUS", "")
PTX_CORPUS = Path(_CORPUS_ENV).resolve() if _CORPUS_ENV else ROOT.parent / "shared" / "ptx-corpus"
DATA = ROOT / "tests" / "data"

#: tiny.ptx's phase 1 with its two n-tiles swapped (D0/D1 <-> D2/D3): the native the cut, bad-input
#: and hostile-input tests splice in (one text, so a change to tiny.ptx is made once)
TINY_SWAPPED = """mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t{%d2, %d3},
\t{%a0, %a1, %a2, %a3},
\t{%b2, %b3},
\t{%c0, %c0};
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t{%d0, %d1},
\t{%a0, %a1, %a2, %a3},
\t{%b0, %b1},
\t{%c0, %c0};
"""


def tree_digest(work: Path) -> dict:
    """Every entry under ``work`` (hidden ones included): path -> sha256, or a marker for a link or
    a directory.  Equal before and after a run: inputs byte-identical, nothing created or left."""
    import hashlib

    out = {}
    for dirpath, dirnames, filenames in os.walk(work):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(work))
            if p.is_symlink():
                out[rel] = "link -> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
MODERN = DATA / "ptx" / "modern"
THIRDPARTY = DATA / "ptx" / "thirdparty"
STANDIN = ROOT / "corpus"

#: the tools a test may need (``needs("ptxas", "cuobjdump|nvdisasm")``)
TOOLS = ("ptxas", "nvcc", "cuobjdump", "nvdisasm")


def corpus_present() -> bool:
    return PTX_CORPUS.is_dir()


def external_corpus() -> Path:
    """The external corpus directory, or a skip (default absent) / failure (named but absent)."""
    if corpus_present():
        return PTX_CORPUS
    if _CORPUS_ENV:
        pytest.fail(f"SPLICE_TEST_CORPUS={_CORPUS_ENV} is not a directory")
    pytest.skip(f"external PTX corpus not present ({PTX_CORPUS}; set SPLICE_TEST_CORPUS)")


@pytest.fixture
def ptx_corpus() -> Path:
    return external_corpus()


def bundled_files() -> list:
    """The PTX that ships with the clone: the third-party subset, the modern generated files,
    the stand-in layers.  The default test run sweeps these."""
    return sorted(THIRDPARTY.rglob("*.ptx")) + sorted(MODERN.glob("*.ptx")) + sorted(STANDIN.glob("*.ptx"))


def external_files() -> list:
    """The external corpus' PTX files (empty when it is absent): for ``corpus``-marked tests."""
    return sorted(PTX_CORPUS.rglob("*.ptx")) if corpus_present() else []


# Deliberately invalid PTX in ZLUDA's spirv_fail: syntax errors splice must report, with place.
EXPECTED_SYNTAX_ERRORS = {"shared_ptr.ptx": (5, 1)}


def missing_tool(need: str) -> str | None:
    """Why ``need`` (a tool of TOOLS, or ``a|b`` for either) is unavailable, or None when it is."""
    names = need.split("|")
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"needs({need!r}): unknown tool {unknown[0]!r} (one of {', '.join(TOOLS)}, or a|b)")
    if any(sass.find_tool(t) for t in names):
        return None
    where = " or ".join(f"SPLICE_{n.upper()}" for n in names)
    return f"needs {' or '.join(names)} (not on PATH, in {where} or the nvidia wheels)"


def _cuda_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver, no device: all mean "skip"
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: sweeps the external PTX corpus (SPLICE_TEST_CORPUS); "
                                       "deselected by default, run with -m corpus")
    config.addinivalue_line("markers", "needs(*tools): skip unless every tool is found "
                                       f"({', '.join(TOOLS)}, or a|b for either; via splice.ptx.sass.find_tool)")
    config.addinivalue_line("markers", "slow: heavy cases, deselected by default; run with -m slow (CI does)")
    config.addinivalue_line("markers", "xdist_group(name): the tests of a group run on one pytest-xdist worker")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``-n auto --dist loadgroup`` unless ``-n`` was given: set before pytest-xdist's own
    ``pytest_cmdline_main`` (this conftest registers after it, so its tryfirst hook runs first)
    reads them.  Not in ``addopts``: a machine without pytest-xdist (the GPU machine) would
    refuse every run, and GPU tests spread over 16 workers would share one GPU."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and not config.option.collectonly:
        config.option.numprocesses = "auto"
        config.option.dist = "loadgroup"


def pytest_terminal_summary(terminalreporter, config):
    if not config.pluginmanager.hasplugin("xdist"):
        terminalreporter.write_line("one process: pytest-xdist is not installed (pip install -e '.[test]' "
                                    "spreads the run over the CPUs)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.xdist_group("gpu"))   # one worker: one GPU, and its timings
        for mark in item.iter_markers("needs"):
            reasons = [r for r in map(missing_tool, mark.args) if r]
            if reasons:
                item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))
    if any("gpu" in item.keywords for item in items) and not _cuda_available():
        skip = pytest.mark.skip(reason="needs cupy and a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def _session_compile_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("splice-cache")


@pytest.fixture(autouse=True)
def _compile_cache_dir(_session_compile_cache, monkeypatch):
    """Commands cache ptxas results under $SPLICE_CACHE: keep the tests' out of ~/.cache."""
    monkeypatch.setenv("SPLICE_CACHE", str(_session_compile_cache))
