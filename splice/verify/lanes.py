"""Which values are the same in every thread of a CTA (uniform), for rule ``mem-commute``.

Two accesses of one thread off one base with disjoint byte ranges may still overlap another
lane's: lane T stores ``[smem + 4·tid + 4]``, lane T+1 loads ``[smem + 4·(tid+1)]``, the same
bytes; a warp runs both instructions for all its lanes in turn, so swapping them changes what
lane T+1 reads.  When the base is the same value in every thread of the CTA, every thread's
ranges are the same ranges, and per-thread disjointness is disjointness for all of them.

Uniform: immediates and symbols (a parameter, a variable's address), the special registers that
name the CTA, the grid or the cluster (``%ctaid``, ``%ntid`` …), live-ins whose provenance is an
affine form over such values only (``W + 64·ctaid.x + 16``), and any pure arithmetic of uniform
values.  Everything else — a lane or thread index, a loaded value, other lanes' registers, a
live-in of unknown provenance — is not.
"""
from __future__ import annotations

import re

from .explain import opword

UNIFORM_SREGS = frozenset(
    [f"%{r}.{d}" for r in ("ctaid", "nctaid", "ntid", "clusterid", "nclusterid", "cluster_ctaid",
                           "cluster_nctaid") for d in "xyz"]
    + ["%cluster_ctarank", "%cluster_nctarank", "%gridid", "%nsmid", "%nwarpid", "%total_smem_size",
       "%dynamic_smem_size", "%aggr_smem_size"] + [f"%envreg{i}" for i in range(32)])

# instructions whose result is a function of their operands alone (no memory, no other lane)
PURE_WORDS = frozenset((
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max",
    "popc", "clz", "bfind", "brev", "bfe", "bfi", "fns", "and", "or", "xor", "not", "cnot", "lop3",
    "shf", "shl", "shr", "selp", "setp", "set", "slct", "prmt", "cvt", "cvta", "mov", "iadd", "isub",
    "testp", "copysign", "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "addc",
    "subc", "madc", "dp4a", "dp2a"))
_TRANSPARENT = ("ioff", "addr", "pack", "part", "not", "sel")


class Lanes:
    """Uniformity of value numbers of one Graph, memoised; ``inputs``: the live-in registers
    known uniform (``uniform_inputs``)."""

    def __init__(self, g, inputs=()):
        self.g = g
        self.inputs = frozenset(inputs)
        self.memo: dict = {}

    def uniform(self, v) -> bool:
        stack = [v]
        memo, nodes = self.memo, self.g.nodes
        while stack:
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            kind, key, args = nodes[x]
            flat = _flat(args)
            todo = [a for a in flat if a not in memo]
            if todo and self._descends(kind, key):
                stack.extend(todo)
                continue
            stack.pop()
            memo[x] = self._leaf(kind, key) if not args else \
                (self._descends(kind, key) and all(memo[a] for a in flat))
        return memo[v]

    def _descends(self, kind, key) -> bool:
        return kind in _TRANSPARENT or (kind == "op" and opword(key) in PURE_WORDS)

    def _leaf(self, kind, key) -> bool:
        if kind in ("imm", "sym"):
            return True
        if kind == "sreg":
            return key in UNIFORM_SREGS
        if kind == "in":
            return key in self.inputs
        if kind == "op":                 # an operation without operands (activemask, elect …)
            return False
        return False


def _flat(args) -> list:
    out = []
    for a in args:
        if isinstance(a, tuple):
            out.extend(a)
        else:
            out.append(a)
    return out


_ATOM_SREG = re.compile(r"(?:n?ctaid|ntid|n?clusterid|cluster_n?ctaid)\.[xyz]")
_ATOM_NAME = re.compile(r"&?([A-Za-z_$][\w$]*)(?:\+[0-9]+)?")


def uniform_inputs(values: dict, declared: "Declared") -> set:
    """Live-ins whose provenance text (``CutABI.values``: ``W``, ``p0+8``, ``smem + 64·ctaid.x``)
    is an affine form over uniform atoms only: integers, ``W`` (the weight-pointer parameter
    field), parameter fields and variable addresses whose names the module declares as a
    ``.param``/``.shared``/``.global``/``.const`` and never as a ``.reg`` (an opaque register
    prints as its bare name), and the CTA/grid/cluster special registers."""
    return {reg for reg, text in (values or {}).items()
            if isinstance(text, str) and _uniform_text(text, declared)}


def _uniform_text(text: str, declared: "Declared") -> bool:
    terms = re.split(r" [+-] ", text.strip().lstrip("-"))
    for term in terms:
        mt = re.fullmatch(r"(?:[0-9]+·)?(\S+)", term)
        if mt is None:
            return False
        atom = mt.group(1)
        if atom.isdigit() or _ATOM_SREG.fullmatch(atom):
            continue
        mn = _ATOM_NAME.fullmatch(atom)
        if mn is None or not declared.variable(mn.group(1)):
            return False
    return True


_VAR = re.compile(r"\.(?:param|shared|global|const)\b(?:[ \t]+\.[\w:]+(?:[ \t]+[0-9]+)?)*[ \t]+([A-Za-z_$][\w$]*)")
_REG = re.compile(r"\.reg\b(?:[ \t]+\.\w+)*[ \t]+([^;]*);")


class Declared:
    """The names a module declares as variables and as registers: one scan of its text, made
    the first time a live-in's provenance names one (once per plan, not per cut)."""

    def __init__(self, source: str):
        self.source = source
        self._vars: set = set()
        self._regs: set = set()
        self._scanned = False

    def variable(self, name: str) -> bool:
        if not self._scanned:
            self._vars = {mt.group(1) for mt in _VAR.finditer(self.source)}
            for mt in _REG.finditer(self.source):
                self._regs.update(n.split("<")[0].strip() for n in mt.group(1).split(","))
            self._scanned = True
        return (name == "W" or name in self._vars) and name not in self._regs
