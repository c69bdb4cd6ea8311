"""The entry's ``.maxnreg`` / ``.minnctapersm`` as a space's dimensions: the recipe keys
``maxnreg:`` / ``minblocks:`` (``splice.cut.recipe``, docs/recipes.md "Entry directives").

A variant sets a directive through its recipe, never by editing the module: the written best
recipe is an ordinary recipe that ``splice apply`` and ``splice probe`` accept as it is.  A
choice is a value the recipe key takes, or ``none``: the variant's recipe has no such key (the
entry keeps what the module says).  The values are checked against the recipe's own ranges at
the tune file's line, so a space never holds a point every apply would refuse.
"""
from __future__ import annotations

from ..errors import SpliceError

#: a space's directive dimension -> the PTX directive its recipe key sets on the entry
PTX_DIRECTIVE = {"maxnreg": ".maxnreg", "minblocks": ".minnctapersm"}
NONE = "none"


def value_range(name: str) -> tuple:
    from ..cut.recipe import MAXNREG_RANGE, MINBLOCKS_RANGE

    return {"maxnreg": MAXNREG_RANGE, "minblocks": MINBLOCKS_RANGE}[name]


def check_choices(name: str, choices: tuple, path: str, at: tuple) -> None:
    """Every choice ``none`` or a whole number the recipe key takes (24..255 registers, 1..32
    blocks): an error at the dimension's line otherwise."""
    lo, hi = value_range(name)
    for v in choices:
        if v == NONE:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise SpliceError(f"directives: {name}: expected none or whole numbers {lo}..{hi} (the recipe key "
                              f"{name}: setting the entry's {PTX_DIRECTIVE[name]}), got {v!r}", path, *at)


def recipe_entries(base: dict, choices: dict) -> dict:
    """The variant's top-level directive keys: the base recipe's own (maxnreg, minblocks,
    maxntid), then each directive choice set, or removed by ``none``."""
    from ..cut.recipe import DIRECTIVE_KEYS

    out = {k: base[k] for k in DIRECTIVE_KEYS if k in base}
    for k, v in choices.items():
        if k not in PTX_DIRECTIVE:
            continue
        if v == NONE:
            out.pop(k, None)
        else:
            out[k] = v
    return out
