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

from dataclasses import dataclass, field

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


def first_difference(g, a: int, b: int, elt=None, depth: int = 0) -> Difference:
    na, nb = g.nodes[a], g.nodes[b]
    if na[0] != nb[0] or na[1] != nb[1] or _shape(na[2]) != _shape(nb[2]):
        return _node_difference(g, a, b)
    kind, key, args = na
    if kind == "elt":
        inner = first_difference(g, args[0], nb[2][0], elt=key, depth=depth + 1)
        inner.path.insert(0, a)
        return inner
    fa, fb = _flat(args), _flat(_align(key, args, nb[2]) if kind == "op" else nb[2])
    diff = [(pa, x, y) for (pa, x), (_pb, y) in zip(fa, fb) if x != y]
    if kind == "op" and opword(key) == "mma" and elt is not None:
        diff = [d for d in diff if d[0][0] < 2 or d[0] == (2, elt)]
        if not diff:
            return Difference(a, b, False, "mma", "the forms differ only in C elements this D "
                              "element does not read", ())
    if len(diff) == 1 and depth < 200 and _propagates(g, kind, key, args, diff[0][0]):
        pos, x, y = diff[0]
        leaves = g.nodes[x][0] in FREE_LEAVES and g.nodes[y][0] in FREE_LEAVES
        if not leaves and not (kind in ("st", "mem") and pos[0] == len(args) - 1):
            inner = first_difference(g, x, y, depth=depth + 1)
            inner.path.insert(0, a)
            return inner
    return _args_difference(g, a, b, diff)


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
    """The operation a value is one element of (``elt``), else None."""
    node = g.nodes[v]
    return node[2][0] if node[0] == "elt" else None


def _align(key, xa, xb):
    """For commutative operands (sorted by value number on each side), line up the operand the
    two sides share so only the differing one is compared."""
    from .canon import commutative_positions

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


def _node_difference(g, a, b) -> Difference:
    na, nb = g.nodes[a], g.nodes[b]
    if na[0] in FREE_LEAVES and nb[0] in FREE_LEAVES:
        return Difference(a, b, True, "value")
    if na[0] == nb[0] == "elt" and na[2] == nb[2] and opword(g.nodes[na[2][0]][1]) == "mma":
        return Difference(a, b, True, "value")          # two D elements: each adds its own C
    if na[0] == nb[0] == "ioff" and na[2] == nb[2] and na[1][0] == nb[1][0]:
        return Difference(a, b, True, "value")          # x + c1 vs x + c2, c1 != c2 mod 2^W
    for x, y in ((a, b), (b, a)):
        leaves = _leaves(g, y)
        if g.nodes[x][0] == "in" and x not in leaves and \
                all(g.nodes[v][0] in FREE_LEAVES for v in leaves):
            return Difference(a, b, True, "value")      # an input a pure other side never reads
    if na[0] == "op" and nb[0] == "op":
        return _op_difference(g, a, b)
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


def _op_difference(g, a, b) -> Difference:
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
    if wa == wb and wa in ("add", "mul", "iadd") and _leaves(g, a) == _leaves(g, b):
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


def _args_difference(g, a, b, diff) -> Difference:
    kind, key, args = g.nodes[a]
    if kind in ("st", "mem") and any(p[0] == len(args) - 1 for p, _x, _y in diff):
        return Difference(a, b, False, "memory", "a different memory state underneath", diff[0][0])
    if kind == "op" and opword(key) == "ld" and all(p[0] != 0 for p, _x, _y in diff):
        return Difference(a, b, False, "operand", "the load observes a different memory state",
                          diff[0][0])
    if not diff:
        return Difference(a, b, False, "operand", "no operand differs")
    xs = sorted(x for _p, x, _y in diff)
    ys = sorted(y for _p, _x, y in diff)
    inner = [first_difference(g, x, y, depth=100) for _p, x, y in diff]
    swapped = xs == ys and len(diff) >= 2
    context = _definite_context(g, kind, key, args, [p for p, _x, _y in diff])
    if all(d.definite for d in inner) and context:
        return Difference(a, b, True, "swap" if swapped else "operand", "", diff[0][0])
    if not context:
        why = ("operands swapped" if swapped else "operands differ") + \
            " inside an operation that may mask the difference"
    else:
        why = next(d.reason for d in inner if not d.definite)
    return Difference(a, b, False, "operand", why, diff[0][0])


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


def _leaves(g, v, limit=4096):
    out, stack, n = [], [v], 0
    while stack and n < limit:
        x = stack.pop()
        n += 1
        if isinstance(x, tuple):
            stack.extend(x)
            continue
        kind, _key, args = g.nodes[x]
        if kind in FREE_LEAVES or not args:
            out.append(x)
        else:
            stack.extend(args)
    return sorted(out)
