"""Probe pieces for any kernel, without a GPU: the .param check against the entry and its
directives, the loop-aware roofline work, probe init's def-use on three compilers' output,
and the corpus GEMM/Triton recipes (ptxas accepts both modules and all four splices)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tests/data/ptx/probe/launch_kit.ptx"


def _spec(d):
    from splice.probe.language.document import parse_spec

    return parse_spec({"name": "t", "ptx": str(KIT), **d}, "t.yaml")


KIT_PARAMS = [{"name": "out", "kind": "buffer", "dtype": "u32", "shape": [8], "role": "output"},
              {"name": "n", "kind": "scalar", "dtype": "u32", "value": 1},
              {"name": "cfg", "kind": "struct", "size": 16, "fields": [
                  {"name": "a", "offset": 0, "kind": "scalar", "dtype": "u32", "value": 1}]}]


def test_cluster_directives():
    from splice.errors import SpliceError
    from splice.probe.language.entry import check, cluster_dims

    text = KIT.read_text()
    s = _spec({"entry": "kit_cluster", "launch": {"grid": [4], "block": [32]}, "params": KIT_PARAMS})
    decl = check(s, text, str(KIT))
    assert cluster_dims(s, decl) == (2, 1, 1)          # .explicitcluster + .reqnctapercluster 2
    s = _spec({"entry": "kit_cluster", "launch": {"grid": [4], "block": [32], "cluster": [4]},
               "params": KIT_PARAMS})
    with pytest.raises(SpliceError, match="requires .reqnctapercluster 2"):
        check(s, text, str(KIT))
    bad = text.replace(".reqnctapercluster 2, 1, 1\n", "")
    s = _spec({"entry": "kit_cluster", "launch": {"grid": [4], "block": [32]}, "params": KIT_PARAMS})
    with pytest.raises(SpliceError, match="explicitcluster: give launch.cluster"):
        check(s, bad, "k.ptx")


def test_struct_alignment_must_match():
    from splice.errors import SpliceError
    from splice.probe.language.entry import check

    params = [dict(p) for p in KIT_PARAMS]
    params[2] = {**params[2], "align": 16}
    s = _spec({"entry": "kit_cluster", "launch": {"grid": [4], "block": [32]}, "params": params})
    with pytest.raises(SpliceError, match="align 16, but the PTX declares .align 8") as ei:
        check(s, KIT.read_text(), str(KIT))
    assert "kit_cfg[16]" in ei.value.detail


LOOP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{
\t.reg .b32 %r<20>;
\t.reg .f32 %f<8>;
\t.reg .pred %p<2>;
\tmov.u32 %r1, 0;
$L_loop:
\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f0, %f1, %f2, %f3};
\tadd.s32 %r1, %r1, 2;
\tsetp.lt.s32 %p1, %r1, BOUND;
\t@%p1 bra $L_loop;
\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f0, %f1, %f2, %f3};
\tret;
}
"""


def test_roofline_counts_static_loops_and_never_guesses():
    from types import SimpleNamespace as NS

    from splice.probe.timing import kernel_work

    spec = NS(block=(64, 1, 1), grid=(3, 1, 1), work=(), fields=())
    w = kernel_work(LOOP.replace("BOUND", "10"), "k", spec)
    per = 2 * 16 * 8 * 16
    assert w["warps"] == 6 and w["mma_static"] == 2 and w["loops"] == 1
    assert w["mma"] == 6 * (5 + 1) and w["flops"] == per * 6 * 6 and w["flops_source"] == "analysis"
    w = kernel_work(LOOP.replace("BOUND", "%r9"), "k", spec)        # trip count is a register
    assert w["flops"] is None and "declare work" in w["note"]
    w = kernel_work(LOOP.replace("BOUND", "%r9"), "k", NS(**{**spec.__dict__, "work": (("flops", 123),)}))
    assert w["flops"] == 123 and w["flops_source"] == "declared"


@pytest.mark.parametrize("module, roles", [
    ("corpus/gemm/gemm_sm80.ptx", {0: ("input", "f16"), 1: ("input", "f16"), 2: ("output", "f32")}),
    ("corpus/triton/matmul_sm80.ptx", {0: ("input", "f16"), 1: ("input", "f16"), 2: ("output", "f16")}),
    ("corpus/triton/matmul_sm90.ptx", {0: ("input", "f16"), 1: ("input", "f16"), 2: ("output", "f16")}),
    # the WMMA API reaches memory only through wmma.load / wmma.store (no ld/st on the pointers)
    ("tests/data/ptx/modern/wmma_gemm.ptx", {0: ("input", "f16"), 1: ("input", "f16"), 2: ("output", "f32")}),
])
def test_init_roles_and_element_types(module, roles):
    from splice.probe.language.init import skeleton

    text, rows = skeleton((ROOT / module).read_text(), module)
    got = {r["param"]: (r["role"], r["dtype"]) for r in rows if r["kind"] == "buffer"}
    assert got == roles
    assert all(r["kind"] == "scalar" for r in rows if r["param"] not in roles)


@pytest.mark.needs("ptxas")
@pytest.mark.parametrize("recipe", ["recipes/gemm_f16f32_p1.yaml", "recipes/triton_matmul_p1.yaml",
                                    "tests/data/recipes/gemm_f16f32_p1_wrong.yaml",
                                    "tests/data/recipes/triton_matmul_p1_wrong.yaml"])
def test_corpus_recipes_apply_and_keep_the_param_list(recipe, tmp_path):
    from splice.cli import main
    from splice.probe.language.entry import check
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    assert main(["apply", str(ROOT / recipe), "-o", str(tmp_path / "out.ptx")]) == 0
    pair = resolve(str(ROOT / recipe))
    spec = load_spec(pair.spec_path)
    assert check(spec, pair.spliced, "spliced").params == check(spec, pair.original, "o").params


def test_init_finds_the_struct_fields_of_the_stand_in():
    """nvcc's by-value struct: `mov.b64 %rd9, param_0; ld.param.u64 %rd2, [%rd9+40]` -- the
    skeleton finds the same pointer/handle fields as the hand-written probes/enc5.yaml, and the
    same scalars (extents u32 x2 at 0, blockoff u16 x2 at 80) as fields to fill in."""
    import yaml

    from splice.probe.language.init import skeleton

    text, rows = skeleton((ROOT / "corpus/enc5.ptx").read_text(), "corpus/enc5.ptx")
    (struct,) = yaml.safe_load(text)["params"]
    assert struct["kind"] == "struct" and struct["size"] == 144 and struct["align"] == 8
    got = {f["offset"]: (f["kind"], f.get("role")) for f in struct["fields"]}
    assert got == {8: ("buffer", "input"), 40: ("buffer", "input"), 48: ("buffer", "output"),
                   88: ("texture", None), 112: ("surface", None),
                   0: ("scalar", None), 4: ("scalar", None), 80: ("scalar", None), 82: ("scalar", None)}
    assert [f["dtype"] for f in struct["fields"] if f["kind"] == "scalar"] == ["u32", "u32", "u16", "u16"]
    assert all(f["value"] is None for f in struct["fields"] if f["kind"] == "scalar")
