"""Phases: maximal runs of adjacent ``mma`` statements, with their true GEMM shape.

Adjacent means consecutive statement numbers (declarations and ``.loc`` in between do not break
a run).  Inside a phase:

* a **chain** is a sequence of mma linked D -> C (an mma whose C registers are exactly the D
  registers another mma of the phase wrote last continues that mma's chain);
* the chain length is the number of **k-steps**; the distinct sequences of A fragments along the
  chains are the **m-tiles**, the distinct sequences of B fragments the **n-tiles**; so
  ``M = m·m_tiles``, ``N = n·n_tiles``, ``K = k·k_steps`` for an ``mMnNkK`` mma;
* the **naive** shape is what a regex reader gets: ``m·(distinct A)``, ``n·(distinct B)``,
  ``k·k_steps``.  Where naive M/m·N/n·K/k differs from the mma count the phase is a **band**
  (k-slices counted as tiles), otherwise **full**.

Weight bytes are the byte range, relative to the weight image ``W``, of the loads that produce
the phase's B registers (``[lo, hi]`` = lowest offset, highest offset of the last 32-bit word a
lane-0 load reads, as in the notes); bias bytes the same for C registers loaded straight from
``W``; the slot stride is the ``tid.z`` coefficient of those loads' addresses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from . import roles
from .provenance import coef, const_of


@dataclass
class Phase:
    index: int
    first: int
    last: int
    mma: list
    shape: tuple
    naive_shape: tuple
    chains: list
    grid: str
    weight_bytes: Optional[tuple]
    bias_bytes: Optional[tuple]
    slot_stride: Optional[int]
    epilogue: Optional[tuple]
    a_regs: list
    b_regs: list
    c_regs: list
    d_regs: list
    tile: tuple = (16, 8, 32)
    tiles: tuple = (0, 0, 0)            # m_tiles, n_tiles, k_steps
    opcode: str = ""
    b_source: str = "?"                 # 'W', 'registers', 'mixed', 'zero'
    c_source: str = "?"                 # 'W', 'zero', 'registers', 'chain', 'mixed'
    weight_loads: list = field(default_factory=list)   # statement numbers
    bias_loads: list = field(default_factory=list)
    consistent: bool = True             # M/m · N/n · K/k == mma
    bias_slot_stride: Optional[int] = None  # tid.z coefficient of the C (bias) loads

    def as_dict(self):
        return {"index": self.index, "first": self.first, "last": self.last,
                "mma": len(self.mma), "shape": list(self.shape),
                "naive_shape": list(self.naive_shape), "tile": list(self.tile),
                "tiles": list(self.tiles), "consistent": self.consistent,
                "chains": self.chains, "grid": self.grid,
                "weight_bytes": list(self.weight_bytes) if self.weight_bytes else None,
                "bias_bytes": list(self.bias_bytes) if self.bias_bytes else None,
                "slot_stride": self.slot_stride, "bias_slot_stride": self.bias_slot_stride,
                "epilogue": list(self.epilogue) if self.epilogue else None,
                "b_source": self.b_source, "c_source": self.c_source,
                "a_regs": self.a_regs, "b_regs": self.b_regs, "c_regs": self.c_regs,
                "d_regs": self.d_regs, "opcode": self.opcode}


def mma_runs(k) -> list:
    """[[stmt index, …], …] — maximal runs of mma statements with consecutive numbers."""
    runs = []
    cur = []
    last_n = None
    for pos, st in enumerate(k.stmts):
        if st.n is None:
            continue
        node = st.node
        is_mma = type(node) is m.Instruction and roles.is_mma(node.name)
        if is_mma and cur and st.n == last_n + 1:
            cur.append(pos)
        elif is_mma:
            if cur:
                runs.append(cur)
            cur = [pos]
        else:
            if cur:
                runs.append(cur)
            cur = []
        last_n = st.n
    if cur:
        runs.append(cur)
    return runs


def _uniq(seq):
    seen = {}
    for x in seq:
        seen.setdefault(x, None)
    return list(seen)


def find_phases(k) -> list:
    runs = mma_runs(k)
    prov = k.provenance
    phases = []
    for i, run in enumerate(runs, 1):
        phases.append(_phase(k, prov, i, run))
    last_n = k.last_number
    for j, p in enumerate(phases):
        lo = p.last + 1
        hi = phases[j + 1].first - 1 if j + 1 < len(phases) else last_n
        p.epilogue = (lo, hi) if lo <= hi else None
    return phases


def _phase(k, prov, index, run) -> Phase:
    stmts = k.stmts
    frags = []
    for pos in run:
        d, a, b, c = roles.mma_fragments(stmts[pos].node)
        frags.append((pos, d, a, b, c))
    name = stmts[run[0]].node.name
    tile = roles.mma_shape(name) or (16, 8, 32)
    # ---- chains (D -> C) ----
    last_writer = {}
    chains = []
    chain_of = []
    for pos, d, a, b, c in frags:
        cid = None
        if c:
            ws = {last_writer.get(r) for r in c}
            if len(ws) == 1 and None not in ws:
                w = ws.pop()
                if tuple(chains[w][-1][1]) == tuple(c):
                    cid = w
        if cid is None:
            cid = len(chains)
            chains.append([])
        chains[cid].append((pos, d, a, b, c))
        chain_of.append(cid)
        for r in d:
            last_writer[r] = cid
    k_steps = max(len(ch) for ch in chains)
    a_seqs = _uniq(tuple(x[2] for x in ch) for ch in chains)
    b_seqs = _uniq(tuple(x[3] for x in ch) for ch in chains)
    m_t, n_t = len(a_seqs), len(b_seqs)
    M, N, K = tile[0] * m_t, tile[1] * n_t, tile[2] * k_steps
    dist_a = _uniq(x[2] for x in frags)
    dist_b = _uniq(x[3] for x in frags)
    naive = (tile[0] * len(dist_a), tile[1] * len(dist_b), tile[2] * k_steps)
    nm = len(run)
    grid = "full" if len(dist_a) * len(dist_b) * k_steps == nm else "band"
    consistent = m_t * n_t * k_steps == nm
    a_regs = _uniq(r for x in frags for r in x[2])
    b_regs = _uniq(r for x in frags for r in x[3])
    c_regs = _uniq(r for x in frags for r in x[4])
    # C registers that are D of an earlier mma in the phase are not inputs
    d_all = set()
    c_in = []
    for _pos, d, _a, _b, c in frags:
        for r in c:
            if r not in d_all:
                c_in.append(r)
        d_all.update(d)
    c_regs = _uniq(c_in)
    d_regs = _uniq(r for x in frags for r in x[1])
    # ---- operand provenance ----
    wb, wloads, b_src, slot_b = _loaded_range(k, prov, run[0], b_regs)
    cb, cloads, c_src, slot_c = _loaded_range(k, prov, run[0], c_regs)
    st = stmts
    ph = Phase(index=index, first=st[run[0]].n, last=st[run[-1]].n, mma=[st[p] for p in run],
               shape=(M, N, K), naive_shape=naive,
               chains=[[st[x[0]].n for x in ch] for ch in chains], grid=grid,
               weight_bytes=wb, bias_bytes=cb,
               slot_stride=slot_b if slot_b is not None else slot_c,
               epilogue=None, a_regs=a_regs, b_regs=b_regs, c_regs=c_regs, d_regs=d_regs,
               tile=tile, tiles=(m_t, n_t, k_steps), opcode=name, b_source=b_src,
               c_source=c_src if c_regs else "chain", weight_loads=wloads, bias_loads=cloads,
               consistent=consistent, bias_slot_stride=slot_c)
    return ph


def _loaded_range(k, prov, pos, regs):
    """Byte range of the W loads that define ``regs`` (as seen at statement index ``pos``).

    Returns ((lo, hi) | None, [load statement numbers], source, tid.z coefficient | None)."""
    if not regs:
        return None, [], "none", None
    lo = hi = None
    loads = []
    n_w = n_zero = n_other = 0
    slot = None
    for r in regs:
        key = k._resolve(r, k._scope_of[pos])
        if key is None:
            n_other += 1
            continue
        d, key2 = prov.origin(key[0], pos)
        if d is None:
            n_other += 1
            continue
        acc = prov.access_at(d)
        node = k.stmts[d].node
        if acc is not None and acc.kind == "ld" and acc.addr and coef(acc.addr, "W") == 1:
            off = const_of(acc.addr)
            end = off + acc.bytes - 4
            lo = off if lo is None else min(lo, off)
            hi = end if hi is None else max(hi, end)
            n = k.stmts[d].n
            if n not in loads:
                loads.append(n)
            z = coef(acc.addr, "tid.z")
            if z:
                slot = z
            n_w += 1
        elif (type(node) is m.Instruction and node.opcode == "mov" and len(node.operands) == 2
              and type(node.operands[1]) is m.Imm and node.operands[1].value == 0):
            n_zero += 1
        else:
            n_other += 1
    if n_w and not n_zero and not n_other:
        src = "W"
    elif n_zero and not n_w and not n_other:
        src = "zero"
    elif n_other and not n_w and not n_zero:
        src = "registers"
    else:
        src = "mixed"
    return ((lo, hi) if lo is not None else None), sorted(loads), src, slot
