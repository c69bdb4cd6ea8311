"""`splice probe` user errors: every one exits 2 with the spec file named (line:col where there
is a line), no traceback, and no input modified -- all before anything would run on a GPU
(these run without cupy: the spec and the .param check come first)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GEMM = (ROOT / "probes/gemm_sm80.yaml").read_text()
TRITON = (ROOT / "probes/matmul_sm80.yaml").read_text()
GEMM_PTX = str(ROOT / "corpus/gemm/gemm_sm80.ptx")
TRITON_PTX = str(ROOT / "corpus/triton/matmul_sm80.ptx")
ENC5 = (ROOT / "probes/enc5.yaml").read_text()
ENC5_PTX = str(ROOT / "corpus/enc5.ptx")


def _abs(text: str) -> str:
    return text.replace("ptx: corpus/", f"ptx: {ROOT}/corpus/")


def _sub(text: str, old: str, new: str) -> str:
    assert old in text, old
    return _abs(text.replace(old, new, 1))


# (case, spec text, module, extra args, expected fragment, line:col expected?)
CASES = [
    ("bad yaml", "name: [x\n", GEMM_PTX, [], "YAML", True),
    ("not a mapping", "- a\n- b\n", GEMM_PTX, [], "expected a mapping", True),
    ("empty file", "\n", GEMM_PTX, [], "empty file", False),
    ("unknown key", _sub(GEMM, "seed: 11", "seed: 11\nsede: 3"), GEMM_PTX, [], "unknown key 'sede'", True),
    ("wrong entry", _sub(GEMM, "entry: splice_gemm_f16f32", "entry: gemm"), GEMM_PTX, [],
     "has no .entry 'gemm'", True),
    ("block over 1024", _sub(GEMM, "block: [128]", "block: [1024, 2]"), GEMM_PTX, [],
     "more than 1024", True),
    ("block null", _sub(GEMM, "block: [128]", "block: null"), GEMM_PTX, [],
     "expected a list of 1..3 integers", True),
    ("grid null", _sub(GEMM, "grid: [32, 32]", "grid: null"), GEMM_PTX, [], "launch.grid", True),
    ("negative bytes", _sub(GEMM, "  shape: [1024, 1024]\n  role: output",
                            "  bytes: -4\n  role: output"), GEMM_PTX, [], "below 1", True),
    ("zero shape", _sub(GEMM, "shape: [1024, 1024]\n  role: output", "shape: [0, 1024]\n  role: output"),
     GEMM_PTX, [], "positive integer", True),
    ("shape placeholder", _sub(GEMM, "shape: [1024, 1024]\n  role: output", "shape: null\n  role: output"),
     GEMM_PTX, [], "shape", True),
    ("unknown dtype", _sub(GEMM, "dtype: f32", "dtype: f24"), GEMM_PTX, [], "not a buffer element type", True),
    ("pred param", _sub(GEMM, "{name: M, kind: scalar, dtype: s32", "{name: M, kind: scalar, dtype: pred"),
     GEMM_PTX, [], ".pred is not a legal .param type", True),
    ("unknown role", _sub(GEMM, "role: output", "role: sink"), GEMM_PTX, [], "not one of input", True),
    ("unknown fill", _sub(GEMM, "rule: normal", "rule: gaussian"), GEMM_PTX, [], "unknown fill rule", True),
    ("fill from missing", _sub(GEMM, "{rule: normal, seed: 2, mean: 0.0, std: 0.5}", "{rule: from, path: nope.npy}"),
     GEMM_PTX, [], "no such file 'nope.npy'", True),
    ("e5m2 nan code", _sub(GEMM, "{rule: normal, seed: 2, mean: 0.0, std: 0.5}", "{rule: e5m2, max_code: 0x7C}"),
     GEMM_PTX, [], "NaN/inf code", True),
    ("too few params", _sub(GEMM, "- {name: ldc, kind: scalar, dtype: s32, value: 1024}\n", ""), GEMM_PTX, [],
     "8 parameter(s) described, but splice_gemm_f16f32 declares 9", True),
    ("scalar size", _sub(GEMM, "{name: K, kind: scalar, dtype: s32", "{name: K, kind: scalar, dtype: s64"),
     GEMM_PTX, [], "PTX parameter is 4 bytes", True),
    ("float vs int", _sub(GEMM, "{name: K, kind: scalar, dtype: s32, value: 1024}",
                          "{name: K, kind: scalar, dtype: f32, value: 1024.0}"),
     GEMM_PTX, [], "a .f32 scalar, but the PTX declares .u32", True),
    ("pointer vs u32", _sub(GEMM, "- {name: M, kind: scalar, dtype: s32, value: 1024}",
                            "- {name: M, kind: buffer, dtype: f16, shape: [4], role: input}"), GEMM_PTX, [],
     "a buffer (an 8-byte pointer), but the PTX parameter is 4 bytes", True),
    ("named out of place", _sub(TRITON, "- {name: M, kind: scalar", "- {name: param_4, kind: scalar"), TRITON_PTX, [],
     "named like .param 4", True),
    ("reqntid", _sub(TRITON, "block: [128]", "block: [256]"), TRITON_PTX, [], "requires .reqntid 128", True),
    ("cluster not dividing", _sub(TRITON, "block: [128]", "block: [128]\n  cluster: [3]"), TRITON_PTX, [],
     "not a multiple of the cluster", True),
    ("frame not output", _sub(TRITON, "frame: {field: c}", "frame: {field: a}"), TRITON_PTX, [], "not an output", True),
    ("negative runs", _abs(GEMM), GEMM_PTX, ["--runs", "-1"], "--runs -1", False),
    ("struct size", None, None, [], "a 144-byte struct, but the PTX array is 136 bytes", True),
    ("unaligned field", _sub(ENC5, "    offset: 40\n", "    offset: 44\n"), ENC5_PTX, [], "is not 8-byte aligned", True),
    ("overlapping fields", _sub(ENC5, "    offset: 40\n", "    offset: 8\n"), ENC5_PTX, [], "overlaps", True),
    ("field past the struct", _sub(ENC5, "  size: 144\n", "  size: 100\n"), ENC5_PTX, [], "> params.size 100", True),
]


def _struct_case(tmp: Path) -> tuple:
    """enc5's spec against a copy of enc5 whose parameter block is 8 bytes shorter."""
    ptx = (ROOT / "corpus/enc5.ptx").read_text().replace("_param_0[144]", "_param_0[136]", 1)
    mod = tmp / "enc5_short.ptx"
    mod.write_text(ptx)
    return _abs((ROOT / "probes/enc5.yaml").read_text()), str(mod)


@pytest.mark.parametrize("case, text, module, extra, expect, has_line", CASES, ids=[c[0] for c in CASES])
def test_probe_spec_errors_exit_2(tmp_path, capsys, case, text, module, extra, expect, has_line):
    from splice.cli import main

    if text is None:
        text, module = _struct_case(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    before = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (spec, module)}
    rc = main(["probe", str(spec), module, *extra])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    assert expect in err, err
    assert str(spec) in err if case != "negative runs" else "spec.yaml" in err
    if has_line:
        assert f"{spec}:" in err and err.split(f"{spec}:", 1)[1][:1].isdigit(), err
    assert before == {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (spec, module)}
    assert sorted(x.name for x in tmp_path.iterdir() if x.name != "enc5_short.ptx") == ["spec.yaml"]


def test_param_mismatch_quotes_the_ptx_declaration(tmp_path, capsys):
    from splice.cli import main

    spec = tmp_path / "s.yaml"
    spec.write_text(_sub(GEMM, "{name: K, kind: scalar, dtype: s32", "{name: K, kind: scalar, dtype: u64"))
    assert main(["probe", str(spec), GEMM_PTX]) == 2
    err = capsys.readouterr().err
    line = next(i for i, ln in enumerate(spec.read_text().splitlines(), 1) if "name: K," in ln)
    assert err.startswith(f"{spec}:{line}:3: params[5]: K:")
    assert "PTX: " in err and "gemm_sm80.ptx:21: .param .u32 splice_gemm_f16f32_param_5" in err


def test_probe_init_errors(tmp_path, capsys):
    from splice.cli import main

    assert main(["probe", "init"]) == 2
    assert "needs a module" in capsys.readouterr().err
    assert main(["probe", "init", str(tmp_path / "nope.ptx")]) == 2
    mod = tmp_path / "m.ptx"
    mod.write_text((ROOT / "corpus/gemm/gemm_sm80.ptx").read_text())
    assert main(["probe", "init", str(mod), "-o", str(mod)]) == 2
    assert "refusing to write the output onto an input" in capsys.readouterr().err
    assert main(["probe", "init", str(mod), "--entry", "nope"]) == 2
    assert "no entry 'nope'" in capsys.readouterr().err


def test_no_cupy_is_said_before_any_cubin(monkeypatch, capsys):
    """Without cupy (or a GPU) the probe stops after the spec check, before ptxas runs."""
    import importlib.util

    import splice.probe.run.session as session
    from splice.cli import main

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed here")

    def no_build(*a, **k):
        raise AssertionError("a cubin was built")

    monkeypatch.setattr(session, "compile_many", no_build)
    assert main(["probe", str(ROOT / "recipes/gemm_f16f32_p1.yaml")]) == 2
    err = capsys.readouterr().err
    assert "needs cupy and a CUDA GPU" in err and "Traceback" not in err
    assert "gemm_f16f32_p1.yaml: splice probe needs cupy" in err          # the file asked for


def test_missing_cupy_names_the_file_even_where_cupy_exists(monkeypatch):
    import sys

    from splice.errors import SpliceError
    from splice.probe.run.device import import_cupy

    monkeypatch.setitem(sys.modules, "cupy", None)          # `import cupy` raises ImportError
    with pytest.raises(SpliceError) as e:
        import_cupy("probes/enc5.yaml")
    assert str(e.value).startswith("probes/enc5.yaml: splice probe needs cupy")
