"""Every definition of a register that may reach a statement: reaching definitions over the
kernel's blocks.

``Provenance.reaching_def`` gives *the* definition reaching a use, or None when it cannot name
one: a register defined once, or defined earlier in the same block.  An affine value needs
exactly one.  A forward question (who reads what this ``mov`` wrote?) needs all of them: a
loop-carried accumulator (``mov.f32 %f15, 0f00000000`` before the loop, the mma in it reading
and writing ``%f15``) is read by the mma through two definitions, the ``mov`` on the first trip
and the mma itself on every later one.

The classic dataflow, solved once per kernel on first need: each definition is a bit (one
definition in a loop reaches its own use through the back edge too); a block's reaching set is the union over its
predecessors, an unguarded definition replaces its register's bits, a guarded one joins them.
Sets are Python integers, so thrust's biggest kernel (1,676 blocks, 9,151 statements) is
solved in milliseconds, not by one walk of the blocks per register (4 s).
"""
from __future__ import annotations

from bisect import bisect_left
from collections import deque


#: the most (blocks x definitions) bits the solve may hold per set.  Each block keeps a set of
#: bits as wide as the kernel's definitions, so the memory is their product: 40k blocks that
#: each redefine two registers took 1.6 GB, 200k would take 40.  thrust's biggest kernel needs
#: 1.5e7, the stand-ins less; at this bound the solve holds ~0.6 GB.
MAX_BITS = 1 << 30


class Reaching:
    def __init__(self, k):
        self._kernel = (k.name, k.path)
        self._blocks = k.blocks
        self._def_pos = k.provenance.def_pos
        self._guarded = k.du()[2]
        self._index: dict = {}   # (register, definition position) -> its bit's index: one
                                 # statement defines several registers (ld.v2, an mma's D pair)
        self._pos: list = []     # bit index -> definition position
        self._mask: dict = {}    # register key -> the bits of all its definitions
        self._in: "list | None" = None

    def defs(self, key: str, pos: int) -> tuple:
        """The statement indices of ``key``'s definitions that may reach statement ``pos``
        (before it executes), in order; () when only the kernel's incoming value does."""
        ps = self._def_pos.get(key, ())
        if not ps:
            return ()
        if self._in is None:
            self._in = self._solve()
        b = self._blocks.block_of[pos]
        bits = self._in[b] & self._mask[key]
        lo = bisect_left(ps, self._blocks.starts[b])
        for d in ps[lo:bisect_left(ps, pos)]:
            bit = 1 << self._index[key, d]
            bits = (bits | bit) if self._guarded[d] else bit
        return tuple(sorted(self._pos[i] for i in _ones(bits)))

    def _number(self) -> None:
        """A register's definitions take consecutive bits: its mask is one run of ones (no
        big integer is kept per definition)."""
        for key, ps in self._def_pos.items():
            base = len(self._pos)
            for d in ps:
                self._index[key, d] = len(self._pos)
                self._pos.append(d)
            self._mask[key] = ((1 << len(ps)) - 1) << base

    def _gen_kill(self) -> tuple:
        """Per block: the bits its definitions leave at its end, and the bits it removes (a
        register's all, where the block defines it unguarded)."""
        blocks = self._blocks
        n = len(blocks.starts)
        gen, kill = [0] * n, [0] * n
        for key, mask in self._mask.items():
            here: dict = {}      # block -> [bits at its end, defined unguarded]
            for d in self._def_pos[key]:     # in program order
                state = here.setdefault(blocks.block_of[d], [0, False])
                bit = 1 << self._index[key, d]
                if self._guarded[d]:
                    state[0] |= bit
                else:
                    state[0], state[1] = bit, True
            for b, (bits, replaced) in here.items():
                gen[b] |= bits
                if replaced:
                    kill[b] |= mask
        return gen, kill

    def _solve(self) -> list:
        self._number()
        blocks = self._blocks
        n = len(blocks.starts)
        if n * len(self._pos) > MAX_BITS:
            from ..errors import SpliceError

            name, path = self._kernel
            raise SpliceError(f"{name}: {n} blocks x {len(self._pos)} register definitions is more than "
                              f"{MAX_BITS} bits of reaching definitions to follow (splice's limit)", path)
        gen, kill = self._gen_kill()
        ins, outs = [0] * n, list(gen)
        work = deque(range(n))
        queued = set(work)
        while work:
            b = work.popleft()
            queued.discard(b)
            new_in = 0
            for p in blocks.pred[b]:
                new_in |= outs[p]
            ins[b] = new_in
            out = gen[b] | (new_in & ~kill[b])
            if out != outs[b]:
                outs[b] = out
                for s in blocks.succ[b]:
                    if s not in queued:
                        work.append(s)
                        queued.add(s)
        return ins


def _ones(bits: int):
    """The indices of the set bits of ``bits``."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low
