"""Re-schedule the statements of an extracted cut without changing one operation: the engine
behind recipes/perf/make_stream_natives.py (enc5_stream*.yaml, dec1_stream.yaml).

A cut is extracted with ``splice extract`` (its statements against the symbolic ABI: the same
instructions, the same operands, in the original order).  This module re-orders those
statements, and nothing else:

* every statement keeps its opcode, modifiers and operands (so each floating-point operation,
  each mma with its accumulator chain, each row-sum tree is the original's);
* the order obeys every dependence: a register read after the statement that writes it,
  written after every earlier read and write of it, a load after the side effect before it and
  before the one after it, side effects (stores, barriers) in their original order;
* **roots** say which statements should come when (the mma of one m-tile, then the mma that
  consume it); each root is emitted *just in time*: preceded by whatever it needs that is not
  emitted yet, in the original order.  What nothing asked for comes last, in the original order;
* **rematerialisation**: a statement marked ``remat`` (a shared-memory load, an address) whose
  value was emitted in an earlier group is emitted again in the group that reads it, writing a
  fresh scratch register — the same operation on the same operands (``splice verify`` gives the
  two the same value number) instead of a register held across the groups between;
* **common subexpressions**: a pure statement that repeats an earlier one exactly (same opcode,
  modifiers and operands, say the odd phases' A operand re-packed from the same registers in
  every even epilogue) is dropped and its result read from the first;
* **flushes**: the consumers that became computable (the packs of a finished tile) emitted at
  once, as long as they need no load and no mma;
* **fences**: after chosen statements, the schedule fence of recipes/perf/make_fence_natives.py
  (a ``%clock64`` read feeding a store that never executes) so that ptxas keeps the order.

Statements are the native body's top-level items (an instruction, or a ``{ }`` block of inline
asm, moved whole).  Registers are assumed written once where a clone or a merge renames them
(checked: ``single_definitions``); elsewhere every rewrite of a register is ordered.

The output is a native file with the extract's own header lines (inputs, outputs, provenance),
a note on what was done, and the ``splice-native`` header with the scratch the clones add.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from splice.analysis import roles as R
from splice.cut.native import parse_native, render, rename_node
from splice.ptx import model as m

FENCE = (
    "ld.param.u64 %fw, [{{param0}}+{{wparam}}];",
    "cvta.to.global.u64 %fw, %fw;",
    "mov.u64 %ft, %clock64;",
    "mov.u32 %fx, %tid.x;",
    "mov.u32 %fn, %ntid.x;",
    "setp.ge.u32 %fq, %fx, %fn;",
    "@%fq st.global.u64 [%fw], %ft;",
)
FENCE_SCRATCH = {"%fw": ".b64", "%ft": ".b64", "%fx": ".b32", "%fn": ".b32", "%fq": ".pred"}


@dataclass
class Stmt:
    i: int                      # position in the extracted cut (original order)
    node: object                # m.Instruction or m.Block
    defs: tuple
    uses: tuple
    mem: str                    # '' | 'load' | 'side'
    pure: bool                  # no memory access, not warp-collective, no special register

    @property
    def is_mma(self) -> bool:
        return isinstance(self.node, m.Instruction) and R.is_mma(self.node.name)

    def operand_regs(self, k: int) -> tuple:
        """The registers of operand ``k`` of an instruction (an mma's D=0, A=1, B=2, C=3)."""
        out: list = []
        R._collect(self.node.operands[k], out)
        return tuple(out)


@dataclass
class Program:
    head: list                  # the extract's comment lines, up to the splice-native header
    params: dict
    scratch: dict               # name (with %) -> type
    stmts: list
    notes: list = field(default_factory=list)
    types: dict = field(default_factory=dict)   # every register's type: scratch and ABI symbols


_SPECIAL_VARYING = ("%clock", "%globaltimer", "%pm")


def _stmt(i: int, node) -> Stmt:
    defs: list = []
    uses: list = []
    mem = ""
    pure = True
    for ins in m.walk([node]):
        if not isinstance(ins, m.Instruction):
            pure = False            # a label or a directive: never moved
            mem = "side"
            continue
        d, u = R.raw_defs_uses(ins)
        defs += d
        uses += [x for x in u if x not in defs]
        if R.is_impure(ins) or R.is_branch(ins.name) or R.is_exit(ins.name):
            mem, pure = "side", False
        elif R._row_of(ins).effect != R.NO_ACCESS:
            mem = mem or "load"
            pure = False
        if R.is_opaque(ins):
            pure = False
        text = " ".join(str(o) for o in ins.operands)
        if any(s in text for s in _SPECIAL_VARYING):
            pure = False
    return Stmt(i, node, tuple(dict.fromkeys(defs)), tuple(dict.fromkeys(uses)), mem, pure)


def load(text: str, path: str = "<native>", abi_types: Optional[dict] = None) -> Program:
    """The statements of an extracted native (``splice extract`` output); ``abi_types``: the
    types of its ABI symbols (``%in0`` -> ``.b64``), for the clones of a statement writing one."""
    nat = parse_native(text, path)
    head = []
    for ln in text.splitlines():
        if ln.startswith("// splice-native:"):
            break
        if ln.startswith("//"):
            head.append(ln)
    stmts = [_stmt(i, n) for i, n in enumerate(nat.body)]
    return Program(head, dict(nat.params), dict(nat.scratch), stmts,
                   types={**(abi_types or {}), **nat.scratch})


# ---------------------------------------------------------------------------------------------
# dependences
# ---------------------------------------------------------------------------------------------

def dependences(stmts: list) -> list:
    """preds[i]: the statements that must come before statement i (see the module docstring)."""
    last_def: dict = {}
    reads_since: dict = {}
    last_side = None
    loads_since: list = []
    preds = []
    for s in stmts:
        p = set()
        for u in s.uses:
            if u in last_def:
                p.add(last_def[u])
        for d in s.defs:
            if d in last_def:
                p.add(last_def[d])
            p.update(reads_since.get(d, ()))
        if s.mem == "load" and last_side is not None:
            p.add(last_side)
        if s.mem == "side":
            if last_side is not None:
                p.add(last_side)
            p.update(loads_since)
        p.discard(s.i)
        preds.append(p)
        for u in s.uses:
            reads_since.setdefault(u, []).append(s.i)
        for d in s.defs:
            last_def[d] = s.i
            reads_since[d] = []
        if s.mem == "side":
            last_side = s.i
            loads_since = []
        elif s.mem == "load":
            loads_since.append(s.i)
    return preds


def single_definitions(stmts: list) -> set:
    """Registers written by exactly one statement (and not read before it): the ones a clone or
    a merge may rename."""
    count: dict = {}
    for s in stmts:
        for d in s.defs:
            count[d] = count.get(d, 0) + 1
    return {r for r, c in count.items() if c == 1}


# ---------------------------------------------------------------------------------------------
# common subexpressions
# ---------------------------------------------------------------------------------------------

def _key(node, defs: tuple) -> str:
    """The statement's text with its destinations replaced by position: two statements with
    the same key compute the same values."""
    ren = {d: f"%__d{k}" for k, d in enumerate(defs)}
    return "\n".join(render([rename_node(node, ren, {})], ""))


def merge_repeats(prog: Program, keep: Optional[Callable] = None) -> int:
    """Drop every pure statement that repeats an earlier one (after the renames of the drops
    before it) and read its results from the first; returns how many were dropped.  ``keep``:
    a predicate on statements never to merge."""
    single = single_definitions(prog.stmts)
    alias: dict = {}
    seen: dict = {}
    out = []
    dropped = 0
    for s in prog.stmts:
        node = rename_node(s.node, alias, {}) if alias else s.node
        s = _stmt(s.i, node)
        if s.pure and s.defs and all(d in single for d in s.defs) and not (keep and keep(s)):
            k = _key(s.node, s.defs)
            first = seen.get(k)
            if first is not None:
                for a, b in zip(s.defs, first.defs):
                    alias[a] = b
                dropped += 1
                continue
            seen[k] = s
        out.append(s)
    prog.stmts = [dataclasses.replace(s, i=k) for k, s in enumerate(out)]
    if dropped:
        prog.notes.append(f"{dropped} repeated pure statements merged into their first occurrence")
    return dropped


# ---------------------------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------------------------

@dataclass
class Emitted:
    stmt: Stmt
    clone: bool = False
    renames: dict = field(default_factory=dict)    # applied to the node when rendered


class Scheduler:
    """Emit a program's statements root by root (module docstring)."""

    def __init__(self, prog: Program, remat: Iterable[int] = ()):
        self.prog = prog
        self.preds = dependences(prog.stmts)
        self.remat = set(remat)
        single = single_definitions(prog.stmts)
        bad = [prog.stmts[i] for i in self.remat if not all(d in single for d in prog.stmts[i].defs)
               or prog.stmts[i].mem == "side"]
        if bad:
            raise ValueError(f"cannot rematerialise statement {bad[0].i}: it writes a register twice or "
                             "has a side effect")
        self.done: dict = {}            # stmt index -> group it was (last) emitted in
        self.out: list = []
        self.group = 0
        self.alias: dict = {}           # register -> the name its latest copy has
        self.fresh = 0
        self.clones = 0

    def next_group(self) -> None:
        self.group += 1

    def emit(self, root: int) -> None:
        """Emit ``root`` after everything it needs (iterative: chains are thousands long)."""
        stack = [(root, False)]
        while stack:
            i, expanded = stack.pop()
            if self._ready(i):
                continue
            if not expanded:
                stack.append((i, True))
                for p in sorted(self.preds[i], reverse=True):
                    if not self._ready(p):
                        stack.append((p, False))
                continue
            self._put(i)

    def missing(self, root: int) -> list:
        """The statements ``emit(root)`` would emit (root included), in no particular order."""
        seen, stack, out = set(), [root], []
        while stack:
            i = stack.pop()
            if i in seen or self._ready(i):
                continue
            seen.add(i)
            out.append(i)
            stack.extend(self.preds[i])
        return out

    def flush(self, candidates: Iterable[int], allowed: Callable) -> int:
        """Emit each candidate whose missing statements all satisfy ``allowed`` (a consumer that
        became computable: the packs of a finished tile), in program order; returns how many."""
        n = 0
        for c in sorted(candidates):
            if self._ready(c):
                continue
            miss = self.missing(c)
            if all(allowed(self.prog.stmts[i]) for i in miss):
                self.emit(c)
                n += 1
        return n

    def _ready(self, i: int) -> bool:
        if i not in self.done:
            return False
        return not (i in self.remat and self.done[i] != self.group)

    def _put(self, i: int) -> None:
        s = self.prog.stmts[i]
        if i in self.done:                          # a rematerialisation in a later group
            ren = {}
            for d in s.defs:
                self.fresh += 1
                new = f"{d}_g{self.fresh}"
                self.prog.scratch[new] = self.prog.types[d]
                ren[d] = new
            self.out.append(Emitted(s, True, {**self.alias, **ren}))
            self.alias.update(ren)
            self.clones += 1
        else:
            self.out.append(Emitted(s, False, dict(self.alias)))
        self.done[i] = self.group

    def finish(self) -> list:
        for s in self.prog.stmts:
            if s.i not in self.done:
                self.emit(s.i)
        if self.clones:
            self.prog.notes.append(f"{self.clones} statements rematerialised (emitted again in the group "
                                   "that reads them, into fresh scratch)")
        return self.out


@dataclass
class Flush:
    """A step of a schedule: emit those of ``candidates`` whose missing statements all satisfy
    ``allowed`` (``Scheduler.flush``)."""
    candidates: tuple
    allowed: Callable


def schedule(prog: Program, groups: list, remat: Iterable[int] = ()) -> list:
    """Emit the roots group by group (each group: a list of statement indices, or a ``Flush``),
    then the rest."""
    sch = Scheduler(prog, remat)
    for g in groups:
        if isinstance(g, Flush):
            sch.flush(g.candidates, g.allowed)
            continue
        sch.next_group()
        for r in g:
            sch.emit(r)
    sch.next_group()
    return sch.finish()


# ---------------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------------

def render_native(prog: Program, emitted: list, fences_after: Iterable[int] = (), title: str = "",
                  why: Iterable[str] = (), wparam: Optional[int] = None) -> str:
    """The native file: the reasoning, the extract's header, the ``splice-native`` header and
    the statements in their new order (a fence after each position of ``fences_after``, counted
    in ``emitted``)."""
    fences = set(fences_after)
    scratch = dict(prog.scratch)
    params = dict(prog.params)
    if fences:
        scratch.update(FENCE_SCRATCH)
        params["wparam"] = wparam if wparam is not None else 40
    lines = [f"// {title}"] if title else []
    lines += [f"// {w}" for w in why]
    lines += [f"//   ({n})" for n in prog.notes]
    if fences:
        lines.append(f"//   ({len(fences)} schedule fences: a %clock64 read feeding a store that never executes, "
                     "as in make_fence_natives.py)")
    lines += prog.head
    lines.append("// splice-native:")
    lines.append("//   params: {" + ", ".join(f"{k}: {v}" for k, v in params.items()) + "}")
    bare = {k: t for k, t in scratch.items() if not k.startswith("%")}
    scratch = {k: t for k, t in scratch.items() if k.startswith("%")}
    lines.append("//   scratch: {" + ", ".join(f"{k[1:]}: {t}" for k, t in scratch.items()) + "}")
    for k, e in enumerate(emitted):
        node = rename_node(e.stmt.node, _uses_only(e), {}) if e.renames else e.stmt.node
        if e.clone:
            node = rename_node(node, {d: e.renames[d] for d in e.stmt.defs}, {})
        lines += _block_lines(node, bare)
        if k in fences:
            lines += FENCE
    return "\n".join(lines) + "\n"


def _block_lines(node, bare: dict) -> list:
    """A statement's text; a ``{ }`` block declares again the names without ``%`` it uses
    (NVVM's ``.reg .f16 low, high;``: parse_native lifted them into the scratch, a header can
    only declare ``%`` names)."""
    lines = render([node], "\t")
    if isinstance(node, m.Block):
        used = []
        for ins in m.walk([node]):
            if isinstance(ins, m.Instruction):
                regs: list = []
                for o in ins.operands:
                    R._collect(o, regs)
                used += [r for r in regs if r in bare and r not in used]
        if used:
            lines = [lines[0]] + [f"\t\t.reg {bare[r]} {r};" for r in used] + lines[1:]
    return [ln[1:] if ln.startswith("\t") else ln for ln in lines]


def _uses_only(e: Emitted) -> dict:
    """The renames of the registers a statement reads (its own destinations keep their names,
    except in a clone, renamed separately)."""
    return {r: n for r, n in e.renames.items() if r in e.stmt.uses and r not in e.stmt.defs}
