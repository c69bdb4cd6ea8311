"""Why two canonical forms differ, and whether the difference is *definite*.

``first_difference(g, a, b)`` walks down from two different value numbers while exactly one
operand differs and the operation passes a difference in that operand through to its result
(``PROPAGATE``), and stops at the first operation where the two forms part.  The difference is
**definite** — the cut is *proved different* — only when, at that operation, the two forms
compute different functions of independent inputs for some input:

* two different live-in registers, a live-in and a constant, two different constants or symbols
  (every live-in is an independent input; special registers such as %laneid are not, so they
  never make a definite difference);
* the same operation with operands swapped in a non-commutative position, or several operands
  that each differ definitely;
* the same operands under different opcodes or modifiers (type, rounding, .ftz, .sat, comparison,
  shuffle mode), neither approximate.

Everything else — a fused vs an unfused multiply-add, a re-associated sum, an approximate
function, a load that observes a different memory state, a difference inside an operation that
may mask it (an ``and`` with a constant, one half of a register) — is *not proven*, with the
reason.  The propagation rule assumes a non-constant operand can take a value that makes the
operation injective in the differing operand (1 for mul, all-ones for and, 0 for a shift);
constants block it except in operations where no constant can mask (add of integers, xor,
pack, cvt, shuffles, mma's A/B).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .budget import Budget
from .canon import commutative_positions

FREE_LEAVES = ("in", "imm", "sym")
# opcode -> "always": a difference in any operand reaches the result whatever the others are;
# "nonconst": only when every other operand is non-constant (a constant may mask it).
PROPAGATE = {
    "iadd": "always", "isub": "always", "xor": "always", "neg": "always", "not": "always",
    "cvt": "cvt", "shfl": "always", "movmatrix": "always", "mma": "always",
    "add": "nonconst", "sub": "nonconst", "mul": "nonconst", "fma": "nonconst", "mad": "nonconst",
    "and": "nonconst", "or": "nonconst", "min": "nonconst", "max": "nonconst", "abs": "always",
    "shl": "nonconst", "shr": "nonconst", "ld": "address", "tex": "address",
}
OPERAND_NAMES = {"mma": ("A", "B", "C"), "fma": ("a", "b", "c"), "mad": ("a", "b", "c"),
                 "shfl": ("value", "lane", "clamp", "membermask"), "selp": ("a", "b", "p")}


@dataclass
class Difference:
    a: int                         # value number in the original
    b: int                         # value number in the native code
    definite: bool
    what: str                      # the operation and operand where they part
    reason: str = ""               # why not definite (the rewrite that may explain it)
    position: tuple = ()
    path: list = field(default_factory=list)


def opword(key) -> str:
    return key.split(".")[0] if isinstance(key, str) else str(key)


def _is_imm(g, v) -> bool:
    return not isinstance(v, tuple) and g.nodes[v][0] == "imm"


def _flat(args):
    out = []
    for i, a in enumerate(args):
        if isinstance(a, tuple):
            out += [((i, j), x) for j, x in enumerate(a)]
        else:
            out.append(((i,), a))
    return out


def _shape(args):
    return tuple(len(a) if isinstance(a, tuple) else -1 for a in args)


class Explainer:
    """``difference(a, b)`` of one Graph, memoised on ``(a, b, element)``: each pair of value
    numbers is explained once per cut, however many live-outs, memory rows and operand lists
    reach it (the explanation of a wgmma chain visited every differing operand again below every
    differing operand: hours on Triton's 64-accumulator phase).  The walk down one differing
    operand is a loop of at most ``WALK`` steps; an operation with several differing operands
    explains each of them (nested at most ``MAX_NEST`` deep, past which the difference is not
    definite: never a wrong *different*), and every step checks the cut's ``Budget``."""

    WALK = 200
    MAX_NEST = 48

    def __init__(self, g, budget=None):
        self.g = g
        self.budget = budget if budget is not None else Budget(None)
        self.memo: dict = {}
        self.leaves_memo: dict = {}

    def difference(self, a, b, elt=None, nest: int = 0) -> Difference:
        key = (a, b, elt)
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._walk(a, b, elt, nest)
        return got

    def _walk(self, a, b, elt, nest: int) -> Difference:
        if isinstance(a, tuple) or isinstance(b, tuple):
            return self._vectors(a, b, nest)
        g, path = self.g, []
        for _step in range(self.WALK):
            self.budget.check()
            na, nb = g.nodes[a], g.nodes[b]
            if na[0] != nb[0] or na[1] != nb[1] or _shape(na[2]) != _shape(nb[2]):
                return _on_path(self._node_difference(a, b), path)
            kind, key, args = na
            if kind == "elt":
                path.append(a)
                a, b, elt = args[0], nb[2][0], key
                continue
            fa, fb = _flat(args), _flat(_align(key, args, nb[2]) if kind == "op" else nb[2])
            diff = [(pa, x, y) for (pa, x), (_pb, y) in zip(fa, fb) if x != y]
            if kind == "op" and opword(key) == "mma" and elt is not None:
                diff = [d for d in diff if d[0][0] < 2 or d[0] == (2, elt)]
                if not diff:
                    return _on_path(Difference(a, b, False, "mma", "the forms differ only in C elements "
                                               "this D element does not read", ()), path)
            if len(diff) != 1 or not _propagates(g, kind, key, args, diff[0][0]):
                break
            pos, x, y = diff[0]
            both_leaves = g.nodes[x][0] in FREE_LEAVES and g.nodes[y][0] in FREE_LEAVES
            if both_leaves or (kind in ("st", "mem") and pos[0] == len(args) - 1):
                break
            path.append(a)
            a, b, elt = x, y, None
        else:
            return _on_path(Difference(a, b, False, "deep", "the forms part deeper than the checker "
                                       "follows"), path)
        return _on_path(self._args_difference(a, b, diff, nest), path)

    def _vectors(self, a, b, nest: int) -> Difference:
        """Two brace lists (a vector store's values): each element is stored to its own bytes
        (PTX ISA 8.2.4), so one element that differs definitely makes the lists differ definitely."""
        if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
            x, y = (a[0] if isinstance(a, tuple) else a), (b[0] if isinstance(b, tuple) else b)
            return Difference(x, y, False, "vector", "a brace list on one side only, or lists of other lengths")
        inner = [self.difference(x, y, None, nest + 1) for x, y in zip(a, b) if x != y]
        if not inner:
            return Difference(a[0], b[0], False, "vector", "no element differs")
        return next((d for d in inner if d.definite), inner[0])



    def _node_difference(self, a, b) -> Difference:
        return _node_difference(self.g, a, b, self.leaves)

    def leaves(self, v) -> list:
        got = self.leaves_memo.get(v)
        if got is None:
            got = self.leaves_memo[v] = free_leaves(self.g, v)
        return got

    def _args_difference(self, a, b, diff, nest: int) -> Difference:
        g = self.g
        kind, key, args = g.nodes[a]
        if kind in ("st", "mem") and any(p[0] == len(args) - 1 for p, _x, _y in diff):
            return Difference(a, b, False, "memory", "a different memory state underneath", diff[0][0])
        if kind == "op" and opword(key) == "ld" and all(p[0] != 0 for p, _x, _y in diff):
            return Difference(a, b, False, "operand", "the load observes a different memory state",
                              diff[0][0])
        if not diff:
            return Difference(a, b, False, "operand", "no operand differs")
        if kind == "op" and all(_is_state(g, x) and _is_state(g, y) for _p, x, y in diff):
            return Difference(a, b, False, "operand", f"the {opword(key)} observes a different memory state "
                              "(an access moved across it)", diff[0][0])
        context = _definite_context(g, kind, key, args, [p for p, _x, _y in diff])
        swapped = len(diff) >= 2 and sorted(x for _p, x, _y in diff) == sorted(y for _p, _x, y in diff)
        if not context:
            why = ("operands swapped" if swapped else "operands differ") + \
                " inside an operation that may mask the difference"
            return Difference(a, b, False, "operand", why, diff[0][0])
        if nest >= self.MAX_NEST:
            return Difference(a, b, False, "operand", "the forms part in more operands, deeper, than "
                              "the checker explains", diff[0][0])
        for _p, x, y in diff:
            d = self.difference(x, y, None, nest + 1)
            if not d.definite:
                return Difference(a, b, False, "operand", d.reason, diff[0][0])
        return Difference(a, b, True, "swap" if swapped else "operand", "", diff[0][0])


def _is_state(g, v) -> bool:
    """A memory state: the entry state, a store or other event, or a select of states."""
    if isinstance(v, tuple):
        return False
    kind, _key, args = g.nodes[v]
    return kind in ("mem0", "st", "mem") or (kind == "sel" and _is_state(g, args[1]))


def _on_path(d: Difference, path: list) -> Difference:
    """``d`` seen from above: the operations walked down to reach it first on its path (a new
    object: a memoised difference is shared by every walk that reaches it)."""
    return replace(d, path=path + d.path) if path else d


def first_difference(g, a, b) -> Difference:
    """Where two value numbers part, and whether the difference is definite (one Explainer per
    call; ``compare`` keeps one per cut)."""
    return Explainer(g).difference(a, b)


def parting(g, a: int, b: int, limit: int = 200) -> tuple:
    """Where two different forms part: ``(a, b, parent)`` down while both are one operation
    with exactly one differing operand, whatever that operation may mask; ``parent`` is the
    original's operation and flat operand position holding them (None at the top).  A pointer
    for the explanation only (``first_difference`` decides what is definite): where it stopped
    at a masking operation, both sides could print the same text, the difference deeper."""
    parent = None
    for _ in range(limit):
        na, nb = g.nodes[a], g.nodes[b]
        if na[0] != nb[0] or na[1] != nb[1] or _shape(na[2]) != _shape(nb[2]):
            break
        xb = _align(na[1], na[2], nb[2]) if na[0] == "op" else nb[2]
        diff: list = [(x, y, i) for i, ((_p, x), (_q, y)) in enumerate(zip(_flat(na[2]), _flat(xb)))
                      if x != y]
        if len(diff) > 1:     # every differing operand an element of one operation (a wgmma's D)
            diff = list({(_whole(g, x), _whole(g, y), None) for x, y, _i in diff})
        if len(diff) != 1 or None in diff[0][:2]:
            break
        parent = (a, diff[0][2])
        a, b = diff[0][:2]
    return a, b, parent


def _whole(g, v):
    """The operation a value is one element of (``elt``), or whose memory event it is (a wgmma
    reads and orders memory: the state after it parts where it does), else None."""
    if isinstance(v, tuple):
        return None
    node = g.nodes[v]
    if node[0] == "elt" or (node[0] == "mem" and node[2] and not isinstance(node[2][0], tuple)
                            and g.nodes[node[2][0]][0] == "op"):
        return node[2][0]
    return None


def _align(key, xa, xb):
    """For commutative operands (sorted by value number on each side), line up the operand the
    two sides share so only the differing one is compared."""
    pos = commutative_positions(key)
    if not pos or len(xb) <= max(pos):
        return xb
    i, j = pos
    if (xa[i] == xb[j] or xa[j] == xb[i]) and xa[i] != xb[i]:
        out = list(xb)
        out[i], out[j] = xb[j], xb[i]
        return tuple(out)
    return xb


def _propagates(g, kind, key, args, pos) -> bool:
    if kind in ("pack", "ioff", "not"):
        return True
    if kind == "sel":
        return pos[0] != 0 and not _is_imm(g, args[0])
    if kind == "addr":
        return True
    if kind != "op":
        return False
    rule = PROPAGATE.get(opword(key))
    if rule == "cvt":
        return not _narrowing_int_cvt(key)
    if rule == "always":
        return True
    if rule == "address":
        return pos[0] == 0
    if rule == "nonconst":
        others = [x for p, x in _flat(args) if p != pos]
        return not any(_is_imm(g, x) for x in others) and "approx" not in key
    return False


def _node_difference(g, a, b, leaves) -> Difference:
    na, nb = g.nodes[a], g.nodes[b]
    if na[0] in FREE_LEAVES and nb[0] in FREE_LEAVES:
        return Difference(a, b, True, "value")
    if na[0] == nb[0] == "elt" and na[2] == nb[2] and opword(g.nodes[na[2][0]][1]) == "mma":
        return Difference(a, b, True, "value")          # two D elements: each adds its own C
    if na[0] == nb[0] == "ioff" and na[2] == nb[2] and na[1][0] == nb[1][0]:
        return Difference(a, b, True, "value")          # x + c1 vs x + c2, c1 != c2 mod 2^W
    for x, y in ((a, b), (b, a)):
        ly = leaves(y)
        if g.nodes[x][0] == "in" and x not in ly and \
                all(g.nodes[v][0] in FREE_LEAVES for v in ly):
            return Difference(a, b, True, "value")      # an input a pure other side never reads
    if na[0] == "op" and nb[0] == "op":
        return _op_difference(g, a, b, leaves)
    one_register = "in" in (na[0], nb[0])
    reason = (_leaf_reason(na) or _leaf_reason(nb)) if one_register or na[0] in ("undef", "sreg", "mem0") \
        or nb[0] in ("undef", "sreg", "mem0") else ""
    reason = reason or "the forms are different computations no rule relates"
    return Difference(a, b, False, "value", reason)


def _leaf_reason(n):
    if n[0] == "in":
        return ""
    if n[0] == "elt" or n[0] == "op":
        return "a computed or loaded value on one side, a register on the other"
    if n[0] == "undef" and isinstance(n[1], tuple):     # (name, evaluator, read): a clock read
        return f"{n[1][0]} is a timer: each read is a new value"
    if n[0] == "undef":
        return f"{n[1]} is read before it is written"
    if n[0] == "sreg":
        return f"{n[1]} is a special register, not an independent input"
    if n[0] == "mem0" or n[0] in ("st", "mem"):
        return "a load observes a different memory state"
    return ""


def _op_difference(g, a, b, leaves) -> Difference:
    (_k, ka, xa), (_k2, kb, xb) = g.nodes[a], g.nodes[b]
    wa, wb = opword(ka), opword(kb)
    approx = "approx" in ka.split(".") or "approx" in kb.split(".")
    if approx:
        return Difference(a, b, False, "opcode", "approximate function (results may differ in low bits)")
    if {wa, wb} == {"fma", "add"} or {wa, wb} == {"fma", "sub"}:
        return Difference(a, b, False, "opcode", "fused vs unfused multiply-add")
    if xa == xb and any(not _is_imm(g, x) for _p, x in _flat(xa)):
        definite, why = opcode_change(ka, kb)
        return Difference(a, b, definite, "opcode", why)
    if wa == wb and wa in ("add", "mul", "iadd") and leaves(a) == leaves(b):
        return Difference(a, b, False, "opcode", "re-association / a different reduction tree")
    return Difference(a, b, False, "opcode", "the forms are different computations no rule relates")


# --- which opcode/modifier changes definitely change the result --------------------------------
DISTINCT_WORDS = {"add", "sub", "mul", "min", "max", "and", "or", "xor", "shl", "shr", "div", "rem"}
NEUTRAL_MODS = {"rn", "uni", "aligned", "sync", "ca", "cg", "cs", "lu", "cv", "nc", "weak"}
ROUNDING = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs"}
ROUNDED_WORDS = {"add", "sub", "mul", "fma", "mad", "div", "sqrt", "rcp", "cvt"}
FTZ_WORDS = {"add", "sub", "mul", "fma", "mad", "div", "sqrt", "rcp", "rsqrt", "min", "max",
             "setp", "set", "abs", "neg", "ex2", "lg2", "sin", "cos", "tanh"}
SAT_WORDS = {"add", "sub", "mul", "fma", "mad"}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
               "leu", "gtu", "geu", "num", "nan"}
SHFL_MODES = {"up", "down", "bfly", "idx"}
MOVES = {"ld", "st", "ldu", "mov", "shfl", "movmatrix", "ldmatrix", "stmatrix"}
_FP_TYPES = {"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2", "e4m3x2",
             "e5m2x2", "e2m1", "e2m3", "e3m2"}


def _type_of(mod: str):
    if mod in _FP_TYPES:
        return mod
    if mod[:1] in "bsu" and mod[1:].isdigit():
        return mod
    return None


def _sign_matters(word: str, mods: set) -> bool:
    if word in ("shr", "min", "max", "div", "rem", "abs", "neg", "bfe", "sad"):
        return True
    if word in ("mul", "mad"):
        return bool(mods & {"hi", "wide"})
    if word in ("setp", "set"):
        return bool(mods & (COMPARISONS - {"eq", "ne", "equ", "neu", "num", "nan"}))
    if word == "cvt":
        return any(m in _FP_TYPES for m in mods)
    return False


def opcode_change(ka: str, kb: str) -> tuple:
    """(definite, reason) for the same operands under opcodes ``ka`` and ``kb``: definite only
    for changes the ISA defines to give another result for some input."""
    wa, wb = opword(ka), opword(kb)
    if wa != wb:
        if wa in DISTINCT_WORDS and wb in DISTINCT_WORDS:
            return True, ""
        return False, f"{wa} and {wb}: opcodes the checker does not relate"
    ma, mb = set(ka.split(".")[1:]), set(kb.split(".")[1:])
    diff = (ma ^ mb) - NEUTRAL_MODS
    if not diff:
        shown = ", ".join("." + x for x in sorted(ma ^ mb))
        return False, f"differs only in {shown}, which may not change bits"
    types = {m for m in diff if _type_of(m)}
    verdicts = []
    if types:
        widths = {m[1:] if m[:1] in "bsuf" and m[1:].isdigit() else m for m in types}
        letters = {m[0] for m in types}
        if len(widths) == 1 and letters <= set("bsu"):
            verdicts.append(_sign_matters(wa, ma | mb))
        elif len(widths) == 1 and wa in MOVES:
            verdicts.append(False)
        else:
            verdicts.append(True)
    for m in diff - types:
        if m in ROUNDING:
            verdicts.append(wa in ROUNDED_WORDS)
        elif m == "ftz":
            verdicts.append(wa in FTZ_WORDS)
        elif m == "sat":
            verdicts.append(wa in SAT_WORDS)
        elif m == "satfinite":
            verdicts.append(wa == "cvt")
        elif m in COMPARISONS and wa in ("setp", "set"):
            verdicts.append(True)
        elif m in SHFL_MODES and wa == "shfl":
            verdicts.append(True)
        elif m in ("hi", "lo", "wide") and wa in ("mul", "mad"):
            verdicts.append(True)
        else:
            verdicts.append(False)
    if all(verdicts):
        return True, ""
    shown = ", ".join("." + x for x in sorted(diff))
    return False, f"differs in {shown}, which need not change bits for every operand"


def _definite_context(g, kind, key, args, positions) -> bool:
    if kind in ("pack", "ioff", "not", "addr"):
        return True
    if kind == "sel":
        return True
    if kind != "op":
        return False
    rule = PROPAGATE.get(opword(key))
    if rule == "cvt":
        return not _narrowing_int_cvt(key)
    if rule in ("always", "address"):
        return rule == "always" or all(p[0] == 0 for p in positions)
    if rule == "nonconst":
        others = [x for p, x in _flat(args) if p not in positions]
        return not any(_is_imm(g, x) for x in others) and "approx" not in key
    return False


def _narrowing_int_cvt(key: str) -> bool:
    """cvt between integer types into a narrower one drops the high bits a difference may be in."""
    types = [m for m in key.split(".")[1:] if m[:1] in "bsu" and m[1:].isdigit()]
    return len(types) == 2 and int(types[0][1:]) < int(types[1][1:])


def free_leaves(g, v) -> list:
    """The distinct leaves (inputs, constants, symbols, and operations without operands) below
    ``v``, sorted: each node visited once (a DAG walked as a tree is exponential)."""
    def free(kind, _key, args) -> bool:
        return kind in FREE_LEAVES or not args

    return sorted(x for x in g.below(v, lambda *node: not free(*node)) if free(*g.nodes[x]))
