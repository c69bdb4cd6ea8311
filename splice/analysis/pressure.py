"""Register pressure: live 32-bit register equivalents before every statement, by role.

ptxas allocates physical 32-bit registers; the PTX virtual registers live at a point are a lower
bound on what it needs there (it may need more for temporaries of its own lowering, or fewer when
it rematerialises a constant or an address).  So the curve is computed straight from
``Liveness`` (the same dataflow the cut ABI uses), weighting each live register by the 32-bit
registers it occupies:

* ``.b64 .u64 .s64 .f64`` count 2, ``.b128`` 4;
* ``.b32 .u32 .s32 .f32`` and ``.f16x2``/``.bf16x2`` count 1;
* ``.b16 .u16 .s16 .f16 .bf16 .b8 …`` count 1 as well: on sm_90 ptxas gives a 16-bit value a
  32-bit register of its own unless it can prove the two halves travel together (it then packs
  them, which this count cannot see) — counting 1 keeps the bound honest for the common case and
  over-counts packed pairs; the JSON states the convention (``half_weight``);
* ``.pred`` does not count: predicates live in the 7 predicate registers (P0–P6) and spill to
  general registers only under pressure; their count is reported as a separate series.

Vector and brace operands (``ld.v4 {a,b,c,d}``, ``mma``'s fragments) are several registers, so
each element counts on its own — that falls out of the liveness keys.

Every live register gets one **role**, the first that applies: ``D`` (written by an ``mma``,
``wmma.mma`` or ``wgmma.mma_async``: a wgmma's accumulators; its descriptors are addresses),
``C``, ``A``, ``B`` (read by an ``mma`` as that operand), ``address`` (read inside ``[...]`` or
64-bit), ``temp`` (everything else: epilogue and prologue temporaries).  A **region** is where a
statement lies: ``prologue``, ``phase N`` or ``EN`` (the epilogue after phase N).
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from . import mma_forms
from . import roles as R
from .liveness import _bits

ROLES = ("D", "C", "A", "B", "address", "temp")
WIDE = (".b64", ".u64", ".s64", ".f64")


def reg_weight(ty) -> float:
    """32-bit registers one PTX register of type ``ty`` occupies (0 for ``.pred``)."""
    if ty is None:
        return 1
    if ty == ".pred":
        return 0
    if ty in WIDE:
        return 2
    if ty.endswith("128"):
        return 4
    return 1


@dataclass
class Peak:
    region: str
    n: int                    # statement number (sNNNN)
    line: int
    text: str
    total: float
    by_role: dict
    registers: dict = field(default_factory=dict)   # role -> [names] (first 24 of each)

    def as_dict(self):
        return {"region": self.region, "statement": self.n, "line": self.line, "text": self.text,
                "total": self.total, "by_role": self.by_role, "registers": self.registers}


@dataclass
class Pressure:
    entry: str
    numbers: list             # statement number of each point (program order)
    total: list               # 32-bit equivalents live before that statement
    by_role: dict             # role -> [count per point]
    predicates: list          # live .pred registers per point
    regions: list             # (name, first n, last n, kind) kind: prologue/phase/epilogue
    peaks: list               # [Peak], highest first, one per region

    @property
    def max(self) -> float:
        return max(self.total) if self.total else 0

    def as_dict(self, curve: bool = True) -> dict:
        d = {"entry": self.entry, "max": self.max,
             "convention": {"b64": 2, "b32": 1, "half_weight": 1, "pred": "separate"},
             "regions": [{"name": r[0], "first": r[1], "last": r[2], "kind": r[3]}
                         for r in self.regions],
             "peaks": [p.as_dict() for p in self.peaks]}
        if curve:
            d["curve"] = {"statement": self.numbers, "total": self.total,
                          "predicates": self.predicates, "by_role": self.by_role}
        return d


def register_roles(k) -> dict:
    """key -> role (see the module docstring), for every register the liveness numbers."""
    defs, uses, _g = k.du()
    rank = {r: i for i, r in enumerate(ROLES)}
    best: dict = {}

    def put(key, role):
        if key not in best or rank[role] < rank[best[key]]:
            best[key] = role

    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        if mma_forms.is_tensor_core(node.name):
            _mma_roles(k, pos, node, put)
            continue
        addr: list = []
        for o in node.operands:
            _addr_regs(o, addr)
        for nm in addr:
            r = k._resolve(nm, k._scope_of[pos])
            if r is not None:
                put(r[0], "address")
    for key in k.liveness.bit:
        if key not in best:
            put(key, "address" if k.reg_type(key) in WIDE else "temp")
    return best


def _mma_roles(k, pos, node, put):
    """D/A/B/C of a tensor-core instruction: ``mma``, ``wmma.mma`` by operand order; a wgmma's
    accumulators are D (its C is its D) and A is a fragment only when in registers (its
    descriptors are addresses).  wgmma was left out: its 32-128 accumulators counted as temp."""
    sid = k._scope_of[pos]
    frags = R.mma_fragments(node)
    if node.name.startswith("wgmma"):
        mi = mma_forms.describe(node)
        frags = (mi.frags[0], mi.frags[1] if mi.a_in_registers else (), (), ()) if mi else ((),) * 4
    for role, names in zip(("D", "A", "B", "C"), frags):
        for nm in names:
            r = k._resolve(nm, sid)
            if r is not None:
                put(r[0], role)


def _addr_regs(op, out):
    t = type(op)
    if t is m.Addr:
        R._collect(op, out)
    elif t is m.Vec or t is m.ParenList:
        for i in op.items:
            _addr_regs(i, out)


def regions(k) -> list:
    """(name, first n, last n, kind) covering the entry in program order."""
    out = []
    phs = k.phases
    first = phs[0].first if phs else k.last_number + 1
    if first > 1:
        out.append(("prologue", 1, first - 1, "prologue"))
    for p in phs:
        out.append((f"phase {p.index}", p.first, p.last, "phase"))
        if p.epilogue:
            out.append((f"E{p.index}", p.epilogue[0], p.epilogue[1], "epilogue"))
    return out


def region_of(regs: list, n: int, starts: Optional[list] = None) -> str:
    """The region holding statement ``n``; ``starts``: the regions' first statements, built
    once by a caller asking for every statement (built per call it made the peaks quadratic)."""
    i = bisect_right(starts if starts is not None else [r[1] for r in regs], n) - 1
    return regs[i][0] if i >= 0 else "prologue"


def pressure(k, top: int = 5) -> Pressure:
    """The curve over every numbered statement of ``k`` and its ``top`` regional peaks."""
    live = k.liveness
    defs, uses, guarded = k.du()
    role_of = register_roles(k)
    names = {v: key for key, v in live.bit.items()}
    weight = {key: reg_weight(k.reg_type(key)) for key in live.bit}
    ridx = {r: i for i, r in enumerate(ROLES)}
    n = len(k.stmts)
    tot = [0.0] * n
    per = [[0.0] * len(ROLES) for _ in range(n)]
    preds = [0] * n
    for b, start in enumerate(live.starts):
        cur = {names[i] for i in _bits(live.live_out_block[b])}
        acc = [0.0] * len(ROLES)
        npred = 0
        for key in cur:
            acc[ridx[role_of[key]]] += weight[key]
            npred += weight[key] == 0
        for pos in range(live.ends[b], start - 1, -1):
            if not guarded[pos]:
                for key in defs[pos]:
                    if key in cur:
                        cur.discard(key)
                        acc[ridx[role_of[key]]] -= weight[key]
                        npred -= weight[key] == 0
            for key in uses[pos]:
                if key not in cur:
                    cur.add(key)
                    acc[ridx[role_of[key]]] += weight[key]
                    npred += weight[key] == 0
            per[pos] = list(acc)
            tot[pos] = sum(acc)
            preds[pos] = npred
    keep = [i for i, st in enumerate(k.stmts) if st.n is not None]
    regs = regions(k)
    p = Pressure(entry=k.name, numbers=[k.stmts[i].n for i in keep],
                 total=[tot[i] for i in keep],
                 by_role={r: [per[i][j] for i in keep] for j, r in enumerate(ROLES)},
                 predicates=[preds[i] for i in keep], regions=regs, peaks=[])
    p.peaks = _peaks(k, p, keep, role_of, top)
    return p


def _peaks(k, p: Pressure, keep: list, role_of: dict, top: int) -> list:
    """The highest point of each region, the ``top`` highest regions, with their live sets."""
    best: dict = {}
    starts = [r[1] for r in p.regions]
    for j, nn in enumerate(p.numbers):
        reg = region_of(p.regions, nn, starts)
        if reg not in best or p.total[j] > p.total[best[reg]]:
            best[reg] = j
    order = sorted(best.items(), key=lambda kv: (-p.total[kv[1]], kv[1]))[:top]
    out = []
    for reg, j in order:
        pos = keep[j]
        members: dict = {}
        for key in sorted(k.liveness.live_set_before(pos), key=_natural):
            members.setdefault(role_of.get(key, "temp"), []).append(k.display(key))
        st = k.stmts[pos]
        out.append(Peak(region=reg, n=st.n, line=st.line, text=k.text(st.n), total=p.total[j],
                        by_role={r: p.by_role[r][j] for r in ROLES if p.by_role[r][j]},
                        registers={r: v[:24] for r, v in members.items()}))
    return out


def _natural(key: str):
    """(prefix, number, key): ``%r9`` before ``%r10``; a name without a (reasonable) trailing
    number sorts by its text (``isdigit`` took superscripts, and ``int`` refuses 4300 digits)."""
    from .kernel import _split_number

    base = key.split("@", 1)[0]
    prefix, number = _split_number(base) or (base, -1)
    return (prefix, number, key)



# ---------------------------------------------------------------------------------------------
# the live set at one statement: what a rewrite has to shorten
# ---------------------------------------------------------------------------------------------

@dataclass
class LiveValue:
    register: str
    type: Optional[str]
    weight: float
    role: str
    defined: tuple            # statement numbers of the definitions that may reach the point
    last_use: Optional[int]   # statement number of the last read before it is written again
    reads: int                # reads between the point and that next write (program order)

    def as_dict(self) -> dict:
        return {"register": self.register, "type": self.type, "weight": self.weight, "role": self.role,
                "defined": list(self.defined), "last_use": self.last_use, "reads": self.reads}


def live_at(k, n: int) -> list:
    """The registers live just before statement ``n`` (an ``sNNNN`` number), longest-carried
    first: each with its type, weight, role, the definitions that may reach the statement
    (reaching definitions over the CFG) and its last use — the last read before the register is
    written again, in program order (a loop's back edge is not followed: the question is how far
    down the code the value is carried, which is what a schedule can shorten)."""
    from .reaching import Reaching

    pos = k.pos_of(n)
    defs, uses, guarded = k.du()
    role_of = register_roles(k)
    reach = Reaching(k)
    out = []
    for key in k.liveness.live_set_before(pos):
        ds = tuple(d for d in (k.number_at(p) for p in reach.defs(key, pos)) if d is not None)
        last, reads = None, 0
        for p in range(pos, len(k.stmts)):
            if key in uses[p]:
                last, reads = p, reads + 1
            if key in defs[p] and not guarded[p]:
                break
        ty = k.reg_type(key)
        out.append(LiveValue(k.display(key), ty, reg_weight(ty), role_of.get(key, "temp"), ds,
                             k.number_at(last) if last is not None else None, reads))
    out.sort(key=lambda v: (-_carried(v, n), _natural(v.register)))
    return out


def _carried(v: LiveValue, n: int) -> int:
    """Statements from the value's (latest reaching) definition to its last use."""
    return (v.last_use if v.last_use is not None else n) - (max(v.defined) if v.defined else 0)
