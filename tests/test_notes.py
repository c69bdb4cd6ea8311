"""`splice notes`: the Markdown draft on the stand-in layers, and a no-crash scan."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.analysis.notes import notes_markdown
from splice.analysis.notes_facts import Facts, f16_of

from .conftest import external_files

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def enc5():
    k = Kernel.load(ROOT / "corpus" / "enc5.ptx")
    t = time.time()
    md = notes_markdown(k)
    return k, md, time.time() - t


@pytest.fixture(scope="module")
def dec1():
    k = Kernel.load(ROOT / "corpus" / "dec1.ptx")
    return k, notes_markdown(k)


def _section(md, head):
    i = md.index(head)
    j = md.find("\n---\n", i)
    return md[i:j if j > 0 else len(md)]


def test_f16_rounding():
    assert f16_of(0.017186790704727173) == (0x2466, 0.017181396484375)
    assert f16_of(-0.55615234375)[0] == 0xB873
    assert f16_of(1e6) is None


def test_enc5_deterministic(enc5):
    """(Its speed is bench/'s business: a timed assertion fails on a loaded machine.)"""
    k, md, _dt = enc5
    assert notes_markdown(Kernel.load(ROOT / "corpus" / "enc5.ptx")) == md


def test_enc5_constants_table(enc5):
    _k, md, _ = enc5
    row = next(l for l in md.splitlines() if l.startswith("| `0f3C8CCB50`"))
    assert "0x2466 = 0.017181396484375" in row
    row = next(l for l in md.splitlines() if l.startswith("| `0f3ED306EB`"))
    assert "0x3698" in row and "E21" in row and "E59" in row      # materialised in E21, reused later
    assert re.search(r"`0f3ED306EB` \(%f\d+\) is defined in E21 and read again in E23", md)


def test_enc5_e60_subsections(enc5):
    from splice.analysis.vocab import find_profile, vocabulary

    k, md, _ = enc5
    F = Facts(k, vocabulary(k, find_profile(k.name)))     # the DLDN profile's words
    e60 = next(e for e in F.epis if e.index == 60)
    runs = F.subsections(e60)
    names = [r["name"] for r in runs]
    assert names[0].startswith("requantise")
    scatter = next(r for r in runs if r["name"] == "global stores into param_0+48")
    assert scatter["hist"]["st.global.u32"] == 20
    assert runs[-1]["name"] == "next B/C loads" and runs[-1]["last"] == e60.last
    # the scatter sub-section sits between the packs and the next-phase loads
    assert runs[0]["last"] < scatter["first"] <= scatter["last"] < runs[-1]["first"]
    sec = _section(md, "### E60 ")
    assert f"| (b) | s{scatter['first']}–s{scatter['last']} |" in sec
    assert "20 `st.global.u32`" in sec
    assert "`W + 16·laneid` +428544 … +430592 step 512" in sec
    assert "`W + ((laneid<<2)&12)` +431104 … +431120 step 16" in sec
    assert "40 packs read P60's D" in sec and "P61's A (20 registers)" in sec
    assert "10 × `st.global.u32` at `param_0+48 + 4·(laneid&3) + 4·idx`" in sec
    assert "10 × `st.global.u32` at `param_0+48 + 4·((laneid&3)|4) + 4·idx`" in sec
    unc = md[md.index("## 4. Uncharacterised"):]
    assert re.search(r"E60: the index of 20 global stores\*\* \(s\d+–s\d+\)", unc)


def test_enc5_e10_pack_sources(enc5):
    _k, md, _ = enc5
    sec = _section(md, "### E10 ")
    # the stand-in packs phase 9's D into phase 11's A and B
    assert "80 packs read P9's D" in sec
    assert "P11's A (16 registers)" in sec and "P11's B (24 registers)" in sec
    assert "24 × `ld.weak.global.ca.v4.u32` at `W + 27648·tid.z + 16·laneid` +10560 … +22336 step 512" in sec
    assert "48 from P9's mma (D)" in sec
    assert "96 read first by P11's mma as C" in sec


def test_enc5_e20_gain_in_pack_sources(enc5):
    _k, md, _ = enc5
    sec = _section(md, "### E20 ")
    assert re.search(r"40 packs read P20's D \+ table load `W \+ \(\(laneid<<2\)&12\)`", sec)


def test_enc5_uncharacterised(enc5):
    _k, md, _ = enc5
    unc = md[md.index("## 4. Uncharacterised"):]
    assert "no `ld.param` reads bytes" in unc
    assert "P11's B operand is register-resident" in unc
    assert "Slot-relative weight offsets of P1, P2, …, P11 (11)" in unc
    assert "E12: what the 20 per-column table loads hold" in unc


def test_dec1_draft(dec1):
    k, md = dec1
    assert md.startswith(f"# `{k.name}`")
    assert "### 1.2 Constants" in md and "**Pack sources.**" in md
    assert "## 4. Uncharacterised" in md
    for e in k.epilogues:
        assert f"E{e.index}" in md


def _shared_files():
    fs = external_files()
    mma = [f for f in fs if "mma" in f.name][:3]
    big = sorted((f for f in fs if f not in mma), key=lambda f: -f.stat().st_size)[:4]
    small = [f for f in fs if f not in mma and f not in big][::40][:5]
    return mma + big + small


@pytest.mark.corpus
@pytest.mark.parametrize("path", _shared_files(), ids=lambda p: p.name)
def test_shared_corpus_no_crash(path):
    from splice.errors import SpliceError
    from splice.ptx import parse_file

    try:
        mod = parse_file(str(path))
    except SpliceError:
        pytest.skip("does not parse")
    ents = [f.name for f in mod.entries() if f.body is not None]
    if not ents:
        pytest.skip("no entry with a body")
    for e in ents[:3]:
        md = notes_markdown(Kernel(mod, e))
        assert md.startswith("# ") and "## 4. Uncharacterised" in md


def test_texture_gathers_and_atomics_are_read_from_memory():
    """A value's sources stop at what memory gave it: ``tld4`` (a gather, like ``tex``) and an
    atomic's old value are reads by the roles memory table, as ``ld`` is."""
    from splice.ptx import model as m

    from .conftest import MODERN

    k = Kernel.load(str(MODERN / "tex_surf_objects.ptx"), "_Z10tex_sampleyP6float4iif")
    facts = Facts(k)
    (n,) = [s.n for s in k.stmts if isinstance(s.node, m.Instruction) and s.node.opcode == "tld4"]
    d = k.pos_of(n)
    assert facts.sources(d) == frozenset({("ld", d)})   # was the handle's and coordinates' loads
    k = Kernel.load(str(MODERN / "warp_atomics_preds.ptx"), "_Z7atomicsPfPdPyPiS2_PjS2_PKf")
    facts = Facts(k)
    atoms = [k.pos_of(s.n) for s in k.stmts if isinstance(s.node, m.Instruction) and s.node.opcode == "atom"]
    assert len(atoms) >= 5 and all(facts.sources(d) == frozenset({("ld", d)}) for d in atoms)


def test_notes_are_the_same_whatever_the_string_hashing():
    """A register-resident B operand lists its most common sources; the sources are a set, so
    ties came out in the order of the process' string hashing and two runs of ``splice notes``
    on one kernel differed (Triton's int8 matmul: 3 of 6 hash seeds one way, 3 the other)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    ptx = root / "tests" / "data" / "ptx" / "modern" / "triton_matmul_int8_sm80.ptx"
    outs = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        r = subprocess.run([sys.executable, "-m", "splice.cli", "notes", str(ptx), "--entry",
                            "matmul_generic", "-o", "/dev/stdout"], capture_output=True, text=True,
                           env=env, cwd=root, check=True)
        assert "B operand is register-resident" in r.stdout
        outs.add(r.stdout)
    assert len(outs) == 1


def test_an_epilogue_whose_abi_cannot_be_taken_is_said_not_skipped(monkeypatch):
    """§4 lists each epilogue's live-ins without one definition and live-outs without a later
    use from its cut ABI; when that ABI cannot be taken the item says so and why (every
    exception was swallowed and the epilogue's items dropped in silence).  Any other error is
    not caught: it is a bug to see, not an item to drop."""
    from splice.errors import SpliceError

    k = Kernel.load(ROOT / "tests" / "data" / "ptx" / "tensor_core" / "mma_k_loop.ptx")

    def no_abi(self, e):
        raise SpliceError("the range splits a scope")

    monkeypatch.setattr(Facts, "io", no_abi)
    md = notes_markdown(k)
    assert "**E1: its live-in and live-out registers are not listed**" in md
    assert "(the range splits a scope)" in md

    def broken(self, e):
        raise KeyError("%r9")

    monkeypatch.setattr(Facts, "io", broken)
    with pytest.raises(KeyError):
        notes_markdown(k)
