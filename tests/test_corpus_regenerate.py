"""corpus/regenerate.py, what the corpus build scripts share: ``--check`` says identical,
identical apart from nvcc's build-folder hash, or DIFFERS, and fails only on the last."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _regenerate():
    spec = importlib.util.spec_from_file_location("_regenerate", ROOT / "corpus" / "regenerate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NAME = ".global .align 1 .b8 _ZN50_INTERNAL_{0}_19_k_cu_bb8d297f4cuda3std3__452_GLOBAL__N__{0}_19_k_cu_6ignoreE[1];\n"


def test_check_tells_the_three_cases_apart(tmp_path, capsys):
    rg = _regenerate()
    committed = tmp_path / "k.ptx"
    committed.write_text(NAME.format("0465d10b") + "ret;\n")
    assert rg.write_or_check({committed: NAME.format("0465d10b") + "ret;\n"}, check=True) == 0
    assert rg.write_or_check({committed: NAME.format("1be3bd5e") + "ret;\n"}, check=True) == 0
    assert rg.write_or_check({committed: NAME.format("1be3bd5e") + "exit;\n"}, check=True) == 1
    assert rg.write_or_check({tmp_path / "missing.ptx": "ret;\n"}, check=True) == 1
    assert capsys.readouterr().out.splitlines() == [
        "k.ptx: identical", "k.ptx: identical apart from nvcc's build-folder hash", "k.ptx: DIFFERS",
        "missing.ptx: DIFFERS"]
    assert committed.read_text() == NAME.format("0465d10b") + "ret;\n"      # --check writes nothing


def test_without_check_the_fresh_build_is_written(tmp_path):
    rg = _regenerate()
    out = tmp_path / "k.ptx"
    assert rg.write_or_check({out: "ret;\n"}, check=False) == 0
    assert out.read_text() == "ret;\n"
