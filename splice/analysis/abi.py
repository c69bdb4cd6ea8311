"""The cut ABI: what a statement range reads from before it and hands to after it.

``live_in``  — registers the range uses that are live on entry to its first statement (an
               upward-exposed use, by real liveness, so a register the range defines before
               reading is not an input);
``live_out`` — registers the range defines that are live just after its last statement, or
               where a branch inside the range leaves it (a loop's back edge to a header
               before the cut), by liveness to the end of the kernel (not "everything
               defined").

Each register comes with its declared type; for a phase the inputs are ordered A0.., B0.., C0..,
then any others, and the outputs D0.., then others.

A register that is both live-in and live-out is **read and written in place**: an accumulator
updated where it lives (``mma`` with D = C, every ``wgmma``), a loop counter.  It gets one role
in both lists — ``acc`` for a phase's C/D fragment registers, ``io`` for any other — so a
native phase names it once (``%acc0``, ``%io0``), reads its incoming value and writes its
outgoing one, and the extracted file applies unchanged.  ``values`` names the symbolic provenance of
each input (``W`` for the weight pointer, ``W + 16·laneid + 8512`` for an address register …).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SpliceError
from ..ptx.model import Label
from . import carry
import re
from ..ptx.operands import split_number


@dataclass(frozen=True)
class AbiReg:
    reg: str
    type: str
    role: str = "v"     # 'a', 'b', 'c', 'd', 'meta', 'scale_d' … for phase operands; 'acc'
                        # / 'io' read and written in place; else 'v'
    index: int = 0      # position within its role
    dead_after: bool = False  # a live-in nothing reads after the range: the cut may overwrite it

    def as_dict(self):
        return {"reg": self.reg, "type": self.type, "role": self.role, "index": self.index,
                "dead_after": self.dead_after}


@dataclass
class CutABI:
    first: int
    last: int
    live_in: list
    live_out: list
    defs: set = field(default_factory=set)
    uses: set = field(default_factory=set)
    values: dict = field(default_factory=dict)
    labels: set = field(default_factory=set)   # labels the range defines (branch targets)
    carry: list = field(default_factory=list)   # the carry flag live across the range's edges

    def as_dict(self):
        return {"first": self.first, "last": self.last, "labels": sorted(self.labels),
                "carry": self.carry,
                "live_in": [r.as_dict() for r in self.live_in],
                "live_out": [r.as_dict() for r in self.live_out],
                "defs": sorted(self.defs, key=_natural), "uses": sorted(self.uses, key=_natural),
                "values": self.values}


def _natural(name: str):
    """(prefix, number): ``%r9`` before ``%r10``; a name without a trailing number sorts by text."""
    return split_number(name) or (name, -1)


def _range_keys(k, first: int, last: int):
    a, b = k.first_pos_of(first), k.pos_of(last)
    if a > b:
        raise SpliceError(f"{k.name}: empty range s{first}-s{last}", path=k.path)
    defs, uses, guarded = k.du()
    d_order, u_order, kept = {}, {}, {}
    for p in range(a, b + 1):
        for key in uses[p]:
            u_order.setdefault(key, p)
        for key in defs[p]:
            d_order.setdefault(key, p)
            if guarded[p]:
                # `@%p ld … %r7`: when %p is false %r7 keeps the value it had before, which the
                # cut must be given like a read (liveness decides whether anyone needs it)
                kept.setdefault(key, p)
    return a, b, list(d_order), list(u_order) + [key for key in kept if key not in u_order]


def cut_abi(k, first: int, last: int, in_roles=None, out_roles=None) -> CutABI:
    """The cut ABI of statements ``first``…``last`` (statement numbers, inclusive).

    ``in_roles``/``out_roles``: optional ordered ``[(role, [register names])]`` that fix the
    order and role of inputs/outputs (phase fragments); everything else follows as ``v``."""
    a, b, d_keys, u_keys = _range_keys(k, first, last)
    live = k.liveness
    entries = [a] + _side_entries(k, a, b)
    ins = [key for key in u_keys if any(live.live_before(key, e) for e in entries)]
    exits = _side_exits(k, a, b) + _after_last(k, a, b)

    def live_out(key):   # live where control leaves the range: after it, or where a branch goes
        return any(live.live_before(key, e) for e in exits)

    outs = [key for key in d_keys if live_out(key)]
    disp = k.display
    values = {}
    prov = k.provenance
    for key in ins:
        try:
            v = prov.text_of(key, a)
        except Exception:  # provenance is best effort; the ABI itself is exact
            v = None
        if v is not None:
            values[disp(key)] = v
    dead = {disp(key) for key in ins if not live_out(key)}
    live_in = [AbiReg(r.reg, r.type, r.role, r.index, r.reg in dead)
               for r in _ordered(k, ins, in_roles)]
    live_in, live_outs = _in_place(live_in, _ordered(k, outs, out_roles))
    labels = {k.stmts[p].node.name for p in range(a, b + 1) if type(k.stmts[p].node) is Label}
    return CutABI(first, last, live_in, live_outs,
                  {disp(x) for x in d_keys}, {disp(x) for x in u_keys}, values, labels,
                  carry.describe(k, a, b))


_FRAGMENT_ROLES = ("c", "d")


def _in_place(live_in, live_out):
    """Registers in both lists become ``acc`` (phase C/D fragments) or ``io`` (anything else),
    numbered in live-out order; the other roles are renumbered without them."""
    both = {r.reg for r in live_in} & {r.reg for r in live_out}
    if not both:
        return live_in, live_out
    in_role = {r.reg: r.role for r in live_in}
    new_role, count = {}, {}
    for r in live_out:
        if r.reg in both:
            role = "acc" if (r.role in _FRAGMENT_ROLES or in_role[r.reg] in _FRAGMENT_ROLES) else "io"
            new_role[r.reg] = (role, count.get(role, 0))
            count[role] = count.get(role, 0) + 1

    def renumber(regs):
        out, idx = [], {}
        for r in regs:
            if r.reg in new_role:
                role, i = new_role[r.reg]
            else:
                role, i = r.role, idx.get(r.role, 0)
                idx[r.role] = i + 1
            out.append(AbiReg(r.reg, r.type, role, i, r.dead_after))
        return out

    return renumber(live_in), renumber(live_out)


def _side_exits(k, a, b):
    """Statement indices outside [a, b] that a branch inside the range goes to (a loop's back
    edge to a header before the cut, an early exit): values live there are live-outs too."""
    live = k.liveness
    out = set()
    for blk in range(live.block_of[a], live.block_of[b] + 1):
        if live.ends[blk] > b:
            continue
        for s in live.succ[blk]:
            start = live.starts[s]
            if not (a <= start <= b) and not (s == blk + 1 and live.ends[blk] == b):
                out.add(start)
    return sorted(out)


def _after_last(k, a, b):
    """Where control goes after the range's last statement, outside the range: the next
    statement, or the successors of its block that start outside (a loop's back edge from the
    last statement to a header inside the cut stays inside: what only the next iteration
    reads is no live-out)."""
    live = k.liveness
    blk = live.block_of[b]
    if live.ends[blk] != b:
        return [b + 1]
    return [live.starts[s] for s in live.succ[blk] if not a <= live.starts[s] <= b]


def _side_entries(k, a, b):
    """Block starts inside [a, b] that a branch from outside the range can reach."""
    live = k.liveness
    out = []
    ba, bb = live.block_of[a], live.block_of[b]
    for blk in range(ba + 1, bb + 1):
        for p in live.pred[blk]:
            if not (a <= live.ends[p] <= b):
                out.append(live.starts[blk])
                break
    return out


def _ordered(k, keys, roles_spec):
    disp = k.display
    by_name = {}
    for key in keys:
        by_name.setdefault(disp(key), key)
    out = []
    taken = set()
    for role, names in roles_spec or ():
        i = 0
        for nm in names:
            if nm in by_name and nm not in taken:
                taken.add(nm)
                out.append(AbiReg(nm, k.reg_type(by_name[nm]) or "", role, i))
                i += 1
    i = 0
    for key in keys:
        nm = disp(key)
        if nm in taken:
            continue
        taken.add(nm)
        out.append(AbiReg(nm, k.reg_type(key) or "", "v", i))
        i += 1
    return out


def phase_abi(k, i: int) -> CutABI:
    """The ABI of phase ``i``: A, B, C fragments, then the form's other operands (``mma.sp``'s
    metadata and selector, ``wgmma``'s scale-d predicate …), then anything else."""
    p = k.phase(i)
    extra = [(slot, regs) for slot, regs in getattr(p, "extra_regs", {}).items()]
    return cut_abi(k, p.first, p.last,
                   [("a", p.a_regs), ("b", p.b_regs), ("c", p.c_regs)] + extra, [("d", p.d_regs)])


def parse_abi_spec(k, spec: str):
    """``s7771-s7794``, ``7771-7794``, ``s7771`` or ``phase:8`` -> CutABI.  A malformed or empty
    range is an error naming the module, never an ABI of some default range."""
    s = spec.strip()
    if s.startswith("phase:"):
        if not re.fullmatch(r"[0-9]{1,40}", s[6:].strip()):
            raise SpliceError(f"bad --abi {spec!r}: expected phase:N", path=k.path)
        return phase_abi(k, int(s[6:]))
    # the en dash and '..' as recipes and --range take them: splice's own notes write s1–s3
    mt = re.fullmatch(r"[sS]?([0-9]{1,40})(?:\s*(?:-|\.\.|–)\s*[sS]?([0-9]{1,40}))?", s)
    if not mt:
        raise SpliceError(f"bad --abi {spec!r}: expected sA-sB, sA or phase:N", path=k.path)
    a = int(mt.group(1))
    b = int(mt.group(2)) if mt.group(2) is not None else a
    if b < a:
        raise SpliceError(f"bad --abi {spec!r}: empty range (s{b} comes before s{a})", path=k.path)
    return cut_abi(k, a, b)
