"""Control flow and register liveness of one entry.

Basic blocks start at the body's first statement, at every label and after every branch or exit;
a ``bra`` goes to its label (and falls through when guarded), ``brx.idx`` to the labels of its
``.branchtargets`` list (any label when the list is not found),
``ret``/``exit``/``trap`` end the path (unless guarded).  Liveness is the usual backward dataflow
over blocks with Python-int bitsets; a guarded definition does not kill (it may not happen).

Point queries never rescan a block: every register keeps its sorted event list (uses, killing
definitions) so "is r live just after statement p" is a bisection plus, when no event of r
follows p inside p's block, one bit of the block's live-out set.
"""
from __future__ import annotations

from bisect import bisect_left

from ..ptx import model as m
from . import roles

USE, KILL = 1, 2


class Blocks:
    """The control-flow graph alone: basic blocks (``starts``/``ends``: statement indices,
    ``block_of``: statement index -> block), ``succ`` and ``pred``.  Provenance and the loop
    finder need only this; the dataflow of :class:`Liveness` is computed when asked for."""

    def __init__(self, k):
        stmts = k.stmts
        n = len(stmts)
        leaders = {0} if n else set()
        labels = {}
        scoped: dict = {}         # a name defined more than once: {scope id: position}
        scope_of = getattr(k, "_scope_of", None)
        term = {}
        tables: dict = {}         # a .branchtargets list's label -> its target labels
        Label, Instruction = m.Label, m.Instruction
        ends_block: dict = {}     # opcode -> branch or exit (both tests read the first word alone)
        for pos, st in enumerate(stmts):
            node = st.node
            t = type(node)
            if t is Label:
                leaders.add(pos)
                name = node.name
                if name in labels and scope_of is not None:
                    scoped.setdefault(name, {scope_of[labels[name]]: labels[name]})[scope_of[pos]] = pos
                labels[name] = pos
            elif t is Instruction:
                op = node.opcode
                e = ends_block.get(op)
                if e is None:
                    e = ends_block[op] = roles.is_branch(op) or roles.is_exit(op)
                if e:
                    term[pos] = node
                    if pos + 1 < n:
                        leaders.add(pos + 1)
            elif t is m.Directive and node.name == ".branchtargets" and pos and type(stmts[pos - 1].node) is Label:
                tables[stmts[pos - 1].node.name] = [a for a in node.args if a != ","]
        starts = sorted(leaders)
        self.starts = starts
        block_of = [0] * n
        ends = []
        for b, s in enumerate(starts):
            e = starts[b + 1] - 1 if b + 1 < len(starts) else n - 1
            ends.append(e)
            block_of[s:e + 1] = [b] * (e + 1 - s)
        self.ends = ends
        self.block_of = block_of
        label_block = {name: block_of[p] for name, p in labels.items()}
        if scoped:
            label_block = _ScopedLabels(label_block, scoped, scope_of, k._parent, block_of)
        self.succ = _successors(starts, ends, term, label_block, tables)
        pred = [[] for _ in starts]
        for b, ss in enumerate(self.succ):
            for s in ss:
                pred[s].append(b)
        self.pred = pred


class _ScopedLabels(dict):
    """Label name -> block, where a name is defined in several ``{ }`` scopes: a label is local
    to its scope (PTX ISA 4.4), and CUTLASS's inline asm defines ``LAB_WAIT:``/``DONE:`` in every
    one of its mbarrier-wait blocks, so a branch goes to the definition in its own scope or the
    nearest enclosing one, never to another block's label of the same name."""

    def __init__(self, label_block, scoped, scope_of, parent, block_of):
        super().__init__(label_block)
        self.scoped, self.scope_of, self.parent, self.block_of = scoped, scope_of, parent, block_of

    def target(self, name, pos):
        defs = self.scoped.get(name)
        if defs is None:
            return self.get(name)
        sid = self.scope_of[pos]
        while sid is not None:
            if sid in defs:
                return self.block_of[defs[sid]]
            sid = self.parent[sid]
        return None


def _target(label_block, name, pos):
    if type(label_block) is _ScopedLabels:
        return label_block.target(name, pos)
    return label_block.get(name)


def _successors(starts, ends, term, label_block, tables) -> list:
    nb = len(starts)
    succ = [[] for _ in range(nb)]
    for b in range(nb):
        e = ends[b]
        node = term.get(e)
        fall = b + 1 if b + 1 < nb else None
        if node is None:
            if fall is not None:
                succ[b].append(fall)
            continue
        nm = node.name
        g = node.guard is not None
        if roles.is_exit(nm):
            if g and fall is not None:
                succ[b].append(fall)
            continue
        tgt = None
        if nm.startswith("bra") and node.operands:
            o = node.operands[0]
            tgt = _target(label_block, getattr(o, "name", None), e)
        listed = _listed(tables, label_block, node, e) if tgt is None and node.operands else None
        if tgt is not None:
            succ[b].append(tgt)
        elif listed:          # brx.idx through its .branchtargets list
            succ[b].extend(x for x in listed if x not in succ[b])
        else:  # an unknown target: any label
            succ[b].extend(sorted(set(label_block.values())))
        if g and fall is not None and fall not in succ[b]:
            succ[b].append(fall)
    return succ


def _listed(tables, label_block, node, pos):
    """Blocks of the labels a ``brx.idx``'s ``.branchtargets`` list names (None when its last
    operand names no list found here, or a listed label is not in the entry)."""
    names = tables.get(getattr(node.operands[-1], "name", None))
    if not names:
        return None
    blocks = [_target(label_block, nm, pos) for nm in names]
    return None if None in blocks else sorted(set(blocks))


class Liveness:
    def __init__(self, k):
        """Registers numbered by first event, each register's events (uses, unguarded
        definitions) in program order, and live-in / live-out bit sets per block from a
        backward dataflow over the CFG."""
        self.k = k
        defs, uses, guarded = k.du()
        cfg = k.blocks
        self.starts, self.ends, self.block_of = cfg.starts, cfg.ends, cfg.block_of
        self.succ, self.pred = cfg.succ, cfg.pred
        self.bit, self.ev_pos, self.ev_kind = _events(defs, uses, guarded)
        gen, kill = _gen_kill(cfg.starts, cfg.ends, defs, uses, guarded, self.bit)
        self.live_in_block, self.live_out_block = _solve(gen, kill, cfg.succ, cfg.pred)

    # ---- point queries ------------------------------------------------------------------------

    def _next_event(self, key, pos_from):
        ps = self.ev_pos.get(key)
        if not ps:
            return None
        i = bisect_left(ps, pos_from)
        if i < len(ps):
            return ps[i], self.ev_kind[key][i]
        return None

    def live_before(self, key, pos) -> bool:
        """Is ``key`` live on entry to statement index ``pos``?"""
        b = self.block_of[pos]
        ev = self._next_event(key, pos)
        if ev is not None and ev[0] <= self.ends[b]:
            return ev[1] == USE
        bi = self.bit.get(key)
        return bi is not None and bool((self.live_out_block[b] >> bi) & 1)

    def live_after(self, key, pos) -> bool:
        """Is ``key`` live just after statement index ``pos`` (on every path out of it)?"""
        b = self.block_of[pos]
        if pos == self.ends[b]:
            bi = self.bit.get(key)
            return bi is not None and bool((self.live_out_block[b] >> bi) & 1)
        return self.live_before(key, pos + 1)

    def live_set_before(self, pos) -> set:
        """Every key live on entry to ``pos`` (walks the rest of its block once)."""
        defs, uses, guarded = self.k.du()
        b = self.block_of[pos]
        names = {v: kk for kk, v in self.bit.items()}
        live = {names[i] for i in set_bits(self.live_out_block[b])}
        for p in range(self.ends[b], pos - 1, -1):
            if not guarded[p]:
                live.difference_update(defs[p])
            live.update(uses[p])
        return live


def set_bits(v: int):
    """Indices of the set bits of ``v``, low to high."""
    s = bin(v)[:1:-1]
    i = s.find("1")
    while i >= 0:
        yield i
        i = s.find("1", i + 1)


def _events(defs, uses, guarded) -> tuple:
    """(bit, ev_pos, ev_kind): each register's bit (numbered as first met) and its events in
    program order, USE for a read and KILL for an unguarded definition (a guarded one may not
    happen, so it kills nothing, but its register still gets a bit)."""
    bit: dict = {}
    ev_pos: dict = {}
    ev_kind: dict = {}
    for pos in range(len(defs)):
        u = uses[pos]
        d = defs[pos]
        if not u and not d:
            continue
        for key in u:
            if key not in bit:
                bit[key] = len(bit)
                ev_pos[key] = []
                ev_kind[key] = []
            ev_pos[key].append(pos)
            ev_kind[key].append(USE)
        for key in d:
            if key not in bit:
                bit[key] = len(bit)
                ev_pos[key] = []
                ev_kind[key] = []
            if not guarded[pos]:
                ev_pos[key].append(pos)
                ev_kind[key].append(KILL)
    return bit, ev_pos, ev_kind


def _gen_kill(starts, ends, defs, uses, guarded, bit) -> tuple:
    """Per block, the registers read before any unguarded definition in it (gen) and those it
    defines unguarded (kill), as bit sets."""
    gen = [0] * len(starts)
    kill = [0] * len(starts)
    for b in range(len(starts)):
        gs = set()
        ks: set = set()
        for pos in range(starts[b], ends[b] + 1):
            for key in uses[pos]:
                if key not in ks:
                    gs.add(key)
            if not guarded[pos]:
                ks.update(defs[pos])
        gv = 0
        for key in gs:
            gv |= 1 << bit[key]
        kv = 0
        for key in ks:
            kv |= 1 << bit[key]
        gen[b] = gv
        kill[b] = kv
    return gen, kill


def _solve(gen, kill, succ, pred) -> tuple:
    """(live_in, live_out) per block: the backward dataflow to its fixed point, a worklist of
    the blocks whose successors' live-in changed."""
    nb = len(gen)
    live_in = [0] * nb
    live_out = [0] * nb
    work = list(range(nb))
    inwork = [True] * nb
    while work:
        b = work.pop()
        inwork[b] = False
        o = 0
        for s in succ[b]:
            o |= live_in[s]
        live_out[b] = o
        i = gen[b] | (o & ~kill[b])
        if i != live_in[b]:
            live_in[b] = i
            for p in pred[b]:
                if not inwork[p]:
                    inwork[p] = True
                    work.append(p)
    return live_in, live_out
