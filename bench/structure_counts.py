"""Structural counts of splice's code, for the layering work: how a tree stands on the rules
tests/test_layers.py enforces, as numbers to compare two trees by.

    python bench/structure_counts.py [ROOT ...]      # default: this checkout; --json for JSON

For each tree: comparisons of a probe parameter's kind (``f.kind == "buffer"``, ``kind in
("texture", "surface")``, ``d.get("kind") == "struct"``, ``r["kind"] == "table"``), hand-written
fixpoint loops (``while changed:`` and ``for _round in range(...)``), comment regexes spelled by
hand (a pattern literal with ``//[^\\n]`` or a ``/\\*`` opener, outside the comment lexer and
the SASS readers), function-level imports, import cycles between modules (strongly connected
components of the module graph, every import counted), imports of another module's ``_private``
name, modules over 500 lines, and the regular expressions of splice/probe/ (timing.py, another
change's, aside): PTX text is read and edited through the model there.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

KIND_NAMES = ("buffer", "texture", "surface", "scalar", "table", "global", "struct", "tensor_map", "texref",
              "surfref", "opaque")
#: a comparison of a kind and what it is compared with (one quoted word, or a literal tuple/list/set)
_KIND_CMP = re.compile(r"""(?:\bkind\b|\[["']kind["']\]|\.get\(["']kind["']\))\s*(?:==|!=|\bnot in\b|\bin\b)\s*"""
                       r"""(?P<rhs>["'][^"']*["']|[(\[{][^)\]}]*[)\]}])""")
_KIND_VALUE = re.compile(r"""["'](?:""" + "|".join(KIND_NAMES) + r""")["']""")
_FIXPOINT = re.compile(r"^\s*(?:while changed\b|for _round in range\()", re.M)
_HAND_COMMENT = re.compile(r"""r?b?["'][^"'\n]*(?://\[\^\\n\]|/\\\*)""")
#: a regular expression used in the probe's code (``re.sub(``, ``re.compile(`` ...)
_REGEX_CALL = re.compile(r"\bre\.(?:sub|subn|compile|match|fullmatch|search|findall|finditer|split)\(")


def modules(root: Path) -> dict:
    """{dotted name: path} of every module under ``root/splice``."""
    out = {}
    for p in sorted((root / "splice").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def imports(name: str, path: Path, known: dict) -> list:
    """[(imported module, names, function-level?, line)] of ``name``'s imports of splice modules
    (relative ones resolved; ``from pkg import mod`` names the module ``pkg.mod``)."""
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []

    def visit(node, in_func):
        for child in ast.iter_child_nodes(node):
            f = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = pkg.split(".")
                    up = up[:len(up) - child.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for a in child.names:
                    target = f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                    out.append((target, a.name, in_func, child.lineno))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    out.append((a.name, None, in_func, child.lineno))
            visit(child, f)
    visit(tree, False)
    return out


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
                continue
            if w not in graph:
                continue
            if w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(graph[w])))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def counts(root: Path) -> dict:
    mods = modules(root)
    graph = {}
    fn_imports, private = [], []
    for name, path in mods.items():
        edges = imports(name, path, mods)
        graph[name] = sorted({t for t, _n, _f, _l in edges if t in mods and t != name})
        for line in sorted({line for _t, _n, in_func, line in edges if in_func}):   # one per statement
            fn_imports.append(f"{path.relative_to(root)}:{line}")
        for t, n, in_func, line in edges:
            if n and n.startswith("_") and not n.startswith("__") and t in mods and t != name:
                private.append(f"{path.relative_to(root)}:{line}: {t}.{n}")
    kind_checks, fixpoints, comment_res, big, probe_res = [], [], [], [], []
    for name, path in mods.items():
        text = path.read_text()
        rel = str(path.relative_to(root))
        for n, line in enumerate(text.splitlines(), 1):
            if any(_KIND_VALUE.search(mt.group("rhs")) for mt in _KIND_CMP.finditer(line)):
                kind_checks.append(f"{rel}:{n}")
            if _HAND_COMMENT.search(line) and not line.lstrip().startswith("#") and \
                    path.name not in ("comments.py", "grammar_text.py") and not path.name.startswith("sass"):
                comment_res.append(f"{rel}:{n}")
        fixpoints += [f"{rel}:{text.count(chr(10), 0, mt.start()) + 1}" for mt in _FIXPOINT.finditer(text)]
        if name.startswith("splice.probe.") and name != "splice.probe.timing":
            probe_res += [f"{rel}:{n}" for n, line in enumerate(text.splitlines(), 1) if _REGEX_CALL.search(line)]
        lines = text.count("\n")
        if lines > 500:
            big.append(f"{rel} ({lines})")
    cyc = cycles(graph)
    return {"kind_checks": kind_checks, "fixpoint_loops": fixpoints, "comment_regexes": comment_res,
            "function_level_imports": fn_imports, "cycles": cyc, "private_imports": private,
            "modules_over_500_lines": big, "probe_regex_sites": probe_res}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", default=[str(Path(__file__).resolve().parents[1])])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true", help="list every item, not just the counts")
    args = ap.parse_args()
    res = {r: counts(Path(r)) for r in args.roots}
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    keys = list(next(iter(res.values())))
    print(f"{'':28}" + "".join(f"{Path(r).name[:18]:>20}" for r in res))
    for k in keys:
        print(f"{k:28}" + "".join(f"{len(v[k]):>20}" for v in res.values()))
    if args.list:
        for r, v in res.items():
            for k in keys:
                for item in v[k]:
                    print(f"{Path(r).name}\t{k}\t{item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
