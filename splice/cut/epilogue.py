"""Epilogue cuts: resolve ``epilogue:`` / ``epilogues:`` / ``phase+epilogue:`` selectors and
compute the facts a recipe's ``expect:`` can check for them.

An epilogue E<n> is the run of statements between phase n's last mma and phase n+1's first
(``splice.analysis.epilogues``); it is what the user's notes describe and rewrite by hand, so it
is a first-class cut target like a phase.  ``phase+epilogue: n`` is phase n fused with E<n>: the
phase's A/B/C fragments keep their roles (``%a…``, ``%b…``, ``%c…``), the D registers the
epilogue consumes are not an output any more.

Facts of an epilogue cut (on top of the generic ``cut_facts``):

* ``statement_count`` — numbered statements;
* ``kind`` — the classification's name (``next-B loads + packs + clamped-cubic activation``);
* ``live_in`` / ``live_out`` by type — ``{.b32: 12, .b64: 1}`` (the dict form of the expect);
* ``constants`` — the float literals the epilogue computes with: immediates of its own
  statements, and those its live-ins are built from (through ``mov``/``cvt`` chains, so E23's
  constants are the four E21 materialises);
* ``memory`` — accesses by class: ``loads`` (global/generic/const, not param), ``stores``
  (global/generic stores and atomics), ``shared`` (loads and stores), ``texture``, ``surface``,
  plus ``barriers``.
"""
from __future__ import annotations

from collections import Counter

from ..analysis.fixpoint import solve
from ..analysis.roles import is_shared
from ..ptx import model as m
from ..analysis.abi import cut_abi
from .kernel import phase_by_index

MEMORY_CLASSES = ("loads", "stores", "shared", "texture", "surface", "barriers")


def epilogue_by_index(kernel, idx: int):
    for e in kernel.epilogues:
        if e.index == idx:
            return e
    return None


def epilogue_targets(recipe, cut, kernel):
    """Yield (title, phase or None, first pos, last pos, epilogue) for an epilogue selector."""
    have = [e.index for e in kernel.epilogues]
    for idx in cut.targets:
        e = epilogue_by_index(kernel, idx)
        if e is None:
            raise recipe.error(f"epilogue {idx} does not exist (the kernel's epilogues are "
                               f"E{have[0]}…E{have[-1]})" if have else f"epilogue {idx}: the kernel "
                               "has no epilogues", cut.select, cut)
        if cut.select == "phase+epilogue":
            ph = phase_by_index(kernel, idx)
            yield (f"phase {idx}+E{idx} s{ph.first}-s{e.last}", ph, kernel.first_pos_of(ph.first),
                   kernel.pos_of(e.last), e)
        else:
            yield f"E{idx} s{e.first}-s{e.last}", None, kernel.first_pos_of(e.first), kernel.pos_of(e.last), e


def epilogue_abi(kernel, cut, ph, e):
    """The cut ABI: generic ``%in…``/``%out…`` for an epilogue; for ``phase+epilogue`` the
    phase's fragments keep their a/b/c roles."""
    if ph is None:
        return kernel.abi(e.first, e.last)
    return cut_abi(kernel, ph.first, e.last,
                   [("a", ph.a_regs), ("b", ph.b_regs), ("c", ph.c_regs)], None)


def epilogue_context(kernel, e) -> dict:
    """Template names for a native epilogue: ``epilogue``, ``next_phase`` and the next phase's
    weight bytes (``next_weight_lo``/``next_weight_hi``, 0 when it reads no weight), so one
    template serves E23…E59 (each loads its next phase's B)."""
    nxt = phase_by_index(kernel, e.next_phase) if e.next_phase else None
    wb = tuple(nxt.weight_bytes) if nxt is not None and nxt.weight_bytes else (0, 0)
    return {"epilogue": e.index, "next_phase": e.next_phase or 0,
            "next_weight_lo": wb[0] or 0, "next_weight_hi": wb[1] or 0}


def epilogue_facts(kernel, i: int, j: int, abi, e) -> dict:
    count = sum(1 for s in kernel.stmts[i:j + 1] if s.n is not None)
    return {
        "statement_count": count,
        "kind": e.name,
        "features": list(e.features),
        "live_in_types": dict(Counter(r.type for r in abi.live_in)),
        "live_out_types": dict(Counter(r.type for r in abi.live_out)),
        "constants": constants_read(kernel, i, j, abi),
        "memory": memory_classes(kernel, i, j),
    }


def _float_imms(node) -> list:
    out = []
    for o in node.operands:
        if type(o) is m.Imm and o.text[:2].lower() in ("0f", "0d"):
            out.append(_norm_literal(o.text))
    return out


def constants_read(kernel, i: int, j: int, abi, depth: int = 6) -> list:
    """Float literals used by statements i…j, and those the live-ins are made of (through
    register copies and conversions only), sorted."""
    found = set()
    for s in kernel.stmts[i:j + 1]:
        if type(s.node) is m.Instruction:
            found.update(_float_imms(s.node))
    for r in abi.live_in:
        found.update(literals_behind(kernel, r.reg, i, depth))
    return sorted(found)


def literals_behind(kernel, reg: str, pos: int, depth: int = 6) -> set:
    """Float literals the value of ``reg`` at statement index ``pos`` is built from, through
    ``mov``/``cvt`` chains only (a constant, not a computed value)."""
    found = set()
    prov = kernel.provenance
    _defs, uses, _g = kernel.du()
    key = kernel._resolve(reg, kernel._scope_of[pos])
    todo = [(key[0], pos, 0)] if key is not None else []
    seen = set()
    while todo:
        key, pos, d = todo.pop()
        x = prov.reaching_def(key, pos)
        if x is None or x in seen or d > depth:
            continue
        seen.add(x)
        node = kernel.stmts[x].node
        if type(node) is not m.Instruction or node.opcode not in ("mov", "cvt"):
            continue
        found.update(_float_imms(node))
        for u in uses[x]:
            todo.append((u, x, d + 1))
    return found


def memory_classes(kernel, i: int, j: int) -> dict:
    """Counts of the accesses of statements i…j by class (``MEMORY_CLASSES``)."""
    out = dict.fromkeys(MEMORY_CLASSES, 0)
    for acc in kernel.provenance.accesses:
        if acc.pos < i or acc.pos > j:
            continue
        if acc.kind in ("tex", "tld4"):
            out["texture"] += 1
        elif acc.kind in ("sust", "suld", "sured"):
            out["surface"] += 1
        elif is_shared(acc.space):
            out["shared"] += 1
        elif acc.kind in ("ld", "ldu", "ldmatrix") and acc.space != "param":
            out["loads"] += 1
        elif acc.kind in ("st", "red", "atom"):
            out["stores"] += 1
    for s in kernel.stmts[i:j + 1]:
        if type(s.node) is m.Instruction and s.node.opcode in ("bar", "barrier"):
            out["barriers"] += 1
    return out


def check_epilogue_expect(cut, facts: dict) -> list:
    """Rows (fact, expected, found) for the epilogue facts of ``expect:`` that disagree; the
    generic facts (live_in counts/roles, statements, mma) are checked by ``check_expect``."""
    bad = []
    exp = cut.expect
    if "statement_count" in exp and exp["statement_count"] != facts.get("statement_count"):
        bad.append(("statement_count", str(exp["statement_count"]), str(facts.get("statement_count"))))
    if "kind" in exp:
        want = exp["kind"]
        if isinstance(want, list):
            ok = sorted(map(str, want)) == sorted(f for f in facts.get("features", ()))
            shown = ", ".join(map(str, want))
            found = ", ".join(facts.get("features", ()))
        else:
            ok = str(want) == facts.get("kind")
            shown, found = str(want), str(facts.get("kind"))
        if not ok:
            bad.append(("kind", shown, found))
    if "constants" in exp:
        want = sorted(_norm_literal(x) for x in (exp["constants"] or []))
        if want != facts.get("constants"):
            bad.append(("constants", " ".join(want) or "none", " ".join(facts.get("constants") or []) or "none"))
    if "memory" in exp:
        want = exp["memory"]
        memory: dict = facts.get("memory") or {}
        if isinstance(want, dict):
            diff = {k: v for k, v in want.items() if memory.get(str(k)) != v}
            if diff:
                bad.append(("memory", ", ".join(f"{k}={v}" for k, v in want.items()),
                            ", ".join(f"{k}={memory.get(str(k))}" for k in want)))
        elif want in (0, "none", None):
            if any(memory.values()):
                bad.append(("memory", "none", ", ".join(f"{k}={v}" for k, v in memory.items() if v)))
        else:
            bad.append(("memory", str(want), "a mapping like {loads: 10, stores: 0} or none"))
    for key in ("live_in", "live_out"):
        want = exp.get(key)
        if isinstance(want, dict) and want and all(str(t).startswith(".") for t in want):
            types: dict = facts.get(f"{key}_types") or {}
            if any(types.get(str(t), 0) != n for t, n in want.items()) or \
                    sum(types.values()) != sum(want.values()):
                bad.append((key, ", ".join(f"{t}={n}" for t, n in want.items()),
                            ", ".join(f"{t}={n}" for t, n in types.items())))
    return bad


def _norm_literal(x) -> str:
    s = str(x).strip()
    if s[:2].lower() in ("0f", "0d"):
        return s[:2].lower() + s[2:].upper()
    return s


def typed_expect(want) -> bool:
    """``live_in: {.b32: 12}`` is by type (checked here), ``{a: 24}`` by role (``check_expect``)."""
    return isinstance(want, dict) and bool(want) and all(str(t).startswith(".") for t in want)


def widen_to_blocks(fn, start: int, end: int) -> tuple:
    """Widen the character region [start, end) of a cut to whole ``{ }`` blocks: NVVM wraps
    each inline-asm statement in its own scope (``{neg.f16x2 %r1, %r2;\\n}``), so an epilogue's
    first or last statement is often the only statement of a block that starts before it.  A
    block is taken whole only when every statement in it lies inside the region;
    otherwise the region is left as it is and the caller's balance check reports the split."""
    blocks = []

    def collect(items):
        for it in items:
            if isinstance(it, m.Block):
                if it.span is not None:
                    blocks.append(it)
                collect(it.items)

    collect(fn.body.items)
    region = [start, end]

    def widen(i: int) -> tuple:
        """Block ``i`` taken whole when it straddles the region and holds nothing outside it;
        every block reads the region, so a widening re-examines them."""
        (bs, be), (lo, hi) = blocks[i].span, region
        if not (bs < lo < be <= hi or lo <= bs < hi < be):
            return ()
        inner = [x.span for x in m.walk(blocks[i].items) if isinstance(x, (m.Instruction, m.Label))
                 and x.span is not None]
        if not all(lo <= s[0] and s[1] <= hi for s in inner):
            return ()
        region[:] = [min(lo, bs), max(hi, be)]
        return ("region",)

    solve(len(blocks), widen)
    return region[0], region[1]
