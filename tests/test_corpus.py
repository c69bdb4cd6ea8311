"""The stand-in enc5/dec1 corpus: structure of the committed PTX against the
notes' phase tables (corpus/*.expect.yaml), ptxas, and regeneration."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from splice.ptx import sass

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
LAYERS = ("enc5", "dec1")

MMA_OPCODE = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"


# ---------------------------------------------------------------- a simple statement scan

def entry_body(ptx: str) -> str:
    i = ptx.index(".entry")
    return ptx[ptx.index("{", ptx.index(")", i)) + 1:]


def statements(ptx: str) -> list[str]:
    """Statements of the entry body: instructions (multi-line ones joined), labels,
    and wrapped ``{ ... }`` blocks as one statement each; comments dropped."""
    body = re.sub(r"//[^\n]*", "", entry_body(ptx))
    out: list[str] = []
    cur, depth = "", 0
    for tok in re.split(r"([{};\n])", body):
        if tok == "{":
            depth += 1
            cur += tok
        elif tok == "}":
            depth -= 1
            cur += tok
            if depth == 0 and cur.strip().startswith("{"):
                out.append(cur.strip())
                cur = ""
        elif tok == ";" and (depth == 0 or (depth == 1 and not cur.strip().startswith("{"))):
            out.append(cur.strip() + ";")
            cur = ""
        elif tok == "\n":
            if depth == 0 and re.match(r"^\s*\$?[\w$]+:\s*$", cur):
                out.append(cur.strip())
                cur = ""
            else:
                cur += " "
        else:
            cur += tok
    return [s for s in out if s not in ("", ";", "}")]


def phases(st: list[str]) -> list[tuple[int, int]]:
    """Maximal runs of adjacent mma statements, as (first, last) statement indices."""
    runs, start = [], None
    for k, s in enumerate(st):
        if s.startswith("mma.sync"):
            if start is None:
                start = k
        elif start is not None:
            runs.append((start, k - 1))
            start = None
    if start is not None:
        runs.append((start, len(st) - 1))
    return runs


def imm_defs(st: list[str]) -> dict[str, tuple[str, int]]:
    """%rdN -> (source, immediate) for add.s64 %rdN, %src, IMM; (None, 0) for other defs."""
    defs: dict[str, tuple[str | None, int]] = {}
    for s in st:
        m = re.match(r"add\.s64\s+(%rd\d+),\s*(%rd\d+),\s*(-?\d+);", s)
        if m:
            defs[m.group(1)] = (m.group(2), int(m.group(3)))
            continue
        m = re.match(r"[\w.]+\s+(%rd\d+),", s)
        if m:
            defs[m.group(1)] = (None, 0)
    return defs


def resolve(reg: str, defs) -> int:
    off = 0
    while reg in defs and defs[reg][0] is not None:
        src, imm = defs[reg]
        off += imm
        reg = src
    return off


def loads(seg: list[str], defs) -> dict[str, list[int]]:
    """Weight (ld.weak v4) and table-word (ld.global.u32 at a large immediate) offsets."""
    v4, u32 = [], []
    for s in seg:
        m = re.match(r"ld\.weak\.global\.ca\.v4\.u32\s*\{[^}]*\},\s*\[(%rd\d+)\];", s)
        if m:
            v4.append(resolve(m.group(1), defs))
            continue
        m = re.match(r"ld\.global\.u32\s+%r\d+,\s*\[(%rd\d+)\+(\d+)\];", s)
        if m and int(m.group(2)) >= 1024:
            u32.append(int(m.group(2)) + resolve(m.group(1), defs))
    return {"v4": v4, "u32": u32}


# registers that fold part of a slot base (W + stride*tid.z + base), per the notes
FOLDED_BASE = {("dec1", 18432): 25216}


@pytest.fixture(scope="module", params=LAYERS)
def layer(request):
    name = request.param
    ptx = (CORPUS / f"{name}.ptx").read_text()
    expect = yaml.safe_load((CORPUS / f"{name}.expect.yaml").read_text())
    st = statements(ptx)
    return {"name": name, "ptx": ptx, "expect": expect, "st": st, "phases": phases(st)}


# ---------------------------------------------------------------- the expect files themselves

@pytest.mark.parametrize("name", LAYERS)
def test_expect_is_consistent(name):
    e = yaml.safe_load((CORPUS / f"{name}.expect.yaml").read_text())
    ph = e["phases"]
    assert [p["index"] for p in ph] == list(range(1, e["phase_count"] + 1))
    assert sum(p["mma"] for p in ph) == e["mma_total"]
    for p in ph:
        m, n, k = p["shape"]
        assert (m // 16) * (n // 8) * (k // 32) == p["mma"], p["index"]
        assert p["chains"] * p["chain_length"] == p["mma"], p["index"]
        assert p["chain_length"] == k // 32, p["index"]
        assert p["grid"] == ("full" if p["tool_shape"] == p["shape"] else "band"), p["index"]
    nw = [p["index"] for p in ph if p["weight_bytes"] is None]
    assert nw == e["phases_without_weight"]


def test_expect_enc5_facts():
    e = yaml.safe_load((CORPUS / "enc5.expect.yaml").read_text())
    ph = {p["index"]: p for p in e["phases"]}
    assert (e["phase_count"], e["mma_total"], e["weight_image_bytes"]) == (61, 1306, 431124)
    assert ph[12]["shape"] == [64, 32, 96] and (ph[12]["chains"], ph[12]["chain_length"]) == (16, 3)
    for i in range(21, 60, 2):
        assert ph[i]["shape"] == [16, 32, 160] and (ph[i]["chains"], ph[i]["chain_length"]) == (4, 5)
    assert (ph[61]["chains"], ph[61]["chain_length"]) == (2, 5)
    # listed per-phase offsets (stride 10304), not the prose's 10240
    assert ph[25]["weight_bytes"][0] == 243072 and ph[59]["weight_bytes"][0] == 418240
    assert ph[59]["bias_bytes"] == [423360, 423408] and ph[60]["weight_bytes"] == [423424, 428044]
    assert ph[61]["weight_bytes"] == [428544, 430604] and ph[61]["bias_bytes"] == [431104, 431120]
    assert ph[11]["bias_bytes"] == [10560, 22348] and ph[11]["slot_stride"] == 27648


def test_expect_dec1_facts():
    e = yaml.safe_load((CORPUS / "dec1.expect.yaml").read_text())
    ph = {p["index"]: p for p in e["phases"]}
    assert (e["phase_count"], e["mma_total"], e["smem_bytes"]) == (26, 632, 6400)
    assert ph[1]["weight_bytes"] == [0, 11788] and ph[1]["bias_bytes"] == [24576, 24816]
    assert ph[1]["slot_stride"] == 12288 and ph[1]["bias_slot_stride"] == 256
    assert [ph[i]["weight_bytes"][0] for i in (2, 3, 4, 5)] == [25216, 27264, 26240, 28288]
    assert ph[26]["bias_bytes"] == [96768, 96784]


# ---------------------------------------------------------------- the PTX against the notes

def test_entry_param_and_smem(layer):
    e, ptx = layer["expect"], layer["ptx"]
    entry = e["entry"]
    assert re.search(rf"\.visible \.entry {entry}\(\s*\.param \.align 8 \.b8 {entry}_param_0\[144\]\s*\)", ptx)
    assert ptx.count(".entry") == 1
    struct = "DldnEngineSwinEncParamsStructBase" if layer["name"] == "enc5" else "DldnEngineSwinDecParamsStructBase"
    smem = f"_ZZ{len(entry)}{entry}{len(struct)}{struct}E4smem"
    assert re.search(rf"\.shared \.align 4 \.b8 {smem}\[{e['smem_bytes']}\];", ptx)
    read = set()
    for addr in re.findall(r"ld\.param\.[\w.]+\s+[^\[]*\[([^\]]+)\]", ptx):
        m = re.search(r"\+(\d+)$", addr)
        read.add(int(m.group(1)) if m else 0)
    for off in e["param_offsets"].values():
        assert off in read, f"param_0+{off} is never read"


def test_phase_mma_counts_and_adjacency(layer):
    e, ph = layer["expect"], layer["phases"]
    assert len(ph) == e["phase_count"]
    assert [b - a + 1 for a, b in ph] == [p["mma"] for p in e["phases"]]
    assert sum(b - a + 1 for a, b in ph) == e["mma_total"] == layer["ptx"].count(MMA_OPCODE)


def test_mma_four_line_form(layer):
    pat = re.compile(re.escape(MMA_OPCODE) + r"\n\t\{%r\d+, %r\d+\},\n\t\{%r\d+, %r\d+, %r\d+, %r\d+\},"
                     r"\n\t\{%r\d+, %r\d+\},\n\t\{%r\d+, %r\d+\};")
    assert len(pat.findall(layer["ptx"])) == layer["expect"]["mma_total"]


def test_weight_and_bias_byte_ranges(layer):
    st, ph, e = layer["st"], layer["phases"], layer["expect"]
    defs = imm_defs(st)
    prev_end = -1
    for (a, b), p in zip(ph, e["phases"]):
        got = loads(st[prev_end + 1:a], defs)
        base = FOLDED_BASE.get((layer["name"], p["slot_stride"]), 0)
        v4 = [o + base for o in got["v4"]]
        rng_v4 = [min(v4), max(v4) + 12] if v4 else None
        rng_u32 = [min(got["u32"]), max(got["u32"])] if got["u32"] else None
        if p["weight_bytes"] is not None:
            assert rng_v4 == p["weight_bytes"], f"phase {p['index']} weight"
            assert rng_u32 == p["bias_bytes"], f"phase {p['index']} bias"
        else:
            assert rng_v4 == p["bias_bytes"], f"phase {p['index']} C seeds"
            assert rng_u32 is None
        prev_end = b


def test_slot_strides_present(layer):
    ptx = layer["ptx"]
    if layer["name"] == "enc5":
        assert re.search(r"mul\.lo\.s32\s+%r\d+, %r\d+, 13824;", ptx)  # tid.z*13824 halves = 27648 B
    else:
        assert re.search(r"mul\.lo\.s32\s+%r\d+, %r\d+, 12288;", ptx)
        assert re.search(r"mad\.lo\.s32\s+%r\d+, %r\d+, 18432, 25216;", ptx)


EPILOGUE_FORMS = [
    r"ld\.weak\.global\.ca\.v4\.u32",
    r"cvt\.rn\.satfinite\.e4m3x2\.f16x2",
    r"shfl\.sync\.bfly\.b32",
    r"rcp\.approx\.ftz\.f32",
    r"rsqrt\.approx\.ftz\.f32",
    r"ex2\.approx\.ftz\.f32",
    r"div\.approx\.ftz\.f32",
    r"movmatrix\.sync\.trans\.aligned\.m8n8\.b16",
    r"sust\.b\.2d\.v4\.b16\.zero",
    r"tex\.base\.2d\.v4\.f16\.s32",
    r"and\.b32\s+%r\d+, %r\d+, 2145419232;",   # (u << 5) & 0x7FE07FE0
    r"mov\.f32 %f\d+, 0f3C8CCB50;",             # 0.017186790704727173
    r"mov\.f64 %fd\d+, 0dBFE1CC0000000000;",    # -0.55615234375
    r"mov\.f64 %fd\d+, 0d3FE1CC0000000000;",
    r"mov\.f32 %f\d+, 0f3F6D6000;",             # 0.92724609375
    r"mov\.f32 %f\d+, 0f3FB00000;",             # 1.375
    r"mov\.f32 %f\d+, 0f3ED306EB;",             # activation constants
    r"mov\.f32 %f\d+, 0f3DA60DD6;",
    r"mov\.f32 %f\d+, 0f3F000000;",
    r"mov\.f32 %f\d+, 0f40000000;",
    r"mov\.f64 %fd\d+, 0d3F20000000000000;",    # 2^-13
    r"mul\.ftz\.f32\s+%f\d+, %f\d+, 0f3FB8AA3B;",
    r"ld\.global\.v2\.u16",
    r"st\.global\.u32",
    r"bar\.sync\s+0;",
]


@pytest.mark.parametrize("form", EPILOGUE_FORMS)
def test_epilogue_instruction_forms(layer, form):
    assert re.search(form, layer["ptx"]), form


def test_dec1_specific_forms():
    ptx = (CORPUS / "dec1.ptx").read_text()
    assert re.search(r"tex\.base\.2d\.v4\.f16\.f32", ptx)
    assert re.search(r"cvt\.rn\.f16x2\.e4m3x2", ptx)
    assert len(re.findall(r"tex\.base\.2d\.v4\.f16\.f32", ptx)) == 9
    assert len(re.findall(r"tex\.base\.2d\.v4\.f16\.s32", ptx)) == 2
    assert len(re.findall(r"st\.global\.u32", ptx)) == 16


def test_enc5_specific_counts():
    ptx = (CORPUS / "enc5.ptx").read_text()
    assert len(re.findall(r"movmatrix\.sync\.trans\.aligned\.m8n8\.b16", ptx)) == 48
    assert len(re.findall(r"tex\.base\.2d\.v4\.f16\.s32", ptx)) == 9
    assert len(re.findall(r"st\.global\.u32", ptx)) == 20


# ---------------------------------------------------------------- toolchain

@pytest.mark.slow
@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("name", LAYERS)
def test_ptxas_sm90_compiles(name, tmp_path):
    res = subprocess.run([sass.require_tool("ptxas"), "-arch=sm_90", "-O3", str(CORPUS / f"{name}.ptx"),
                          "-o", str(tmp_path / f"{name}.cubin")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / f"{name}.cubin").stat().st_size > 0


def _nvcc_differs() -> str | None:
    """Why the local nvcc cannot rebuild the committed PTX byte for byte (another build), or
    None when it can (or is missing: ``needs("nvcc")`` says that)."""
    nvcc = sass.find_tool("nvcc")
    if nvcc is None:
        return None
    ver = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    head = (CORPUS / "enc5.ptx").read_text().splitlines()[:8]
    build = next((line.split(":", 1)[1].strip() for line in head if "Compiler Build ID" in line), None)
    if build is None or build.split("-")[-1] not in ver:
        return f"local nvcc differs from the one that generated the corpus ({build})"
    return None


@pytest.mark.slow
@pytest.mark.needs("nvcc")
@pytest.mark.skipif(_nvcc_differs() is not None, reason=str(_nvcc_differs()))
def test_committed_ptx_equals_fresh_build(tmp_path):
    res = subprocess.run([sys.executable, str(CORPUS / "build.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for name in LAYERS:
        assert (tmp_path / f"{name}.ptx").read_text() == (CORPUS / f"{name}.ptx").read_text(), name
