"""The entry's ``.maxnreg`` / ``.minnctapersm`` as recipe keys: the one place tune learns
whether this splice's recipes have them.

A variant sets a directive through the recipe, never by editing the module itself: the written
best recipe must be an ordinary recipe that ``splice apply`` and ``splice probe`` accept as it
is.  The keys (``maxnreg:``, ``minblocks:``) belong to ``splice.cut.recipe``; until it has them
a space that varies a directive is refused, naming the key, instead of being tuned with a
directive no apply would set.
"""
from __future__ import annotations

from ..errors import SpliceError

#: a space's directive dimension -> the recipe key that sets it
RECIPE_KEY = {"maxnreg": "maxnreg", "minblocks": "minblocks"}
#: the PTX directive each key sets on the entry
PTX_DIRECTIVE = {"maxnreg": ".maxnreg", "minblocks": ".minnctapersm"}


def recipe_keys() -> frozenset:
    """The top-level keys this splice's recipe loader accepts."""
    from ..cut.recipe import TOP_KEYS

    return frozenset(TOP_KEYS)


def supported(name: str) -> bool:
    return RECIPE_KEY[name] in recipe_keys()


def refuse_unsupported(name: str, path: str, at: tuple) -> None:
    """A directive dimension this splice cannot express in a recipe: an error at its line."""
    if name in RECIPE_KEY and not supported(name):
        raise SpliceError(f"directives: {name}: this splice has no {RECIPE_KEY[name]} key in its recipes "
                          f"(the recipe key that sets the entry's {PTX_DIRECTIVE[name]}); remove the "
                          "dimension, or use a splice whose recipes have it", path, *at)


def recipe_entries(choices: dict) -> dict:
    """The top-level recipe keys of a variant's directive choices ({'maxnreg': 168})."""
    return {RECIPE_KEY[k]: v for k, v in choices.items() if k in RECIPE_KEY}
