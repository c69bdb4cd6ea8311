"""Operand roles: one table, opcode pattern -> which operands an instruction writes and reads.

Def-use, liveness, the cut ABI and provenance all read registers through this module and nothing
else (STYLE.md, "per-opcode knowledge in one table").  The PTX manual's operand conventions are:

* the first operand is the destination, every other operand a source (the default, ``WRITE0``);
  the destination may be a brace list (``ld.v4``, ``mma``'s D, ``mov.b32 {lo, hi}, r``) or a
  ``p|q`` pair (``setp``, ``shfl.sync``, ``elect.sync``, ``tex … {…}|p``) — every register in it
  is written;
* instructions that only touch memory, synchronise or transfer control write no register
  (``NONE``): stores, reductions, ``sust``/``sured``, ``cp.async*``, ``bar``/``barrier``,
  ``fence``/``membar``, ``bra``/``brx``/``ret``/``exit`` …;
* ``wgmma.mma_async`` reads and writes its accumulator (``RW0``);
* ``call (rets), fn, (args)`` writes its return list and reads its argument list (``CALL``);
* ``mma`` writes D and reads A, B, C (``MMA``; ``mma_fragments`` gives the fragment sizes).

Whatever the role, registers inside ``[...]`` (address registers, ``Offset`` bases, the
coordinate vector of ``tex``/``sust``) are reads, and so is the guard predicate.

The second table, ``MEMORY_TABLE``, says what an instruction does to memory: effect, which
operand is the address (a copy's source, the mbarrier an async operation signals), which
operands are data loaded or stored, the state space (from the modifiers), and whether it is a
side effect that never moves.  Taint, slices, provenance, the probe's parameter trace, the
epilogue stages and the checker's loads ask ``memory_access``/``is_impure``/``is_opaque`` here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..ptx.model import Addr, Imm, ParenList, Reg
from ..ptx.operands import read_in_dest, registers, written_in_dest

WRITE0 = "write0"   # operand 0 written, the rest read
NONE = "none"       # nothing written
RW0 = "rw0"         # operand 0 read and written
CALL = "call"       # (returns) written, (arguments) read
MMA = "mma"         # D written; A, B, C read

# Longest dotted-prefix match on the instruction's full name.  Section names are the PTX ISA's.
ROLE_TABLE: dict = {
    # 9.7.9 data movement: stores, prefetch, async copies — memory is the destination
    "st": NONE, "st.async": NONE, "st.bulk": NONE, "stmatrix": NONE,
    "prefetch": NONE, "prefetchu": NONE, "discard": NONE, "applypriority": NONE,
    "cp": NONE,                      # cp.async, cp.async.bulk(.tensor), cp.reduce.async.bulk
    "cp.async.mbarrier": NONE,
    "tensormap": NONE,
    "multimem": NONE, "multimem.ld_reduce": WRITE0,
    # 9.7.10 texture / 9.7.11 surface
    "tex": WRITE0, "tld4": WRITE0, "txq": WRITE0, "istypep": WRITE0,
    "suld": WRITE0, "sust": NONE, "sured": NONE, "suq": WRITE0,
    # 9.7.13 parallel synchronisation and communication
    "atom": WRITE0, "red": NONE, "red.async": NONE,
    "bar": NONE, "bar.red": WRITE0, "barrier": NONE, "barrier.red": WRITE0,
    "barrier.cta.red": WRITE0, "bar.warp": NONE,
    "membar": NONE, "fence": NONE,
    "mbarrier": WRITE0,              # arrive/test_wait/try_wait return a state or predicate
    "mbarrier.init": NONE, "mbarrier.inval": NONE, "mbarrier.expect_tx": NONE,
    "mbarrier.complete_tx": NONE,
    "griddepcontrol": NONE, "setmaxnreg": NONE, "nanosleep": NONE,
    # 9.7.12 control flow
    "bra": NONE, "brx": NONE, "ret": NONE, "exit": NONE, "call": CALL,
    # 9.7.19 miscellaneous
    "trap": NONE, "brkpt": NONE, "pmevent": NONE, "stackrestore": NONE,
    # 9.7.14 / 9.7.15 matrix multiply-accumulate
    "mma": MMA,
    "wmma.store": NONE,              # wmma.store.d [p], {fragment}, stride: memory is the destination
    "wgmma.mma_async": RW0, "wgmma.fence": NONE, "wgmma.commit_group": NONE,
    "wgmma.wait_group": NONE,
    # 9.7.16 tcgen05: operands are tensor-memory addresses, descriptors and barriers; only
    # tcgen05.ld writes registers.  ``tcgen05.dealloc taddr, ncols`` reads its first operand
    # (WRITE0 made a cut before it drop taddr from its live-outs: SASS differed)
    "tcgen05.dealloc": NONE,
}


def _longest_prefix(table: dict, name: str, default):
    """``table``'s entry for the longest dotted prefix of ``name`` (``cp.async.bulk.tensor.2d``
    -> ``cp.async.bulk.tensor``), or ``default``: how both tables of this module are keyed."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        r = table.get(".".join(parts[:i]))
        if r is not None:
            return r
    return default


@lru_cache(maxsize=4096)
def role_of(name: str) -> str:
    """The role of an instruction by full dotted name (``st.global.u32`` -> ``NONE``)."""
    return _longest_prefix(ROLE_TABLE, name, WRITE0)


# opcodes whose role depends on their modifiers (a dotted key of the table starts with them);
# every other opcode's role is the table's entry for the opcode alone
_BY_MODIFIERS = frozenset(k.split(".", 1)[0] for k in ROLE_TABLE if "." in k)


def role_of_instr(instr) -> str:
    """``role_of(instr.name)``, without joining the name when the opcode alone decides (the
    def-use of a big module asks this for every instruction)."""
    op = instr.opcode
    if op in _BY_MODIFIERS:
        return role_of(instr.name)
    return ROLE_TABLE.get(op, WRITE0)


_MMA_SHAPE = re.compile(r"^m(\d{1,9})n(\d{1,9})k(\d{1,9})$")   # as mma_forms._SHAPE
# (m, n, k, A type) -> (A regs, B regs, C/D regs) for the dense f16-accumulator forms the
# analysis meets; anything else is read from the operand lists themselves.
_FRAG = {
    (16, 8, 32, 8): (4, 2, 2),    # e4m3/e5m2/s8/u8, f16 accumulate
    (16, 8, 16, 16): (4, 2, 2),   # f16/bf16 A/B, f16 accumulate
    (16, 8, 8, 16): (2, 1, 2),
    (16, 8, 16, 8): (2, 1, 2),
}


def mma_shape(name: str):
    """(m, n, k) from an mma opcode's ``.mMnNkK`` modifier, or None."""
    for p in name.split("."):
        mm = _MMA_SHAPE.match(p)
        if mm:
            return int(mm.group(1)), int(mm.group(2)), int(mm.group(3))
    return None


def mma_fragments(instr):
    """(D, A, B, C) register-name tuples of an ``mma`` instruction, in operand order."""
    ops = instr.operands
    out = []
    for o in ops[:4]:
        regs = []
        _collect(o, regs)
        out.append(tuple(regs))
    while len(out) < 4:
        out.append(())
    return tuple(out)


def _collect(op, out):
    """Every register-like name inside an operand (Reg that is not special, Sym, nested)."""
    registers(op, out)


# the destination walks live in splice.ptx.operands; provenance reads them under these names
_writes_in_dest = written_in_dest
_reads_in_dest = read_in_dest


def raw_defs_uses(instr):
    """(defs, uses): candidate register names (Syms included, unfiltered) of one Instruction.

    Callers filter Sym names against the declared registers (``Kernel.defs_uses`` does)."""
    defs: list = []
    uses: list = []
    ops = instr.operands
    role = role_of_instr(instr)
    if instr.guard is not None:
        uses.append(instr.guard.pred)
    if not ops:
        return defs, uses
    if role == NONE:
        for o in ops:
            _collect(o, uses)
    elif role == CALL:
        start = 0
        if type(ops[0]) is ParenList:
            written_in_dest(ops[0], defs)
            start = 1
        for o in ops[start:]:
            _collect(o, uses)
    else:
        d = ops[0]
        written_in_dest(d, defs)
        read_in_dest(d, uses)
        if role == RW0 and not fresh_wgmma(instr):
            written_in_dest(d, uses)
        for o in ops[1:]:
            _collect(o, uses)
    return defs, uses


def fresh_wgmma(instr) -> bool:
    """A ``wgmma.mma_async`` whose ``scale-d`` is the immediate 0 computes D = A·B: it reads no
    accumulator (PTX ISA 9.7.15.5.2), so its D registers are no live-in of a cut (they were:
    Triton's fp8 split accumulation gave its phase 128 inputs it never reads)."""
    if instr.opcode != "wgmma" or not instr.modifiers or instr.modifiers[0] != ".mma_async":
        return False
    at = 5 if ".sp" in instr.modifiers else 3       # d, a, b, [meta, sel,] scale-d
    ops = instr.operands
    return len(ops) > at and type(ops[at]) is Imm and ops[at].text == "0"


def raw_defs(instr) -> list:
    """The defs of :func:`raw_defs_uses` alone (same names, same order)."""
    ops = instr.operands
    if not ops:
        return []
    role = role_of_instr(instr)
    if role == NONE:
        return []
    d = ops[0]
    if type(d) is Reg:      # the common case, as written_in_dest reads it
        return [] if d.special else [d.name]
    defs: list = []
    if role == CALL:
        if type(ops[0]) is ParenList:
            written_in_dest(ops[0], defs)
    else:
        written_in_dest(ops[0], defs)
    return defs


# --- a few families other modules ask about ---------------------------------------------------

def is_branch(name: str) -> bool:
    """Also right for the opcode alone (``bra``, ``brx``): the test reads the first word."""
    return name.startswith("bra") or name.startswith("brx")


def is_exit(name: str) -> bool:
    """Also right for the opcode alone (``ret``, ``exit``, ``trap``)."""
    return name == "ret" or name.startswith("ret.") or name == "exit" or name.startswith("exit.") \
        or name == "trap" or name.startswith("trap.")


def is_mma(name: str) -> bool:
    """Also right for the opcode alone (``mma``)."""
    return name.startswith("mma.") or name == "mma"


_VEC = re.compile(r"\.v(\d)\b")
_WIDTH = re.compile(r"\.[bsuf](8|16|32|64|128)\b")


def access_bytes(name: str) -> int:
    """Bytes one lane moves with a ld/st opcode (``ld.weak.global.ca.v4.u32`` -> 16)."""
    v = _VEC.search(name)
    ws = _WIDTH.findall(name)
    w = int(ws[-1]) if ws else 32
    return (int(v.group(1)) if v else 1) * w // 8


# --- memory: one table, opcode pattern -> what an instruction does to memory ------------------
#
# Taint, backward slices, provenance, the probe's parameter trace and the epilogue stages all
# ask "does this touch memory, where, and may it move" here and nowhere else, so an opcode the
# table learns is learnt by every pass at once.  Keys are matched like ROLE_TABLE's (longest
# dotted prefix of the full name); the comments name the PTX ISA 9.0 sections the rows come from.

READ = "read"
WRITE = "write"
READ_WRITE = "read-write"
NO_ACCESS = "none"


@dataclass(frozen=True, slots=True)
class MemOp:
    """The memory facts of one opcode pattern (a row of MEMORY_TABLE).  Operand indices count
    from 0 in the written operand list; an index past its end (an optional operand left out)
    means the operand is absent."""
    effect: str = NO_ACCESS        # what happens at ``addr``: READ, WRITE, READ_WRITE, NO_ACCESS
    addr: Optional[int] = None     # the address operand (a copy's destination)
    src: Optional[int] = None      # a copy's source address operand (always read)
    mbar: Optional[int] = None     # the mbarrier an async operation signals on completion
    out: tuple = ()                # operands loaded into (registers written from memory)
    data: tuple = ()               # operands whose values go to memory
    space: Optional[str] = None    # a fixed space ('tex', 'surf'); None: from the modifiers
    kind: str = ""                 # the access's name in provenance and the notes; '' not a data access
    side: bool = False             # a side effect: never moved, merged or removed
    opaque: bool = False           # results are not a function of this thread's register operands


def _load(kind="ld", **kw) -> MemOp:
    return MemOp(READ, addr=1, out=(0,), kind=kind, **kw)


def _store(kind="st", effect=WRITE, **kw) -> MemOp:
    return MemOp(effect, addr=0, data=(1,), kind=kind, side=True, **kw)


_ORDERED = MemOp(side=True)                  # barriers, fences, control flow: no address
_OPAQUE = MemOp(opaque=True)                 # other lanes' registers or hidden state
_ORDERED_OPAQUE = MemOp(side=True, opaque=True)
_COPY = MemOp(WRITE, addr=0, src=1, kind="cp", side=True)

MEMORY_TABLE: dict = {
    # data movement (9.7.9): ld, ld.global.nc, ldu, st, st.async, st.bulk
    "ld": _load(), "ldu": _load(),
    "st": _store(), "st.async": _store(mbar=2), "st.bulk": MemOp(WRITE, addr=0, kind="st", side=True),
    # data movement: prefetch, applypriority, discard; createpolicy only names a cache policy
    "prefetch": MemOp(READ, addr=0), "prefetchu": MemOp(READ, addr=0),
    "applypriority": MemOp(NO_ACCESS, addr=0),        # a cache-line priority: no data changes
    "discard": MemOp(WRITE, addr=0, side=True),       # the line's contents become undefined
    "createpolicy": MemOp(),
    # data movement: isspacep, cvta — address arithmetic, no access
    "isspacep": _OPAQUE, "cvta": MemOp(),
    # data movement: cp.async (per thread) and its groups, cp.async.bulk(.prefetch)(.tensor),
    # cp.reduce.async.bulk(.tensor): the destination is operand 0, the source 1
    "cp.async": _COPY, "cp.async.mbarrier.arrive": MemOp(READ_WRITE, addr=0, side=True),
    "cp.async.commit_group": _ORDERED, "cp.async.wait_group": _ORDERED, "cp.async.wait_all": _ORDERED,
    "cp.async.bulk": MemOp(WRITE, addr=0, src=1, mbar=3, kind="cp", side=True),
    "cp.async.bulk.tensor": MemOp(WRITE, addr=0, src=1, mbar=2, kind="cp", side=True),
    "cp.async.bulk.prefetch": MemOp(READ, addr=0, kind="cp"),
    "cp.async.bulk.commit_group": _ORDERED, "cp.async.bulk.wait_group": _ORDERED,
    "cp.reduce.async.bulk": MemOp(READ_WRITE, addr=0, src=1, mbar=3, kind="cp", side=True),
    "cp.reduce.async.bulk.tensor": MemOp(READ_WRITE, addr=0, src=1, kind="cp", side=True),
    # data movement: tensormap.replace (one field of the 128-byte object), tensormap.cp_fenceproxy
    "tensormap.replace": MemOp(READ_WRITE, addr=0, data=(-1,), side=True),
    "tensormap.cp_fenceproxy": MemOp(WRITE, addr=0, src=1, side=True),
    # texture (9.7.10), surface (9.7.11): the address is an image handle (and coordinates)
    "tex": _load("tex", space="tex"), "tld4": _load("tld4", space="tex"),
    "txq": MemOp(addr=1, space="tex", opaque=True), "istypep": MemOp(),   # a handle's static type
    "suld": _load("suld", space="surf"), "sust": _store("sust", space="surf"),
    "sured": _store("sured", READ_WRITE, space="surf"), "suq": MemOp(addr=1, space="surf", opaque=True),
    # parallel synchronisation and communication (9.7.13): atom, red, red.async, multimem
    "atom": MemOp(READ_WRITE, addr=1, out=(0,), data=(2, 3), kind="atom", side=True),
    "red": _store("red", READ_WRITE), "red.async": _store("red", READ_WRITE, mbar=2),
    "multimem": MemOp(READ_WRITE, addr=0, side=True),
    "multimem.ld_reduce": _load(), "multimem.st": _store(), "multimem.red": _store("red", READ_WRITE),
    # parallel synchronisation: mbarrier, an object in shared memory; arrive/test/try return its state
    "mbarrier": MemOp(READ_WRITE, addr=1, out=(0,), side=True),
    "mbarrier.init": MemOp(WRITE, addr=0, data=(1,), side=True),
    "mbarrier.inval": MemOp(WRITE, addr=0, side=True),
    "mbarrier.expect_tx": MemOp(READ_WRITE, addr=0, side=True),
    "mbarrier.complete_tx": MemOp(READ_WRITE, addr=0, side=True),
    "mbarrier.test_wait": MemOp(READ, addr=1, out=(0,), side=True),
    "mbarrier.try_wait": MemOp(READ, addr=1, out=(0,), side=True),
    "mbarrier.pending_count": MemOp(),                # a function of the state operand
    # warp-level matrix instructions: ldmatrix/stmatrix/movmatrix, wmma.load/store (wmma.mma has no memory)
    "ldmatrix": _load("ldmatrix"), "stmatrix": _store("stmatrix"), "movmatrix": _OPAQUE,
    "wmma": _OPAQUE, "wmma.load": _load(), "wmma.store": _store(),
    "mma": _OPAQUE, "wgmma": _ORDERED_OPAQUE, "tcgen05": _ORDERED_OPAQUE,
    # parallel synchronisation: barriers, fences, cluster and grid control, warp collectives
    "bar": _ORDERED_OPAQUE, "barrier": _ORDERED_OPAQUE, "membar": _ORDERED, "fence": _ORDERED,
    "griddepcontrol": _ORDERED, "nanosleep": _ORDERED, "setmaxnreg": _ORDERED,
    "clusterlaunchcontrol.try_cancel": MemOp(WRITE, addr=0, mbar=1, side=True),
    "shfl": _OPAQUE, "vote": _OPAQUE, "match": _OPAQUE, "redux": _OPAQUE,
    "activemask": _OPAQUE, "elect": _OPAQUE, "getctarank": _OPAQUE, "mapa": _OPAQUE,
    # control flow (9.7.12; a call may print: vprintf), miscellaneous, stack manipulation
    "bra": _ORDERED, "brx": _ORDERED, "call": _ORDERED, "ret": _ORDERED, "exit": _ORDERED,
    "trap": _ORDERED, "brkpt": _ORDERED, "pmevent": _ORDERED,
    "alloca": _ORDERED_OPAQUE, "stacksave": _ORDERED_OPAQUE, "stackrestore": _ORDERED,
}
_PURE = MemOp()


@lru_cache(maxsize=4096)
def memory_op(name: str) -> MemOp:
    """The row for a full dotted name (``cp.async.bulk.tensor.2d…`` -> ``cp.async.bulk.tensor``);
    an opcode the table does not name is pure arithmetic on its operands."""
    return _longest_prefix(MEMORY_TABLE, name, _PURE)


# opcodes whose memory row depends on their modifiers; every other opcode's row is its own
_MEM_BY_MODIFIERS = frozenset(k.split(".", 1)[0] for k in MEMORY_TABLE if "." in k)


def _row_of(instr) -> MemOp:
    """``memory_op(instr.name)`` without joining the name when the opcode alone decides (the
    passes ask this of every instruction of a kernel)."""
    op = instr.opcode
    if op in _MEM_BY_MODIFIERS:
        return memory_op(instr.name)
    return MEMORY_TABLE.get(op, _PURE)


_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared",
           "shared::cluster": "shared::cluster", "local": "local", "param": "param",
           "param::entry": "param", "param::func": "param", "const": "const"}


def state_spaces(name: str) -> tuple:
    """The state-space modifiers of a name in written order, normalised (``.shared::cta`` is
    ``shared``): a copy names its destination's space first, then its source's."""
    return tuple(_SPACES[p] for p in name.split(".")[1:] if p in _SPACES)


def is_shared(space: str) -> bool:
    """Shared memory of this CTA or of the cluster (``ld.shared::cluster`` reads a peer CTA's
    shared window): either way a scratch array of the kernel's own, not a caller's buffer."""
    return space in ("shared", "shared::cluster")


def mem_space(name: str) -> str:
    """The state space of the address of a ld/st/atom/red-like name (``global``, ``shared``,
    ``shared::cluster``, ``param``, ``local``, ``const``, or ``generic`` when none is written)."""
    sp = state_spaces(name)
    return sp[0] if sp else "generic"


@dataclass(frozen=True, slots=True)
class MemoryAccess:
    """What one instruction does to memory, resolved from its row and its modifiers."""
    kind: str                      # the row's kind ('' for hints and synchronisation objects)
    effect: str                    # at ``addr``: READ, WRITE or READ_WRITE
    addr: int                      # operand index of the address
    space: str                     # the state space at ``addr`` ('tex', 'surf' for image handles)
    src: Optional[int] = None      # a copy's source address operand (read)
    src_space: Optional[str] = None
    mbar: Optional[int] = None     # the completion mbarrier operand, when written
    out: tuple = ()                # operand indices loaded into
    data: tuple = ()               # operand indices stored

    def addresses(self) -> tuple:
        """((operand index, space, effect), …): every address the instruction reaches."""
        out: list = [(self.addr, self.space, self.effect)]
        if self.src is not None:
            out.append((self.src, self.src_space, READ))
        if self.mbar is not None:
            out.append((self.mbar, "shared", READ_WRITE))
        return tuple(out)


@lru_cache(maxsize=4096)
def _resolved(name: str) -> tuple:
    """(row, space at the address, space at the source) of a full name, once per name."""
    row = memory_op(name)
    spaces = state_spaces(name)
    space = row.space or (spaces[0] if spaces else "generic")
    src_space = spaces[1] if len(spaces) > 1 else "generic"
    return row, space, src_space


def _addr_at(ops, i: Optional[int]) -> Optional[int]:
    """``i`` when operand ``i`` is written and is an address (``[...]``), else None."""
    return i if i is not None and i < len(ops) and type(ops[i]) is Addr else None


def _present(ops, idx: tuple) -> tuple:
    """The indices of ``idx`` that are written (negative ones count from the end)."""
    n = len(ops)
    return tuple(i % n for i in idx if -n <= i < n)


def memory_access(instr) -> Optional[MemoryAccess]:
    """What ``instr`` does to memory, or None when it reads and writes none (arithmetic,
    barriers, fences, queries, or a form whose address operand is not written as ``[...]``)."""
    if _row_of(instr).effect == NO_ACCESS:
        return None
    row, space, src_space = _resolved(instr.name)
    ops = instr.operands
    addr = _addr_at(ops, row.addr)
    if addr is None:
        return None
    src = _addr_at(ops, row.src)
    return MemoryAccess(row.kind, row.effect, addr, space, src, src_space if src is not None else None,
                        _addr_at(ops, row.mbar), _present(ops, row.out), _present(ops, row.data))


def address_operand(instr) -> Optional[int]:
    """The index of the operand ``instr`` addresses memory or an image handle through (also for
    queries and hints that move no data: ``txq``, ``suq``, ``applypriority``), or None."""
    return _addr_at(instr.operands, _row_of(instr).addr)


def address_operands(instr) -> tuple:
    """The ``[...]`` operands of an access that form addresses: its address, a copy's source,
    the mbarrier it signals (a wrong one is an illegal access as much as the address is)."""
    acc = memory_access(instr)
    if acc is None:
        return ()
    return tuple(instr.operands[i] for i, _sp, _e in acc.addresses())


_ORDERED_SEMANTICS = frozenset((".volatile", ".relaxed", ".acquire", ".release", ".mmio"))


def is_impure(instr) -> bool:
    """A side effect that must never be moved, merged or removed: stores, atomics, async copies,
    mbarrier operations, barriers and fences, control flow and calls (``vprintf``), traps, and
    any access with memory-model semantics (``ld.volatile``, ``ld.acquire`` …)."""
    row = _row_of(instr)
    if row.side:
        return True
    return row.effect != NO_ACCESS and not _ORDERED_SEMANTICS.isdisjoint(instr.modifiers)


def is_opaque(instr) -> bool:
    """Results that are not a function of this thread's register operands (other lanes'
    values, hidden state, the address map): a replay elsewhere may compute something else."""
    return _row_of(instr).opaque


def written_spaces(name: str) -> tuple:
    """The state spaces a full name writes through its address (``cp.async.ca.shared.global``
    -> ``('shared',)``; ``cp.async.bulk.global.shared::cta`` -> ``('global',)``): asked of
    opcode text where no operands are at hand."""
    row, space, _src = _resolved(name)
    return (space,) if row.effect in (WRITE, READ_WRITE) and row.addr is not None else ()


# opcodes (first words) with a data access the provenance lists (a row with a kind)
ACCESS_OPCODES = frozenset(k.split(".", 1)[0] for k, r in MEMORY_TABLE.items() if r.kind)

# instructions whose type modifier is the type of the data in memory, not a count of bits moved
# (nvcc copies f16 pairs with ld.global.u32): an atomic's or reduction's arithmetic, a WMMA
# fragment's element type
_TYPED_MEMORY = frozenset(("atom", "red", "wmma"))


def memory_typed(instr) -> bool:
    """Does ``instr``'s type say what the memory it reaches holds (``atom.max.s32``,
    ``red.add.u64``, ``wmma.store.d…s32``)?"""
    return instr.opcode in _TYPED_MEMORY


def multicast(instr) -> bool:
    """``multimem.*`` reaches a multicast address (a ``cuMulticastCreate`` object bound to
    several GPUs' memory): on an ordinary buffer it is undefined behaviour."""
    return instr.opcode == "multimem"


# instructions that read a TMA tensor map through an address operand (9.7.9.25-27, 9.7.9.8):
# the bulk tensor copies and reductions, their prefetch, prefetch.tensormap, tensormap.replace,
# fence.proxy.tensormap
_TENSOR_MAP_READERS = ("cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor",
                       "cp.async.bulk.prefetch.tensor", "prefetch.tensormap", "prefetch.param.tensormap",
                       "prefetch.const.tensormap", "prefetch.global.tensormap", "tensormap.",
                       "fence.proxy.tensormap")


def reads_tensor_map(name: str) -> bool:
    """Does ``name`` read a ``CUtensorMap`` (an object the host encodes: a global address, the
    tensor's shape and box) through an address operand?"""
    return name.startswith(_TENSOR_MAP_READERS)


_COPY_SPACES = ("global", "shared", "shared::cta", "shared::cluster")


def reads_shared_unaddressed(name: str) -> bool:
    """Does ``name`` read shared memory other than at its address operand: a bulk copy or
    reduction whose source space is shared (``cp.async.bulk.tensor.2d.global.shared::cta``,
    ``cp.async.bulk.shared::cluster.shared::cta``), or a wgmma reading its operands through
    shared-memory descriptors?  Counts of an array's loads (``ld``, ``ldmatrix``) miss them."""
    if name.startswith("wgmma.mma_async"):
        return True
    if not name.startswith(("cp.async.bulk", "cp.reduce.async.bulk")):
        return False
    spaces = [p for p in name.split(".") if p in _COPY_SPACES]
    return len(spaces) >= 2 and spaces[1].startswith("shared")

