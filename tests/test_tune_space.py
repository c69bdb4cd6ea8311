"""splice.tune.space: the tune: section, its dimensions and their product, enumerated lazily;
every error at its file and line."""
from __future__ import annotations

from pathlib import Path

import pytest

from splice.errors import SpliceError
from splice.tune.space import load_space

ROOT = Path(__file__).resolve().parents[1]
ENC5 = ROOT / "recipes/tune/enc5_phases.yaml"


def space(tmp_path, body: str, recipe: Path = ENC5):
    p = tmp_path / "t.yaml"
    p.write_text(f"recipe: {recipe}\ntune:\n" + body)
    return load_space(str(p))


def test_size_is_the_product_and_points_decode(tmp_path):
    s = space(tmp_path, "  space:\n    - cuts: all\n      fence: [none, start, end]\n"
                        "    - cuts: [5, 6]\n      together: false\n      order: [original, k-major]\n")
    assert [d.name for d in s.dims] == ["fence@1,2,3,4,5,6,7", "order@5", "order@6"]
    assert s.size == 12
    assert s.point(0) == {"fence@1,2,3,4,5,6,7": "none", "order@5": "original", "order@6": "original"}
    assert s.point(11) == {"fence@1,2,3,4,5,6,7": "end", "order@5": "k-major", "order@6": "k-major"}
    assert sorted(s.indices()) == list(range(12))


def test_a_huge_space_is_sampled_lazily(tmp_path):
    s = space(tmp_path, "  space:\n    - cuts: all\n      together: false\n"
                        "      order: [original, m-major, n-major, k-major, chain-major, interleave-2]\n"
                        "      fence: [none, start, end, both, every-k]\n"
                        "      loads: [as-is, hoisted, sunk, split]\n")
    assert s.size == 120 ** 7
    got = list(s.indices(50, seed=3))
    assert got[0] == 0 and len(set(got)) == 50 and max(got) < s.size
    assert got == list(s.indices(50, seed=3))          # seeded: the same sample every run


def test_ranges_params_abi_and_natives(tmp_path):
    alt = tmp_path / "alt.ptx"
    alt.write_text("// splice-native:\n//   params: {}\n//   scratch: {}\n")
    s = space(tmp_path, "  ranges: {offs: [0, 16, 32]}\n  space:\n    - cuts: 1\n      abi: [inline, call]\n"
                        f"      native: [{alt}]\n      params: {{woff: offs, k: '1..7/3'}}\n")
    keys = {d.key: d.choices for d in s.dims}
    assert keys == {"abi": ("inline", "call"), "native": (str(alt),), "params.woff": (0, 16, 32),
                    "params.k": (1, 4, 7)}
    assert s.size == 18


def test_a_recipe_holding_its_own_tune_section(tmp_path):
    text = ENC5.read_text().replace("native/", str(ENC5.parent / "native") + "/")
    p = tmp_path / "r.yaml"
    p.write_text(text + "tune:\n  space:\n    - cuts: 7\n      fence: [none, end]\n")
    s = load_space(str(p))
    assert s.recipe_path == str(p) and "tune" not in s.recipe and s.size == 2


@pytest.mark.parametrize("body, line, words", [
    ("  space:\n    - cuts: 9\n      fence: [start]\n", 4, "cuts 1-7, not 9"),
    ("  space:\n    - cuts: all\n      fence: [middle]\n", 5, "'middle' is not one of"),
    ("  space:\n    - cuts: all\n      order: [z-major]\n", 5, "unknown mma order"),
    ("  space:\n    - cuts: 1\n      fence: [start]\n    - cuts: [1, 2]\n      fence: [end]\n", 7,
     "already varied by the item at line 5"),
    ("  space:\n    - cuts: all\n", 4, "names no dimension"),
    ("  space:\n    - cuts: all\n      fence: []\n", 5, "an empty list"),
    ("  space:\n    - cuts: 1\n      params: {k: '9..1'}\n", 5, "empty range"),
    ("  space:\n    - cuts: 1\n      native: [nowhere.ptx]\n", 5, "not found"),
    ("  search: {eta: 1}\n", 3, "at least 2"),
    ("  space:\n    - cuts: 1\n      abi: [inline, call-shared]\n", 5, "needs the block size"),
    ("  spaces: []\n", 3, "unknown key 'spaces'"),
])
def test_errors_name_the_line(tmp_path, body, line, words):
    with pytest.raises(SpliceError) as err:
        space(tmp_path, body)
    assert err.value.line == line and words in err.value.message
    assert err.value.path == str(tmp_path / "t.yaml")


def test_directive_values_are_checked_at_their_line(tmp_path):
    for bad, needle in (("{maxnreg: [168, 300]}", "maxnreg: expected none or whole numbers 24..255"),
                        ("{minblocks: [0]}", "minblocks: expected none or whole numbers 1..32"),
                        ("{maxnreg: [big]}", "got 'big'"), ("{maxntid: [128]}", "unknown key 'maxntid'")):
        with pytest.raises(SpliceError) as err:
            space(tmp_path, f"  directives: {bad}\n")
        assert err.value.line == 3 and needle in err.value.message, err.value.message


def test_directives_are_recipe_keys_and_none_leaves_the_key_out(tmp_path):
    from splice.tune.variants import load_base, materialize

    s = space(tmp_path, "  directives: {maxnreg: [none, 168, 255], minblocks: 2}\n")
    assert s.size == 3 and [d.name for d in s.dims] == ["maxnreg", "minblocks"]
    base = load_base(s)
    assert "maxnreg" not in materialize(base, 0).recipe and materialize(base, 0).recipe["minblocks"] == 2
    v = materialize(base, 2)
    assert v.recipe["maxnreg"] == 255 and v.recipe["minblocks"] == 2
    assert len({materialize(base, i).key for i in range(3)}) == 3


def test_the_base_recipes_directives_are_kept_unless_a_choice_replaces_them(tmp_path):
    from splice.tune.variants import load_base, materialize

    r = tmp_path / "r.yaml"
    r.write_text(ENC5.read_text().replace("module: enc5.ptx", f"module: {ROOT / 'corpus/enc5.ptx'}")
                 .replace("native: native/", f"native: {ENC5.parent / 'native'}/")
                 .replace("cuts:\n", "maxntid: [32, 1, 4]\nmaxnreg: 200\ncuts:\n", 1))
    s = space(tmp_path, "  directives: {maxnreg: [none, 168]}\n", r)
    base = load_base(s)
    assert materialize(base, 0).recipe["maxntid"] == [32, 1, 4] and "maxnreg" not in materialize(base, 0).recipe
    assert materialize(base, 1).recipe["maxnreg"] == 168 and materialize(base, 1).recipe["maxntid"] == [32, 1, 4]


def test_the_search_takes_the_timing_settings(tmp_path):
    s = space(tmp_path, "  search: {rounds: 2, cache: cold, min_sample_ms: 2, ci_width: 0.01, time_budget: 30}\n")
    assert (s.search.rounds, s.search.cache, s.search.min_sample_ms, s.search.ci_width, s.search.time_budget) == \
        (2, "cold", 2, 0.01, 30)
    for bad, needle in (("{cache: lukewarm}", "cache: expected warm or cold"),
                        ("{ci_width: 0}", "ci_width: expected a number"),
                        ("{time_budget: .inf}", "time_budget: expected a number"),
                        ("{min_sample_ms: yes}", "min_sample_ms: expected a number"),
                        ("{rounds: 1.5}", "rounds: expected a whole number")):
        with pytest.raises(SpliceError) as err:
            space(tmp_path, f"  search: {bad}\n")
        assert err.value.line == 3 and needle in err.value.message, err.value.message


def test_not_a_tune_file(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("recipe: r.yaml\n")
    with pytest.raises(SpliceError, match="tune: section"):
        load_space(str(p))


@pytest.mark.parametrize("name,size,keys", [
    ("enc5.yaml", 64, ["fence", "fence", "fence", "order"]),
    ("enc5_stream.yaml", 32, ["fence", "native", "native", "maxnreg", "minblocks"]),
    ("dec1.yaml", 18, None), ("triton_matmul.yaml", 6, None), ("gemm.yaml", 12, None)])
def test_the_shipped_spaces(name, size, keys):
    """recipes/tune/: each space loads with the size its header states; the streamed one is a
    recipe holding its own tune: section (its base keeps maxntid for minblocks)."""
    s = load_space(str(ROOT / "recipes/tune" / name))
    assert s.size == size
    if keys is not None:
        assert [d.key for d in s.dims] == keys
    if name == "enc5_stream.yaml":
        assert s.recipe_path == s.path and s.recipe["maxntid"] == [32, 1, 4] and "tune" not in s.recipe
