"""A variant's native: the recipe's own native file, its statements reordered and fenced.

The base native is read with the cut natives' own parser (``splice.cut.native.parse_native``)
into model nodes; ``schedule.py`` permutes them; schedule fences are built with
``splice.ptx.builder``; the result is printed by the natives' renderer.  Template expressions
(``{{woff + 512}}``) must survive, since apply instantiates them per phase: each is held as an
integer immediate no file contains (a *hole*) while the native is parsed and printed, then put
back as written.  A header is written anew: the base's ``params``, and its scratch plus the
body's ``.reg`` registers and the fence's.  A register a nested scope declares without a ``%``
(``{ .reg .f16 low; mov.b32 {low, high}, %r1; }``, as the streamed natives have) cannot be named
in the header (its names are ``%``-registers): it is declared by a ``.reg`` line before the body,
under the name the natives' parser gave it (a shadowing one renamed), so the text still parses
to the same statements.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..cut.native import parse_native, read_header, render, template_spans
from ..errors import SpliceError
from ..ptx.builder import Builder, NameScope, addr
from . import schedule as sch
import yaml

#: the fence's registers: one scope per native, reused by every fence in it
FENCE_PREFIX = "%tunefence"


@dataclass(frozen=True)
class Shape:
    """What a variant does to one cut's native."""
    order: str = "original"
    fence: str = "none"
    loads: str = "as-is"

    @property
    def identity(self) -> bool:
        return self == Shape()

    def describe(self) -> str:
        return f"order {self.order}, fence {self.fence}, loads {self.loads}"


def hold_templates(source: str) -> tuple:
    """(text with every ``{{…}}`` replaced by a hole, {hole: the template as written})."""
    base = 7_100_000_000_000_000
    while any(str(base + k) in source for k in range(0, 1000, 97)):
        base += 1_000_000_000_000
    holes, out, at = {}, [], 0
    for i, (s, e, _expr) in enumerate(template_spans(source)):
        hole = str(base + i)
        holes[hole] = source[s:e]
        out += [source[at:s], hole]
        at = e
    out.append(source[at:])
    return "".join(out), holes


def restore_templates(text: str, holes: dict) -> str:
    for hole, tpl in holes.items():
        text = text.replace(hole, tpl)
    return text


def _blank_header(text: str, line: int) -> str:
    """The text with the header's first line made an ordinary comment: the body parses without
    its parameters (they are templates, held as holes)."""
    lines = text.split("\n")
    if 0 < line <= len(lines) and "splice-native" in lines[line - 1]:
        lines[line - 1] = "//"
    return "\n".join(lines)


def fence_nodes(taken: set) -> tuple:
    """(statements of one schedule fence, their scratch {register: type}): a ``%clock64`` read
    whose value a store uses, under a predicate that is false in every thread (``%tid.x <
    %ntid.x``): ptxas does not move instructions across the read, and no byte of memory changes
    (verify's tid-bound rule proves the store never happens)."""
    scope = NameScope(FENCE_PREFIX)
    b = Builder(scope)
    t, x, n, q = scope.reg(".b64"), scope.reg(".b32"), scope.reg(".b32"), scope.reg(".pred")
    b.ins("mov.u64", t, "%clock64")
    b.ins("mov.u32", x, "%tid.x")
    b.ins("mov.u32", n, "%ntid.x")
    b.ins("setp.ge.u32", q, x, n)
    b.ins("st.global.u64", addr(t), t, guard=f"@{q}")
    clash = taken & {t, x, n, q}
    if clash:
        raise SpliceError(f"the native already names {sorted(clash)[0]}, the schedule fence's register")
    nat = parse_native("\n".join(scope.decls()) + "\n" + b.text(), "<fence>")
    return list(nat.body), dict(nat.scratch)


def _assemble(body: list, shape: Shape, taken: set) -> tuple:
    """(statements in issue order with fences, extra scratch)."""
    reorder = shape.order != "original" or shape.loads != "as-is"
    issued = sch.schedule(body, shape.order, shape.loads) if reorder else list(range(len(body)))
    tiles = sch.mma_tiles(body)
    start, after = sch.fence_points(issued, tiles, shape.fence)
    if not start and not after:
        return [body[i] for i in issued], {}
    fence, scratch = fence_nodes(taken)
    out = list(fence) if start else []
    for at, pos in enumerate(issued):
        out.append(body[pos])
        if at in after:
            out.extend(fence)
    return out, scratch


def _flow(mapping: dict) -> str:
    return yaml.safe_dump(mapping, default_flow_style=True, width=1 << 30, sort_keys=False).strip()


def generate(source: str, path: str, shape: Shape, note: str = "") -> str:
    """The native text of ``shape`` applied to the native ``source`` (read from ``path``)."""
    hdr, hline = read_header(source, path)
    held, holes = hold_templates(source)
    nat = parse_native(_blank_header(held, hline), path)
    body = list(nat.body)
    try:
        nodes, extra = _assemble(body, shape, set(nat.used) | set(nat.scratch))
    except sch.Unschedulable as exc:
        line = nat.line(exc.node) if exc.node is not None and getattr(exc.node, "line", None) else hline
        raise SpliceError(f"{shape.describe()}: {exc.reason}", path, line) from None
    scratch = dict(hdr.get("scratch") or {})
    decls = []
    for reg, ty in {**nat.scratch, **extra}.items():
        if reg.startswith("%"):
            scratch[reg[1:]] = ty
        else:       # a scope's `.reg .f16 low;`: the header would name it %low, so it stays a .reg line
            decls.append(f"\t.reg {ty} {reg};")
    # the header names the source, not the choices: two choices that generate the same statements
    # are one variant (its key is the content), whatever the point that made it first.  By its
    # file name only: the key hashes this text, and a folder in it made the keys (and so which of
    # two equally fast variants the timing's jitter ranked first) differ from one checkout to another
    head = [f"// generated by splice tune from {' '.join(Path(str(path)).name.splitlines())}"]
    if note:
        head.append(f"// {note}")
    head += ["// splice-native:", f"//   params: {_flow(dict(hdr.get('params') or {}))}",
             f"//   scratch: {_flow(scratch)}"]
    text = "\n".join(head + decls + render(nodes)) + "\n"
    return restore_templates(text, holes)
