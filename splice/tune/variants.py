"""A point of the space as an ordinary recipe: its YAML, its natives, and its content hash.

A variant is written as a recipe file and one native per cut in a folder named by its hash, so
``splice apply`` / ``verify`` / ``probe`` read it as they read any recipe, and the user can run
any row of the leaderboard by hand.  The hash covers what the variant *is* (the recipe's keys,
every native's text, the module's sha256), not where it is written: two points of the space
that generate the same files are one variant.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SpliceError
from ..yamlsafe import YList, YMap
from .natives import Shape, generate
from .space import Space

MODULE_SLOT = "<module>"      # the recipe's module: written relative to the variant's folder


@dataclass
class Base:
    """What every variant of a space shares: the recipe's cuts, its module, its natives."""
    space: Space
    home: Path
    module: Path
    module_sha: str
    natives: dict                                  # cut number -> (path, text)
    generated: dict = field(default_factory=dict)  # (path, Shape) -> text (this run's memo)


@dataclass(frozen=True)
class Variant:
    index: int
    key: str                       # sha256 hex of the recipe, natives and module
    choices: dict                  # dimension name -> choice
    recipe: dict                   # the recipe mapping (module: MODULE_SLOT)
    natives: dict                  # "native/cutN.ptx" -> text
    error: str = ""                # why the point could not be generated ('' when it was)

    @property
    def short(self) -> str:
        return self.key[:12]


def plain(v):
    """YMap/YList (the marked loader's types) as plain dicts and lists, for dumping."""
    if isinstance(v, (YMap, dict)):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (YList, list, tuple)):
        return [plain(x) for x in v]
    return v


def load_base(space: Space) -> Base:
    from ..util import home_dir, read_text
    from .steps import resolve_module

    home = home_dir(space.recipe_path)
    module = resolve_module(space.recipe_path, space.recipe)
    natives = {}
    for i, cut in enumerate(space.recipe["cuts"], 1):
        spelled = cut.get("native") if isinstance(cut, YMap) else None
        if not isinstance(spelled, str):
            raise SpliceError(f"cut {i}: native: expected a file name", space.recipe_path,
                              *(cut.vat("native") if isinstance(cut, YMap) else (None, None)))
        p = home / spelled
        if not p.is_file():
            raise SpliceError(f"cut {i}: native {spelled!r} not found", space.recipe_path, *cut.vat("native"))
        natives[i] = (str(p), read_text(p))
    sha = hashlib.sha256(Path(module).read_bytes()).hexdigest()
    return Base(space, home, Path(module), sha, natives)


def _settings(space: Space, point: dict) -> tuple:
    """({cut: {key: choice}}, {directive: value}) of one point."""
    per: dict = {}
    top: dict = {}
    for d in space.dims:
        choice = point[d.name]
        if not d.cuts:
            top[d.key] = choice
        for c in d.cuts:
            per.setdefault(c, {})[d.key] = choice
            if d.key == "abi" and choice == "call-shared":
                per[c]["threads"] = d.threads
    return per, top


def _native_text(base: Base, cut: int, s: dict) -> tuple:
    """(native text, the source it came from) of one cut under its settings."""
    from ..util import read_text

    path, text = base.natives[cut]
    if "native" in s:
        path = s["native"]
        text = read_text(path)
    shape = Shape(s.get("order", "original"), s.get("fence", "none"), s.get("loads", "as-is"))
    memo = (path, shape)      # always through the model: the same statements are the same text
    if memo not in base.generated:
        base.generated[memo] = generate(text, path, shape)
    return base.generated[memo], path


def _cut_entry(raw: YMap, cut: int, s: dict) -> dict:
    entry = {k: plain(v) for k, v in raw.items() if k != "native"}
    entry["native"] = f"native/cut{cut}.ptx"
    if "abi" in s:
        entry["abi"] = s["abi"]
        for k in ("threads", "sync"):           # call-shared's keys, refused on another abi
            entry.pop(k, None)
        if s["abi"] == "call-shared":
            entry["threads"] = s["threads"]
    params = {k.split(".", 1)[1]: v for k, v in s.items() if k.startswith("params.")}
    if params:
        entry["params"] = {**entry.get("params", {}), **params}
    return entry


def _recipe(base: Base, per: dict, top: dict, point: dict) -> dict:
    from .directives import recipe_entries

    r = base.space.recipe
    out = {k: plain(r[k]) for k in ("description", "name", "entry", "arch", "opt_level") if k in r}
    desc = "; ".join(f"{k} {v}" for k, v in point.items()) or "the recipe as it is"
    out["description"] = f"{out.get('description', '')} [splice tune: {desc}]".strip()
    out["module"] = MODULE_SLOT
    out.update(recipe_entries(plain(r), top))
    out["cuts"] = [_cut_entry(raw, i, per.get(i, {})) for i, raw in enumerate(r["cuts"], 1)]
    return out


def materialize(base: Base, index: int) -> Variant:
    """Variant ``index`` of the space; a point whose natives cannot be generated (a reorder of a
    native with control flow) is a Variant with ``error`` set, keyed by its choices."""
    point = base.space.point(index)
    per, top = _settings(base.space, point)
    try:
        natives = {f"native/cut{c}.ptx": _native_text(base, c, per.get(c, {}))[0] for c in base.natives}
    except SpliceError as exc:
        key = hashlib.sha256(json.dumps(point, sort_keys=True, default=str).encode()).hexdigest()
        return Variant(index, "x" + key[1:], point, {}, {}, exc.render())
    recipe = _recipe(base, per, top, point)
    blob = json.dumps({"recipe": {k: v for k, v in recipe.items() if k != "description"},
                       "natives": natives, "module": base.module_sha}, sort_keys=True, default=str)
    return Variant(index, hashlib.sha256(blob.encode()).hexdigest(), point, recipe, natives)


def recipe_text(v: Variant, module_rel: str) -> str:
    import yaml

    data = {**v.recipe, "module": module_rel}
    head = f"# splice tune variant {v.short} (point {v.index} of the space)\n"
    return head + yaml.safe_dump(data, sort_keys=False, width=1 << 16)


def write_variant(v: Variant, folder: Path, module: Path, natives: str = "native",
                  name: str = "recipe.yaml") -> Path:
    """Write the recipe as ``folder/name`` and its natives under ``folder/natives`` (the best
    recipe, written beside the store, points into its variant's folder); the recipe's path."""
    from ..util import write_atomic

    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in v.natives.items():
        target = folder / natives / Path(rel).name
        if not (target.is_file() and target.read_text() == text):
            write_atomic(target, text)
    cuts = [{**c, "native": f"{natives}/{Path(c['native']).name}"} for c in v.recipe["cuts"]]
    moved = Variant(v.index, v.key, v.choices, {**v.recipe, "cuts": cuts}, v.natives, v.error)
    rel_module = os.path.relpath(os.path.abspath(module), os.path.abspath(folder))
    path = folder / name
    text = recipe_text(moved, rel_module)
    if not (path.is_file() and path.read_text() == text):
        write_atomic(path, text)
    return path


def reference_key(recipe: str) -> str:
    """The content key of a recipe given as it is (a reference): its text and every native it
    names, so an edited reference is a new row."""
    from ..util import home_dir, read_text, read_utf8
    from ..yamlsafe import load_yaml_marked

    text = read_utf8(recipe, "a recipe is UTF-8 YAML", 1 << 20)
    data = load_yaml_marked(text, recipe)
    h = hashlib.sha256(text.encode())
    for cut in (data.get("cuts") or []) if isinstance(data, YMap) else []:
        native = cut.get("native") if isinstance(cut, YMap) else None
        if isinstance(native, str) and (home_dir(recipe) / native).is_file():
            h.update(read_text(home_dir(recipe) / native).encode())
    return "r" + h.hexdigest()[1:]
