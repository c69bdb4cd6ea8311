"""Tests for splice.ptx.sass against the real ptxas / cuobjdump / nvdisasm.

Skipped cleanly when ptxas (or a disassembler, for the SASS tests) is not installed. The inputs
are the generated PTX in tests/data/ptx/modern (see its manifest.yaml).
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from splice.ptx import sass

MODERN = Path(__file__).parent / "data" / "ptx" / "modern"


def _manifest() -> list[dict]:
    yaml = pytest.importorskip("yaml")
    with open(MODERN / "manifest.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["files"]


@pytest.fixture
def ptxas() -> str:
    """ptxas' path, for tests marked ``needs("ptxas")`` (the marker does the skipping)."""
    return sass.require_tool("ptxas")


# ---------------------------------------------------------------------------- pure parsing


PTXAS_V = """\
ptxas info    : 80 bytes gmem
ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90a'
ptxas info    : Function properties for _Z6kernelPf
    144 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 46 registers, used 1 barriers, 16392 bytes smem, 400 bytes cmem[0], 144 bytes cumulative stack size
ptxas info    : Compile time = 6.947 ms
ptxas info    : Function properties for _Z4polyfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""


def test_parse_resource_usage_text():
    res = sass.parse_resource_usage(PTXAS_V)
    k = res["_Z6kernelPf"]
    assert (k.is_entry, k.arch, k.registers, k.barriers) == (True, "sm_90a", 46, 1)
    assert (k.stack_frame, k.spill_stores, k.spill_loads) == (144, 8, 12)
    assert (k.shared, k.cumulative_stack, k.constant) == (16392, 144, ((0, 400),))
    f = res["_Z4polyfi"]
    assert not f.is_entry and f.registers is None and f.stack_frame == 0


def test_parse_diagnostics_text():
    diags = sass.parse_diagnostics(
        "ptxas /tmp/x/input.ptx, line 17; error   : Unknown symbol 'foo'\n"
        "ptxas /tmp/x/input.ptx, line 20; warning : Unused thing\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n",
        {"/tmp/x/input.ptx": "k.ptx"})
    assert [(d.file, d.line, d.severity) for d in diags] == [
        ("k.ptx", 17, "error"), ("k.ptx", 20, "warning"), (None, None, "fatal")]
    assert str(diags[0]) == "k.ptx:17: error: Unknown symbol 'foo'"


@pytest.mark.parametrize("given,want", [("sm_90a", "sm_90a"), (90, "sm_90"), ("90a", "sm_90a"),
                                        ("compute_89", "sm_89"), ("SM_100f", "sm_100f")])
def test_normalize_arch(given, want):
    assert sass.normalize_arch(given) == want


def test_normalize_arch_rejects_junk():
    with pytest.raises(ValueError):
        sass.normalize_arch("volta")


def test_env_override_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("SPLICE_PTXAS", str(tmp_path / "no-such-ptxas"))
    with pytest.raises(sass.ToolNotFoundError):
        sass.find_tool("ptxas")


def test_normalized_sass_from_text():
    text = """
        code for sm_90
                Function : k
        .headerflags    @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;          /* 0x00000a00ff017b82 */
                                                                   /* 0x000fe20000000f00 */
        /*0010*/              @P0  BRA 0x30 ;                      /* 0x0000000000000947 */
        /*0020*/                   EXIT ;                          /* 0x000000000000794d */
        /*0030*/                   BRA 0x30;                       /* 0x0000000000007947 */
        /*0040*/                   NOP;
    """
    assert sass.normalized_sass(text) == [
        "function k", "MOV R1, c[0x0][0x28]", "@P0 BRA @L3", "EXIT", "BRA @L3"]


# ---------------------------------------------------------------------------- ptxas


def test_manifest_files_exist_and_sizes():
    files = _manifest()
    assert 12 <= len(files) <= 100    # small files: the unseen kernels added some
    total = 0
    for e in files:
        p = MODERN / e["file"]
        assert p.is_file(), e["file"]
        assert len(p.read_text().splitlines()) <= 3000, e["file"]
        total += p.stat().st_size
        assert e["features"], e["file"]
    assert total <= 2 * 1024 * 1024


@pytest.mark.needs("ptxas")
def test_compile_resource_usage(ptxas):
    c = sass.compile_ptx(MODERN / "wgmma_sm90a.ptx", "sm_90a")
    assert c.cubin[:4] == b"\x7fELF"
    assert c.arch == "sm_90a"
    entries = {n: r for n, r in c.resources.items() if r.is_entry}
    assert len(entries) == 2
    for r in entries.values():
        assert r.registers is not None and r.registers > 0
        assert r.spill_stores == 0 and r.spill_loads == 0
        assert r.arch == "sm_90a"
    gemm = next(r for n, r in entries.items() if "wgmma_gemm_f16" in n)
    assert gemm.shared == 2 * 64 * 64 * 2  # sA + sB, f16


@pytest.mark.needs("ptxas")
def test_compile_text_input_and_funcs(ptxas):
    text = (MODERN / "calls_params_globals.ptx").read_text()
    c = sass.compile_ptx(text, 90)
    funcs = {n: r for n, r in c.resources.items() if not r.is_entry}
    assert "_Z4polyfi" in funcs and "_Z6divmodii" in funcs
    kern = c.resources["_Z12calls_kernelPfPKf6Paramsi"]
    assert kern.registers > 0 and kern.stack_frame == 144  # the by-value 144-byte struct


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_every_manifest_file_assembles(ptxas):
    for e in _manifest():
        c = sass.compile_ptx(MODERN / e["file"], e["arch"], e.get("opt_level", 3), e.get("ptxas_flags", ()))
        assert any(r.is_entry and (r.registers or 0) > 0 for r in c.resources.values()), e["file"]


@pytest.mark.needs("ptxas")
def test_broken_ptx_raises_with_line(ptxas, tmp_path):
    lines = (MODERN / "cp_async_pipeline.ptx").read_text().splitlines(keepends=True)
    idx = next(i for i, l in enumerate(lines) if l.strip().startswith("cp.async.commit_group"))
    lines[idx] = lines[idx].replace("cp.async.commit_group", "cp.async.commit_grup")
    with pytest.raises(sass.PtxasError) as ei:
        sass.compile_ptx("".join(lines), "sm_90", name="broken.ptx", repro_dir=tmp_path)
    err = ei.value
    assert idx + 1 in err.lines
    d = next(d for d in err.diagnostics if d.line == idx + 1)
    assert d.file == "broken.ptx" and d.severity == "error"
    assert "Repro command:" in str(err)
    assert err.returncode not in (0, None)
    assert err.command[0] == ptxas or Path(err.command[0]).name.startswith("ptxas")
    # the repro line names a real file holding the broken text
    repro_file = next(tok for tok in err.repro.split() if tok.endswith(".ptx"))
    assert Path(repro_file).parent == tmp_path and Path(repro_file).read_text() == "".join(lines)


@pytest.mark.needs("ptxas")
def test_text_input_leaves_nothing_in_the_temp_dir(ptxas, tmp_path, monkeypatch):
    """Without a repro_dir the failing text is not saved anywhere: the repro line says so."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(sass.PtxasError) as ei:
        sass.compile_ptx(".version 9.0\n.target sm_90\nbogus;\n", "sm_90")
    assert "<input.ptx>" in ei.value.repro
    assert list(tmp_path.iterdir()) == []


@pytest.mark.needs("ptxas")
def test_broken_path_input_reports_path(ptxas, tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.0\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{\n"
                   "\t.reg .b32 %r<2>;\n\tmov.b32 %r1, %r9;\n\tret;\n}\n")
    before = sorted(tmp_path.iterdir())
    with pytest.raises(sass.PtxasError) as ei:
        sass.compile_ptx(bad, "sm_90")
    assert 8 in ei.value.lines
    assert any(d.file == str(bad) for d in ei.value.diagnostics)
    assert str(bad) in ei.value.repro
    assert sorted(tmp_path.iterdir()) == before  # nothing written beside the input


@pytest.mark.needs("ptxas")
def test_debug_ptx_needs_unoptimised(ptxas):
    with pytest.raises(sass.PtxasError, match="Optimized debugging"):
        sass.compile_ptx(MODERN / "debug_full_G.ptx", "sm_90", 3)
    c = sass.compile_ptx(MODERN / "debug_full_G.ptx", "sm_90", None)
    assert c.resources["_Z12debug_kernelPKfPfi"].registers > 0


# ---------------------------------------------------------------------------- SASS


def _cosmetic_rewrite(text: str) -> str:
    """Whitespace / comment changes that must not change the SASS."""
    out = []
    for i, line in enumerate(text.splitlines()):
        s = line.strip()
        if s.startswith("//"):
            continue  # drop line comments
        if s.endswith(";") and not s.startswith("."):
            line = "    " + re.sub(r"[ \t]+", "  ", s) + f"  // note {i}"
        out.append(line)
    return "/* rewritten */\n" + "\n\n".join(out) + "\n"


def _flip_one_add(text: str) -> str:
    m = re.search(r"^(\s*)add\.s32(\s)", text, flags=re.M)
    assert m, "no add.s32 to flip"
    return text[: m.start()] + m.group(1) + "sub.s32" + m.group(2) + text[m.end():]


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_normalized_sass_deterministic_and_clean(ptxas):
    c = sass.compile_ptx(MODERN / "ldmatrix_stmatrix_mma.ptx", "sm_90")
    lines = sass.normalized_sass(c.cubin)
    assert lines == sass.normalized_sass(sass.compile_ptx(MODERN / "ldmatrix_stmatrix_mma.ptx", "sm_90").cubin)
    assert lines[0].startswith("function ")
    assert not any("/*" in l or "*/" in l or l.rstrip().endswith(";") for l in lines)
    ops = {l.split()[0] for l in lines if not l.startswith(("function", "@"))}
    assert "HMMA.16816.F32" in ops and any(o.startswith("LDSM") for o in ops)


@pytest.mark.needs("ptxas", "cuobjdump", "nvdisasm")
def test_normalized_sass_tools_agree(ptxas):
    c = sass.compile_ptx(MODERN / "calls_params_globals.ptx", "sm_90")
    assert sass.normalized_sass(c.cubin, tool="cuobjdump") == sass.normalized_sass(c.cubin, tool="nvdisasm")


@pytest.mark.parametrize("name,arch", [("warp_atomics_preds.ptx", "sm_90"), ("wgmma_sm90a.ptx", "sm_90a"),
                                       ("triton_softmax_sm90a.ptx", "sm_90a")])
@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_equal_cosmetic_changes(ptxas, name, arch):
    text = (MODERN / name).read_text()
    rewritten = _cosmetic_rewrite(text)
    assert rewritten != text
    eq, diff = sass.sass_equal(MODERN / name, rewritten, arch)
    assert eq, diff
    assert diff is None


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_equal_detects_add_to_sub(ptxas):
    text = (MODERN / "coop_groups_misc.ptx").read_text()
    eq, diff = sass.sass_equal(text, _flip_one_add(text), "sm_90")
    assert not eq
    assert diff and "instruction" in diff and "!=" in diff


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_equal_detects_shared_size_change(ptxas):
    text = (MODERN / "ldmatrix_stmatrix_mma.ptx").read_text()
    grown = text.replace(".b8 _ZZ16warp_mma_16x8x16PK6__halfS1_PfiE2sB[256];",
                         ".b8 _ZZ16warp_mma_16x8x16PK6__halfS1_PfiE2sB[512];", 1)
    assert grown != text
    eq, diff = sass.sass_equal(text, grown, "sm_90")
    assert not eq and "shared=" in diff


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_disassemble_returns_sass(ptxas):
    c = sass.compile_ptx(MODERN / "fp8_mma_sm89.ptx", "sm_90")
    text = sass.disassemble(c.cubin)
    assert "_Z13fp8_quant_mmaPK7__half2S1_PS_Pf" in text
    assert "HMMA" in text or "QMMA" in text or "F2FP" in text
