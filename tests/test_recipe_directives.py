"""Recipe keys maxnreg: / minblocks: / maxntid: -> the entry's .maxnreg / .minnctapersm /
.maxntid: checked at their line, written before the body, the rest of the module unchanged."""
from pathlib import Path

import pytest

from splice.cut.recipe import load_recipe
from splice.cut.splice import plan as make_plan
from splice.errors import SpliceError

from .conftest import TINY_SWAPPED

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "recipes" / "tiny.ptx"


def recipe(tmp_path, top: str = "", module: Path = TINY):
    (tmp_path / "n.ptx").write_text("// tiny phase 1, swapped order\n" + TINY_SWAPPED)
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {module}\nentry: tiny\noutput: out.ptx\n{top}cuts:\n  - phase: 1\n    native: n.ptx\n")
    return r


def err(tmp_path, top: str, module: Path = TINY) -> SpliceError:
    with pytest.raises(SpliceError) as ei:
        make_plan(load_recipe(recipe(tmp_path, top, module), search_path=[]))
    return ei.value


def header(text: str) -> str:
    """The entry's text from `.visible .entry` to its body's `{`."""
    a = text.index(".visible .entry tiny")
    return text[a:text.index("{", a)]


def test_directives_written_before_the_body_rest_unchanged(tmp_path):
    p = make_plan(load_recipe(recipe(tmp_path, "maxntid: [32, 1, 4]\nminblocks: 3\nmaxnreg: 168\n"),
                              search_path=[]))
    h = header(p.text)
    assert ".maxntid 32, 1, 4\n.minnctapersm 3\n.maxnreg 168\n" in h
    # everything outside the header and the cut is the original's, byte for byte
    src = p.source
    s, e = p.cuts[0].region
    body = src.index("{", src.index(".visible .entry tiny"))
    ins = p.text.index(".maxntid")
    assert p.text.startswith(src[:ins]) and p.text.endswith(src[e:])
    assert src[body:s] in p.text


def test_no_directive_keys_no_change_to_the_header(tmp_path):
    p = make_plan(load_recipe(recipe(tmp_path), search_path=[]))
    assert header(p.text) == header(p.source)


def test_existing_directive_replaced_in_place(tmp_path):
    mod = tmp_path / "m.ptx"
    mod.write_text(TINY.read_text().replace(")\n{", ") .maxntid 64, 1, 1 .maxnreg 200\n{", 1))
    p = make_plan(load_recipe(recipe(tmp_path, "maxnreg: 128\nmaxntid: 128\n", mod), search_path=[]))
    h = header(p.text)
    assert ".maxntid 128, 1, 1 .maxnreg 128\n" in h and "200" not in h and ".maxntid 64" not in h


@pytest.mark.parametrize("top,needle", [
    ("maxnreg: 16\n", "maxnreg: expected an integer 24..255"),
    ("maxnreg: 256\n", "maxnreg: expected an integer 24..255"),
    ("maxnreg: yes\n", "maxnreg: expected an integer"),
    ("maxnreg: 1.5\n", "maxnreg: expected an integer"),
    ("minblocks: 0\n", "minblocks: expected an integer 1..32"),
    ("minblocks: 33\n", "minblocks: expected an integer 1..32"),
    ("maxntid: [0, 1, 1]\n", "maxntid: expected a block size"),
    ("maxntid: [64, 32, 1]\n", "maxntid: expected a block size"),
    ("maxntid: [32, 1, 1, 1]\n", "maxntid: expected a block size"),
    ("maxntid: big\n", "maxntid: expected a block size"),
])
def test_bad_values_name_the_key_line(tmp_path, top, needle):
    e = err(tmp_path, top)
    assert needle in e.message and e.line == 4


def test_minblocks_without_a_block_size_is_refused(tmp_path):
    """ptxas ignores .minnctapersm without .maxntid/.reqntid (a warning): a silent no-op."""
    e = err(tmp_path, "minblocks: 3\n")
    assert "no .maxntid or .reqntid" in e.message and e.line == 4


def test_minblocks_with_the_entrys_own_maxntid(tmp_path):
    mod = tmp_path / "m.ptx"
    mod.write_text(TINY.read_text().replace(")\n{", ")\n.maxntid 128, 1, 1\n{", 1))
    p = make_plan(load_recipe(recipe(tmp_path, "minblocks: 4\n", mod), search_path=[]))
    assert ".maxntid 128, 1, 1\n.minnctapersm 4\n" in header(p.text)


def test_maxntid_on_an_entry_with_reqntid_is_refused(tmp_path):
    mod = tmp_path / "m.ptx"
    mod.write_text(TINY.read_text().replace(")\n{", ")\n.reqntid 32, 1, 1\n{", 1))
    e = err(tmp_path, "maxntid: 64\n", mod)
    assert ".reqntid" in e.message and e.line == 4


def test_brace_on_the_parameter_line(tmp_path):
    mod = tmp_path / "m.ptx"
    mod.write_text(TINY.read_text().replace(")\n{", ") {", 1))
    p = make_plan(load_recipe(recipe(tmp_path, "maxnreg: 64\n", mod), search_path=[]))
    assert ") \n.maxnreg 64\n{" in p.text
    from splice.ptx import parse

    assert parse(p.text).function("tiny").directives[0].name == ".maxnreg"


@pytest.mark.needs("ptxas")
def test_ptxas_takes_the_directives(tmp_path):
    from splice.cut.validate import validate

    p = make_plan(load_recipe(recipe(tmp_path, "maxntid: [32, 1, 4]\nminblocks: 3\nmaxnreg: 32\n"),
                              search_path=[]))
    u = validate(p).usage("tiny")
    assert u["after"]["registers"] <= 32
