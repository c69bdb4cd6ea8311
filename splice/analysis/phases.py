"""Phases: maximal runs of adjacent ``mma`` statements, with their true GEMM shape.

Adjacent means consecutive statement numbers (declarations and ``.loc`` in between do not break
a run; nor do ``mov``s that initialise the next mma's accumulator, see ``_join_initialised``).
Inside a phase:

* a **chain** is a sequence of mma linked D -> C (an mma whose C registers are exactly the D
  registers another mma of the phase wrote last continues that mma's chain);
* the chain length is the number of **k-steps**; the distinct sequences of A fragments along the
  chains are the **m-tiles**, the distinct sequences of B fragments the **n-tiles**; so
  ``M = m·m_tiles``, ``N = n·n_tiles``, ``K = k·k_steps`` for an ``mMnNkK`` mma;
* the **naive** shape is what a regex reader gets: ``m·(distinct A)``, ``n·(distinct B)``,
  ``k·k_steps``.  Where naive M/m·N/n·K/k differs from the mma count the phase is a **band**
  (k-slices counted as tiles), otherwise **full**.

Every tensor-core form is a phase (``splice.analysis.mma_forms`` holds the one table of forms
and fragment layouts): runs of ``mma``/``mma.sp`` as above, and each ``wgmma.mma_async`` group
from its ``wgmma.fence`` to its ``wgmma.commit_group`` (descriptor arithmetic in between is part
of the group; the ``wgmma.wait_group`` that retires it is recorded, not cut).

A phase is **regular** when its chains tile an ``m_tiles × n_tiles`` grid exactly, each chain
``k_steps`` long; only then is ``shape`` an ``M×N×K``.  Otherwise (chains of different lengths,
an accumulator summing products of different tiles, …) ``shape`` is None and the phase is
described as what it is: accumulators, products per accumulator, distinct A/B fragments.
A phase inside a loop records the innermost loop (header, latch, depth, static trip count when
the loop is counted with constant bounds — ``splice.analysis.loops``).

Weight bytes are the byte range, relative to the weight image ``W``, of the loads that produce
the phase's B registers (``[lo, hi]`` = lowest offset, highest offset of the last 32-bit word a
lane-0 load reads, as in the notes); bias bytes the same for C registers loaded straight from
``W``; the slot stride is the ``tid.z`` coefficient of those loads' addresses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from . import mma_forms, roles, split_acc
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
    b_source: str = "?"                 # 'W', 'registers', 'mixed', 'zero', 'descriptor' (wgmma)
    c_source: str = "?"                 # 'W', 'zero', 'registers', 'chain', 'mixed'
    weight_loads: list = field(default_factory=list)   # statement numbers
    bias_loads: list = field(default_factory=list)
    consistent: bool = True             # M/m · N/n · K/k == mma
    bias_slot_stride: Optional[int] = None  # tid.z coefficient of the C (bias) loads
    form: str = "mma"                   # 'mma' | 'mma.sp' | 'wgmma' | 'wgmma.sp'
    instr: Optional[dict] = None        # the first mma read against the form table
    regular: bool = True                # chains tile m_tiles x n_tiles exactly, equal lengths
    accumulators: int = 0               # chains (one accumulator each)
    products: dict = field(default_factory=dict)  # products per accumulator -> accumulators
    distinct: tuple = (0, 0)            # distinct A, B fragments
    group: Optional[dict] = None        # wgmma: fence / commit / wait statement numbers
    loop: Optional[dict] = None         # innermost enclosing loop (loops.Loop.as_dict)
    extra_regs: dict = field(default_factory=dict)  # meta / sel / scale_d registers read
    notes: list = field(default_factory=list)

    @property
    def executions(self) -> Optional[int]:
        """How often the phase runs per thread: 1 outside loops, the product of the static trip
        counts of its loops, None when a loop's count is not static."""
        if self.loop is None:
            return 1
        return self.loop.get("executions")

    def as_dict(self):
        return {"index": self.index, "first": self.first, "last": self.last,
                "mma": len(self.mma), "shape": list(self.shape) if self.shape else None,
                "naive_shape": list(self.naive_shape), "tile": list(self.tile),
                # an irregular group tiles no grid: its structure is accumulators × products
                "tiles": list(self.tiles) if self.regular else None, "consistent": self.consistent,
                "chains": self.chains, "grid": self.grid,
                "weight_bytes": list(self.weight_bytes) if self.weight_bytes else None,
                "bias_bytes": list(self.bias_bytes) if self.bias_bytes else None,
                "slot_stride": self.slot_stride, "bias_slot_stride": self.bias_slot_stride,
                "epilogue": list(self.epilogue) if self.epilogue else None,
                "b_source": self.b_source, "c_source": self.c_source,
                "a_regs": self.a_regs, "b_regs": self.b_regs, "c_regs": self.c_regs,
                "d_regs": self.d_regs, "opcode": self.opcode,
                "form": self.form, "instr": self.instr, "regular": self.regular,
                "accumulators": self.accumulators,
                "products": {str(k): v for k, v in sorted(self.products.items())},
                "distinct": list(self.distinct), "group": self.group, "loop": self.loop,
                "executions": self.executions,
                "mma_executed": len(self.mma) * self.executions if self.executions else None,
                "extra_regs": self.extra_regs, "notes": self.notes}


def mma_runs(k) -> list:
    """[[stmt index, …], …] — maximal runs of mma/mma.sp/wmma.mma statements with consecutive
    numbers and one instruction form: a change of opcode (``m16n8k16.f64`` then ``m16n8k8.f64``,
    ``s4`` then ``b1``) starts a new run, since a phase's M/N/K is its one tile times its tiles."""
    if not k.indices_of("mma") and not k.indices_of("wmma"):
        return []
    runs = []
    cur = []
    last_n = None
    for pos, st in enumerate(k.stmts):
        if st.n is None:
            continue
        node = st.node
        is_mma = type(node) is m.Instruction and (roles.is_mma(node.opcode) or (
            node.opcode == "wmma" and node.name.startswith("wmma.mma")))
        if is_mma and cur and st.n == last_n + 1 and node.name == k.stmts[cur[-1]].node.name:
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
    return _join_initialised(k, runs)


def _join_initialised(k, runs) -> list:
    """Join runs separated only by the initialisation of the next mma's accumulator.

    LLVM (Triton) zeroes each accumulator just before its first mma (``mov.b32 %r93, %r80``
    ×4, then the mma, then the next accumulator's movs …), which would cut one tile of a dot
    into runs of one mma.  A gap is absorbed when the mma on both sides are the same instruction
    and every statement in it is an unguarded ``mov`` writing a C register of the mma right
    after the gap from a register or immediate that no mma of the joined run wrote: a copy into
    a fresh accumulator, never a move of results."""
    if len(runs) < 2:
        return runs
    out = [runs[0]]
    for run in runs[1:]:
        prev = out[-1]
        if _initialises(k, prev, run):
            out[-1] = prev + run
        else:
            out.append(run)
    return out


def _initialises(k, prev, run) -> bool:
    stmts = k.stmts
    gap = [stmts[p].node for p in range(prev[-1] + 1, run[0]) if stmts[p].n is not None]
    if not gap or stmts[run[0]].node.name != stmts[prev[-1]].node.name:
        return False     # one instruction form per joined phase
    nxt = mma_forms.describe(stmts[run[0]].node)
    c_regs = set(nxt.frags[3])
    written = {r for p in prev for r in mma_forms.describe(stmts[p].node).frags[0]}
    for node in gap:
        if type(node) is not m.Instruction or node.opcode != "mov" or node.guard is not None \
                or len(node.operands) != 2:
            return False
        dst, src = node.operands
        if type(dst) is not m.Reg or dst.name not in c_regs:
            return False
        if type(src) is m.Reg and src.name in written or type(src) not in (m.Reg, m.Imm):
            return False
    return True


def wgmma_groups(k) -> list:
    """[(first index, last index, [wgmma indices], wait index | None)]: each group runs from its
    ``wgmma.fence`` (or first ``wgmma.mma_async``) to its ``wgmma.commit_group`` (or last
    ``wgmma.mma_async``); ``wait`` is the first ``wgmma.wait_group N`` that retires it."""
    if not k.indices_of("wgmma"):
        return []
    groups, pending = [], []
    fence = None
    cur: Optional[list] = None
    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not m.Instruction or node.opcode != "wgmma" or not node.modifiers:
            continue     # the name starts with "wgmma."
        nm = node.name
        if nm.startswith("wgmma.fence"):
            fence = pos if cur is None else fence
        elif nm.startswith("wgmma.mma_async"):
            if cur is None:
                cur = [fence if fence is not None else pos, []]
            cur[1].append(pos)
        elif nm.startswith("wgmma.commit_group") and cur is not None:
            groups.append([cur[0], pos, cur[1], None])
            pending.append(groups[-1])
            cur = fence = None
        elif nm.startswith("wgmma.wait_group"):
            keep = _wait_count(node)
            retire = pending[:len(pending) - keep] if keep < len(pending) else []
            for g in retire:
                g[3] = pos
            pending = pending[len(retire):]
    if cur is not None:
        groups.append([cur[0], cur[1][-1], cur[1], None])
    return [tuple(g) for g in groups]


def _wait_count(node) -> int:
    op = node.operands[0] if node.operands else None
    try:
        return int(op.value) if type(op) is m.Imm else 0
    except (TypeError, ValueError):
        return 0


def _uniq(seq):
    seen = {}
    for x in seq:
        seen.setdefault(x, None)
    return list(seen)


def find_phases(k) -> list:
    prov = k.provenance
    spans = [(run[0], run[-1], run, None) for run in mma_runs(k)] + wgmma_groups(k)
    spans.sort(key=lambda g: g[0])
    loops = k.loops if spans else []     # an entry without mma needs no loop analysis
    phases = [_phase(k, prov, i, g, loops) for i, g in enumerate(spans, 1)]
    last_n = k.last_number
    for j, p in enumerate(phases):
        lo = p.last + 1
        hi = phases[j + 1].first - 1 if j + 1 < len(phases) else last_n
        p.epilogue = (lo, hi) if lo <= hi else None
    return phases


def _chains(frags):
    """D -> C chains: an mma whose C registers are exactly the D registers another mma of the
    phase wrote last continues that mma's chain (in place or not)."""
    last_writer = {}
    chains = []
    for fr in frags:
        pos, d, a, b, c = fr
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
        chains[cid].append(fr)
        for r in d:
            last_writer[r] = cid
    return chains


def _tiling(chains, nm):
    """(m_tiles, n_tiles, k_steps, regular): regular when every chain has k_steps products and
    the chains' (A sequence, B sequence) pairs are exactly the m_tiles x n_tiles grid."""
    k_steps = max(len(ch) for ch in chains)
    a_seqs = _uniq(tuple(x[2] for x in ch) for ch in chains)
    b_seqs = _uniq(tuple(x[3] for x in ch) for ch in chains)
    m_t, n_t = len(a_seqs), len(b_seqs)
    pairs = {(tuple(x[2] for x in ch), tuple(x[3] for x in ch)) for ch in chains}
    regular = (all(len(ch) == k_steps for ch in chains) and len(pairs) == len(chains) == m_t * n_t
               and m_t * n_t * k_steps == nm)
    return m_t, n_t, k_steps, regular


def _defined_between(k, run) -> set:
    """Registers written by the non-mma statements between a phase's mma (the accumulator
    initialisations :func:`_join_initialised` absorbed)."""
    out: set = set()
    stmts = k.stmts
    for p in range(run[0], run[-1] + 1):
        node = stmts[p].node
        if type(node) is m.Instruction and node.opcode == "mov":
            out.update(k.defs_uses(node)[0])
    return out


def _regs(frags, inside=frozenset()):
    """(A, B, C inputs, D) register lists; C registers an earlier mma of the phase wrote are
    chain links, not inputs, nor are those the phase's own initialisations (``inside``) wrote."""
    d_all = set(inside)
    c_in = []
    for _pos, d, _a, _b, c in frags:
        for r in c:
            if r not in d_all:
                c_in.append(r)
        d_all.update(d)
    return (_uniq(r for x in frags for r in x[2]), _uniq(r for x in frags for r in x[3]),
            _uniq(c_in), _uniq(r for x in frags for r in x[1]))


def _phase(k, prov, index, group, loops) -> Phase:
    first_pos, last_pos, run, wait = group
    stmts = k.stmts
    infos = [mma_forms.describe(stmts[pos].node) for pos in run]
    frags = [(pos,) + mi.frags for pos, mi in zip(run, infos)]
    name = stmts[run[0]].node.name
    tile = infos[0].shape or (16, 8, 32)
    chains = _chains(frags)
    fold = None
    if len(chains) > 1:        # only then can fresh pieces fold into fewer sums
        by_pos = dict(zip(run, infos))
        fresh = split_acc.fresh_starts(k, {ch[0][0]: by_pos[ch[0][0]] for ch in chains}, first_pos)
        fold = split_acc.fold_pieces(k, chains, fresh, first_pos, last_pos)
    if fold is not None:       # fresh pieces folded by add: one K chain (split accumulation)
        chains = fold.chains
    nm = len(run)
    m_t, n_t, k_steps, regular = _tiling(chains, nm)
    regular = regular and all(stmts[p].node.name == name for p in run)   # one tile: one form
    # a guarded mma runs only where its guard holds: the products a lane makes depend on it,
    # so no M×N×K is claimed (``_annotate`` names the guard)
    regular = regular and all(stmts[p].node.guard is None for p in run)
    # a wgmma group whose mma lie in several basic blocks (a K loop, its unrolled body and its
    # remainder inside one fence..commit): how many run depends on the branches, so the
    # statement count is no K (``_annotate`` says so)
    regular = regular and len({k.blocks.block_of[p] for p in run}) == 1
    dist_a = _uniq(x[2] for x in frags)
    dist_b = _uniq(x[3] for x in frags)
    naive = (tile[0] * len(dist_a), tile[1] * len(dist_b), tile[2] * k_steps)
    grid = "full" if len(dist_a) * len(dist_b) * k_steps == nm else "band"
    a_regs, b_regs, c_regs, d_regs = _regs(frags, _defined_between(k, run))
    if fold is not None:       # the running sum is the chain's C and D, not the pieces' own
        c_regs, d_regs = fold.c_regs, fold.d_regs
    wb, wloads, b_src, slot_b = _loaded_range(k, prov, run[0], b_regs)
    if infos[0].form.startswith("wgmma"):
        # a wgmma reads B from shared memory through a matrix descriptor (PTX ISA 9.7.15.5.1):
        # its 64-bit register is an address, never the B fragment ("registers" said otherwise)
        b_src = "descriptor"
    cb, cloads, c_src, slot_c = _loaded_range(k, prov, run[0], c_regs)
    st = stmts
    products = {}
    for ch in chains:
        products[len(ch)] = products.get(len(ch), 0) + 1
    ph = Phase(index=index, first=st[first_pos].n, last=st[last_pos].n, mma=[st[p] for p in run],
               shape=(tile[0] * m_t, tile[1] * n_t, tile[2] * k_steps) if regular else None,
               naive_shape=naive, chains=[[st[x[0]].n for x in ch] for ch in chains], grid=grid,
               weight_bytes=wb, bias_bytes=cb,
               slot_stride=slot_b if slot_b is not None else slot_c,
               epilogue=None, a_regs=a_regs, b_regs=b_regs, c_regs=c_regs, d_regs=d_regs,
               tile=tile, tiles=(m_t, n_t, k_steps), opcode=name, b_source=b_src,
               c_source=c_src if c_regs else "chain", weight_loads=wloads, bias_loads=cloads,
               consistent=m_t * n_t * k_steps == nm, bias_slot_stride=slot_c,
               form=infos[0].form, instr=infos[0].as_dict(), regular=regular,
               accumulators=len(chains), products=products,
               distinct=(len(dist_a), len(dist_b)))
    _annotate(k, ph, infos, run, first_pos, last_pos, wait, loops)
    if fold is not None:
        st_n = [st[p].n for p in fold.adds]
        sums = len(fold.chains)
        ph.notes.append(f"split accumulation: {fold.pieces} pieces each start a fresh accumulator and "
                        f"{len(st_n)} add (s{st_n[0]}…s{st_n[-1]}) fold them into "
                        + ("one running sum: read as one K chain" if sums == 1 else
                           f"{sums} running sums: read as {sums} K chains")
                        + f" of {k_steps} k-steps (each sum rounds once per piece)")
    return ph


def _annotate(k, ph, infos, run, first_pos, last_pos, wait, loops):
    """Form-specific facts: extra operand registers, the wgmma group, the enclosing loop, and
    every instruction whose operand lists disagree with the form table."""
    extra = {}
    for mi in infos:
        for slot, regs in mi.operands.items():
            if slot not in ("a", "b", "c", "d"):
                for r in regs:
                    if r not in extra.setdefault(slot, []):
                        extra[slot].append(r)
    ph.extra_regs = extra
    forms = _uniq(mi.form for mi in infos)
    if len(forms) > 1 or len(_uniq(k.stmts[p].node.name for p in run)) > 1:
        ph.notes.append("mixed opcodes: " + ", ".join(_uniq(k.stmts[p].node.name for p in run)))
    for pos in run:
        g = k.stmts[pos].node.guard
        if g is not None:
            ph.notes.append(f"s{k.stmts[pos].n}: guarded by {g}: it runs only "
                            "where the guard holds, so the phase has no fixed shape")
    for pos, mi in zip(run, infos):
        why = mma_forms.layout_mismatch(mi)
        if why:
            ph.notes.append(f"s{k.stmts[pos].n}: {why}")
    if ph.form.startswith("wgmma"):
        st = k.stmts
        ph.group = {"fence": st[first_pos].n if st[first_pos].node.name.startswith("wgmma.fence") else None,
                    "commit": st[last_pos].n if st[last_pos].node.name.startswith("wgmma.commit") else None,
                    "wait": st[wait].n if wait is not None else None}
    blocks = _uniq(k.blocks.block_of[p] for p in run)
    if len(blocks) > 1:
        ns = [k.stmts[p].n for p in run]
        ph.notes.append(f"control flow inside the group: its {len(run)} mma (s{ns[0]}…s{ns[-1]}) lie in "
                        f"{len(blocks)} basic blocks (a loop or branch between the fence and the commit), "
                        "so how many run, and the K they make, depends on the branches taken: no shape")
    # the loop that repeats the mma (a wgmma K loop can sit inside its group, below the fence)
    ph.loop = _loop_of(loops, k.blocks.block_of[run[0]])


def _loop_of(loops, block):
    """The innermost loop holding ``block`` and how often the block runs (the product of the
    static trip counts of every loop around it; None when one is not static)."""
    around = [lp for lp in loops if block in lp.blocks]
    if not around:
        return None
    lp = max(around, key=lambda x: x.depth)
    execs = 1
    for outer in around:
        execs = execs * outer.trip_count if (execs and outer.trip_count) else None
    d = lp.as_dict()
    d["executions"] = execs
    return d


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
