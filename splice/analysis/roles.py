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
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..ptx.model import ParenList, Reg
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
    "wgmma.mma_async": RW0, "wgmma.fence": NONE, "wgmma.commit_group": NONE,
    "wgmma.wait_group": NONE,
}


@lru_cache(maxsize=4096)
def role_of(name: str) -> str:
    """The role of an instruction by full dotted name (``st.global.u32`` -> ``NONE``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        r = ROLE_TABLE.get(".".join(parts[:i]))
        if r is not None:
            return r
    return WRITE0


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


_MMA_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")
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
        if role == RW0:
            written_in_dest(d, uses)
        for o in ops[1:]:
            _collect(o, uses)
    return defs, uses


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


def mem_space(name: str):
    """The state space of a ld/st/atom/red-like opcode (``global``, ``shared``, ``param``,
    ``local``, ``const``, or ``generic`` when none is written)."""
    for sp in ("global", "shared", "param", "local", "const"):
        if "." + sp in name:
            return sp
    return "generic"


_VEC = re.compile(r"\.v(\d)\b")
_WIDTH = re.compile(r"\.[bsuf](8|16|32|64|128)\b")


def wmma_memory(node) -> str:
    """``"ld"`` for ``wmma.load…``, ``"st"`` for ``wmma.store…``, ``""`` for any other node: the
    CUDA WMMA API reaches memory only through these fragment loads and stores (``wmma.mma`` is
    pure), so every pass that asks "does this touch memory" asks here."""
    if node.opcode != "wmma" or not node.modifiers:
        return ""
    return {".load": "ld", ".store": "st"}.get(node.modifiers[0], "")


def access_bytes(name: str) -> int:
    """Bytes one lane moves with a ld/st opcode (``ld.weak.global.ca.v4.u32`` -> 16)."""
    v = _VEC.search(name)
    ws = _WIDTH.findall(name)
    w = int(ws[-1]) if ws else 32
    return (int(v.group(1)) if v else 1) * w // 8
