"""Shared test fixtures: where the corpora are, and the gpu marker's skip."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PTX_CORPUS = SHARED / "ptx-corpus"
MODERN = ROOT / "tests" / "data" / "ptx" / "modern"
STANDIN = ROOT / "corpus"


def corpus_files():
    files = sorted(PTX_CORPUS.rglob("*.ptx")) if PTX_CORPUS.exists() else []
    files += sorted(MODERN.glob("*.ptx"))
    files += sorted(STANDIN.glob("*.ptx"))
    return files


# Deliberately invalid PTX in ZLUDA's spirv_fail: syntax errors splice must report, with place.
EXPECTED_SYNTAX_ERRORS = {"shared_ptr.ptx": (5, 1)}


def have_ptxas() -> bool:
    return shutil.which("ptxas") is not None


def _cuda_available() -> bool:
    try:
        import cupy  # noqa: F401

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001
        return False


def pytest_collection_modifyitems(config, items):
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
