"""numba's kernels: an array argument exploded into nine parameters and a tuple into its members,
each named from the mangled argument types; names of any depth or size read without recursion
and without expanding their numbers.  Kernels numba_saxpy2d_sm80, numba_3d_tuple_sm80 (made by
gen_numba.py; numba is not needed to run these tests), read 2026-12-01."""
from __future__ import annotations

import pytest
import yaml

from splice.cli import main

from .bundled import MODERN, skeleton

NUMBA = MODERN / "numba_saxpy2d_sm80.ptx"


def test_numba_array_parameters():
    """numba passes a 2-D array as 9 parameters (meminfo, parent, nitems, itemsize, data, shape
    ×2, strides ×2): only ``data`` is a buffer; the unread ones are 0, shapes/strides TODO."""
    text, rows = skeleton(NUMBA)
    assert len(rows) == 29 and [r["param"] for r in rows if r["kind"] == "buffer"] == [4, 14, 23]
    assert {rows[i]["kind"] for i in (5, 6, 7, 8)} == {"scalar"}


def test_numba_parameters_name_their_array():
    """numba's shapes and strides were ``null`` scalars "read as a value": now each names its
    argument and member (from the mangled argument types)."""
    text, _ = skeleton(NUMBA)
    assert "# param_5: array argument 1 (Array(float32, 2, 'A')): shape[0]" in text
    assert "# param_26: array argument 4 (Array(float32, 2, 'A')): strides[0], in bytes" in text
    assert "# param_9: scalar argument 2 (float32)" in text and "# param_28: scalar argument 5 (int32)" in text
    assert "its shape is param_5, param_6" in text
    yaml.safe_load(text)


def test_numba_arguments_that_cannot_be_read_are_said():
    from splice.probe.numba_args import describe

    name = "_ZN8__main__6kernelB2v1E5ArrayIfLi2E1A7mutable7alignedEi"
    labels, why = describe(name, 10)
    assert why is None and labels[9] == "scalar argument 2 (int32)"
    assert describe(name, 11) == ({}, "numba's argument types make 10 parameters, the entry has 11")
    assert describe("_ZN8__main__6kernelB2v1E6RecordIxE", 1)[1].startswith(
        "numba's mangled argument types could not be read")


def test_numba_3d_arrays_and_a_tuple_are_named():
    """A 3-D readonly C array, an int64 and a ``UniTuple(float64, 2)`` (two parameters): the
    tuple made the whole entry unreadable before tuples were read."""
    text, rows = skeleton(MODERN / "numba_3d_tuple_sm80.ptx")
    assert len(rows) == 25
    assert "# param_4: array argument 1 (Array(float64, 3, 'C')): data (its shape is param_5, param_6, param_7;" in text
    assert "# param_22: scalar argument 3 (int64)" in text
    assert "# param_24: tuple argument 4, member 1 (float64)" in text


def test_numba_names_with_huge_numbers_are_refused_not_expanded():
    """A name is text: a 5000-digit length, a tuple of 10^8 members or an Array of 10^9
    dimensions is "could not be read", neither a ValueError from int() nor a list of 10^8 labels."""
    from splice.probe.numba_args import describe

    for name in ("_ZN" + "9" * 5000 + "xE", "_ZN8__main__1kE8UniTupleIfLi99999999EE",
                 "_ZN8__main__1kE5ArrayIfLi999999999E1C7mutable7alignedE"):
        labels, why = describe(name, 3)
        assert labels == {} and why.startswith("numba's mangled argument types could not be read")


@pytest.mark.parametrize("args", ["5ArrayI" * 3000 + "f", "8UniTupleI" * 3000 + "f", "5TupleI" * 3000,
                                  "5ArrayI8UniTupleI" * 1500 + "f"])
def test_a_numba_name_nested_thousands_deep_is_unreadable_not_a_traceback(tmp_path, capsys, args):
    """regression: an Array's element and a tuple's members were read by recursing into the
    whole type grammar before checking they are scalars: an entry named ``_ZN1kE`` +
    ``5ArrayI`` x 3000 (21 KB, a legal PTX name in a module numba's environment marks) was a
    RecursionError traceback from ``probe init``.  Now: not a builtin scalar, no labels."""
    from splice.probe.numba_args import describe

    assert describe("_ZN1kE" + args, 1)[0] == {}
    (tmp_path / "deep.ptx").write_text(
        ".version 8.0\n.target sm_80\n.address_size 64\n.common .global .align 8 .u64 _ZN08NumbaEnv1kE;\n"
        f".visible .entry _ZN1kE{args}(\n\t.param .u64 p0\n)\n{{\n\t.reg .b64 %rd<3>;\n"
        "\tld.param.u64 %rd1, [p0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u64 [%rd2], %rd1;\n\tret;\n}\n")
    assert main(["probe", "init", str(tmp_path / "deep.ptx"), "-o", str(tmp_path / "s.yaml")]) == 0
    assert "mangled argument types could not be read" in (tmp_path / "s.yaml").read_text()


def test_numba_names_of_scalars_arrays_and_tuples_still_read():
    from splice.probe.numba_args import describe

    labels, why = describe("_ZN1kE5ArrayIfLi2E1A7mutable7alignedE8UniTupleIiLi3EE5TupleIdfEj", 5 + 4 + 3 + 2 + 1)
    assert why is None, why
    assert labels[4].startswith("array argument 1 (Array(float32, 2, 'A')): data")
    assert labels[9] == "tuple argument 2, member 0 (int32)" and labels[12] == "tuple argument 3, member 0 (float64)"
    assert labels[14] == "scalar argument 4 (uint32)"
