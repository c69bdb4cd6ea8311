"""splice.tune.variants: a point of the space as an ordinary recipe, keyed by what it is."""
from __future__ import annotations

from pathlib import Path

from splice.cut.pipeline import run_apply
from splice.tune.space import load_space
from splice.tune.variants import load_base, materialize, write_variant

ROOT = Path(__file__).resolve().parents[1]


def space(tmp_path, body: str, recipe: str = "recipes/triton_matmul_p1.yaml"):
    p = tmp_path / "t.yaml"
    p.write_text(f"recipe: {ROOT / recipe}\ntune:\n  space:\n" + body)
    return load_space(str(p))


def test_points_that_generate_the_same_files_are_one_variant(tmp_path):
    # the Triton native is chain-major already: chain-major is the original order
    s = space(tmp_path, "    - cuts: 1\n      order: [original, chain-major, k-major]\n")
    base = load_base(s)
    keys = [materialize(base, i).key for i in range(s.size)]
    assert keys[0] == keys[1] != keys[2]


def test_a_variant_is_a_recipe_apply_takes_wherever_it_is_written(tmp_path):
    s = space(tmp_path, "    - cuts: 1\n      fence: [none, end]\n      abi: [inline, call]\n")
    base = load_base(s)
    v = materialize(base, 3)
    assert v.choices == {"fence@1": "end", "abi@1": "call"}
    for where in (tmp_path / "a", tmp_path / "deep/er/b"):
        path = write_variant(v, where, base.module)
        plan = run_apply(str(path), ptxas=False)[0]
        assert plan.cuts[0].binding.abi == "call" and "%clock64" in (where / "native/cut1.ptx").read_text()
    assert materialize(base, 3).key == v.key


def test_params_of_a_template_reach_the_recipe(tmp_path):
    s = space(tmp_path, "    - cuts: 1\n      params: {woff: [8512, 8528]}\n", "recipes/enc5_qkv_wave.yaml")
    v = materialize(load_base(s), 1)
    assert v.recipe["cuts"][0]["params"] == {"woff": 8528}
    assert "{{woff}}" in v.natives["native/cut1.ptx"]


def test_every_abi_of_a_fenced_native_is_proved_equal(tmp_path):
    """A schedule fence needs no kernel parameter: inside a call or call-shared .func too it is
    proved equal (the store under a false predicate leaves memory as it was)."""
    from splice.verify.compare import EQUAL, verify_plan

    s = space(tmp_path, "    - cuts: 1\n      fence: [end]\n      abi: [call, call-shared]\n      threads: 128\n")
    base = load_base(s)
    for i in range(s.size):
        v = materialize(base, i)
        plan = run_apply(str(write_variant(v, tmp_path / str(i), base.module)), ptxas=False)[0]
        assert [r.verdict for r in verify_plan(plan)] == [EQUAL], v.choices
    assert materialize(base, 1).recipe["cuts"][0]["threads"] == 128


def test_a_variants_key_does_not_depend_on_where_the_checkout_is(tmp_path):
    """The key is the content (recipe, natives, module): the same space read from two folders
    gives the same keys.  The generated natives' header named their source with its folder, so
    every key changed with the checkout's path (and with it which of two equally fast variants
    the timing ranked first)."""
    import shutil

    keys = []
    for where in (tmp_path / "a", tmp_path / "deep/er/b"):
        (where / "native").mkdir(parents=True)
        (where / "triton").mkdir()
        shutil.copy(ROOT / "recipes/native/triton_matmul_p1.ptx", where / "native")
        shutil.copy(ROOT / "corpus/triton/matmul_sm80.ptx", where / "triton")
        shutil.copy(ROOT / "recipes/triton_matmul_p1.yaml", where / "r.yaml")
        s = space(where, "    - cuts: 1\n      order: [original, k-major]\n      fence: [none, start]\n",
                  str(where / "r.yaml"))
        base = load_base(s)
        keys.append([materialize(base, i).key for i in range(s.size)])
        assert all(str(where) not in text for text in materialize(base, 3).natives.values())
    assert keys[0] == keys[1] and len(set(keys[0])) == 4
