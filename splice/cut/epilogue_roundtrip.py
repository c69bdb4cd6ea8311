"""extract → apply of an epilogue, as the proof that epilogue cuts are lossless: the native file
``splice extract --epilogue N`` writes, applied back with ``epilogue: N`` (abi inline), must give
a module whose SASS is identical to the original's.  Used by the test over a sample and by
``bench/epilogue_cuts.py`` over every epilogue of both layers."""
from __future__ import annotations

from pathlib import Path

from ..util import write_atomic
from .extract import extract
from .recipe import load_recipe
from .splice import plan


def roundtrip_recipe(module: Path, entry: str, indices, workdir: Path, kernel) -> Path:
    """Extract epilogues ``indices`` of ``module`` into ``workdir`` and write a recipe that
    applies all of them back (one cut each); returns the recipe's path."""
    cuts = []
    for idx in indices:
        r = extract(kernel, epilogue=idx, source_name=str(module))
        nat = workdir / f"e{idx}.ptx"
        write_atomic(str(nat), r["text"])
        facts = r["facts"]
        cuts.append(f"  - epilogue: {idx}\n    native: {nat.name}\n    expect:\n"
                    f"      statement_count: {facts['statement_count']}\n"
                    f"      live_in: {facts['live_in']}\n      live_out: {facts['live_out']}\n")
    recipe = workdir / "roundtrip.yaml"
    write_atomic(str(recipe), f"module: {Path(module).resolve()}\nentry: {entry}\n"
                              f"output: roundtrip.out.ptx\ncuts:\n" + "".join(cuts))
    return recipe


def roundtrip_text(module: Path, entry: str, indices, workdir: Path, kernel) -> str:
    """The spliced module text of ``roundtrip_recipe`` (nothing is compiled here)."""
    recipe = load_recipe(roundtrip_recipe(module, entry, indices, workdir, kernel))
    return plan(recipe, kernel).text
