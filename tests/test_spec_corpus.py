"""The stand-in layers against the notes' phase tables (corpus/*.expect.yaml).

Strict when the files exist; skipped with the reason when the corpus has not been generated."""
from __future__ import annotations

from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["enc5", "dec1"]


def _load(layer):
    ptx = ROOT / "corpus" / f"{layer}.ptx"
    exp = ROOT / "corpus" / f"{layer}.expect.yaml"
    if not ptx.exists() or not exp.exists():
        pytest.skip(f"corpus/{layer}.ptx / corpus/{layer}.expect.yaml not generated yet "
                    "(the stand-in layers come from corpus/build.py)")
    from splice.analysis import Kernel

    expect = yaml.safe_load(exp.read_text())
    return Kernel.load(ptx, expect.get("entry")), expect


_cache = {}


def kernel(layer):
    if layer not in _cache:
        _cache[layer] = _load(layer)
    return _cache[layer]


@pytest.mark.parametrize("layer", LAYERS)
def test_phase_count_and_mma(layer):
    k, e = kernel(layer)
    assert len(k.phases) == e["phase_count"]
    assert sum(len(p.mma) for p in k.phases) == e["mma_total"]
    assert [len(p.mma) for p in k.phases] == [p["mma"] for p in e["phases"]]


@pytest.mark.parametrize("layer", LAYERS)
def test_shapes_chains_grid(layer):
    k, e = kernel(layer)
    got = [(p.index, list(p.shape), list(p.naive_shape), len(p.chains), p.tiles[2], p.grid)
           for p in k.phases]
    want = [(p["index"], p["shape"], p["tool_shape"], p["chains"], p["chain_length"], p["grid"])
            for p in e["phases"]]
    assert got == want


@pytest.mark.parametrize("layer", LAYERS)
def test_weight_bias_slot(layer):
    k, e = kernel(layer)
    got = [(p.index, list(p.weight_bytes) if p.weight_bytes else None,
            list(p.bias_bytes) if p.bias_bytes else None, p.slot_stride) for p in k.phases]
    want = [(p["index"], p["weight_bytes"], p["bias_bytes"], p["slot_stride"]) for p in e["phases"]]
    assert got == want


@pytest.mark.parametrize("layer", LAYERS)
def test_bias_slot_stride(layer):
    k, e = kernel(layer)
    for p, ep in zip(k.phases, e["phases"]):
        if "bias_slot_stride" in ep:
            assert p.bias_slot_stride == ep["bias_slot_stride"], p.index


@pytest.mark.parametrize("layer", LAYERS)
def test_no_weight_phases_and_image(layer):
    k, e = kernel(layer)
    assert [p.index for p in k.phases if p.weight_bytes is None] == e["phases_without_weight"]
    from splice.analysis.spec import weight_image_bytes

    assert weight_image_bytes(k) == e["weight_image_bytes"]


@pytest.mark.parametrize("layer", LAYERS)
def test_tables(layer):
    k, e = kernel(layer)
    from splice.analysis.spec import table_loads

    got = {tuple(t["bytes"]): t for t in table_loads(k)}
    for t in e.get("tables", ()):
        assert tuple(t["bytes"]) in got, (t, sorted(got))
        n, kind = t["loads"].split(" x ")
        assert got[tuple(t["bytes"])]["loads"] == int(n)
        assert got[tuple(t["bytes"])]["opcode"] == kind


def test_enc5_phase8_abi():
    k, e = kernel("enc5")
    p = k.phase(8)
    abi = k.phase_abi(8)
    ins = {(r.role, r.reg) for r in abi.live_in}
    want = {("a", r) for r in p.a_regs} | {("b", r) for r in p.b_regs} | {("c", r) for r in p.c_regs}
    assert ins == want
    assert [r.reg for r in abi.live_out] == p.d_regs
    assert all(r.role == "d" for r in abi.live_out)
    assert all(r.type == ".b32" for r in abi.live_in + abi.live_out)
    assert len(p.a_regs) == 24 and len(p.b_regs) == 8 and len(p.d_regs) == 48
    # every B register comes from the weight image, tid.z slot included
    for r in p.b_regs:
        assert abi.values[r].startswith("ld.global [W + 27648·tid.z + 16·laneid + ")


@pytest.mark.parametrize("layer", LAYERS)
def test_param_fields(layer):
    k, e = kernel(layer)
    offs = e.get("param_offsets") or {}
    from splice.analysis.spec import param_fields

    read = {f["offset"] for f in param_fields(k)}
    for name, off in offs.items():
        assert off in read, (name, off, sorted(read))
    for off in e.get("params_unread", ()):
        assert off not in read


# ---- no crash over the shared PTX corpus ------------------------------------------------------

def _scan(files) -> int:
    """Kernel.load + phases + provenance + epilogues + ABIs for every entry of every file that
    parses; the number of entries analysed."""
    from splice.analysis import Kernel
    from splice.analysis.spec import build_spec
    from splice.ptx import parse_file

    entries = 0
    for f in files:
        try:
            mod = parse_file(str(f))
        except Exception:
            continue  # the front end's business; this scan covers what parses
        for fn in mod.entries():
            if fn.body is None:
                continue
            k = Kernel(mod, fn.name)
            build_spec(k)
            if k.phases:
                k.phase_abi(1)
            if k.last_number > 1:
                k.abi(1, k.last_number)
            entries += 1
    return entries


def test_bundled_ptx_no_crash():
    """The scan over the PTX that ships with the clone (third-party subset, modern files)."""
    assert _scan(sorted((ROOT / "tests" / "data" / "ptx").rglob("*.ptx"))) >= 80


@pytest.mark.corpus
def test_ptx_corpus_no_crash(ptx_corpus):
    """The same over the external corpus (about 7 s for ~300 files)."""
    assert _scan(sorted(ptx_corpus.rglob("*.ptx"))) > 300
