"""The entry's performance directives a recipe sets: ``maxnreg:`` -> ``.maxnreg``,
``minblocks:`` -> ``.minnctapersm``, ``maxntid:`` -> ``.maxntid`` (docs/recipes.md, "Entry
directives").

A recipe that makes the code keep fewer values live still leaves ptxas free to spend the
registers it saved on latency (hoisted loads): the occupancy a rewrite is for has to be asked of
ptxas, and these are the PTX ISA's own ways of asking.  They are written between the entry's
parameter list and its body: a directive the entry already has is replaced in place, a new one
goes on a line of its own before the ``{``.  Everything else of the module stays byte for byte.
"""
from __future__ import annotations

from typing import Optional

from .recipe import DIRECTIVE_KEYS, Recipe


def directive_text(key: str, value) -> str:
    """``.maxnreg 168`` / ``.minnctapersm 3`` / ``.maxntid 128, 1, 1``."""
    if key == "maxntid":
        return f"{DIRECTIVE_KEYS[key]} {', '.join(str(v) for v in value)}"
    return f"{DIRECTIVE_KEYS[key]} {value}"


def _existing(fn, name: str):
    for d in fn.directives or ():
        if d.name == name:
            return d
    return None


def check_directives(recipe: Recipe, fn) -> None:
    """Refuse, at the recipe's key, what ptxas would take with a warning and not do:
    ``minblocks:`` for an entry without a block size (ptxas ignores ``.minnctapersm`` when
    neither ``.maxntid`` nor ``.reqntid`` is given), ``maxntid:`` on an entry that already
    requires ``.reqntid`` (two block sizes for one entry)."""
    d = recipe.directives
    if "maxntid" in d and _existing(fn, ".reqntid") is not None:
        req = _existing(fn, ".reqntid")
        raise recipe.error(f"maxntid: the entry {fn.name} already requires .reqntid "
                           f"{''.join(req.args)} (line {req.line}): a second block size is not a bound; "
                           "leave maxntid: out", "maxntid")
    if "minblocks" in d and "maxntid" not in d and _existing(fn, ".maxntid") is None \
            and _existing(fn, ".reqntid") is None:
        raise recipe.error(f"minblocks: the entry {fn.name} has no .maxntid or .reqntid, and ptxas ignores "
                           ".minnctapersm without one: add maxntid: (the block size, e.g. [32, 1, 4])",
                           "minblocks")


def directive_edits(recipe: Recipe, source: str, fn) -> list:
    """[(start, end, text, recipe key)] replacements of ``source`` that set the recipe's
    directives on ``fn`` (sorted, disjoint; empty when the recipe sets none)."""
    if not recipe.directives:
        return []
    check_directives(recipe, fn)
    edits = []
    new_lines = []
    for key in ("maxntid", "minblocks", "maxnreg"):
        if key not in recipe.directives:
            continue
        text = directive_text(key, recipe.directives[key])
        old = _existing(fn, DIRECTIVE_KEYS[key])
        if old is not None and old.span is not None:
            edits.append((old.span[0], old.span[1], text, key))
        else:
            new_lines.append((text, key))
    if new_lines:
        at = _body_line_start(source, fn)
        text = _separator(source, at) + "".join(f"{t}\n" for t, _k in new_lines)
        edits.append((at, at, text, new_lines[0][1]))
    return sorted(edits)


def _body_line_start(source: str, fn) -> int:
    """Where a new directive line goes: the start of the line holding the body's ``{`` when
    nothing but blanks precede it there, else just before the ``{`` (``) {`` on one line)."""
    brace = fn.body.span[0]
    ls = source.rfind("\n", 0, brace) + 1
    return ls if not source[ls:brace].strip() else brace


def _separator(source: str, at: int) -> str:
    """'' at a line start, else the newline that puts the first directive on a line of its own
    (``) {`` on one line)."""
    return "" if at == 0 or source[at - 1] == "\n" else "\n"


def describe(recipe: Recipe) -> Optional[str]:
    """One line for the report: the directives the recipe sets, or None."""
    if not recipe.directives:
        return None
    return "; ".join(directive_text(k, v) for k, v in recipe.directives.items())
