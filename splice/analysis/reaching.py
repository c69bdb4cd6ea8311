"""Every definition of a register that may reach a statement: reaching definitions over the
kernel's blocks.

``Provenance.reaching_def`` gives *the* definition reaching a use, or None when it cannot name
one: a register defined once, or defined earlier in the same block.  An affine value needs
exactly one.  A forward question (who reads what this ``mov`` wrote?) needs all of them: a
loop-carried accumulator (``mov.f32 %f15, 0f00000000`` before the loop, the mma in it reading
and writing ``%f15``) is read by the mma through two definitions, the ``mov`` on the first trip
and the mma itself on every later one.  This module answers that for the registers defined
more than once, one register at a time, when first asked (the classic dataflow: a block's
reaching set is the union over its predecessors; an unguarded definition replaces the set, a
guarded one joins it).
"""
from __future__ import annotations

from bisect import bisect_left
from collections import deque


class Reaching:
    def __init__(self, k):
        self._blocks = k.blocks
        self._def_pos = k.provenance.def_pos
        self._guarded = k.du()[2]
        self._in: dict = {}     # key -> per block, the definitions reaching its first statement

    def defs(self, key: str, pos: int) -> tuple:
        """The statement indices of ``key``'s definitions that may reach statement ``pos``
        (before it executes), in order; () when only the kernel's incoming value does."""
        ins = self._in.get(key)
        if ins is None:
            ins = self._in[key] = self._solve(key)
        b = self._blocks.block_of[pos]
        return tuple(sorted(self._through(key, b, ins[b], pos)))

    def _through(self, key: str, b: int, reach: frozenset, stop: int) -> frozenset:
        """``reach`` carried through block ``b``'s definitions of ``key`` before ``stop``."""
        ps = self._def_pos.get(key, ())
        lo = bisect_left(ps, self._blocks.starts[b])
        hi = bisect_left(ps, min(stop, self._blocks.ends[b] + 1))
        cur = set(reach)
        for d in ps[lo:hi]:
            if self._guarded[d]:
                cur.add(d)
            else:
                cur = {d}
        return frozenset(cur)

    def _solve(self, key: str) -> list:
        blocks = self._blocks
        n = len(blocks.starts)
        ins = [frozenset()] * n
        outs = [self._through(key, b, frozenset(), blocks.ends[b] + 1) for b in range(n)]
        work = deque(range(n))
        queued = set(work)
        while work:
            b = work.popleft()
            queued.discard(b)
            ins[b] = frozenset().union(*(outs[p] for p in blocks.pred[b]))
            out = self._through(key, b, ins[b], blocks.ends[b] + 1)
            if out != outs[b]:
                outs[b] = out
                for s in blocks.succ[b]:
                    if s not in queued:
                        work.append(s)
                        queued.add(s)
        return ins
