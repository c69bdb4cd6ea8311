"""Integer bit-manipulation kernels (lop3, prmt, mul24, funnel shifts): verify names where two
forms part when a change hides under a chain of operations that may mask it.  Kernel
int_bitops_lop3 (nvcc), read 2026-12-01."""
from __future__ import annotations

import pytest

from .bundled import MODERN, cut_of

BITOPS = MODERN / "int_bitops_lop3.ptx"
BYTE_OPS = "_Z8byte_opsPKjS0_Pjijjj"


def _mutated_verify(tmp_path, old, new):
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan
    from splice.verify.compare import verify_plan

    cut_of(tmp_path, BITOPS, BYTE_OPS, 22, 47)
    text = (tmp_path / "n.ptx").read_text()
    assert old in text
    (tmp_path / "n.ptx").write_text(text.replace(old, new, 1))
    [r] = verify_plan(plan(load_recipe(str(tmp_path / "r.yaml"), [tmp_path])))
    return r


def test_verify_names_where_two_masked_operands_part(tmp_path):
    """``mul24.hi`` changed to ``mul24.lo`` deep under a chain of ``lop3`` (an operation that
    may mask a difference): verify said "lop3 operand 1 operand is lop3.b32(lop3(…), mul24(…),
    …) here, lop3.b32(lop3(…), mul24(…), …) in the original" — the same text twice, the
    difference elided.  It now names where the two forms part."""
    r = _mutated_verify(tmp_path, "mul24.hi.u32", "mul24.lo.u32")
    assert r.verdict == "not proven"
    assert "mul24.lo" in r.reason and "mul24.hi" in r.reason, r.reason


def test_verify_names_a_changed_prmt_mode(tmp_path):
    """``prmt.b32.ecl`` changed to ``.ecr``, the first of twelve values folded by lop3s."""
    r = _mutated_verify(tmp_path, "prmt.b32.ecl", "prmt.b32.ecr")
    assert r.verdict == "not proven"
    assert "prmt.ecr" in r.reason and "prmt.ecl" in r.reason, r.reason


ROUND_TRIP = ["int_bitops_lop3"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_kernels_read_back_byte_for_byte(name):
    from splice.ptx import emit, parse

    path = MODERN / f"{name}.ptx"
    text = path.read_text()
    assert emit(parse(text, str(path))) == text
