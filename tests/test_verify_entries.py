"""splice verify of a cut with more than one way in or out.  In: a label of the cut a branch from
outside reaches (apply keeps it, so the spliced code is entered there too) — each entry is
proved (the top, and every such label with every register an input).  Out: a branch to a label
outside the cut (a loop's back edge, an early exit) — both sides must branch there under the same
condition with the same registers and memory.  Both were *not proven* outright (55 and 8 of the
321 identity cuts of the bundled third-party kernels, bench/verify_identity.py)."""
from __future__ import annotations

from pathlib import Path

import yaml

from splice.verify.compare import DIFFERENT, EQUAL, NOT_PROVEN

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "tests" / "data" / "verify" / "entry.ptx"      # s5-s10 holds MID, a target of s4


def _verify(tmp_path, edit=None, module=MODULE, cut=(5, 10)):
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import run_apply
    from splice.verify.compare import verify_plan

    native = extract(load_kernel(str(module)), statements=cut)["text"]
    (tmp_path / "n.ptx").write_text(edit(native) if edit else native)
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": str(module),
                                      "cuts": [{"statements": f"s{cut[0]}-s{cut[1]}", "native": "n.ptx"}]}))
    plan, *_ = run_apply(str(recipe), ptxas=False)
    [r] = verify_plan(plan)
    return r, native


def test_identity_cut_entered_at_its_label_is_proved_equal(tmp_path):
    r, native = _verify(tmp_path)
    assert "MID:" in native
    assert r.verdict == EQUAL and r.entries == 2, r.reason


def test_a_value_kept_in_scratch_across_the_label_is_not_proven(tmp_path):
    """Computed before MID into scratch, used after it: entered at MID the scratch holds nothing
    the outside code put there (the original's register does)."""
    def edit(t):
        t = t.replace("MID:\nadd.s32 %t2, %in0, 5;", "add.s32 %t9, %in0, 5;\nMID:\nmov.b32 %t2, %t9;")
        return t.replace("scratch: {", "scratch: {t9: .b32, ")
    r, _n = _verify(tmp_path, edit)
    assert r.verdict == NOT_PROVEN and r.reason.startswith("entered at label MID"), r.reason


def test_a_native_without_the_label_is_not_proven(tmp_path):
    r, _n = _verify(tmp_path, lambda t: t.replace("MID:\n", ""))
    assert r.verdict == NOT_PROVEN and "no label MID" in r.reason, r.reason


def test_a_difference_only_on_the_way_in_from_outside_is_proved_different(tmp_path):
    """From the top the native jumps over the code at MID (computing the same stores itself);
    only a branch from outside runs that code, which stores in0 + 6 for in0 + 5."""
    def edit(t):
        return t.replace("MID:\nadd.s32 %t2, %in0, 5;\nst.global.u32 [%in1], %t2;",
                         "add.s32 %t2, %in0, 5;\nst.global.u32 [%in1], %t2;\nbra END;\n"
                         "MID:\nadd.s32 %t2, %in0, 6;\nst.global.u32 [%in1], %t2;\nEND:")
    r, native = _verify(tmp_path, edit)
    assert r.verdict == DIFFERENT and r.reason.startswith("entered at label MID"), r.reason


EXITS = ROOT / "tests" / "data" / "verify" / "exits.ptx"       # s5-s9 branches back to LOOP


def test_identity_cut_with_a_branch_out_is_proved_equal(tmp_path):
    r, native = _verify(tmp_path, module=EXITS, cut=(5, 9))
    assert "bra LOOP" in native and r.verdict == EQUAL, r.reason


def test_branching_out_under_another_condition_is_not_proven(tmp_path):
    r, _n = _verify(tmp_path, lambda t: t.replace("setp.lt.u32", "setp.le.u32"), module=EXITS, cut=(5, 9))
    assert r.verdict == NOT_PROVEN and "branch to LOOP (outside the cut) under different conditions" in r.reason


def test_another_register_where_the_cut_branches_out_is_not_proven(tmp_path):
    """The loop counter changed only on the way back to LOOP: the fall-through agrees."""
    r, _n = _verify(tmp_path, lambda t: t.replace("@%t0 bra LOOP;", "@%t0 add.s32 %io0, %io0, 1;\n@%t0 bra LOOP;"),
                    module=EXITS, cut=(5, 9))
    assert r.verdict == NOT_PROVEN and r.reason.startswith("where the cut branches to LOOP: io0"), r.reason
