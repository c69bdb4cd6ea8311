"""The two sides of a cut as statements to evaluate: the original range (parsed from the module's
own text, with its statement numbers) and the bound native code exactly as ``splice apply``
emits it (the inline scope, or the call site plus the ``.func`` it calls)."""
from __future__ import annotations

import re

from ..ptx import model as m
from ..ptx import parse

_WRAP = ".version 8.0\n.target sm_90\n.address_size 64\n"
_ENTRY = ".entry __splice_verify()\n{\n"


def _parse(text: str, path: str):
    return parse(text, path, cache=False)


def original(plan, cp):
    """(statements, origin function) of a cut's original range.  Origins are
    ``("s", number, line)``: statement numbers are the kernel's, counted from the cut's first."""
    start, end = cp.region
    ls = plan.source.rfind("\n", 0, start) + 1
    text = plan.source[ls:end]
    head = _WRAP + _ENTRY
    mod = _parse(head + text + "\n}\n", str(plan.recipe.module))
    body = mod.function("__splice_verify").body.items
    skip = head.count("\n")
    numbered = [s for s in m.walk(body) if isinstance(s, (m.Instruction, m.Label))]
    nums = {}
    if len(numbered) == cp.last - cp.first + 1:
        for k, s in enumerate(numbered):
            nums.setdefault(s.line, cp.first + k)
    first_line = cp.lines[0]

    def origin(s):
        return ("s", nums.get(s.line), first_line + s.line - skip - 1)

    return body, origin


def outside_entries(plan, cp, body) -> list:
    """Labels of the cut that the rest of the module names: a branch from outside may enter the
    cut there (apply keeps such labels), a second entry the checker does not follow.  Any
    mention of the name outside the cut counts (conservative).  A label of a ``{ }`` scope that
    lies wholly inside the cut is local to it (PTX ISA 4.4; CUTLASS repeats ``LAB_WAIT:`` in
    every wait block): nothing outside can branch there."""
    start, end = cp.region
    src = plan.source
    data = [mt.span() for mt in _SECTION.finditer(src)] if ".section" in src else []
    out = []
    for s in body:
        if isinstance(s, m.Label):
            pat = re.compile(r"(?<![\w$.%])" + re.escape(s.name) + r"(?![\w$])")
            for mt in pat.finditer(src):
                if start <= mt.start() < end or any(a <= mt.start() < b for a, b in data):
                    continue
                out.append(s.name)
                break
    return out


# a ``.section`` block's data (DWARF of ``nvcc -G``: ``.b64 $L__tmp24``) names labels by address,
# never as a branch target
#: (a block never closed runs to the end: matched once, not searched for again from each opening)
_SECTION = re.compile(r"^[ \t]*\.section\b[^{;]*\{.*?(?:^[ \t]*\}|\Z)", re.M | re.S)


def native(plan, cp, funcs_cache: dict):
    """(statements, origin, funcs, func origins, glue test) of a cut's bound native code."""
    b = cp.binding
    head = _WRAP + _ENTRY
    skip = head.count("\n")
    mod = _parse(head + "\n".join(b.site) + "\n}\n", "<site>")
    body = mod.function("__splice_verify").body.items
    site_origin = list(b.site_origin)

    def origin(s):
        k = s.line - skip - 1
        o = site_origin[k] if 0 <= k < len(site_origin) else None
        return ("n", o[0], o[1]) if o else ("glue", None, k + 1)

    def glue(s):
        return origin(s)[0] == "glue"

    if "funcs" not in funcs_cache:
        funcs_cache["funcs"], funcs_cache["origins"] = _functions(plan)
    return body, origin, funcs_cache["funcs"], funcs_cache["origins"], glue


def _functions(plan):
    """Every ``.func`` the plan adds, parsed, with an origin function per function."""
    blocks, origins = [], []
    for cp in plan.cuts:
        for blk, org in zip(cp.binding.prelude, cp.binding.prelude_origin):
            if ".func" in blk:
                blocks.append(blk)
                origins.append(org)
    if not blocks:
        return {}, {}
    text = _WRAP
    starts = []
    for blk in blocks:
        starts.append(text.count("\n"))
        text += blk + "\n"
    mod = _parse(text, "<funcs>")
    funcs, forigin = {}, {}
    for fn in mod.functions():
        k = max(i for i, s0 in enumerate(starts) if fn.line - 1 >= s0)
        org, base = origins[k], starts[k]

        def origin(s, org=org, base=base):
            i = s.line - base - 1
            o = org[i] if 0 <= i < len(org) else None
            return ("n", o[0], o[1]) if o else ("glue", None, i + 1)

        funcs[fn.name] = fn
        forigin[fn.name] = origin
    return funcs, forigin
