"""Loops of one entry and their static trip counts.

A loop is a retreating edge of the control-flow graph (``liveness.Blocks``): a branch at the
end of block ``b`` to a block ``h`` that starts at or before ``b`` (compilers emit rotated,
bottom-tested loops, so the header comes first in program order).  Its body is the natural
loop: ``h`` plus every block that reaches ``b`` without passing through ``h``.

The trip count is static when the back edge is ``@[!]p bra H`` with ``setp.CMP p, x, y`` and
one side is a counter ``i`` advanced once per iteration by ``add/sub i, i, STEP`` (immediate)
and started before the loop by a constant (``mov i, C``, through register copies), the other
side a constant (an immediate, or a register holding one and not written in the loop).  The
count is then found by running the counter: the iterations until the branch falls through
(bounded, so a counter that would wrap around is reported as unknown).  Anything else — a
bound loaded from memory (Triton's ``K``), a top-tested loop, two counters — is reported as
"unknown" with the reason; never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m

_LIMIT = 1 << 20
_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}


@dataclass(frozen=True)
class Loop:
    header: int                 # statement number of the header's first statement
    latch: int                  # statement number of the back-edge branch
    first_pos: int              # statement indices: textual extent of the body
    last_pos: int
    blocks: frozenset
    depth: int
    trip_count: Optional[int]
    why: str                    # how the trip count was found, or why not

    def as_dict(self):
        return {"header": self.header, "latch": self.latch, "depth": self.depth,
                "trip_count": self.trip_count, "trip": self.why}


def find_loops(k) -> list:
    """Every loop of the entry, outermost first (by extent)."""
    live = k.blocks
    raw = []
    for b, ss in enumerate(live.succ):
        for h in ss:
            if h <= b:
                raw.append((h, b, _body(live, h, b)))
    out = []
    for h, b, blocks in raw:
        depth = sum(1 for h2, b2, bl2 in raw if blocks < bl2 or (blocks == bl2 and (h2, b2) < (h, b)))
        a, z = live.starts[min(blocks)], live.ends[max(blocks)]
        trip, why = _trip_count(k, live, h, b, blocks)
        out.append(Loop(k.number_at(live.starts[h]) or 0, k.stmts[live.ends[b]].n or 0, a, z,
                        frozenset(blocks), depth + 1, trip, why))
    out.sort(key=lambda lp: (lp.first_pos, -lp.last_pos))
    return out


def _body(live, h, b) -> set:
    body = {h, b}
    work = [b] if b != h else []
    while work:
        x = work.pop()
        for p in live.pred[x]:
            if p not in body:
                body.add(p)
                work.append(p)
    return body


def _defs_in(k, positions, reg):
    defs = k.defs()
    return [p for p in positions if reg in defs[p]]


def _trip_count(k, live, h, b, blocks):
    br = k.stmts[live.ends[b]].node
    if type(br) is not m.Instruction or br.guard is None:
        return None, "unknown: the back edge is not a conditional branch (top-tested loop)"
    positions = [p for blk in sorted(blocks) for p in range(live.starts[blk], live.ends[blk] + 1)]
    setps = _defs_in(k, positions, br.guard.pred)
    if len(setps) != 1:
        return None, f"unknown: {br.guard.pred} is written {len(setps)} times in the loop"
    sp = setps[0]
    st = k.stmts[sp].node
    cmp = next((x[1:] for x in st.modifiers if x[1:] in _CMP), None)
    ty = st.modifiers[-1][1:] if st.modifiers else ""
    if st.opcode != "setp" or cmp is None or len(st.operands) != 3:
        return None, f"unknown: s{k.stmts[sp].n} is not a plain setp"
    x, y = st.operands[1], st.operands[2]
    for side, (iv, other) in enumerate(((x, y), (y, x))):
        real, read_at = _through_copies(k, positions, iv)
        ind = _counter(k, positions, h, live, real)
        if ind is None:
            continue
        init, step, step_pos = ind
        if init is None:
            return None, f"unknown: the counter {real} does not start from a constant"
        bound = _constant(k, positions, live.starts[h], other)
        if bound is None:
            return None, f"unknown: the bound {other} is not a constant"
        trips = _run(init, step, bound, cmp, ty, side, step_pos < (sp if read_at is None else read_at),
                     br.guard.negated)
        if trips is None:
            return None, f"unknown: the counter does not reach its bound within {_LIMIT} steps"
        name = getattr(real, "name", str(real))
        how = "until" if br.guard.negated else "while"
        return trips, f"{name} = {init}; {name} += {step} {how} {x} {cmp} {y}"
    return None, "unknown: no counter (add/sub by a constant) in the back-edge test"


def _through_copies(k, positions, op, hops: int = 4):
    """(register, statement index of the copy) behind a test operand defined in the loop by a
    plain ``mov``/``cvt`` of one register (LLVM compares ``cvt.u32.u64`` of a 64-bit counter);
    (op, None) when it is not such a copy."""
    read_at = None
    while type(op) is m.Reg and hops:
        ds = _defs_in(k, positions, op.name)
        if len(ds) != 1:
            break
        node = k.stmts[ds[0]].node
        src = node.operands[1] if len(node.operands) == 2 else None
        if node.opcode not in ("cvt", "mov") or type(src) is not m.Reg or node.guard is not None:
            break
        op, read_at, hops = src, ds[0], hops - 1
    return op, read_at


def _counter(k, positions, h, live, op):
    """(initial value, step, statement index of the step) of a counter register, or None."""
    if type(op) is not m.Reg:
        return None
    ds = _defs_in(k, positions, op.name)
    if len(ds) != 1:
        return None
    node = k.stmts[ds[0]].node
    if node.opcode not in ("add", "sub") or len(node.operands) != 3:
        return None
    a, c = node.operands[1], node.operands[2]
    if not (type(a) is m.Reg and a.name == op.name and type(c) is m.Imm):
        return None
    step = int(c.value) if node.opcode == "add" else -int(c.value)
    # init None: a counter, but its start is not a constant
    return _constant(k, positions, live.starts[h], op, allow_loop_def=True), step, ds[0]


def _constant(k, positions, header_pos, op, allow_loop_def=False, hops=4):
    """The integer an operand holds on loop entry: an immediate, or a register whose every
    definition outside the loop is a ``mov`` of a constant (followed through copies)."""
    if type(op) is m.Imm:
        v = op.value
        return int(v) if isinstance(v, int) else None
    if type(op) is not m.Reg or hops == 0:
        return None
    inside = set(positions)
    defs = k.defs()
    outside = [p for p in range(len(k.stmts)) if op.name in defs[p] and p not in inside]
    if not allow_loop_def and _defs_in(k, positions, op.name):
        return None
    if len(outside) != 1 or outside[0] > header_pos:
        return None
    node = k.stmts[outside[0]].node
    if node.opcode != "mov" or len(node.operands) != 2 or node.guard is not None:
        return None
    return _constant(k, positions, outside[0], node.operands[1], False, hops - 1)


def _wrap(v, ty):
    bits = 64 if ty.endswith("64") else 32
    v &= (1 << bits) - 1
    if ty.startswith("s") and v >> (bits - 1):
        v -= 1 << bits
    return v


def _test(a, b, cmp):
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
            "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}[cmp]


def _run(init, step, bound, cmp, ty, side, step_first, negated):
    """Iterations of a bottom-tested loop: the body runs, the counter steps (before or after the
    test, as in the code), the branch goes back while the test holds (fails, if negated)."""
    i = _wrap(init, ty)
    bound = _wrap(bound, ty)
    for trips in range(1, _LIMIT + 1):
        if step_first:
            i = _wrap(i + step, ty)
        t = _test(i, bound, cmp) if side == 0 else _test(bound, i, cmp)
        if not step_first:
            i = _wrap(i + step, ty)
        if t == negated:
            return trips
    return None
