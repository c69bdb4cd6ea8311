"""Operand checks for what native epilogues use beyond single-type arithmetic: conversions with
two types (``cvt.rn.satfinite.e4m3x2.f16x2``), comparisons and guards (predicates), ``selp``,
warp shuffles, ``movmatrix``, ``prmt``, vector packs (``mov.b32 {lo, hi}``) and the vector
operands of ``tex``/``sust``/``suld``.  ptxas catches these too, but only after splicing and with
a line in the spliced output; here the error names the native file's line and the symbolic
register, and says which type the bound register has.

``types``: symbolic or scratch register name -> declared type (``.b32``, ``.pred`` …).
"""
from __future__ import annotations

from ...ptx import model as m
from ..native import REG_WIDTH

_FLOATISH = {".f16": 16, ".bf16": 16, ".f16x2": 32, ".bf16x2": 32, ".e4m3x2": 16, ".e5m2x2": 16}


def _w(t):
    return REG_WIDTH.get(t)


def _regs(op) -> list:
    if isinstance(op, m.Reg):
        return [op]
    if isinstance(op, m.Vec):
        return [x for x in op.items if isinstance(x, m.Reg)]
    return []


#: instruction types whose data registers may be wider than the type in ld/st/cvt (PTX ISA 5.2.3,
#: "operand size exceeding instruction-type size"); ptxas 13.0 refuses it for the others
#: (``cvt.f32.bf16`` from a ``.b32``, ``cvt.rn.satfinite.e4m3x2.f16x2`` into a ``.b32``)
RELAXED_TYPES = frozenset(f".{k}{n}" for k in "bus" for n in (8, 16, 32, 64)) | {".f16", ".f32", ".f64"}


def relaxed(t) -> bool:
    """``ld``/``st``/``cvt`` of type ``t`` take wider registers: ``ld.shared.b8`` into a ``.b16``
    (what LLVM writes), ``cvt.u32.u8 %r2, %rs1``, ``cvt.f32.f16 %f1, %r2``."""
    return t in RELAXED_TYPES


def _want(nat, st, reg, types, width, what, wider_ok=False):
    """``wider_ok``: the register may be wider than ``width`` (see :func:`relaxed`)."""
    t = types.get(reg.name)
    if t is None or width is None:
        return
    if width == 1 and t != ".pred":
        raise nat.error(f"{reg.name} is {t} but {st.name} needs a predicate as {what}", nat.line(st))
    if wider_ok and t != ".pred" and (_w(t) or 0) > width:
        return
    if width != 1 and (t == ".pred" or _w(t) != width):
        raise nat.error(f"{reg.name} is {t} but {st.name} uses it as a {width}-bit {what}", nat.line(st))


def _types_of(st) -> list:
    return [t for t in st.modifiers if t in REG_WIDTH and t != ".pred"]


def check_operands(nat, types: dict):
    for st in m.walk(nat.body):
        if not isinstance(st, m.Instruction):
            continue
        if st.guard is not None and st.guard.pred in types:
            _want(nat, st, m.Reg(st.guard.pred), types, 1, "guard")
        ops = list(st.operands)
        op = st.opcode
        tys = _types_of(st)
        if op == "cvt" and len(tys) == 2 and ops:
            for r in _regs(ops[0]):
                _want(nat, st, r, types, _w(tys[0]), "destination", wider_ok=relaxed(tys[0]))
            for o in ops[1:]:
                for r in _regs(o):
                    _want(nat, st, r, types, _w(tys[1]), "source", wider_ok=relaxed(tys[1]))
        elif op in ("setp", "set") and ops:
            first = ops[0]
            dests = [first.first, first.second] if isinstance(first, m.Pair) else [first]
            for d in dests:
                for r in _regs(d):
                    _want(nat, st, r, types, 1 if op == "setp" else _w(tys[0]) if tys else None,
                          "destination")
            cmp_t = tys[-1] if tys else None
            for o in ops[1:3]:
                for r in _regs(o):
                    _want(nat, st, r, types, _w(cmp_t), "comparand")
        elif op == "selp" and len(ops) == 4:
            for r in _regs(ops[3]):
                _want(nat, st, r, types, 1, "selector")
        elif op == "shfl" and ops:
            first = ops[0]
            if isinstance(first, m.Pair):
                for r in _regs(first.second):
                    _want(nat, st, r, types, 1, "lane-valid predicate")
                first = first.first
            for o in [first] + ops[1:]:
                for r in _regs(o):
                    _want(nat, st, r, types, 32, "operand")
        elif op in ("movmatrix", "prmt"):
            for o in ops:
                for r in _regs(o):
                    _want(nat, st, r, types, 32, "operand")
        elif op == "mov" and len(ops) == 2 and tys and any(isinstance(o, m.Vec) for o in ops):
            _check_pack(nat, st, ops, types, _w(tys[0]))
        elif op in ("tex", "tld4", "suld") and ops and isinstance(ops[0], m.Vec) and tys:
            el = _w(tys[0])
            for r in _regs(ops[0]):
                _want(nat, st, r, types, el, "vector element")


def _check_pack(nat, st, ops, types, width):
    """``mov.b32 %r, {lo, hi}`` / ``mov.b32 {lo, hi}, %r``: the elements fill the width."""
    vec = ops[0] if isinstance(ops[0], m.Vec) else ops[1]
    regs = [x for x in vec.items if isinstance(x, m.Reg)]
    if not regs or len(regs) != len(vec.items):
        return
    ws = [_w(types.get(r.name)) for r in regs]
    if None in ws or width is None:
        return
    if sum(ws) != width:
        shown = ", ".join(f"{r.name} {types[r.name]}" for r in regs)
        raise nat.error(f"{st.name}: the vector {{{shown}}} is {sum(ws)} bits, not {width}", nat.line(st))
