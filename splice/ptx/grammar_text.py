"""The grammar's text (``grammars/ptx.lark``) and its terminal definitions, read without Lark:
the parser builds Lark from it, and the readers that skip comments without Lark take the
comment terminals from it (``comments``), so both skip the same text."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path


@lru_cache(maxsize=1)
def grammar_text() -> str:
    try:  # installed wheel: shipped as splice/grammars/ptx.lark
        return resources.files("splice.grammars").joinpath("ptx.lark").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return (Path(__file__).resolve().parents[2] / "grammars" / "ptx.lark").read_text(encoding="utf-8")


#: a terminal defined by a regular expression: ``NAME: /regex/`` on a line of its own
_TERMINAL = re.compile(r"^(?P<name>[A-Z_]+)(?:\.\d+)?:[ \t]*/(?P<regex>(?:[^/\\\n]|\\.)*)/[a-z]*[ \t]*$", re.M)


def terminal(name: str) -> str:
    """The regular expression of the grammar's terminal ``name`` (as Lark reads it: ``\\/`` is
    ``/``); KeyError when the grammar defines no such terminal by a regex."""
    for mt in _TERMINAL.finditer(grammar_text()):
        if mt.group("name") == name:
            return mt.group("regex").replace("\\/", "/")
    raise KeyError(name)
