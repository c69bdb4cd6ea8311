"""The claims of `splice notes`: each sentence template rendered only where its fact holds, every
claim of every bundled kernel checked by the independent reader of bench/notes_claims_check.py,
and the issue-29 misstatements (C's stride as C, a weight image that is written, a store range
without a store) gone for their cause."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from splice.analysis import Kernel
from splice.analysis.notes import notes_document, notes_markdown
from splice.analysis.notes_claims import TEMPLATES
from splice.analysis.vocab import Profile
from splice.ptx import parse_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import notes_claims_check as claims_check  # noqa: E402

GEMM = ROOT / "tests/data/ptx/gemm"
TRITON90 = ROOT / "corpus/triton/matmul_sm90.ptx"
CUTLASS = GEMM / "cutlass_wgmma_sm90a.ptx"
ZOO = ROOT / "tests/data/ptx/tensor_core/mma_forms_zoo.ptx"
ALL_WORDS = ("weight-image", "plane-arena-scatter", "tid.z-slot", "dldn-epilogue-names", "dldn-conventions")


def _asking(*words) -> Profile:
    return Profile("asks.yaml", ("*",), {}, tuple(words or ALL_WORDS))


def _first(path) -> Kernel:
    mod = parse_file(str(path))
    return Kernel(mod, next(f.name for f in mod.entries() if f.body is not None))


def _bundled():
    return [p for p in claims_check.bundled() if p.name not in ("enc5.ptx", "dec1.ptx")]


@pytest.mark.parametrize("path", _bundled(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_claim_of_every_bundled_kernel_holds(path):
    """Every claim `notes` makes on a bundled third-party kernel is true by the independent
    reader, and every claim's text is in the draft (the claims are the draft's sentences)."""
    out = {"entries": 0, "refused": 0, "too_big": 0, "checked": claims_check.Counter(), "false": [],
           "undecided": claims_check.Counter(), "words": []}
    claims_check.check_file(path, 30000, out)
    assert not out["false"], out["false"][:5]
    assert not out["words"], out["words"][:5]


def test_claim_texts_are_the_drafts_sentences():
    for path in (TRITON90, CUTLASS, GEMM / "mojo_style_int8_gemm_sm80.ptx", ZOO):
        k = _first(path)
        md, claims = notes_document(k, False)
        assert claims and {c["template"] for c in claims} <= set(TEMPLATES)
        for c in claims:
            assert c["text"] in md, (path.name, c["text"])
            for a, b, la, lb in c["evidence"]:
                assert a <= b and la <= lb and k.stmts[k.first_pos_of(a)].line == la


def test_a_section_is_named_by_what_it_holds():
    """Triton sm_90: the address arithmetic before the stores was "global stores into
    param_2+0" though it held no store; now a class is named only where an anchor of it is."""
    k = _first(TRITON90)
    _md, claims = notes_document(k, False)
    for c in (c for c in claims if c["template"] == "section"):
        head = c["fact"]["name"].partition(", feeding ")[0]
        if head.startswith(("arithmetic feeding", "plumbing")):
            continue
        for cls in head.split(" + "):
            assert c["fact"]["anchors"][cls], c["text"]
    stores = [c for c in claims if c["template"] == "section" and "global stores" in c["fact"]["name"]
              and not c["fact"]["name"].startswith("arithmetic") and ", feeding" not in c["fact"]["name"]]
    assert stores and all(c["fact"]["anchors"]["global stores into param_2+0"] for c in stores)


def test_cutlass_gemm_stores_go_into_c_not_its_stride():
    md = notes_markdown(_first(CUTLASS), False)
    assert "global stores into param_10+0" in md
    assert "into param_11" not in md                    # param_11 is C's 32-bit stride
    assert "Weight-image extent" not in md and "weight loads" not in md and "`W`" not in md


def test_weight_words_need_their_rule_even_when_asked():
    k = Kernel.load(ZOO)                                # param_0+0 is written: no weight image
    md = notes_markdown(k, _asking())
    assert "weight image" not in md and "Weight-image extent" not in md
    spec_md = notes_markdown(Kernel.load(ROOT / "corpus/enc5.ptx"))
    assert "`W` denotes the weight image, the parameter field `param_0+40`." in spec_md


def test_convention_words_need_a_multi_line_mma():
    md = notes_markdown(_first(TRITON90), _asking())
    assert "4-line" not in md and "instruction written over several lines" in md


def test_operand_columns_only_where_a_phase_has_a_value():
    md = notes_markdown(_first(TRITON90), False)
    head = next(ln for ln in md.splitlines() if ln.startswith("| # | stmt range"))
    assert "bytes" not in head and "tid.z" not in head and "slot" not in head
    md = notes_markdown(_first(GEMM / "mojo_style_int8_gemm_sm80.ptx"), False)
    head = next(ln for ln in md.splitlines() if ln.startswith("| # | stmt range"))
    assert "B bytes (`param_1+0`)" in head and "tid.z" not in head


def test_a_local_array_is_a_local_array():
    k = _first(GEMM / "mojo_style_int8_gemm_sm80.ptx")
    assert "spill" not in notes_markdown(k, _asking())
    md = notes_markdown(k, False)
    assert "spill" not in md and "local-array loads" in md


def test_epilogue_kinds_are_composed_from_the_code():
    k = _first(TRITON90)
    (e,) = k.epilogues
    assert e.name == "shared loads + packs + barriers + shared stores + global stores"
    assert [f.name for f in e.kinds.values()] == list(e.kinds)
    assert all(e.kinds[kk].stmts for kk in e.kinds)


def test_irregular_phase_has_no_tiles(capsys):
    from splice.cli import main

    assert main(["spec", str(ROOT / "tests/data/ptx/tensor_core/mma_irregular.ptx"), "--json"]) == 0
    ph = json.loads(capsys.readouterr().out)["entries"][0]["phases"][0]
    assert not ph["regular"] and ph["tiles"] is None and ph["accumulators"] == 6


def test_notes_evidence_and_json(capsys):
    from splice.cli import main

    assert main(["notes", str(TRITON90), "--evidence"]) == 0
    out = capsys.readouterr().out
    assert "## 5. Evidence" in out and re.search(r"\| C\d+ \| section \| global stores into param_2\+0", out)
    assert main(["notes", str(TRITON90), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["claims"] and all(c["evidence"] is not None for c in d["claims"])


def test_profile_vocabulary_is_checked(tmp_path, capsys):
    from splice.cli import main

    bad = tmp_path / "p.yaml"
    bad.write_text("entries: ['*']\nvocabulary: [weight-image, weigth-image]\n")
    assert main(["notes", str(TRITON90), "--profile", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "p.yaml:2" in err and "weigth-image" in err


def test_store_facts_once_per_kernel(monkeypatch):
    """Every epilogue used to scan every access of the entry (epilogues × accesses)."""
    import splice.analysis.vocab as vocab
    from splice.analysis.spec import build_spec

    calls = []
    real = vocab._store_facts
    monkeypatch.setattr(vocab, "_store_facts", lambda k: calls.append(1) or real(k))
    k = _first(CUTLASS)
    build_spec(k)
    notes_markdown(k)
    assert len(calls) == 1
