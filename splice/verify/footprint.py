"""The memory model of ``splice verify``: one table, opcode -> the memory footprint of one
execution, who else takes part, and whether the instruction orders memory.

Only one rule lets memory accesses pass each other (``mem-commute``, ``dataflow.py``), and it
asks this table and nothing else.  It needs, of both accesses, a row whose reach is ``THREAD``
(the bytes are this thread's own, at the address this thread holds), a per-thread byte count read
from the modifiers, weak semantics, and the memory consistency model applying (PTX ISA 8.1: it
does not apply to texture, surface and ``ld.global.nc`` accesses).  Everything else is ordered
against every other memory event of the cut:

* ``WARP`` / ``WARPGROUP`` rows are collective: ``ldmatrix`` reads 8·num rows of 16 bytes at
  addresses *other lanes* hold (9.7.14.5.15), ``wmma.load`` a whole fragment with a stride
  (9.7.14.4.3), ``wgmma.mma_async`` the matrices its descriptors encode (9.7.15.5.1.2.2): this
  thread's address says nothing about the bytes they touch;
* ``ASYNC`` rows (``cp.async*``, ``cp.reduce.async.bulk*``, ``st.async``, ``red.async``,
  ``tcgen05``) are not in program order (8.9.1.1): their accesses happen until a completion
  mechanism (``*.wait_group``, an mbarrier) says they are done;
* ``ORDER`` rows (barriers, fences, the wait instructions, mbarrier operations) move no data and
  order the accesses around them;
* atomics and reductions are morally strong read-modify-writes (8.7): ordered events.

An instruction that reaches memory (an address operand, or a row of the roles memory table)
and has no row here cannot be evaluated: the cut is *not proven*, never *equal*.  Row keys are
an opcode and the modifiers that select the row; a name takes the row of its opcode whose
modifiers it has most of, so qualifier order does not matter (``cp.async.bulk.tensor.2d…``,
and verify's canonical names, whose free qualifiers are sorted).

Sections are those of the PTX ISA 9.1 (``docs/verify.md`` lists every row with its section).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..analysis.roles import MemOp, mem_space, memory_op
from ..ptx import model as m

THREAD = "thread"          # this thread's own bytes at its own address
WARP = "warp"              # warp-collective: bytes at addresses other lanes hold
WARPGROUP = "warpgroup"    # four warps (wgmma): descriptors name the bytes
ASYNC = "async"            # an asynchronous operation, outside program order (8.9.1.1)
ORDER = "order"            # no data: an ordering point
NOMEM = "none"             # no memory (registers, possibly other lanes' registers)

READ, WRITE, RMW, NONE = "read", "write", "read-write", "none"

# per-thread bytes: from the type and vector modifiers, fixed, from an operand, or unknown
TYPE, ROW16, OBJECT8, OPERAND, UNKNOWN, NOBYTES = "type", "16 per row", "8", "operand", "unknown", "-"


@dataclass(frozen=True)
class Row:
    key: str                  # opcode.modifier… selecting the row
    section: str              # PTX ISA 9.1 section (number and title)
    reach: str                # THREAD, WARP, WARPGROUP, ASYNC, ORDER, NOMEM
    effect: str               # READ, WRITE, RMW, NONE at the address
    size: str                 # how the per-thread bytes are known (TYPE, ROW16, …)
    model: bool = True        # the memory consistency model applies (8.1)
    event: bool = False       # a memory event: later accesses observe the state after it
    note: str = ""

    @property
    def opcode(self) -> str:
        return self.key.split(".")[0]

    @property
    def mods(self) -> frozenset:
        return frozenset(self.key.split(".")[1:])


def _r(key, section, reach, effect, size, model=True, event=None, note="") -> Row:
    ev = event if event is not None else (effect in (WRITE, RMW) or reach in (ASYNC, ORDER, WARPGROUP))
    return Row(key, section, reach, effect, size, model, ev, note)


ROWS = (
    # 9.7.9 data movement: per-thread loads and stores
    _r("ld", "9.7.9.8 ld", THREAD, READ, TYPE,
       note="vector width x type bytes (8.2.4: a vector access is its scalar elements)"),
    _r("ld.global.nc", "9.7.9.9 ld.global.nc", THREAD, READ, TYPE, model=False,
       note="non-coherent: the memory model does not apply (8.1)"),
    _r("ldu", "9.7.9.10 ldu", THREAD, READ, TYPE, model=False, note="read-only data common to the warp"),
    _r("st", "9.7.9.11 st", THREAD, WRITE, TYPE, note="vector width x type bytes (8.2.4)"),
    _r("st.async", "9.7.9.12 st.async", ASYNC, WRITE, TYPE, note="a remote shared store completing on an mbarrier"),
    _r("st.bulk", "9.7.9.13 st.bulk", ASYNC, WRITE, OPERAND, note="size operand bytes"),
    _r("multimem", "9.7.9.14 multimem.ld_reduce, multimem.st, multimem.red", THREAD, RMW, TYPE, event=True,
       note="a multicast address (8.2.3): the memory of every GPU bound to it"),
    _r("multimem.ld_reduce", "9.7.9.14 multimem.ld_reduce", THREAD, READ, TYPE, event=True),
    _r("prefetch", "9.7.9.15 prefetch, prefetchu", ORDER, NONE, NOBYTES, note="moves no data"),
    _r("prefetchu", "9.7.9.15 prefetch, prefetchu", ORDER, NONE, NOBYTES),
    _r("applypriority", "9.7.9.16 applypriority", ORDER, NONE, NOBYTES),
    _r("discard", "9.7.9.17 discard", THREAD, WRITE, UNKNOWN, note="the cache line's bytes become undefined"),
    _r("createpolicy", "9.7.9.18 createpolicy", NOMEM, NONE, NOBYTES),
    _r("isspacep", "9.7.9.19 isspacep", NOMEM, NONE, NOBYTES),
    _r("cvta", "9.7.9.20 cvta", NOMEM, NONE, NOBYTES),
    _r("mapa", "9.7.9.23 mapa", NOMEM, NONE, NOBYTES),
    _r("getctarank", "9.7.9.24 getctarank", NOMEM, NONE, NOBYTES),
    _r("shfl", "9.7.9.6 shfl.sync", NOMEM, NONE, NOBYTES, note="other lanes' registers, no memory"),
    # 9.7.9.25-28 asynchronous copies: outside program order (8.9.1.1)
    _r("cp.async", "9.7.9.25.3.1 cp.async", ASYNC, WRITE, OPERAND, note="cp-size bytes (4, 8, 16) per thread, "
       "complete at cp.async.wait_group / an mbarrier"),
    _r("cp.async.commit_group", "9.7.9.25.3.2 cp.async.commit_group", ORDER, NONE, NOBYTES),
    _r("cp.async.wait_group", "9.7.9.25.3.3 cp.async.wait_group / cp.async.wait_all", ORDER, NONE, NOBYTES),
    _r("cp.async.wait_all", "9.7.9.25.3.3 cp.async.wait_group / cp.async.wait_all", ORDER, NONE, NOBYTES),
    _r("cp.async.mbarrier.arrive", "9.7.13.15.15 cp.async.mbarrier.arrive", ORDER, RMW, OBJECT8),
    _r("cp.async.bulk", "9.7.9.25.4.1 cp.async.bulk", ASYNC, WRITE, OPERAND, note="size operand bytes"),
    _r("cp.reduce.async.bulk", "9.7.9.25.4.2 cp.reduce.async.bulk", ASYNC, RMW, OPERAND),
    _r("cp.async.bulk.prefetch", "9.7.9.25.4.3 cp.async.bulk.prefetch", ORDER, NONE, NOBYTES),
    _r("cp.async.bulk.tensor", "9.7.9.27.1.2 cp.async.bulk.tensor", ASYNC, WRITE, UNKNOWN,
       note="the tensor map's box"),
    _r("cp.reduce.async.bulk.tensor", "9.7.9.27.1.3 cp.reduce.async.bulk.tensor", ASYNC, RMW, UNKNOWN),
    _r("cp.async.bulk.prefetch.tensor", "9.7.9.27.1.4 cp.async.bulk.prefetch.tensor", ORDER, NONE, NOBYTES),
    _r("cp.async.bulk.commit_group", "9.7.9.27.2.1 cp.async.bulk.commit_group", ORDER, NONE, NOBYTES),
    _r("cp.async.bulk.wait_group", "9.7.9.27.2.2 cp.async.bulk.wait_group", ORDER, NONE, NOBYTES),
    _r("cp", "9.7.9.25 asynchronous copy (any other cp form)", ASYNC, RMW, UNKNOWN),
    _r("tensormap.replace", "9.7.9.28 tensormap.replace", THREAD, RMW, UNKNOWN, note="one field of a 128-byte object"),
    _r("tensormap.cp_fenceproxy", "9.7.13.16 tensormap.cp_fenceproxy", ORDER, WRITE, UNKNOWN),
    _r("tensormap", "9.7.9.28 tensormap", ORDER, RMW, UNKNOWN),
    # 9.7.10 texture, 9.7.11 surface: outside the memory model (8.1)
    _r("tex", "9.7.10.3 tex", THREAD, READ, UNKNOWN, model=False, note="filtering reads several texels"),
    _r("tld4", "9.7.10.4 tld4", THREAD, READ, UNKNOWN, model=False),
    _r("txq", "9.7.10.5 txq", NOMEM, NONE, NOBYTES),
    _r("istypep", "9.7.10.6 istypep", NOMEM, NONE, NOBYTES),
    _r("suld", "9.7.11.1 suld", THREAD, READ, UNKNOWN, model=False),
    _r("sust", "9.7.11.2 sust", THREAD, WRITE, UNKNOWN, model=False),
    _r("sured", "9.7.11.3 sured", THREAD, RMW, UNKNOWN, model=False),
    _r("suq", "9.7.11.4 suq", NOMEM, NONE, NOBYTES),
    # 9.7.12 control flow (the evaluator follows bra; the rest ends or leaves the cut)
    _r("bra", "9.7.12.3 bra", ORDER, NONE, NOBYTES),
    _r("brx", "9.7.12.4 brx.idx", ORDER, NONE, NOBYTES),
    _r("call", "9.7.12.5 call", ORDER, RMW, UNKNOWN, note="a body the checker does not have may touch anything"),
    _r("ret", "9.7.12.6 ret", ORDER, NONE, NOBYTES),
    _r("exit", "9.7.12.7 exit", ORDER, NONE, NOBYTES),
    # 9.7.13 parallel synchronisation and communication
    _r("bar", "9.7.13.1 bar, barrier", ORDER, NONE, NOBYTES),
    _r("barrier", "9.7.13.1 bar, barrier", ORDER, NONE, NOBYTES),
    _r("bar.warp", "9.7.13.2 bar.warp.sync", ORDER, NONE, NOBYTES),
    _r("barrier.cluster", "9.7.13.3 barrier.cluster", ORDER, NONE, NOBYTES),
    _r("membar", "9.7.13.4 membar / fence", ORDER, NONE, NOBYTES),
    _r("fence", "9.7.13.4 membar / fence", ORDER, NONE, NOBYTES),
    _r("atom", "9.7.13.5 atom", THREAD, RMW, TYPE, note="morally strong (8.7): an ordered event"),
    _r("red", "9.7.13.6 red", THREAD, RMW, TYPE, note="morally strong (8.7): an ordered event"),
    _r("red.async", "9.7.13.7 red.async", ASYNC, RMW, TYPE),
    _r("vote", "9.7.13.9 vote.sync", NOMEM, NONE, NOBYTES),
    _r("match", "9.7.13.10 match.sync", NOMEM, NONE, NOBYTES),
    _r("activemask", "9.7.13.11 activemask", NOMEM, NONE, NOBYTES),
    _r("redux", "9.7.13.12 redux.sync", NOMEM, NONE, NOBYTES),
    _r("griddepcontrol", "9.7.13.13 griddepcontrol", ORDER, NONE, NOBYTES),
    _r("elect", "9.7.13.14 elect.sync", NOMEM, NONE, NOBYTES),
    _r("mbarrier", "9.7.13.15 mbarrier", ORDER, RMW, OBJECT8, note="a 64-bit object in shared memory"),
    _r("mbarrier.pending_count", "9.7.13.15.17 mbarrier.pending_count", NOMEM, NONE, NOBYTES),
    _r("clusterlaunchcontrol", "9.7.13.17 clusterlaunchcontrol.try_cancel", ASYNC, WRITE, UNKNOWN),
    # 9.7.14 warp-level matrix instructions: collective
    _r("wmma", "9.7.14.4.5 wmma.mma", NOMEM, NONE, NOBYTES),
    _r("wmma.load", "9.7.14.4.3 wmma.load", WARP, READ, UNKNOWN, note="the fragment's rows, at p plus stride"),
    _r("wmma.store", "9.7.14.4.4 wmma.store", WARP, WRITE, UNKNOWN),
    _r("mma", "9.7.14.5.14 mma", NOMEM, NONE, NOBYTES),
    _r("ldmatrix", "9.7.14.5.15 ldmatrix", WARP, READ, ROW16, note=".x1/.x2/.x4: 8, 16, 32 rows of 16 "
       "bytes at the addresses lanes 0-7, 0-15, 0-31 hold; .trans changes no byte"),
    _r("stmatrix", "9.7.14.5.16 stmatrix", WARP, WRITE, ROW16, note="as ldmatrix, written"),
    _r("movmatrix", "9.7.14.5.17 movmatrix", NOMEM, NONE, NOBYTES),
    # 9.7.15 wgmma: descriptors name shared memory, read in the async proxy (9.7.15.4)
    _r("wgmma.mma_async", "9.7.15.5.2 wgmma.mma_async", WARPGROUP, READ, UNKNOWN,
       note="A (a descriptor) and B in shared memory (9.7.15.5.1.2.2), read until wgmma.wait_group"),
    _r("wgmma.fence", "9.7.15.7.1 wgmma.fence", ORDER, NONE, NOBYTES),
    _r("wgmma.commit_group", "9.7.15.7.2 wgmma.commit_group", ORDER, NONE, NOBYTES),
    _r("wgmma.wait_group", "9.7.15.7.3 wgmma.wait_group", ORDER, NONE, NOBYTES),
    _r("wgmma", "9.7.15 wgmma (any other form)", ORDER, RMW, UNKNOWN),
    # 9.7.16 tcgen05: tensor memory and shared memory through descriptors, asynchronous
    _r("tcgen05", "9.7.16 tcgen05", ASYNC, RMW, UNKNOWN),
    # 9.7.17 stack manipulation, 9.7.19 miscellaneous
    _r("alloca", "9.7.17.3 alloca", ORDER, WRITE, OPERAND, note="each execution a new block of the stack"),
    _r("stacksave", "9.7.17.1 stacksave", ORDER, READ, NOBYTES),
    _r("stackrestore", "9.7.17.2 stackrestore", ORDER, WRITE, NOBYTES),
    _r("brkpt", "9.7.19.1 brkpt", ORDER, NONE, NOBYTES),
    _r("nanosleep", "9.7.19.2 nanosleep", ORDER, NONE, NOBYTES),
    _r("pmevent", "9.7.19.3 pmevent", ORDER, NONE, NOBYTES),
    _r("trap", "9.7.19.4 trap", ORDER, NONE, NOBYTES),
    _r("setmaxnreg", "9.7.19.5 setmaxnreg", ORDER, NONE, NOBYTES),
)

_BY_OPCODE: dict = {}
for _row in ROWS:
    _BY_OPCODE.setdefault(_row.opcode, []).append(_row)

# bytes of one element of each type a memory instruction names
TYPE_BYTES = {"b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
              "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "s64": 8,
              "u64": 8, "f64": 8, "b128": 16}
VECTORS = {"v2": 2, "v4": 4, "v8": 8}
ORDERED_SEMANTICS = frozenset(("volatile", "relaxed", "acquire", "release", "mmio"))
# spaces no other thread can address: per-thread disjoint bytes are disjoint for every thread
THREAD_PRIVATE_SPACES = frozenset(("local",))


@lru_cache(maxsize=4096)
def row_of(name: str) -> Optional[Row]:
    """The row of an instruction's full dotted name (written or canonical): among its opcode's
    rows, the one whose modifiers the name has the most of (all of them)."""
    parts = name.split(".")
    mods = frozenset(parts[1:])
    best = None
    for row in _BY_OPCODE.get(parts[0], ()):
        if row.mods <= mods and (best is None or len(row.mods) > len(best.mods)):
            best = row
    return best


def needs_row(instr) -> bool:
    """Does ``instr`` reach memory or order it, so that the checker must have its row?  Anything
    the roles memory table names (not as pure arithmetic), and anything with an address
    operand ``[...]``."""
    if memory_op(instr.name) != MemOp():
        return True
    return any(type(o) is m.Addr for o in instr.operands)


@dataclass(frozen=True)
class Footprint:
    """One access resolved from its row and modifiers."""
    row: Row
    space: str                     # the state space at the address (roles.mem_space)
    bytes: Optional[int]           # this thread's bytes at its address (None: unknown)
    weak: bool                     # no .volatile/.relaxed/.acquire/.release/.mmio

    @property
    def private(self) -> bool:
        """The only accesses rule mem-commute may move: this thread's own bytes, known in
        number, weak, under the memory model, a plain read or write."""
        r = self.row
        return r.reach == THREAD and r.effect in (READ, WRITE) and r.model and self.weak \
            and self.bytes is not None and r.opcode in ("ld", "st")


@lru_cache(maxsize=4096)
def footprint(name: str) -> Optional[Footprint]:
    """The footprint of a full dotted name, or None when the table has no row for it."""
    row = row_of(name)
    if row is None:
        return None
    mods = name.split(".")[1:]
    return Footprint(row, mem_space(name), _bytes(row, mods), ORDERED_SEMANTICS.isdisjoint(mods))


def _bytes(row: Row, mods: list) -> Optional[int]:
    if row.size == ROW16:
        return 16
    if row.size == OBJECT8:
        return 8
    if row.size != TYPE:
        return None
    types = [TYPE_BYTES[q] for q in mods if q in TYPE_BYTES]
    if len(types) != 1:
        return None                   # no type, or several (the checker does not guess)
    vec = [VECTORS[q] for q in mods if q in VECTORS]
    return types[0] * (vec[0] if vec else 1)


def is_event(name: str) -> bool:
    """Does an instruction with a register result also change the memory state (an atomic, a
    barrier with a reduction, an mbarrier query, an asynchronous or warpgroup operation, a
    load with ordered semantics)?  Two of them are never one value; nothing moves past them."""
    fp = footprint(name)
    if fp is None:
        return False
    return fp.row.event or (fp.row.effect == READ and not fp.weak)


def reads_memory(name: str) -> bool:
    """Is an instruction's register result loaded from memory (it observes the memory state)?"""
    fp = footprint(name)
    return fp is not None and fp.row.effect in (READ, RMW) and fp.row.reach != NOMEM
