"""Where a phase's operands come from, by def-use: the neutral naming of A, B and C.

The stand-ins' notes call B "the weight operand" because it is loaded off the weight image.
In a real GEMM, A and B arrive through ``cp.async`` or TMA into shared memory and are read by
``ldmatrix`` or through wgmma descriptors, and the pointer with the most loads is often C.  So
each operand register is followed back (through register copies, ``Provenance.origin``) to the
statement that defines it at the phase, and named by what that statement is:

* another phase's mma → ``P3's D``; a load → its space and pointer field (``global loads from
  param_1+0``) or shared array (``shared memory global_smem (ldmatrix)``); a literal → ``zero``
  or ``constants``; anything else → ``registers computed by cvt.rn.f16x2.f32``; several
  definitions reaching the phase (a loop-carried accumulator) → ``several definitions``;
* a wgmma operand read through a matrix descriptor → ``shared memory through a wgmma
  descriptor``, with what fills shared memory in the entry (TMA ``cp.async.bulk.tensor``,
  ``cp.async`` from a pointer field, ``st.shared``).
"""
from __future__ import annotations

from collections import Counter

from ..ptx import model as m
from .provenance import render
from .roles import is_shared, memory_access


def phase_operands(k, p) -> dict:
    """{'A': text, 'B': text, 'C': text} for phase ``p`` (C omitted when it is only the
    phase's own D)."""
    from .vocab import vocabulary

    V = vocabulary(k)
    mma_at = k.fact("operands.mma_at", _mma_positions)
    out = {}
    wg = p.form.startswith("wgmma")
    a_regs = p.a_regs if not wg or (p.instr or {}).get("a_in_registers", True) else None
    for role, regs in (("A", a_regs), ("B", None if wg else p.b_regs), ("C", p.c_regs)):
        if regs is None:
            out[role] = "shared memory through a wgmma descriptor" + shared_fills(k, V)
        elif regs:
            out[role] = _describe(k, V, p, regs, mma_at)
    return out


def operand_defs(k, p, role: str) -> dict:
    """{statement number: label} of the definitions of phase ``p``'s ``role`` registers (the
    evidence of ``phase_operands``); a descriptor operand's are the entry's shared-memory
    writes."""
    from .vocab import vocabulary

    V = vocabulary(k)
    regs = {"A": p.a_regs, "B": p.b_regs, "C": p.c_regs}[role]
    wg = p.form.startswith("wgmma")
    if wg and (role == "B" or not (p.instr or {}).get("a_in_registers", True)):
        return {a.n: "shared write" for a in k.provenance.accesses
                if is_shared(a.space) and a.effect != "read" and a.kind in ("cp", "st", "stmatrix")}
    mma_at = k.fact("operands.mma_at", _mma_positions)
    pos0 = k.first_pos_of(p.first)
    out = {}
    for r in regs:
        key = k._resolve(r, k._scope_of[pos0])
        d = k.provenance.origin(key[0], pos0)[0] if key else None
        if d is not None and k.stmts[d].n is not None:
            out[k.stmts[d].n] = _label(k, V, d, mma_at)
    return out


def _mma_positions(k) -> dict:
    return {k.pos_of(st.n): ph.index for ph in k.phases for st in ph.mma}


def _describe(k, V, p, regs, mma_at) -> str:
    pos0 = k.first_pos_of(p.first)
    prov = k.provenance
    got: Counter = Counter()
    for r in regs:
        key = k._resolve(r, k._scope_of[pos0])
        d = prov.origin(key[0], pos0)[0] if key else None
        if d is None:
            many = key and len(prov.def_pos.get(key[0], ())) > 1
            got["several definitions (a loop-carried or merged value)" if many else "kernel-entry values"] += 1
            continue
        got[_label(k, V, d, mma_at)] += 1
    parts = [f"{lab} ({n})" if len(got) > 1 else lab for lab, n in got.most_common()]
    return f"{len(regs)} registers: " + ", ".join(parts)


def _label(k, V, d: int, mma_at: dict) -> str:
    if d in mma_at:
        return f"P{mma_at[d]}'s D"
    acc = k.provenance.access_at(d)
    node = k.stmts[d].node
    if acc is not None and acc.kind in ("ld", "ldmatrix"):
        if is_shared(acc.space):
            arr = _shared_array(k, acc.addr)
            return f"shared memory{' `' + arr + '`' if arr else ''} ({node.opcode})"
        if acc.space == "param":
            return "a parameter"
        from .vocab import field_types, pointer_fields

        fs = pointer_fields(acc.addr, field_types(k))
        return f"{acc.space} loads" + (f" from `{render(((fs[0], 1),), V.w)}`" if len(fs) == 1 else "")
    if type(node) is m.Instruction and node.opcode == "mov" and len(node.operands) == 2 \
            and type(node.operands[1]) is m.Imm:
        return "zero" if _is_zero(node.operands[1]) else "constants"
    return f"registers computed by {node.name}" if type(node) is m.Instruction else "other"


def _is_zero(imm) -> bool:
    try:
        return float(imm.value) == 0.0
    except (TypeError, ValueError):
        return False


def _shared_array(k, addr):
    names = set(k.provenance.shared.values())
    for atom, v in addr or ():
        if v == 1 and atom in names:
            return atom
    return None


def shared_fills(k, V) -> str:
    """What writes shared memory in the entry: `` (filled by TMA … and st.shared)``."""
    return k.fact("operands.fills", lambda k: _fills(k, V))


def _fills(k, V) -> str:
    from .vocab import field_types, pointer_fields

    prov = k.provenance
    what: dict = {}
    for a in prov.accesses:
        if not is_shared(a.space) or a.effect == "read":
            continue
        node = k.stmts[a.pos].node
        if a.kind == "cp":
            tma = node.name.startswith("cp.async.bulk.tensor")
            src = ""
            ma = memory_access(node)
            if not tma and ma is not None and ma.src is not None:
                fs = pointer_fields(prov._operand(node.operands[ma.src], a.pos, 0), field_types(k))
                src = f" from `{render(((fs[0], 1),), V.w)}`" if len(fs) == 1 else ""
            label = "TMA (cp.async.bulk.tensor)" if tma else ".".join(node.name.split(".")[:2]) + src
        elif a.kind in ("st", "stmatrix"):
            label = node.opcode + ".shared"
        else:
            continue
        what.setdefault(label, None)
    if not what:
        return ""
    return " (the entry writes shared memory by " + ", ".join(what) + ")"
