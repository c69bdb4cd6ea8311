"""The cut engine's view of a kernel: ``splice.analysis.Kernel`` when it is available, else a
small built-in stand-in with the same contract (statements, phases, cut ABI).

Only what the cut engine reads is implemented here: ``stmts``, ``pos_of``, ``reg_type``,
``phases`` (index, first, last, mma, shape, weight_bytes, a/b/c/d regs), ``abi(first, last)``,
``phase_abi(i)`` and ``defs_uses(node)``.  The stand-in's def-use is the generic operand walk
(operand 0 is the destination unless the opcode writes no register); liveness is the
conservative straight-line one (a register is live out of a cut when any statement after the
cut, or inside a loop enclosing the cut, reads it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m

MMA_PREFIX = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"

# opcodes whose first operand is not a register destination
_NO_DEF = {
    "st", "sust", "sured", "bar", "barrier", "membar", "fence", "bra", "brx", "ret", "exit", "red",
    "prefetch", "prefetchu", "trap", "brkpt", "nanosleep", "cp", "stmatrix", "wgmma", "call",
    "griddepcontrol", "pmevent", "setmaxnreg", "elect", "applypriority", "discard", "multimem",
    "tensormap", "cp.async", "st.async", "red.async", "mbarrier.init", "mbarrier.inval",
}


def _regs(op, out):
    if isinstance(op, m.Reg):
        if not op.special:
            out.append(op.name)
    elif isinstance(op, (m.Vec, m.Addr, m.ParenList)):
        for x in op.items:
            _regs(x, out)
    elif isinstance(op, m.Offset):
        _regs(op.base, out)
    elif isinstance(op, m.Not):
        _regs(op.operand, out)
    elif isinstance(op, m.Pair):
        _regs(op.first, out)
        _regs(op.second, out)
    return out


def defs_uses(node) -> tuple:
    """(defs, uses) register names of one statement (generic operand walk)."""
    if not isinstance(node, m.Instruction):
        return (), ()
    uses = []
    defs = []
    if node.guard is not None:
        uses.append(node.guard.pred)
    ops = node.operands
    op = node.opcode
    writes = ops and op not in _NO_DEF and not isinstance(ops[0], m.Addr) \
        and not (op == "mbarrier" and ".init" in node.modifiers)
    if writes:
        _regs(ops[0], defs)
        rest = ops[1:]
    else:
        rest = ops
    for o in rest:
        _regs(o, uses)
    return tuple(defs), tuple(uses)


@dataclass
class AbiReg:
    reg: str
    type: str
    role: str
    index: int


@dataclass
class CutABI:
    first: int
    last: int
    live_in: list
    live_out: list
    defs: set = field(default_factory=set)
    uses: set = field(default_factory=set)
    values: dict = field(default_factory=dict)


@dataclass
class Phase:
    index: int
    first: int
    last: int
    mma: int
    shape: tuple
    naive_shape: tuple = ()
    chains: int = 0
    grid: str = "full"
    weight_bytes: Optional[tuple] = None
    bias_bytes: Optional[tuple] = None
    slot_stride: Optional[int] = None
    epilogue: int = 0
    a_regs: list = field(default_factory=list)
    b_regs: list = field(default_factory=list)
    c_regs: list = field(default_factory=list)
    d_regs: list = field(default_factory=list)


def _vec_regs(op) -> list:
    return [x.name for x in op.items if isinstance(x, m.Reg)] if isinstance(op, m.Vec) else []


class BuiltinKernel:
    """A minimal ``Kernel`` (see the module docstring)."""

    def __init__(self, module: m.Module, entry: str):
        from ..ptx import attach

        self.module = module
        self.entry = entry
        self.function = module.function(entry)
        self.stmts = attach(module, entry)
        self._pos = {s.n: i for i, s in enumerate(self.stmts) if s.n is not None}
        self._types = {}
        self._du = [defs_uses(s.node) for s in self.stmts]
        for s in self.stmts:
            if isinstance(s.node, m.Decl) and s.node.space == ".reg":
                for d in s.node.declarators:
                    if d.count is not None:
                        self._types[("range", d.name)] = s.node.type
                    else:
                        self._types[d.name] = s.node.type
        self._phases = None

    @classmethod
    def load(cls, path, entry=None):
        from ..ptx import parse_file

        mod = parse_file(path)
        if entry is None:
            entry = mod.entries()[0].name
        return cls(mod, entry)

    # --------------------------------------------------------------------------------------
    def pos_of(self, n: int) -> int:
        return self._pos[n]

    def reg_type(self, name: str) -> Optional[str]:
        t = self._types.get(name)
        if t:
            return t
        base = name.rstrip("0123456789")
        return self._types.get(("range", base))

    def defs_uses(self, node):
        return defs_uses(node)

    # --------------------------------------------------------------------------------------
    @property
    def phases(self) -> list:
        if self._phases is None:
            self._phases = self._find_phases()
        return self._phases

    def _find_phases(self) -> list:
        runs = []
        cur = []
        last_n = None
        for s in self.stmts:
            if s.n is None:
                continue
            is_mma = isinstance(s.node, m.Instruction) and s.node.name == MMA_PREFIX
            if is_mma and cur and s.n == last_n + 1:
                cur.append(s)
            elif is_mma:
                if cur:
                    runs.append(cur)
                cur = [s]
            else:
                if cur:
                    runs.append(cur)
                cur = []
            last_n = s.n
        if cur:
            runs.append(cur)
        defs_at = {}
        for i, (d, _u) in enumerate(self._du):
            for r in d:
                defs_at.setdefault(r, []).append(i)
        out = []
        for k, run in enumerate(runs, 1):
            a, b, c, dd = [], [], [], []
            for s in run:
                ops = s.node.operands
                for lst, op in ((dd, ops[0]), (a, ops[1]), (b, ops[2]), (c, ops[3])):
                    for r in _vec_regs(op):
                        if r not in lst:
                            lst.append(r)
            quads = {tuple(_vec_regs(s.node.operands[1])) for s in run}
            pairs = {tuple(_vec_regs(s.node.operands[2])) for s in run}
            shape = (16 * len(quads), 8 * len(pairs), 32)
            wb = self._weight_bytes(b, defs_at, self.pos_of(run[0].n))
            out.append(Phase(k, run[0].n, run[-1].n, len(run), shape, shape, len(run), "full", wb,
                             a_regs=a, b_regs=b, c_regs=c, d_regs=dd))
        return out

    def _weight_bytes(self, b_regs, defs_at, before):
        offs = []
        for r in b_regs:
            ds = [i for i in defs_at.get(r, ()) if i < before]
            if not ds:
                continue
            node = self.stmts[ds[-1]].node
            if not (node.opcode == "ld" and ".v4" in node.modifiers and isinstance(node.operands[1], m.Addr)):
                continue
            addr = node.operands[1]
            off = addr.offset
            base = addr.base
            if isinstance(base, m.Reg):
                bd = [i for i in defs_at.get(base.name, ()) if i < ds[-1]]
                if bd:
                    bn = self.stmts[bd[-1]].node
                    if bn.opcode == "add" and len(bn.operands) == 3 and isinstance(bn.operands[2], m.Imm):
                        off += int(bn.operands[2].value)
            offs.append(off)
        if not offs:
            return None
        return (min(offs), max(offs) + 12)

    # --------------------------------------------------------------------------------------
    def abi(self, first: int, last: int, roles: Optional[dict] = None) -> CutABI:
        i, j = self.pos_of(first), self.pos_of(last)
        defined = set()
        live_in = []
        all_defs, all_uses = set(), set()
        for k in range(i, j + 1):
            d, u = self._du[k]
            for r in u:
                all_uses.add(r)
                if r not in defined and r not in live_in:
                    live_in.append(r)
            guarded = getattr(self.stmts[k].node, "guard", None) is not None
            for r in d:
                all_defs.add(r)
                if not guarded:
                    defined.add(r)
        # a loop enclosing the cut: a label before it that a branch after it targets
        lo = len(self.stmts)
        labels = {s.node.name: p for p, s in enumerate(self.stmts[:i]) if isinstance(s.node, m.Label)}
        for p in range(j + 1, len(self.stmts)):
            node = self.stmts[p].node
            if isinstance(node, m.Instruction) and node.opcode == "bra":
                tgt = node.operands[0]
                tgt = getattr(tgt, "name", str(tgt))
                if tgt in labels:
                    lo = min(lo, labels[tgt])
        used_after = set()
        for p in list(range(j + 1, len(self.stmts))) + list(range(lo, i)):
            used_after.update(self._du[p][1])
        live_out = [r for r in self._def_order(i, j) if r in used_after]
        roles = roles or {}
        def mk(regs, default):
            counters = {}
            out = []
            for r in regs:
                role = roles.get(r, default)
                n = counters.get(role, 0)
                counters[role] = n + 1
                out.append(AbiReg(r, self.reg_type(r) or ".b32", role, n))
            return out
        if roles:
            order = {"a": 0, "b": 1, "c": 2}
            live_in = sorted(live_in, key=lambda r: order.get(roles.get(r, "in"), 3))
        return CutABI(first, last, mk(live_in, "in"), mk(live_out, "out"), all_defs, all_uses, {})

    def _def_order(self, i, j):
        seen = []
        for k in range(i, j + 1):
            for r in self._du[k][0]:
                if r not in seen:
                    seen.append(r)
        return seen

    def phase_abi(self, i: int) -> CutABI:
        ph = next(p for p in self.phases if p.index == i)
        roles = {}
        for role, regs in (("d", ph.d_regs), ("c", ph.c_regs), ("b", ph.b_regs), ("a", ph.a_regs)):
            for r in regs:
                roles[r] = role
        return self.abi(ph.first, ph.last, roles)


def load_kernel(path, entry=None, module: Optional[m.Module] = None, builtin: bool = False):
    """``splice.analysis.Kernel.load`` when the analysis package provides it, else the stand-in
    (``builtin=True`` forces the stand-in)."""
    if not builtin:
        try:
            from ..analysis import Kernel  # type: ignore
        except ImportError:
            Kernel = None
        if Kernel is not None:
            return Kernel.load(path, entry=entry)
    if module is not None:
        return BuiltinKernel(module, entry or module.entries()[0].name)
    return BuiltinKernel.load(path, entry)
