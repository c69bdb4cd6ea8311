"""Symbolic evaluation of PTX statements into the canonical DAGs of ``canon.Graph``.

``Evaluator.run(stmts)`` walks a straight-line (or forward-branching) list of statements the way
the hardware would, with a register environment that maps each register to a value number and
a memory-state token that loads observe and stores, barriers and fences replace.  What an
instruction writes and reads comes from ``splice.analysis.roles`` (the one operand-role table);
this module only decides what value each operand has.

* a guarded instruction writes ``select(guard, new, old)`` (a guarded store: a selected memory
  state);
* brace lists are split per element: ``ld.v4`` gives four element nodes, ``mov.b32 {lo, hi}, r``
  two ``part`` nodes, mma's D one element per register;
* forward branches are if-converted: each label merges the register environments and memory
  states reaching it with selects on the path conditions (rule if-convert); a backward branch
  (a loop), a branch out of the statements, ``ret``/``exit`` or an unknown ``call`` stop the
  evaluation with a reason (``Unsupported``);
* ``call`` to a ``.func`` given in ``funcs`` is inlined: its ``.param`` arguments and return
  slots are splice's own storage (rule splice-private) and are forwarded, not put in memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..analysis import carry
from ..analysis.roles import CALL, MMA, NONE, RW0, fresh_wgmma, is_branch, is_exit, role_of
from ..cut.native import REG_WIDTH, rename_node
from ..ptx import model as m
from . import footprint as fp
from .budget import Budget
from .canon import Graph, int_add_width
from .lanes import Lanes

PRIVATE_SYMS = ("__splice_ret",)
_TIME_REGS = ("%clock", "%globaltimer", "%pm")
CARRY = "CC.CF"     # the carry flag (add.cc writes it, addc reads it): no register, never an output


class Unsupported(Exception):
    """The statements use something the checker does not model (a loop, a branch out of the
    cut, an exit, an unknown call): the cut can only be *not proven*."""

    def __init__(self, reason: str, where=None):
        super().__init__(reason)
        self.reason = reason
        self.where = where


@dataclass
class State:
    env: dict
    mem: int
    reach: int                                   # path condition (value number of a predicate)
    params: dict = field(default_factory=dict)   # splice-private storage: key -> value


class Evaluator:
    """One side of a cut.  ``origin(node)`` gives the location to record for a statement (a
    statement number or a native line); ``origins`` maps each value number to the first
    location that produced it on this side."""

    def __init__(self, g: Graph, origin, funcs=None, func_origin=None, glue=None, aliases=None,
                 lanes=None, budget=None):
        self.g = g
        self.lanes = lanes if lanes is not None else Lanes(g)
        self.budget = budget if budget is not None else Budget(None)
        self.aliases = aliases or {}
        self.origin = origin
        self.funcs = funcs or {}
        self.func_origin = func_origin or {}
        self.glue = glue or (lambda s: False)
        self.origins: dict = {}
        self.in_func = False
        self.exits: list = []
        self.clock_reads = 0
        self.declared: set = set()
        self.written: list = []
        self.private_mem: dict = {}
        self.true = g.pred(True)

    # ---- values of operands ------------------------------------------------------------------
    def read(self, st: State, name: str) -> int:
        v = st.env.get(name)
        if v is None:
            if name in self.declared:
                v = self.g.leaf("undef", name)
            elif name in self.aliases:
                v = self.g.leaf("sreg", self.aliases[name])
            else:
                v = self.g.leaf("in", name)
            st.env[name] = v
        return v

    def value(self, st: State, op, width=None):
        t = type(op)
        g = self.g
        if t is m.Reg:
            if op.special and op.name.startswith(_TIME_REGS):     # a new value at every read
                self.clock_reads += 1
                return g.leaf("undef", (op.name, id(self), self.clock_reads))
            return g.leaf("sreg", op.name) if op.special else self.read(st, op.name)
        if t is m.Imm:
            return imm(g, op.text, width)
        if t is m.Sym:
            if op.name in st.env or op.name in self.declared:
                return self.read(st, op.name)
            return g.leaf("sym", op.name)
        if t is m.Not:
            return g.neg(self.value(st, op.operand, width))
        if t is m.Vec:
            return tuple(self.value(st, x, width) for x in op.items)
        if t is m.Offset:
            return g.ioff(width or 64, self.value(st, op.base), int(m.parse_number(op.imm)))
        if t is m.Addr:
            return self.address(st, op)
        if t is m.ParenList:
            return tuple(self.value(st, x, width) for x in op.items)
        raise Unsupported(f"operand {op} is not modelled")

    def address(self, st: State, op: m.Addr):
        g = self.g
        if len(op.items) != 1:
            return g.mem("addrlist", "", tuple(self.value(st, x) for x in op.items))
        first = op.items[0]
        base = first.base if isinstance(first, m.Offset) else first
        off = int(m.parse_number(first.imm)) if isinstance(first, m.Offset) else 0
        return g.addr(self.value(st, base), off, 64)

    # ---- statements --------------------------------------------------------------------------
    def run(self, stmts, state: Optional[State] = None, start: Optional[str] = None) -> Optional[State]:
        """The state after ``stmts``, entered at their top or, with ``start``, at that label
        (every register then holds what the code that branched there left: an input)."""
        items: list = []
        self._flatten(stmts, {}, items, top=True)
        labels = {s.name: i for i, s in enumerate(items) if isinstance(s, m.Label)}
        if start is not None and start not in labels:
            raise Unsupported(f"label {start} is a branch target from outside the cut, and the "
                              f"statements here have no label {start} at their top level")
        begin = labels[start] if start is not None else 0
        st = state or State({}, self.g.leaf("mem0", None), self.true)
        pending: dict = {}
        for i, s in enumerate(items):
            if i < begin:
                continue
            if isinstance(s, m.Label):
                st = self._merge(st, pending.pop(s.name, []))
                continue
            if not isinstance(s, m.Instruction):
                continue
            if st is None:
                continue                      # unreachable after an unconditional branch
            if is_branch(s.opcode):
                st = self._branch(st, s, i, labels, pending)
                continue
            if self.in_func and s.opcode == "ret" and s.guard is None:
                if pending:
                    raise Unsupported("return from a .func with branches still to merge", self.origin(s))
                break                         # the end of an inlined .func: the rest is unreachable
            if not self.in_func and s.opcode in ("ret", "exit"):
                st = self._leave(st, s)
                continue
            self.instruction(st, s)
        if pending:
            raise Unsupported("a branch target was not reached", None)
        if st is None and not self.exits:
            raise Unsupported("no path reaches the end of the statements")
        return st

    def _leave(self, st: State, s, target: Optional[str] = None):
        """``ret``/``exit`` of the kernel inside the cut (``target`` None): the thread ends; only
        its memory (and under which condition it left) remains observable.  A branch to label
        ``target`` outside the statements: the thread goes on there with this state (a side
        exit, compared per target by ``compare``)."""
        if s.guard is None:
            self.exits.append((target, st))
            return None
        p = self.read(st, s.guard.pred)
        if s.guard.negated:
            p = self.g.neg(p)
        env = dict(st.env) if target is not None else {}
        self.exits.append((target, State(env, st.mem, self._and(st.reach, p))))
        st.reach = self._and(st.reach, self.g.neg(p))
        return st

    def side_exits(self) -> dict:
        """label outside the statements -> the states of the branches that leave for it."""
        out: dict = {}
        for target, x in self.exits:
            if target is not None:
                out.setdefault(target, []).append(x)
        return out

    def outcome(self, st):
        """(memory, exit condition or None): the final memory over every way out of the
        statements — the end, or a ``ret``/``exit`` inside them — and when a thread leaves."""
        ends = [x for target, x in self.exits if target is None]
        if not ends:
            return (st.mem if st is not None else None), None
        conds = [x.reach for x in ends]
        mems = [x.mem for x in ends]
        left = conds[0]
        for c in conds[1:]:
            left = self.g.op("or.pred", (left, c))
        if st is not None:
            conds, mems = conds + [st.reach], mems + [st.mem]
        return self._select_chain(conds, mems), left

    def _flatten(self, stmts, renames: dict, out: list, top: bool = False, labels=None):
        """Statements in program order.  A register declared in a nested ``{ }`` scope is another
        register than a same-named one outside: it is renamed ``name@scope`` inside.  Labels are
        local to their scope too (CUTLASS's inline asm repeats ``LAB_WAIT:``/``DONE:`` in every
        wait block): a nested scope's labels become ``name@scope``, so a branch reaches its own."""
        local = {}
        labels = dict(labels or {})
        for it in stmts:
            if isinstance(it, m.Decl) and it.space == ".reg":
                for d in it.declarators:
                    names = [f"{d.name}{k}" for k in range(d.count)] if d.count is not None else [d.name]
                    for n in names:
                        local[n] = n if top else f"{n}@{len(self.declared)}"
                        self.declared.add(local[n])
            elif isinstance(it, m.Label) and not top:
                labels[it.name] = f"{it.name}@{id(stmts)}"
        inner = {**renames, **{k: v for k, v in local.items() if k != v}}
        for it in stmts:
            if isinstance(it, m.Block):
                self._flatten(it.items, inner, out, labels=labels)
            elif isinstance(it, m.Instruction) and (inner or labels):
                new = rename_node(it, inner, labels)
                out.append(m.Instruction(new.guard, new.opcode, new.modifiers, new.operands, it.span, it.line))
            elif isinstance(it, m.Label) and it.name in labels:
                out.append(m.Label(labels[it.name]))
            elif not isinstance(it, m.Decl):
                out.append(it)

    def _branch(self, st, s, i, labels, pending):
        if s.opcode == "brx":    # its first operand is the index, its targets a .branchtargets list
            raise Unsupported("brx.idx: an indirect branch through a jump table (the checker follows "
                              "direct branches only)", self.origin(s))
        target = s.operands[0].name if s.operands and isinstance(s.operands[0], m.Sym) else None
        shown = target.split("@")[0] if target else target   # a nested scope's label@<scope>: its own name
        if target not in labels:
            if self.in_func:
                raise Unsupported(f"branch to {shown}, outside the function body", self.origin(s))
            return self._leave(st, s, target)      # a side exit: compared per target
        if labels[target] < i:
            raise Unsupported(f"loop: backward branch to {shown}", self.origin(s))
        if s.guard is None:
            pending.setdefault(target, []).append(st)
            return None
        p = self.read(st, s.guard.pred)
        if s.guard.negated:
            p = self.g.neg(p)
        taken = State(dict(st.env), st.mem, self._and(st.reach, p), dict(st.params))
        pending.setdefault(target, []).append(taken)
        st.reach = self._and(st.reach, self.g.neg(p))
        return st

    def _and(self, a, b):
        if a == self.true:
            return b
        return self.g.op("and.pred", (a, b))

    def _merge(self, cur, incoming):
        states = ([cur] if cur is not None else []) + incoming
        if not states:
            return None
        if len(states) == 1:
            return states[0]
        g = self.g
        keys = set()
        for s in states:
            keys.update(s.env)
        env = {}
        for k in keys:
            vals = [s.env.get(k) for s in states]
            if any(v is None for v in vals):
                default = g.leaf("undef" if k in self.declared else "in", k)
                vals = [default if v is None else v for v in vals]
            env[k] = self._select_chain([s.reach for s in states], vals)
        mem = self._select_chain([s.reach for s in states], [s.mem for s in states])
        reach = states[0].reach
        for s in states[1:]:
            reach = g.op("or.pred", (reach, s.reach))
        params = {}
        for s in states:
            params.update(s.params)
        return State(env, mem, reach, params)

    def _select_chain(self, conds, vals):
        v = vals[-1]
        for c, x in zip(reversed(conds[:-1]), reversed(vals[:-1])):
            v = self.g.sel(c, x, v)
        return v

    # ---- one instruction ---------------------------------------------------------------------
    def instruction(self, st: State, s: m.Instruction):
        self.budget.check()
        name = s.opcode
        if fp.needs_row(s) and fp.footprint(s.name) is None:
            raise Unsupported(f"{s.name}: no row in the memory footprint table (splice/verify/footprint.py): "
                              "what it reads and writes is not modelled", self.origin(s))
        if is_exit(s.name):
            raise Unsupported(f"{s.opcode}: control leaves the cut", self.origin(s))
        if name == "call":
            return self._call(st, s)
        if name in ("ld", "st") and ".param" in s.modifiers and self._param_access(st, s):
            return None
        role = role_of(s.name)
        if name == "mov" and len(s.operands) == 2 and role not in (NONE, CALL):
            return self._mov(st, s)
        if role == NONE or not s.operands:
            return self._effect(st, s)
        return self._compute(st, s, role)

    def _record(self, v, s):
        if isinstance(v, tuple):
            for x in v:
                self._record(x, s)
            return
        self.origins.setdefault(v, self.origin(s))

    def _guarded(self, st: State, s, name: str, new: int) -> int:
        if s.guard is None:
            return new
        p = self.read(st, s.guard.pred)
        if s.guard.negated:
            p = self.g.neg(p)
        return self.g.sel(p, new, self.read(st, name))

    def write(self, st: State, s, name: str, v: int):
        v = self._guarded(st, s, name, v)
        self._record(v, s)
        st.env[name] = v
        self.written.append(name)

    def _dest_regs(self, op):
        """(element index, register name) of a destination operand; '_' sinks skipped."""
        if isinstance(op, (m.Reg, m.Sym)):
            return [(None, op.name)]
        if isinstance(op, m.Vec):
            return [(k, x.name) for k, x in enumerate(op.items)
                    if isinstance(x, (m.Reg, m.Sym)) and x.name != "_"]
        if isinstance(op, m.Pair):              # d|p, {d0, …}|p: the predicate is the last element
            first = self._dest_regs(op.first)
            n = len(op.first.items) if isinstance(op.first, m.Vec) else 1
            return [(k if k is not None else 0, r) for k, r in first] + \
                [(n, r) for _k, r in self._dest_regs(op.second)]
        raise Unsupported(f"destination {op} is not modelled")

    def _mov(self, st, s):
        g = self.g
        d, src = s.operands
        width = type_width(s.modifiers)
        if isinstance(src, m.Vec):                       # pack
            if not width:
                raise Unsupported(f"{s.opcode}{''.join(s.modifiers)}: brace list without a width", self.origin(s))
            w = width // len(src.items)
            v = g.pack(width, w, tuple(self.value(st, x, w) for x in src.items))
            for _k, r in self._dest_regs(d):
                self.write(st, s, r, v)
            return
        v = self.value(st, src, width)
        if isinstance(d, m.Vec):                         # unpack
            if not width:
                raise Unsupported(f"{s.opcode}{''.join(s.modifiers)}: brace list without a width", self.origin(s))
            w = width // len(d.items)
            for k, r in self._dest_regs(d):
                self.write(st, s, r, g.part(width, w, k, v))
            return
        if isinstance(v, tuple):
            raise Unsupported(f"mov of {src} is not modelled", self.origin(s))
        self.write(st, s, d.name if isinstance(d, (m.Reg, m.Sym)) else str(d), v)

    def _compute(self, st: State, s, role):
        g = self.g
        name = canonical_name(s)
        width = type_width(s.modifiers)
        ops = s.operands
        srcs = tuple(self.value(st, o, width) for o in ops[1:])
        if role == RW0 and not fresh_wgmma(s):      # scale-d 0: D = A·B, the old D unread
            srcs = (self.value(st, ops[0], width),) + srcs
        cc = carry.touches(s)
        if cc == "r":             # addc/subc/madc: the carry flag is one more input
            srcs = srcs + (self.read(st, CARRY),)
        aw = int_add_width(s.opcode, s.modifiers)
        if aw and not isinstance(srcs[0], tuple) and not isinstance(srcs[1], tuple):
            v = self._int_add(s.opcode, aw, srcs)
        elif s.opcode == "setp" and _tid_bound(g, s, srcs) is not None:
            v = g.pred(_tid_bound(g, s, srcs))
        elif s.opcode == "selp" and len(srcs) == 3:
            v = g.sel(srcs[2], srcs[0], srcs[1])
        elif s.opcode == "not" and ".pred" in s.modifiers:
            v = g.neg(srcs[0])
        elif fp.is_event(s.name):
            v = g.op(name, srcs + (st.mem,))
        elif fp.reads_memory(s.name):
            v = self._private_load(st, s, srcs)
            if v is None:
                v = g.op(name, srcs + (self.observed(srcs[0] if srcs else None, name, st.mem),))
        else:
            v = g.op(name, srcs)
        self._record(v, s)
        if ".cc" in s.modifiers:  # the carry out: a value of its own, read by the next addc
            self.write(st, s, CARRY, g.op(name + ":carry", srcs))
        if fp.is_event(s.name):
            st.mem = g.mem("mem", name, (v, st.mem))      # an event: nothing commutes past it
        dests = self._dest_regs(ops[0])
        if role == MMA or isinstance(ops[0], (m.Vec, m.Pair)):
            for k, r in dests:
                self.write(st, s, r, g.elt(k if k is not None else 0, v))
        else:
            for _k, r in dests:
                self.write(st, s, r, v)

    def _int_add(self, opcode, width, srcs):
        g = self.g
        a, b = srcs
        ka, kb = g.nodes[a], g.nodes[b]
        if kb[0] == "imm" and kb[1][0] == "i":
            c = kb[1][1]
            return g.ioff(width, a, -c if opcode == "sub" else c)
        if opcode == "add" and ka[0] == "imm" and ka[1][0] == "i":
            return g.ioff(width, b, ka[1][1])
        if opcode == "add" and b < a:
            a, b = b, a                       # rule comm-int
        return g.op(f"i{opcode}.{width}", (a, b))

    def _effect(self, st: State, s):
        """Stores, barriers, fences and every other instruction that writes no register: a new
        memory state ordered after the current one."""
        g = self.g
        name = canonical_name(s)
        srcs = tuple(self.value(st, o, type_width(s.modifiers)) for o in s.operands)
        if self.glue(s) and s.opcode in ("bar", "membar"):
            return                            # call-shared's own barrier (rule splice-private)
        if s.opcode == "st" and self._private_store(st, s, srcs):
            return
        if s.opcode == "st" and s.guard is None and len(srcs) == 2:
            new = self.store(name, srcs[0], srcs[1], st.mem)
        else:
            kind = "st" if s.opcode == "st" else "mem"      # a store's value, or another event
            new = g.mem(kind, name, srcs + (st.mem,))
        if s.guard is not None:
            p = self.read(st, s.guard.pred)
            if s.guard.negated:
                p = g.neg(p)
            new = g.sel(p, new, st.mem)
        self._record(new, s)
        st.mem = new

    # ---- memory commutation (rule mem-commute) ----------------------------------------------
    def _disjoint(self, name_a, addr_a, name_b, addr_b) -> bool:
        """Rule mem-commute: two accesses every thread of the CTA makes to disjoint bytes — both
        this thread's own weak bytes (``footprint.Footprint.private``: no collective, asynchronous,
        atomic, texture or surface access), one state space, one base value that is the same in
        every thread (``lanes.Lanes``; any base in thread-private ``.local``), constant byte
        ranges apart without wrapping around."""
        if isinstance(addr_a, tuple) or isinstance(addr_b, tuple):
            return False
        fa, fb = fp.footprint(name_a), fp.footprint(name_b)
        if fa is None or fb is None or not (fa.private and fb.private) or fa.space != fb.space:
            return False
        ka, kb = self.g.nodes[addr_a], self.g.nodes[addr_b]
        if ka[0] != "addr" or kb[0] != "addr" or ka[2] != kb[2]:
            return False
        if fa.space not in fp.THREAD_PRIVATE_SPACES and not self.lanes.uniform(ka[2][0]):
            return False                      # another lane's range may be this one's
        oa, ob = ka[1], kb[1]
        ea, eb = oa + (fa.bytes or 0), ob + (fb.bytes or 0)
        if max(ea, eb) > 1 << 64:
            return False                      # a range wrapping around the address space
        return ea <= ob or eb <= oa

    def observed(self, addr, name: str, mem: int) -> int:
        """The memory state a load observes: stores to disjoint addresses are skipped."""
        for _ in range(256):
            kind, key, args = self.g.nodes[mem]
            if kind != "st" or len(args) != 3 or not self._disjoint(name, addr, key, args[0]):
                return mem
            mem = args[2]
        return mem

    def store(self, name: str, addr, val, mem: int) -> int:
        """A store on top of ``mem``, sunk below stores it commutes with into a canonical order
        (ascending byte offset), so two orders of disjoint stores give one state."""
        g = self.g
        kind, key, args = g.nodes[mem]
        if kind == "st" and len(args) == 3 and self._disjoint(name, addr, key, args[0]) \
                and g.nodes[addr][1] < g.nodes[args[0]][1]:
            inner = self.store(name, addr, val, args[2])
            return g.mem("st", key, (args[0], args[1], inner))
        return g.mem("st", name, (addr, val, mem))

    # ---- splice-private storage (call ABIs' glue) -------------------------------------------
    def _is_private(self, v) -> bool:
        """Whether an address is computed from splice's own return array (``__splice_ret``)."""
        nodes = self.g.nodes
        return any(nodes[x][0] == "sym" and nodes[x][1] in PRIVATE_SYMS
                   for x in self.g.below(v, lambda kind, _key, _args: kind in ("addr", "addrlist", "ioff", "op")))

    def _private_store(self, st, s, srcs) -> bool:
        if s.opcode != "st" or not self._is_private(srcs[0]):
            return False
        if s.guard is not None:
            raise Unsupported("guarded store to splice's return slots", self.origin(s))
        self.private_mem[srcs[0]] = (type_width(s.modifiers), srcs[1])
        return True

    def _private_load(self, st, s, srcs):
        if s.opcode != "ld" or not srcs or not self._is_private(srcs[0]):
            return None
        got = self.private_mem.get(srcs[0])
        if got is None or got[0] != type_width(s.modifiers) or s.guard is not None:
            raise Unsupported("load from splice's return slots that no store of the same width "
                              "wrote", self.origin(s))
        return got[1]

    def _param_access(self, st: State, s) -> bool:
        """``st.param``/``ld.param`` on a call's own parameter (splice-private)."""
        d, src = s.operands[0], s.operands[1]
        if s.opcode == "st":
            key = self._param_key(d)
            if key is None:
                return False
            st.params[key] = (type_width(s.modifiers), self.value(st, src, type_width(s.modifiers)))
            return True
        key = self._param_key(src)
        if key is None or key not in st.params:
            return False
        w, v = st.params[key]
        if w != type_width(s.modifiers) or isinstance(v, tuple) or s.guard is not None:
            raise Unsupported(f"{s.opcode}{''.join(s.modifiers)} reads a parameter written with "
                              f"another width", self.origin(s))
        for _k, r in self._dest_regs(d):
            self.write(st, s, r, v)
        return True

    def _param_key(self, op):
        if not isinstance(op, m.Addr) or len(op.items) != 1:
            return None
        first = op.items[0]
        base = first.base if isinstance(first, m.Offset) else first
        off = int(m.parse_number(first.imm)) if isinstance(first, m.Offset) else 0
        if not isinstance(base, m.Sym) or not base.name.startswith("__splice_fn"):
            return None
        return (base.name, off)

    def _call(self, st: State, s):
        ops = s.operands
        rets, rest = (ops[0].items, ops[1:]) if isinstance(ops[0], m.ParenList) else ((), ops)
        fname = rest[0].name if rest and isinstance(rest[0], m.Sym) else None
        fn = self.funcs.get(fname)
        if fn is None:
            raise Unsupported(f"call to {fname}, whose body the checker does not have", self.origin(s))
        args = rest[1].items if len(rest) > 1 and isinstance(rest[1], m.ParenList) else ()
        inner = State({}, st.mem, st.reach, {})
        for p, a in zip(fn.params or (), args):
            for k, v in list(st.params.items()):
                if k[0] == a.name:
                    inner.params[(p.name, k[1])] = v
        sub = Evaluator(self.g, self.origin_in(fn), self.funcs, self.func_origin)
        sub.private_mem = self.private_mem
        sub.in_func = True
        out = sub.run(fn.body.items, inner)
        self.origins.update({k: v for k, v in sub.origins.items() if k not in self.origins})
        st.mem = out.mem
        for p, r in zip(fn.returns or (), rets):
            for k, v in out.params.items():
                if k[0] == p.name:
                    st.params[(r.name, k[1])] = v

    def origin_in(self, fn):
        return self.func_origin.get(fn.name, self.origin)


_TID_BOUND = {".lt": True, ".ge": False}   # %tid.d < %ntid.d


def _tid_bound(g: Graph, s: m.Instruction, srcs):
    """Rule tid-bound: ``setp.lt/.ge`` of ``%tid.d`` against ``%ntid.d`` (either order, 32-bit
    integer compare, no combining predicate, one destination) is a constant."""
    cmp = [q for q in s.modifiers if q in (".lt", ".ge", ".gt", ".le")]
    if len(s.modifiers) != 2 or len(cmp) != 1 or s.modifiers[-1] not in (".u32", ".s32", ".b32") \
            or len(srcs) != 2 or not isinstance(s.operands[0], (m.Reg, m.Sym)):
        return None
    a, b = (g.nodes[x] if not isinstance(x, tuple) else None for x in srcs)
    if a is None or b is None or a[0] != "sreg" or b[0] != "sreg":
        return None
    for d in ("x", "y", "z"):
        tid, ntid = ("sreg", f"%tid.{d}", ()), ("sreg", f"%ntid.{d}", ())
        if (a, b) == (tid, ntid):
            return _TID_BOUND.get(cmp[0])
        if (a, b) == (ntid, tid):
            return {".gt": True, ".le": False}.get(cmp[0])
    return None


def canonical_name(s: m.Instruction) -> str:
    """The full opcode with every modifier, normalised by rules weak-default and st-type."""
    mods = list(s.modifiers)
    if s.opcode in ("ld", "st") and ".weak" in mods:
        mods.remove(".weak")
    if s.opcode == "st" and mods and mods[-1] in REG_WIDTH and mods[-1] != ".pred":
        w = REG_WIDTH[mods[-1]]
        if mods[-1][1] in "busf" and mods[-1][2:].isdigit():
            mods[-1] = f".b{w}"
    return s.opcode + "".join(modifier_order(mods))


_ORDERED_QUALS = (".row", ".col", ".global", ".shared", ".local", ".param", ".const", ".generic")


def modifier_order(mods) -> list:
    """Rule modifier-order: qualifiers whose position means something — types (cvt's
    destination before its source, mma's D.A.B.C), layouts (.row/.col: A then B) and state spaces
    (cp.*'s destination before its source) — keep their order, after every other qualifier,
    which is sorted (``movmatrix.sync.trans.aligned`` = ``movmatrix.sync.aligned.trans``)."""
    ordered, free = [], []
    for q in mods:
        positional = q in REG_WIDTH or q.startswith(_ORDERED_QUALS) or q[1:] in _FP_TYPE_NAMES
        (ordered if positional else free).append(q)
    return sorted(free) + ordered


_FP_TYPE_NAMES = {"e4m3", "e5m2", "e2m1", "e2m3", "e3m2", "e4m3x2", "e5m2x2", "tf32", "bf16", "bf16x2",
                  "f16x2", "s4", "u4", "b1"}


def type_width(mods) -> Optional[int]:
    for t in reversed(mods):
        w = REG_WIDTH.get(t)
        if w and t != ".pred":
            return w
    return None


def imm(g: Graph, text: str, width=None) -> int:
    t = text
    body = t[1:] if t.startswith("-") else t
    if body[:2] in ("0f", "0F", "0d", "0D") and len(body) in (10, 18):
        bits = int(body[2:], 16)
        if t.startswith("-"):
            bits ^= 1 << (4 * len(body[2:]) - 1)
        return g.leaf("imm", ("f" + str(4 * len(body[2:])), bits))
    v = m.parse_number(t)
    if isinstance(v, float):
        return g.leaf("imm", ("d", v))
    return g.imm_int(v, width)
