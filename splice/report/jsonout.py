"""The JSON every ``--json`` command prints (and ``probe.json``): text a strict parser takes.

Module text is read with ``surrogateescape`` and file names are decoded the same way, so a byte
that is not UTF-8 (a Latin-1 comment an ``index`` line carries, a file named ``caf\\xe9.ptx``)
is a lone surrogate in a ``str``.  ``json.dumps`` wrote it as the escape ``\\udce9``, which
Python reads back but strict parsers (RFC 8259 says an escape is a character; serde_json, Go's
``encoding/json`` with its replacement, jq) refuse or alter.  Here a run of such characters
that holds UTF-8 bytes is that text (a UTF-8 name under ``LANG=C``), and any other is U+FFFD,
one for one, as error messages show it (``splice.errors.printable``); a number that is
not finite (``NaN``, ``Infinity``: no JSON at all) is ``null``.  The common case costs one
``json.dumps``: the walk runs only when the first pass finds something to replace."""
from __future__ import annotations

import json
import math
import re
from typing import IO, Any

_SURROGATE = re.compile("[\ud800-\udfff]")
#: a run of bytes ``surrogateescape`` kept (U+DC80..U+DCFF)
_ESCAPED_RUN = re.compile("[\udc80-\udcff]+")


def _utf8_or_same(m: "re.Match") -> str:
    """A run of escaped bytes that is UTF-8 is that text: under ``LANG=C`` (no UTF-8 mode) the
    file name ``né.ptx`` is decoded as ASCII, its two UTF-8 bytes kept as escapes, and the JSON
    said ``n\ufffd\ufffd.ptx``, a name no file has.  Bytes that are not UTF-8 stay escapes (U+FFFD)."""
    try:
        return bytes(ord(c) - 0xDC00 for c in m.group()).decode("utf-8")
    except UnicodeDecodeError:
        return m.group()


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, **kwargs)`` with lone surrogates as U+FFFD and non-finite numbers as
    ``null``."""
    try:
        text = json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:      # NaN or an infinity somewhere
        return json.dumps(_strict(obj, kwargs.get("default")), allow_nan=False, **kwargs)
    if "\\ud" not in text:  # no surrogate escape (a valid astral character is a pair: walked, kept)
        return text
    return json.dumps(_strict(obj, kwargs.get("default")), allow_nan=False, **kwargs)


def dump(obj: Any, fp: IO[str], **kwargs: Any) -> None:
    fp.write(dumps(obj, **kwargs))


def _strict(o: Any, default: Any = None) -> Any:
    """A copy of ``o`` with every text (keys too) and number made strict JSON."""
    if isinstance(o, str):
        return _SURROGATE.sub("\ufffd", _ESCAPED_RUN.sub(_utf8_or_same, o))
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {(_strict(k) if isinstance(k, str) else k): _strict(v, default) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_strict(v, default) for v in o]
    if default is not None and not isinstance(o, (int, bool, type(None))):
        return _strict(default(o))
    return o
