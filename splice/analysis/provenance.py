"""Provenance: symbolic affine values of registers, resolved by program point.

A value is an affine form ``{atom: coefficient}`` (the constant under the atom ``""``) over atoms
such as

* ``param_0+40`` — the value of the parameter field at that byte offset (``ld.param``);
  the field the weight loads hang off is renamed ``W`` once it is known;
* ``&param_0`` — the address of the parameter block itself (``mov.b64 %rd, kernel_param_0``);
* ``laneid``, ``tid.x|y|z``, ``ctaid.x|y|z`` … — special registers;
* ``smem`` — a shared array's address (the demangled tail of its symbol);
* ``((laneid<<2)&12)`` — the per-column table pattern (``and`` of ``4·laneid`` with 12);
* ``%r123#p`` — an opaque value (a load result, a product of two unknowns …), shown as ``%r123``.

``add/sub/mul(.wide|.lo)/shl/mad/neg/mov/cvt/cvta`` propagate exactly while one factor is a
constant; anything else becomes an opaque atom.  A register's value at a statement is the value
its reaching definition gave it: the latest definition before the statement when that is in the
same basic block or the register has only one definition, otherwise unknown.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m
from . import roles

CONST = ""
_SHARED_TAIL = re.compile(r"E\d+([A-Za-z_]\w*)$")
_MAX_DEPTH = 300
_FIELD_TYPE = re.compile(r"\.([bsuf])(8|16|32|64)\b")


def form(d: dict) -> tuple:
    """A canonical hashable affine form from a dict (zero coefficients dropped)."""
    return tuple(sorted((k, v) for k, v in d.items() if v))


def _add(a: tuple, b: tuple, sb: int = 1) -> tuple:
    """``a + sb·b``.  Every value here is canonical (``form``'s: sorted by atom, no zero
    coefficient), so adding one term is an insertion into ``a``: no dict, no sort."""
    if not b:
        return a
    if len(b) == 1:
        k, v = b[0]
        v *= sb
        if not v:
            return a
        for i, (ka, va) in enumerate(a):
            if ka == k:
                nv = va + v
                return a[:i] + ((k, nv),) + a[i + 1:] if nv else a[:i] + a[i + 1:]
            if ka > k:
                return a[:i] + ((k, v),) + a[i:]
        return a + ((k, v),)
    d = dict(a)
    for k, v in b:
        d[k] = d.get(k, 0) + sb * v
    return form(d)


def _scale(a: tuple, c: int) -> tuple:
    """``c·a`` of a canonical form: the atoms keep their order."""
    if c == 1:
        return a
    if not c:
        return ()
    return tuple([(k, v * c) for k, v in a])


def const_of(f: tuple) -> int:
    for k, v in f:
        if k == CONST:
            return v
    return 0


def coef(f: tuple, atom: str) -> int:
    for k, v in f:
        if k == atom:
            return v
    return 0


TABLE_ATOM = "((laneid<<2)&12)"
TABLE_BOUND = 12


def _upper(f: tuple, bounds: dict):
    """An upper bound of a non-negative form, or None.  ``bounds``: atoms with a known
    non-negative upper bound (masks), owned by one ``Provenance``."""
    tot = 0
    for k, v in f:
        if k == CONST:
            if v < 0:
                return None
            tot += v
        elif k in bounds and v > 0:
            tot += v * bounds[k]
        else:
            return None
    return tot


def _tz(f: tuple) -> int:
    """Trailing zero bits common to every coefficient (atoms assumed arbitrary integers)."""
    t = 64
    for _k, v in f:
        if v:
            t = min(t, (v & -v).bit_length() - 1)
    return t


def _disjoint(a: tuple, b: tuple, bounds: dict) -> bool:
    for x, y in ((a, b), (b, a)):
        u = _upper(x, bounds)
        if u is not None and u < (1 << _tz(y)):
            return True
    return False


def _is_const(f: tuple):
    """A canonical form is constant when it is empty or its one atom is the constant's."""
    return not f or (len(f) == 1 and f[0][0] == CONST)


_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def _is_pointer_atom(a: str) -> bool:
    """Base addresses come first in a rendered form: ``W``, parameter fields, and bare names,
    which are symbols (a shared array's short name) unless they name a special register.
    Decided from the atom's spelling alone, so a render never depends on which kernels were
    analysed before in the same process."""
    if a == "W" or a.startswith(("param", "&param")):
        return True
    return bool(_IDENT.fullmatch(a)) and ("%" + a) not in m.SPECIAL_REGISTERS


def _atom_rank(a: str) -> tuple:
    if _is_pointer_atom(a):
        return (0, a)
    for i, pre in enumerate(("tid.", "ntid.", "ctaid.", "nctaid.", "laneid", "warpid", "(")):
        if a.startswith(pre):
            return (1 + i, a)
    return (9, a)


#: the weight field's atom as it is spelled inside a derived atom (``((W + 4·laneid)&12)``)
_W_TOKEN = re.compile(r"(?<![\w%$.])W(?![\w$])")


def name_weight(text: str, w: Optional[str]) -> str:
    """``text`` with the weight field's atom ``W`` spelled ``w`` (the field's own name where the
    weight-image vocabulary is not granted, ``splice.analysis.vocab``); ``None`` keeps ``W``."""
    return text if w is None or w == "W" else _W_TOKEN.sub(w, text)


def render(f: Optional[tuple], w: Optional[str] = None) -> str:
    """``W + 27648·tid.z + 16·laneid + 8512``; ``w``: how the weight field's atom is written
    (``name_weight``)."""
    if f is None:
        return "?"
    if not f:
        return "0"
    terms = sorted((k for k, _ in f if k != CONST), key=_atom_rank)
    parts = []
    for k in terms:
        v = coef(f, k)
        name = name_weight(k.split("#", 1)[0], w)
        mag = abs(v)
        t = name if mag == 1 else f"{mag}·{name}"
        parts.append(("-" if v < 0 else "+", t))
    c = const_of(f)
    if c:
        parts.append(("-" if c < 0 else "+", str(abs(c))))
    out = ""
    for i, (sgn, t) in enumerate(parts):
        if i == 0:
            out = t if sgn == "+" else "-" + t
        else:
            out += f" {sgn} {t}"
    return out


_UNSEEN = object()
# the opcodes _eval gives a value to (every other definition is opaque)
_EVALUATED = frozenset({"mov", "cvt", "cvta", "add", "sub", "neg", "mul", "shl", "mad", "or",
                        "xor", "and", "shr", "ld"})


def _mentions(f: tuple, field: str) -> bool:
    """Does the form name ``field``, as an atom or inside a derived atom's text (a longer
    field that contains it as text counts too: that only costs an evaluation)?"""
    for a, _v in f:
        if field in a:
            return True
    return False


@dataclass
class Access:
    """One memory access: ``ld``/``st``/``atom``/``red``/``tex``/``sust`` … at statement ``n``."""
    pos: int
    n: Optional[int]
    kind: str           # the roles table's kind: 'ld', 'st', 'atom', 'red', 'tex', 'tld4', 'sust',
                        # 'suld', 'sured', 'ldmatrix', 'stmatrix', 'cp'
    space: str          # at the address: 'global', 'shared', 'shared::cluster', 'param', 'local',
                        # 'const', 'generic', 'tex', 'surf'
    bytes: int
    addr: Optional[tuple]
    regs: tuple         # registers written (loads) or stored (stores)
    effect: str = "read"    # at the address, from the roles table: 'read', 'write', 'read-write'

    @property
    def text(self) -> str:
        return render(self.addr)


def param_names(k) -> list:
    """The entry's parameter names; an unnamed ``.param`` (which ptxas rejects too) is a
    syntax error at its place in the entry's header, not an AttributeError later on."""
    from ..ptx.errors import PtxSyntaxError, line_col, source_line

    fn = k.fn
    names = []
    for i, p in enumerate(fn.params or ()):
        if p.declarator is None:
            src = k.module.source
            pos = fn.span[0] if fn.span else 0
            for _ in range(i + 1):
                pos = src.find(".param", pos + 1)
            line, col = line_col(src, max(pos, 0))
            raise PtxSyntaxError(k.path, line, col, f"parameter {i + 1} of {fn.kind} {fn.name} has no name",
                                 source_line(src, line))
        names.append(p.name)
    return names


class Provenance:
    def __init__(self, k):
        self.k = k
        defs = k.defs()
        self._defs = defs
        dp: dict = {}
        for pos, ds in enumerate(defs):
            for key in ds:
                ps = dp.get(key)
                if ps is None:
                    dp[key] = [pos]
                else:
                    ps.append(pos)
        self.def_pos = dp
        self._memo: dict = {}
        self._truncated = False     # a value was cut at _MAX_DEPTH: values depend on the order
        self._block_of = None       # the CFG's, on first need
        self._consts: dict = {}     # immediate text -> its form (None: a float)
        self._special: dict = {}    # register name -> is it a special register
        self._by_name: dict = {}    # access opcode name -> bytes
        fn = k.fn
        self.param_short = {}
        self._bounds = {TABLE_ATOM: TABLE_BOUND}   # per kernel: mask atoms -> upper bound
        for nm in param_names(k):
            self.param_short[nm] = nm[len(fn.name) + 1:] if nm.startswith(fn.name + "_") else nm
        self.shared = {}
        self._scan_module_arrays()
        self.weight_atom: Optional[str] = None
        self._accesses = None
        self.weight_atom = self._find_weight_field()

    # ---- symbols ---------------------------------------------------------------------------

    def _scan_module_arrays(self):
        for it in self.k.module.decls():
            if it.space in (".shared", ".global", ".const"):
                for d in it.declarators:
                    self.shared[d.name] = self._short_array(d.name)
        for st in self.k.stmts:
            it = st.node
            if isinstance(it, m.Decl) and it.space in (".shared", ".global", ".const", ".local"):
                for d in it.declarators:
                    self.shared[d.name] = self._short_array(d.name)

    @staticmethod
    def _short_array(name: str) -> str:
        mm = _SHARED_TAIL.search(name)
        return mm.group(1) if mm else name

    def _sym_value(self, name: str) -> tuple:
        if name in self.param_short:
            return (("&" + self.param_short[name], 1),)
        if name in self.shared:
            return ((self.shared[name], 1),)
        return ((name, 1),)

    # ---- register values -----------------------------------------------------------------

    def reaching_def(self, key: str, pos: int) -> Optional[int]:
        """The statement index of ``key``'s definition reaching ``pos``, or None if unknown."""
        ps = self.def_pos.get(key)
        if not ps:
            return None
        if len(ps) == 1:         # the only definition: it reaches when it comes first
            d = ps[0]
            return d if d < pos else None
        i = bisect_left(ps, pos) - 1
        if i < 0:
            return None
        d = ps[i]
        block_of = self._block_of
        if block_of is None:
            block_of = self._block_of = self.k.blocks.block_of
        if block_of[d] == block_of[pos]:
            return d
        return None

    def value_at(self, key: str, pos: int, depth: int = 0) -> Optional[tuple]:
        """The affine form of register ``key`` just before statement index ``pos``."""
        d = self.reaching_def(key, pos)
        if d is None:
            return ((key + "#in", 1),)
        return self._value_def(key, d, depth)

    def text_of(self, key: str, pos: int) -> Optional[str]:
        """Readable provenance of ``key`` at ``pos``: an affine form (``W + 16·laneid + 8512``),
        or for an opaque value what produced it (``ld.global.v4 [W + 16·laneid + 8512]``,
        ``mma s1170``, ``cvt.rn.satfinite.e4m3x2.f16x2 s1300``)."""
        f = self.value_at(key, pos)
        if f is None:
            return None
        if len(f) == 1 and f[0][1] == 1 and "#" in f[0][0]:
            atom = f[0][0]
            if atom.endswith("#in"):
                return "?"
            d, _k = self.origin(key, pos)
            if d is not None:
                st = self.k.stmts[d]
                acc = self.access_at(d)
                if acc is not None:
                    return f"{acc.kind}.{acc.space} [{render(acc.addr)}]"
                node = st.node
                nm = node.opcode if node.opcode == "mma" else node.name
                return f"{nm} s{st.n}" if st.n is not None else nm
        return render(f)

    def _operand(self, op, pos: int, depth: int) -> Optional[tuple]:
        t = type(op)
        if t is m.Reg:
            name = op.name
            sp = self._special.get(name)
            if sp is None:
                sp = self._special[name] = op.special
            if sp:
                return ((name[1:], 1),)
            # _key and value_at inlined: this is the hot path of a big module's accesses
            k = self.k
            sid = k._scope_of[pos]
            r = k._resolved[sid].get(name, _UNSEEN)
            if r is _UNSEEN:
                r = k._resolve(name, sid)
            if not r:
                return None
            key = r[0]
            d = self.reaching_def(key, pos)
            if d is None:
                return ((key + "#in", 1),)
            v = self._memo.get((key, d))
            return v if v is not None else self._value_def(key, d, depth + 1)
        if t is m.Imm:
            text = op.text
            f = self._consts.get(text, _UNSEEN)
            if f is _UNSEEN:
                v = op.value
                f = self._consts[text] = None if isinstance(v, float) else (((CONST, int(v)),) if v else ())
            return f
        if t is m.Sym:
            key = self._key(op.name, pos)
            if key:
                return self.value_at(key, pos, depth + 1)
            return self._sym_value(op.name)
        if t is m.Offset:
            b = self._operand(op.base, pos, depth)
            if b is None:
                return None
            return _add(b, ((CONST, int(m.parse_number(op.imm))),))
        if t is m.Addr:
            f = self._operand(op.items[0], pos, depth)
            return f
        return None

    def _key(self, name, pos):
        r = self.k._resolve(name, self.k._scope_of[pos])
        return r[0] if r else None

    def _value_def(self, key: str, d: int, depth: int) -> Optional[tuple]:
        mk = (key, d)
        v = self._memo.get(mk)      # never None once set
        if v is not None:
            return v
        if depth > _MAX_DEPTH:
            self._truncated = True
            return ((f"{key}#{d}", 1),)
        self._memo[mk] = ((f"{key}#{d}", 1),)  # cycle guard
        v = self._eval(key, d, depth)
        if v is None:
            v = ((f"{key}#{d}", 1),)
        self._memo[mk] = v
        return v

    def _eval(self, key: str, d: int, depth: int) -> Optional[tuple]:
        node = self.k.stmts[d].node
        if type(node) is not m.Instruction or node.guard is not None:
            return None
        ops = node.operands
        op = node.opcode
        if op not in _EVALUATED:
            return None      # an opaque value (a load, a float op …): nothing below applies
        if not ops or type(ops[0]) not in (m.Reg, m.Sym):
            if op == "ld" and ".param" in node.name and ops and type(ops[0]) is m.Vec:
                return self._param_field(node, d, depth, key)
            return None
        src = ops[1:]

        def val(i):
            return self._operand(src[i], d, depth) if i < len(src) else None

        r = _arith(op, node, src, val)
        if r is not _NOT_ARITH:
            return r
        if op in ("or", "xor", "add") and len(src) == 2:
            a, b = val(0), val(1)
            if a is not None and b is not None and not _is_const(b) and _disjoint(a, b, self._bounds):
                return _add(a, b)   # disjoint bit ranges: or/xor is an add
        if op in ("and", "shr", "or", "xor") and len(src) == 2:
            return self._bitwise(op, val(0), val(1))
        if op == "ld" and ".param" in node.name:
            return self._param_field(node, d, depth, key)
        return None

    def _bitwise(self, op: str, a, b) -> Optional[tuple]:
        """``a op b`` with ``b`` a constant: folded when ``a`` is one too, else one opaque
        atom named by its expression (an ``and`` with a mask records the atom's bound, which
        later ``or``/``xor`` use to see disjoint bits; ``laneid&12`` is the table atom)."""
        if a is None or b is None or not _is_const(b):
            return None
        c = const_of(b)
        if _is_const(a):
            x = const_of(a)
            r = {"and": x & c, "shr": x >> c, "or": x | c, "xor": x ^ c}[op]
            return ((CONST, r),) if r else ()
        sym = {"and": "&", "shr": ">>", "or": "|", "xor": "^"}[op]
        if op == "and" and a == (("laneid", 4),) and c == 12:
            return ((TABLE_ATOM, 1),)
        inner = render(a)
        if len(a) == 1 and a[0][1] > 1 and (a[0][1] & (a[0][1] - 1)) == 0:
            inner = f"{a[0][0].split('#', 1)[0]}<<{a[0][1].bit_length() - 1}"
        atom = (f"(({inner}){sym}{c})" if " " in inner or "·" in inner or "<<" in inner
                else f"({inner}{sym}{c})")
        if op == "and" and c >= 0:
            self._bounds[atom] = c
        return ((atom, 1),)

    def _param_field(self, node, d, depth, key):
        addr = None
        for o in node.operands[1:]:
            if type(o) is m.Addr:
                addr = self._operand(o, d, depth)
        if addr is None:
            return None
        base = [k for k, v in addr if k != CONST]
        if len(base) != 1 or not base[0].startswith("&") or coef(addr, base[0]) != 1:
            return None
        off = const_of(addr)
        regs = []
        roles._writes_in_dest(node.operands[0], regs)
        size = roles.access_bytes(node.name)
        vec = node.operands[0]
        per = size // max(1, len(vec.items)) if type(vec) is m.Vec else size
        for i, nm in enumerate(regs):
            if self._key(nm, d) == key:
                field = f"{base[0][1:]}+{off + i * per}"
                if self.weight_atom and field == self.weight_atom:
                    return (("W", 1),)
                return ((field, 1),)
        return None

    # ---- accesses -------------------------------------------------------------------------

    @property
    def accesses(self) -> list:
        if self._accesses is None:
            self._accesses = self._scan_accesses()
        return self._accesses

    def _scan_accesses(self) -> list:
        out = []
        k = self.k
        stmts = k.stmts
        at = sorted(p for op in roles.ACCESS_OPCODES for p in k.indices_of(op))   # in program order
        for pos in at:
            st = stmts[pos]
            a = self._access(pos, st.n, st.node)
            if a is not None:
                out.append(a)
        return out

    def _access(self, pos: int, n, node) -> Optional[Access]:
        """The data access of ``node`` as the roles table declares it (None for hints,
        mbarrier objects and forms without a ``[...]`` address)."""
        acc = roles.memory_access(node)
        if acc is None or not acc.kind:
            return None
        ops = node.operands
        name = node.name
        size = self._by_name.get(name)
        if size is None:
            size = self._by_name[name] = roles.access_bytes(name)
        addr = self._operand(ops[acc.addr], pos, 0)
        regs: list = []                 # registers loaded into, else registers stored
        for i in acc.out:
            roles._writes_in_dest(ops[i], regs)
        for i in acc.data if not acc.out else ():
            roles._collect(ops[i], regs)
        return Access(pos, n, acc.kind, acc.space, size, addr, tuple(regs), acc.effect)

    def _rescan_accesses(self, field: str, old: list) -> list:
        """The accesses again once ``field`` is named ``W``: only those whose address mentions
        the field are evaluated again (see ``_rename``)."""
        out = []
        stmts = self.k.stmts
        for a in old:
            if a.addr is not None and _mentions(a.addr, field):
                a = self._access(a.pos, a.n, stmts[a.pos].node)
            out.append(a)
        return out

    def _rename(self, field: str) -> None:
        """Values change now that the weight field is named ``W``.  Reaching definitions
        point strictly backwards, so without a cut at ``_MAX_DEPTH`` a value does not depend
        on the order of evaluation: only the memoized values (and accesses) that mention the
        field — as an atom or inside a derived one such as ``((param_0+8 + …)&12)`` — are
        evaluated again, and they come out as a fresh evaluation would.  Otherwise (or if
        the partial pass itself is cut) everything is evaluated again from scratch."""
        old = self._accesses
        if self._truncated or old is None:
            self._memo = {}
            self._accesses = None
            return
        self._memo = {mk: v for mk, v in self._memo.items() if not _mentions(v, field)}
        self._accesses = self._rescan_accesses(field, old)
        if self._truncated:
            self._memo = {}
            self._accesses = None

    def _find_weight_field(self) -> Optional[str]:
        """The parameter field most global loads hang off (the weight image ``W``)."""
        from collections import Counter

        shorts = set(self.param_short.values())

        def fields(a):
            return [k for k, v in a.addr if v == 1 and k.split("+", 1)[0] in shorts]

        # first choice: the field the mma B operands are loaded from
        cnt = Counter()
        for pos in self.k.indices_of("mma"):      # is_mma(name) is the opcode "mma"
            node = self.k.stmts[pos].node
            if len(node.operands) > 2:
                regs = []
                roles._collect(node.operands[2], regs)
                for r in regs:
                    key = self._key(r, pos)
                    d = self.origin(key, pos)[0] if key else None
                    a = self.access_at(d) if d is not None else None
                    if a is not None and a.kind == "ld" and a.addr:
                        cnt.update(fields(a))
        if not cnt:   # else: the field most global loads hang off (at least two of them)
            for a in self.accesses:
                if a.kind == "ld" and a.space in ("global", "generic") and a.addr:
                    cnt.update(fields(a))
            if not cnt or cnt.most_common(1)[0][1] < 2:
                return None
        field, c = cnt.most_common(1)[0]
        if hasattr(self, "_acc_by_pos"):
            del self._acc_by_pos
        # rename the field to W everywhere already computed
        self.weight_atom = field
        self._rename(field)
        return field

    # ---- questions others ask ----------------------------------------------------------------

    def origin(self, key: str, pos: int):
        """Follow plain register copies (``mov``/``cvt`` of one register) back from the value
        ``key`` has at ``pos``: returns (def index, key) of the first non-copy definition."""
        seen = 0
        while seen < 64:
            d = self.reaching_def(key, pos)
            if d is None:
                return None, key
            node = self.k.stmts[d].node
            if (type(node) is m.Instruction and node.opcode == "mov" and len(node.operands) == 2
                    and type(node.operands[1]) in (m.Reg, m.Sym) and node.guard is None):
                src = node.operands[1]
                if type(src) is m.Reg and src.special:
                    return d, key
                k2 = self._key(src.name, d)
                if k2 is None:
                    return d, key
                key, pos = k2, d
                seen += 1
                continue
            return d, key
        return None, key

    def access_at(self, pos: int) -> Optional[Access]:
        if not hasattr(self, "_acc_by_pos"):
            self._acc_by_pos = {a.pos: a for a in self.accesses}
        return self._acc_by_pos.get(pos)

    def param_loads(self):
        """(access, parameter name, byte offset) of every ``ld.param`` whose address is one
        parameter's ``&param`` plus a constant: the reads of the entry's parameter fields, which
        the spec's field table, the harness's field types and ``fields_read`` all start from."""
        for a in self.accesses:
            if a.space != "param" or a.kind != "ld" or not a.addr:
                continue
            base = [k for k, _v in a.addr if k != CONST]
            if len(base) == 1 and base[0].startswith("&"):
                yield a, base[0][1:], const_of(a.addr)

    def field_types(self) -> dict:
        """{'param_0+88': '.u64', …}: the type each parameter field is read with (``ld.param``;
        a vector load gives each element its own field), so a harness reads a field exactly as
        wide and extends it with the same signedness."""
        out: dict = {}
        for a, param, off in self.param_loads():
            name = self.k.stmts[a.pos].node.name
            found = _FIELD_TYPE.findall(name)
            if not found:
                continue
            kind, bits = found[-1]
            n = max(1, len(a.regs))
            per = roles.access_bytes(name) // n
            for i in range(n):
                out.setdefault(f"{param}+{off + i * per}", f".{'s' if kind == 's' else 'u'}{bits}")
        return out

    def fields_read(self) -> list:
        """[(field, statement number)] of every ``ld.param`` of the entry."""
        return [(f"{param}+{off}", a.n, a.bytes) for a, param, off in self.param_loads()]


#: what ``_arith`` returns for an op it does not evaluate (None is "not affine")
_NOT_ARITH = object()


def _arith(op: str, node, src, val):
    """The affine value of a move, add, sub, neg, or a multiply, shift or multiply-add by a
    constant (None: not affine); ``_NOT_ARITH`` for any other op.  ``val(i)``: operand i's
    value."""
    if op in ("mov", "cvt", "cvta") and len(src) == 1:
        return None if type(src[0]) is m.Vec else val(0)
    if op in ("add", "sub") and len(src) == 2:
        a, b = val(0), val(1)
        return _add(a, b, -1 if op == "sub" else 1) if a is not None and b is not None else None
    if op == "neg" and len(src) == 1:
        a = val(0)
        return _scale(a, -1) if a is not None else None
    if op == "mul" and len(src) == 2 and ".hi" not in node.name and node.modifiers \
            and node.modifiers[-1][1:2] in ("s", "u", "b"):
        a, b = val(0), val(1)
        if a is None or b is None:
            return None
        if _is_const(b):
            return _scale(a, const_of(b))
        return _scale(b, const_of(a)) if _is_const(a) else None
    if op == "shl" and len(src) == 2:
        a, b = val(0), val(1)
        return _scale(a, 1 << const_of(b)) if a is not None and b is not None and _is_const(b) else None
    if op == "mad" and len(src) == 3 and (".lo" in node.name or ".wide" in node.name):
        a, b, c = val(0), val(1), val(2)
        if a is None or b is None or c is None:
            return None
        if _is_const(b):
            return _add(_scale(a, const_of(b)), c)
        return _add(_scale(b, const_of(a)), c) if _is_const(a) else None
    return _NOT_ARITH
