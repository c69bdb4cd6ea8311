"""A recipe's module found by its entry (``cut.recipe.resolve_module``): what counts as a file
declaring the entry."""
from __future__ import annotations

import pytest

from splice.errors import SpliceError

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"


def test_a_module_search_by_entry_skips_a_file_that_names_it_only_in_a_comment(tmp_path):
    """A file whose only ``.entry k`` is in a comment (a note, a commented-out copy) does not
    declare it: it made the search by entry ambiguous (left open 2026-12-01); a block comment
    never closed hides the rest of the file."""
    from splice.cut.recipe import resolve_module

    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a-notes.ptx").write_text(HEAD.replace(".visible .entry k()\n{\n", "") + "// was: .entry k(\n")
    (d / "b-open.ptx").write_text(HEAD.replace(".visible .entry k()", "/* .visible .entry k()") + "ret;\n}\n")
    (d / "c-real.ptx").write_text(HEAD + "ret;\n}\n")
    assert resolve_module("k.ptx", tmp_path, [d], entry="k") == d / "c-real.ptx"
    (d / "d-also.ptx").write_text(HEAD + "ret;\n}\n")
    with pytest.raises(SpliceError, match="2 files of"):
        resolve_module("k.ptx", tmp_path, [d], entry="k")

