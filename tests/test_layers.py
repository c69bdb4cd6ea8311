"""The layers of splice, from its import graph: cli -> commands -> probe/cut/verify -> analysis ->
ptx, with report/ rendering only and the base modules (errors, signals, util, yamlsafe) under all of
them; no import cycle; no import of another module's ``_private`` name; a function-level import
only for a heavy optional dependency (cupy, lark, cuda-bindings, plotting, ray), with a comment
saying so.  Every import counts, at module or function level (bench/structure_counts.py reads
the graph)."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from structure_counts import cycles, imports, modules  # noqa: E402

#: a module's layer: what it may import is below it (or its own package)
#: (tune, the search over recipe variants, builds on probe, cut and verify from their layer)
LAYER = {"cli": 6, "commands": 5, "probe": 4, "cut": 4, "verify": 4, "tune": 4, "analysis": 3, "ptx": 2,
         "grammars": 1}
BASE = {"splice", "splice.errors", "splice.signals", "splice.util", "splice.yamlsafe"}
#: what a function-level import may bring in: heavy optional dependencies
HEAVY = ("cupy", "lark", "cuda", "matplotlib", "ray")

MODS = modules(ROOT)
EDGES = {name: imports(name, path, MODS) for name, path in MODS.items()}


def _package(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer(name: str) -> int:
    return 0 if name in BASE else LAYER.get(_package(name), 0) if _package(name) != "report" else -1


def test_the_graph_is_read():
    assert len(MODS) > 100 and "splice.probe.kinds.base" in MODS
    assert any(t == "splice.ptx.model" for t, _n, _f, _l in EDGES["splice.analysis.kernel"])


def test_imports_go_down_the_layers():
    bad = []
    for name, edges in EDGES.items():
        src = _package(name)
        for target, _n, _f, line in edges:
            if target not in MODS or target == name or _package(target) == src:
                continue
            ok = _layer(target) < _layer(name) or (_layer(target) == _layer(name) == 4) or target in BASE
            if _package(target) == "report":          # rendering is asked for by the commands only
                ok = _package(name) in ("commands", "cli", "report")
            if _package(name) == "report":            # report renders: nothing but report and the base
                ok = target in BASE or _package(target) == "report"
            if not ok:
                bad.append(f"{MODS[name].relative_to(ROOT)}:{line}: {name} imports {target}")
    assert not bad, "\n".join(bad)


def test_the_base_modules_import_no_package():
    for name in BASE:
        for target, _n, _f, line in EDGES[name]:
            assert target not in MODS or target in BASE, f"{name}:{line} imports {target}"


def test_no_import_cycle():
    graph = {n: sorted({t for t, _n, _f, _l in e if t in MODS and t != n}) for n, e in EDGES.items()}
    assert cycles(graph) == []


def test_the_layers_of_probe_cut_and_verify_do_not_import_each_other_both_ways():
    pkg = {}
    for name, edges in EDGES.items():
        for target, _n, _f, _l in edges:
            if target in MODS and _layer(name) == _layer(target) == 4 and _package(name) != _package(target):
                pkg.setdefault(_package(name), set()).add(_package(target))
    both = [(a, b) for a, targets in pkg.items() for b in targets if a in pkg.get(b, ())]
    assert not both, both


def test_no_private_name_of_another_module_is_imported():
    bad = [f"{MODS[name].relative_to(ROOT)}:{line}: {target}.{n}"
           for name, edges in EDGES.items()
           for target, n, _f, line in edges
           if n and n.startswith("_") and not n.startswith("__") and target in MODS and target != name]
    assert not bad, "\n".join(bad)


def _function_imports(path: Path) -> list:
    tree = ast.parse(path.read_text())
    lines = path.read_text().splitlines()
    out = []

    def visit(node, in_func):
        for child in ast.iter_child_nodes(node):
            f = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if in_func and isinstance(child, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in child.names] if isinstance(child, ast.Import) else \
                    [("." * child.level) + (child.module or "")]
                here = lines[child.lineno - 1]
                above = lines[child.lineno - 2] if child.lineno > 1 else ""
                out.append((child.lineno, mods, "#" in here or above.strip().startswith("#")))
            visit(child, f)
    visit(tree, False)
    return out


#: splice's own modules that import a heavy dependency at their top (ptx/build.py: Lark's
#: transformer): importing one is importing it, so it may be imported lazily too
HEAVY_MODULES = {name for name, edges in EDGES.items()
                 if any(not in_func and t.split(".")[0] in HEAVY for t, _n, in_func, _l in edges)}


def _heavy(importer: str, mod: str) -> bool:
    """Whether ``mod`` (as a function-level import of module ``importer`` spells it) is heavy."""
    if mod.split(".")[0] in HEAVY:
        return True
    if mod.startswith("."):
        dots = len(mod) - len(mod.lstrip("."))
        pkg = importer.split(".")[:-dots] if not MODS[importer].name == "__init__.py" else importer.split(".")
        mod = ".".join(pkg + [mod.lstrip(".")])
    return mod in HEAVY_MODULES


@pytest.mark.parametrize("name", sorted(MODS))
def test_a_function_level_import_is_a_heavy_optional_dependency_with_a_comment(name):
    for line, mods, commented in _function_imports(MODS[name]):
        heavy = all(_heavy(name, m) for m in mods)
        assert heavy, f"{MODS[name].relative_to(ROOT)}:{line}: {', '.join(mods)} imported in a function"
        assert commented, f"{MODS[name].relative_to(ROOT)}:{line}: a lazy import of {mods[0]} says nothing of why"
