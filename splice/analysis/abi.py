"""The cut ABI: what a statement range reads from before it and hands to after it.

``live_in``  — registers the range uses that are live on entry to its first statement (an
               upward-exposed use, by real liveness, so a register the range defines before
               reading is not an input);
``live_out`` — registers the range defines that are live just after its last statement, by
               liveness to the end of the kernel (not "everything defined").

Each register comes with its declared type; for a phase the inputs are ordered A0.., B0.., C0..,
then any others, and the outputs D0.., then others.  ``values`` names the symbolic provenance of
each input (``W`` for the weight pointer, ``W + 16·laneid + 8512`` for an address register …).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SpliceError


@dataclass(frozen=True)
class AbiReg:
    reg: str
    type: str
    role: str = "v"     # 'a', 'b', 'c', 'd' for phase fragments, else 'v'
    index: int = 0      # position within its role

    def as_dict(self):
        return {"reg": self.reg, "type": self.type, "role": self.role, "index": self.index}


@dataclass
class CutABI:
    first: int
    last: int
    live_in: list
    live_out: list
    defs: set = field(default_factory=set)
    uses: set = field(default_factory=set)
    values: dict = field(default_factory=dict)

    def as_dict(self):
        return {"first": self.first, "last": self.last,
                "live_in": [r.as_dict() for r in self.live_in],
                "live_out": [r.as_dict() for r in self.live_out],
                "defs": sorted(self.defs, key=_natural), "uses": sorted(self.uses, key=_natural),
                "values": self.values}


def _natural(name: str):
    import re

    mm = re.match(r"^(.*?)(\d+)$", name)
    return (mm.group(1), int(mm.group(2))) if mm else (name, -1)


def _range_keys(k, first: int, last: int):
    a, b = k.pos_of(first), k.pos_of(last)
    if a > b:
        raise SpliceError(f"{k.name}: empty range s{first}-s{last}", path=k.path)
    defs, uses, _g = k.du()
    d_order, u_order = {}, {}
    for p in range(a, b + 1):
        for key in uses[p]:
            u_order.setdefault(key, p)
        for key in defs[p]:
            d_order.setdefault(key, p)
    return a, b, list(d_order), list(u_order)


def cut_abi(k, first: int, last: int, in_roles=None, out_roles=None) -> CutABI:
    """The cut ABI of statements ``first``…``last`` (statement numbers, inclusive).

    ``in_roles``/``out_roles``: optional ordered ``[(role, [register names])]`` that fix the
    order and role of inputs/outputs (phase fragments); everything else follows as ``v``."""
    a, b, d_keys, u_keys = _range_keys(k, first, last)
    live = k.liveness
    entries = [a] + _side_entries(k, a, b)
    ins = [key for key in u_keys if any(live.live_before(key, e) for e in entries)]
    outs = [key for key in d_keys if live.live_after(key, b)]
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
    return CutABI(first, last, _ordered(k, ins, in_roles), _ordered(k, outs, out_roles),
                  {disp(x) for x in d_keys}, {disp(x) for x in u_keys}, values)


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
    p = k.phase(i)
    return cut_abi(k, p.first, p.last,
                   [("a", p.a_regs), ("b", p.b_regs), ("c", p.c_regs)], [("d", p.d_regs)])


def parse_abi_spec(k, spec: str):
    """``s7771-s7794``, ``7771-7794``, ``s7771`` or ``phase:8`` -> CutABI.  A malformed or empty
    range is an error naming the module, never an ABI of some default range."""
    import re

    s = spec.strip()
    if s.startswith("phase:"):
        if not re.fullmatch(r"\d+", s[6:].strip()):
            raise SpliceError(f"bad --abi {spec!r}: expected phase:N", path=k.path)
        return phase_abi(k, int(s[6:]))
    mt = re.fullmatch(r"[sS]?(\d+)(?:\s*-\s*[sS]?(\d+))?", s)
    if not mt:
        raise SpliceError(f"bad --abi {spec!r}: expected sA-sB, sA or phase:N", path=k.path)
    a = int(mt.group(1))
    b = int(mt.group(2)) if mt.group(2) is not None else a
    if b < a:
        raise SpliceError(f"bad --abi {spec!r}: empty range (s{b} comes before s{a})", path=k.path)
    return cut_abi(k, a, b)
