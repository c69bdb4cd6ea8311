"""numba's exploded array arguments, read back from the entry's mangled name.

numba-cuda passes each array argument as its whole data model, one ``.param`` per member:
meminfo, parent, nitems, itemsize, data, then ``shape[d]`` and ``strides[d]`` for each of the
``ndim`` dimensions; scalars are one ``.param`` each.  The PTX names them ``<entry>_param_N``,
so ``probe init`` could say only that a shape was "read as a value": it did not say which array
it belongs to, and a user filling the spec had to count parameters by hand.

The argument types are in the entry's name (numba mangles ``Array(float32, 2, 'A', mutable,
aligned)`` as ``5ArrayIfLi2E1A7mutable7alignedE``): read here for the builtin scalar types, arrays
of them and tuples of them (``UniTuple``/``Tuple``: one parameter per member).  Anything else
(records, tuples of arrays, an unknown code) or a count that does not match the parameters gives a
reason instead of names (:func:`describe`).
"""
from __future__ import annotations

import re
from typing import Optional

# Itanium builtin codes numba writes for its scalar types
_BUILTIN = {"b": "bool", "a": "int8", "h": "uint8", "s": "int16", "t": "uint16", "i": "int32",
            "j": "uint32", "l": "int64", "m": "uint64", "x": "int64", "y": "uint64", "f": "float32",
            "d": "float64", "Dh": "float16"}
_MEMBERS = ("meminfo", "parent", "nitems", "itemsize", "data")
_MAX_MEMBERS = 4096     # dimensions or tuple members: a name is text, not a reason to loop for ever


class _Unreadable(Exception):
    pass


def is_numba(module_text: str) -> bool:
    """numba writes a ``.common .global`` ``_ZN08NumbaEnv…`` environment per kernel."""
    return "_ZN08NumbaEnv" in module_text


def describe(entry: str, n_params: int) -> tuple:
    """({parameter index: what it is}, None) or ({}, why the arguments could not be named)."""
    try:
        args = _arguments(entry)
    except _Unreadable as exc:
        return {}, f"numba's mangled argument types could not be read ({exc})"
    labels: dict = {}
    i = 0
    for k, arg in enumerate(args, 1):
        if arg[0] == "array":
            _kind, dtype, ndim, layout = arg
            what = f"array argument {k} (Array({dtype}, {ndim}, '{layout}'))"
            first = i
            for member in _MEMBERS:
                labels[i] = f"{what}: {member}"
                i += 1
            labels[first + 4] += _data_note(first, ndim)
            for d in range(ndim):
                labels[i] = f"{what}: shape[{d}], its extent in elements along dimension {d}"
                i += 1
            for d in range(ndim):
                labels[i] = f"{what}: strides[{d}], in bytes"
                i += 1
        elif arg[0] == "tuple":              # a tuple's members are parameters of their own
            for j, member in enumerate(arg[1]):
                labels[i] = f"tuple argument {k}, member {j} ({member})"
                i += 1
        else:
            labels[i] = f"scalar argument {k} ({arg[1]})"
            i += 1
    if i != n_params:
        return {}, f"numba's argument types make {i} parameters, the entry has {n_params}"
    return labels, None


def _data_note(first: int, ndim: int) -> str:
    shapes = ", ".join(f"param_{first + 5 + d}" for d in range(ndim))
    return f" (its shape is {shapes}; size the buffer as their product, its itemsize param_{first + 3})"


def _arguments(name: str) -> list:
    """The argument types after the nested name ``_ZN … E``."""
    if not name.startswith("_ZN"):
        raise _Unreadable("not a nested mangled name")
    pos = 3
    while name[pos:pos + 1] != "E":
        pos = _source_name(name, pos)
        while name[pos:pos + 1] == "B":           # ABI tags: B<len><chars>
            pos = _source_name(name, pos + 1)
        if pos >= len(name):
            raise _Unreadable("the nested name does not end")
    pos += 1
    out = []
    while pos < len(name):
        arg, pos = _type(name, pos)
        out.append(arg)
    return out


def _source_name(s: str, pos: int) -> int:
    m = re.match(r"\d{1,9}", s[pos:])
    if not m:
        raise _Unreadable(f"expected a length at {pos}")
    return pos + len(m.group()) + int(m.group())


def _scalar(s: str, pos: int) -> Optional[tuple]:
    for code in ("Dh",) + tuple(c for c in _BUILTIN if len(c) == 1):
        if s.startswith(code, pos):
            return ("scalar", _BUILTIN[code]), pos + len(code)
    return None


def _member(s: str, pos: int, what: str) -> tuple:
    """An Array's element or a tuple's member: a builtin scalar, read without recursing (a
    name nesting ``5ArrayI`` 2000 deep was a RecursionError traceback from ``probe init``)."""
    got = _scalar(s, pos)
    if got is None:
        raise _Unreadable(f"{what} at {pos} is not a builtin scalar (an array or a tuple?)")
    return got


def _type(s: str, pos: int) -> tuple:
    got = _scalar(s, pos)
    if got is not None:
        return got
    m = re.match(r"(\d{1,9})", s[pos:])
    word = s[pos + len(m.group()):pos + len(m.group()) + int(m.group())] if m else ""
    if word in ("UniTuple", "Tuple"):
        return _tuple(s, pos + len(m.group()) + len(word), word == "UniTuple")
    if word != "Array":
        raise _Unreadable(f"argument type at {pos} is not a builtin scalar or an Array")
    pos += len(m.group()) + 5
    if s[pos:pos + 1] != "I":
        raise _Unreadable("Array without template arguments")
    elt, pos = _member(s, pos + 1, "an Array's element type")
    dtype = elt[1]
    lit = re.match(r"Li(\d{1,9})E", s[pos:])
    if not lit:
        raise _Unreadable("Array without a literal ndim")
    ndim = int(lit.group(1))
    if ndim > _MAX_MEMBERS:
        raise _Unreadable(f"an Array of {ndim} dimensions")
    pos += len(lit.group())
    layout_end = _source_name(s, pos)
    layout = s[pos + len(re.match(r"\d{1,9}", s[pos:]).group()):layout_end]
    pos = layout_end
    while s[pos:pos + 1] not in ("E", ""):
        pos = _source_name(s, pos)                 # mutable / readonly, aligned
    if s[pos:pos + 1] != "E":
        raise _Unreadable("Array template arguments do not end")
    return ("array", dtype, ndim, layout), pos + 1


def _tuple(s: str, pos: int, uniform: bool) -> tuple:
    """``UniTupleI<type>Li<n>EE`` (n members of one scalar type) or ``TupleI<type>…E``."""
    if s[pos:pos + 1] != "I":
        raise _Unreadable("a tuple without template arguments")
    members = []
    pos += 1
    while s[pos:pos + 1] not in ("E", ""):
        lit = re.match(r"Li(\d{1,9})E", s[pos:])
        if uniform and lit and len(members) == 1:
            if int(lit.group(1)) > _MAX_MEMBERS:
                raise _Unreadable(f"a tuple of {lit.group(1)} members")
            members = members * int(lit.group(1))
            pos += len(lit.group())
            break
        elt, pos = _member(s, pos, "a tuple's member")
        members.append(elt[1])
    if s[pos:pos + 1] != "E":
        raise _Unreadable("tuple template arguments do not end")
    return ("tuple", tuple(members)), pos + 1
