"""Recipe schema and loader: every error names the YAML key and its line."""
from pathlib import Path

import pytest

from splice.cut.recipe import load_recipe, load_yaml_marked
from splice.errors import SpliceError

DATA = Path(__file__).parent / "data"
TINY = DATA / "recipes" / "tiny.ptx"


def write(tmp_path, text, name="r.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def load_err(tmp_path, text) -> SpliceError:
    with pytest.raises(SpliceError) as ei:
        load_recipe(write(tmp_path, text), search_path=[DATA / "recipes"])
    return ei.value


BASE = "module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n"


def test_minimal_recipe_resolves_module_on_search_path(tmp_path):
    r = load_recipe(write(tmp_path, BASE), search_path=[DATA / "recipes"])
    assert r.module == DATA / "recipes" / "tiny.ptx"
    assert r.cuts[0].select == "phase" and r.cuts[0].targets == (1,)
    assert r.cuts[0].abi == "inline"
    assert r.output == Path("build") / "r.ptx"
    assert r.cuts[0].native == tmp_path / "n.ptx"


def test_module_relative_to_recipe(tmp_path):
    (tmp_path / "m.ptx").write_text(TINY.read_text())
    r = load_recipe(write(tmp_path, BASE.replace("tiny.ptx", "m.ptx")), search_path=[])
    assert r.module == tmp_path / "m.ptx"


def test_module_not_found_names_key_line(tmp_path):
    e = load_err(tmp_path, "# c\nmodule: nope.ptx\ncuts: []\n")
    assert e.line == 2 and "nope.ptx" in e.message and "looked" in e.detail


def test_unknown_top_key(tmp_path):
    e = load_err(tmp_path, BASE + "outptu: x\n")
    assert e.line == 6 and "'outptu'" in e.message


def test_unknown_cut_key_line_and_column(tmp_path):
    e = load_err(tmp_path, BASE + "    abii: call\n")
    assert (e.line, e.column) == (6, 5) and "cut 1" in e.message and "'abii'" in e.message


def test_bad_abi_value(tmp_path):
    e = load_err(tmp_path, BASE + "    abi: jump\n")
    assert e.line == 6 and "jump" in e.message


def test_two_selectors(tmp_path):
    e = load_err(tmp_path, BASE + "    statements: s1-s4\n")
    assert e.line == 6 and "exactly one" in e.message


def test_missing_native(tmp_path):
    e = load_err(tmp_path, "module: tiny.ptx\ncuts:\n  - phase: 1\n")
    assert e.line == 3 and "native" in e.message


def test_bad_statement_range(tmp_path):
    e = load_err(tmp_path, BASE.replace("phase: 1", "statements: x7-y9"))
    assert e.line == 4 and "range" in e.message


def test_unknown_expect_fact(tmp_path):
    e = load_err(tmp_path, BASE + "    expect:\n      mma: 2\n      flops: 9\n")
    assert e.line == 8 and "flops" in e.message


def test_yaml_syntax_error_has_line(tmp_path):
    e = load_err(tmp_path, "module: tiny.ptx\ncuts:\n  - phase: [1\n")
    assert e.line is not None and e.message.startswith("YAML")


def test_duplicate_key(tmp_path):
    e = load_err(tmp_path, BASE + "module: other.ptx\n")
    assert e.line == 6 and "duplicate" in e.message


def test_selectors_parse(tmp_path):
    r = load_recipe(write(tmp_path, "module: tiny.ptx\ncuts:\n"
                                    "  - {phases: 1-3, native: a.ptx}\n"
                                    "  - {statements: s11-s12, native: a.ptx, abi: call}\n"
                                    "  - {lines: L27-L38, native: a.ptx, abi: call-shared, threads: 32}\n"),
                    search_path=[DATA / "recipes"])
    assert [c.targets for c in r.cuts] == [(1, 2, 3), ((11, 12),), ((27, 38),)]
    assert r.cuts[2].threads == 32


def test_marked_yaml_positions():
    d = load_yaml_marked("a: 1\nb:\n  - x: 2\n", "t")
    assert d.at("b") == (2, 1)
    assert d["b"][0].at("x") == (3, 5)


def test_users_corpus_found_by_entry_before_the_stand_in(tmp_path):
    """A recipe written against the stand-in (`module: tiny.ptx`) runs unchanged on a user's
    corpus whose file is named otherwise: the user's directory is searched first, by entry."""
    user = tmp_path / "user"
    user.mkdir()
    (user / "0018-PREPASS_ENTRYPOINT_NAME.ptx").write_text(TINY.read_text())
    (user / "other.ptx").write_text(".version 8.5\n.target sm_90\n.entry nottiny()\n{\n\tret;\n}\n")
    r = load_recipe(write(tmp_path, BASE), search_path=[user, DATA / "recipes"])
    assert r.module == user / "0018-PREPASS_ENTRYPOINT_NAME.ptx"
    # without the user's directory the stand-in is used
    r = load_recipe(write(tmp_path, BASE), search_path=[DATA / "recipes"])
    assert r.module == DATA / "recipes" / "tiny.ptx"


def test_splice_corpus_env_reaches_the_cli(tmp_path, monkeypatch, capsys):
    import json

    from splice.cli import main
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel

    user = tmp_path / "user"
    user.mkdir()
    (user / "renamed.ptx").write_text(TINY.read_text())
    (tmp_path / "n.ptx").write_text(extract(load_kernel(str(TINY), "tiny"), phase=1,
                                            source_name="tiny.ptx")["text"])
    rec = write(tmp_path, BASE)
    monkeypatch.setenv("SPLICE_CORPUS", str(user))
    assert main(["apply", str(rec), "--no-ptxas", "--json", "-o", str(tmp_path / "o.ptx")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["module"] == str(user / "renamed.ptx")
    assert (tmp_path / "o.ptx").exists()
