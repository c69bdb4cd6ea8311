"""Exact facts for ``splice notes``, computed from the public Kernel API only.

* ``Facts(k)`` — whole-kernel def-use (every use linked to its unique reaching definition, via
  ``k.provenance.reaching_def``), region labels (prologue / phase / epilogue), and on top of it:
* ``sources(pos)`` — what a definition's value is made of, walking def-use backwards through
  every non-mma, non-load instruction: phases whose mma D it reads, loads it reads, and
  definitions that are not unique at the use (control-flow merges) as unresolved;
* ``feeds(pos, key)`` — where a value goes, walking forward through register copies
  (``mov``/``cvt`` of one source, ``mov.b32 {lo, hi}`` packing): mma operands (phase + role),
  stores (space + symbolic base), or the first other instruction that consumes it;
* ``subsections(e)`` — contiguous runs of an epilogue grouped by what they compute;
* ``constants()`` — ``mov.f32``/``mov.f64`` literals with their f16 rounding and reuse;
* ``io(e)`` / ``memory(first, last)`` — live-in/live-out with definitions and consumers, and
  the accesses grouped by space and symbolic base.
"""
from __future__ import annotations

import re
import struct
from bisect import bisect_right
from collections import Counter, defaultdict
from typing import Optional

from ..errors import SpliceError
from ..ptx import model as m
from . import roles
from .epilogues import cvt_direction
from .fixpoint import PRIORITY, solve
from .provenance import CONST, TABLE_ATOM, coef, const_of, render
from .reaching import Reaching
from .roles import READ, READ_WRITE, WRITE
from .vocab import field_types, pointer_fields, vocabulary

SPECIAL = ("rcp", "rsqrt", "sqrt", "ex2", "lg2", "div", "sin", "cos", "tanh")
ARITH = ("add", "sub", "mul", "fma", "mad", "max", "min", "neg", "abs", "copysign", "set",
         "setp") + SPECIAL
FLOAT_T = (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64")
COPY = ("mov", "cvt", "cvta")


def _is_float_op(node) -> bool:
    nm = node.name
    return any(nm.endswith(t) or (t + ".") in nm + "." for t in FLOAT_T)


def is_pack(node) -> bool:
    nm = node.name
    return node.opcode == "cvt" and "satfinite" in nm and "e4m3x2" in nm and "f16x2" in nm


def _cvt_class(node, dldn: bool) -> Optional[str]:
    """A conversion's class: the DLDN notes' requantise/unpack (the e4m3x2 forms) where the
    profile asks for them, else packs/unpacks by direction (``epilogues.cvt_direction``)."""
    if dldn:
        if is_pack(node):
            return "requantise"
        return "unpack" if "e4m3x2" in node.name else None
    d = cvt_direction(node)
    return {"pack": "packs", "unpack": "unpacks"}.get(d)


def f16_of(x: float):
    """(bits, value) of ``x`` rounded to binary16 (round to nearest even), or None on overflow."""
    try:
        b = struct.pack("<e", x)
    except (OverflowError, struct.error):
        return None
    bits = struct.unpack("<H", b)[0]
    return bits, struct.unpack("<e", b)[0]



def _stores(acc) -> bool:
    """``acc`` (a provenance access, or None) puts a value into memory: a store, reduction,
    atomic or surface write (the roles memory table's effect), not a copy (memory to memory)."""
    return acc is not None and acc.effect in (WRITE, READ_WRITE) and acc.kind != "cp"

#: the most (definition, use) pairs the forward def-use map holds through joins of paths.  Their
#: number can grow as the square of the kernel: n blocks that each skip or take one ``add`` of
#: the same register leave n/2 definitions reaching each of n uses (200k blocks: more than 8 GB
#: and a MemoryError; 20k: 3 minutes).  The stand-ins need 24k pairs in all, the largest corpus
#: kernels fewer than 100k.
MAX_JOINED_PAIRS = 4_000_000


def _too_many_joins(k, key: str, pos: int, here: int):
    st = k.stmts[pos]
    raise SpliceError(f"{k.name}: more than {MAX_JOINED_PAIRS} (definition, use) pairs through joins of "
                      f"paths (s{st.n} reads {k.display(key)} from {here} definitions): too many to "
                      "draft notes from (splice's limit)", k.path, st.line)


class Facts:
    def __init__(self, k, vocab=None):
        self.k = k
        self.V = vocab or vocabulary(k)     # the words this kernel's report may use
        self.prov = k.provenance
        self.defs, self.uses, self.guarded = k.du()
        stmts = k.stmts
        self.phase_at = {}                 # pos of an mma -> phase index
        for p in k.phases:
            for st in p.mma:
                self.phase_at[k.pos_of(st.n)] = p.index
        self.epis = list(k.epilogues)
        self._epi_starts = [k.first_pos_of(e.first) for e in self.epis]
        self._epi_ends = [k.pos_of(e.last) for e in self.epis]
        self._ph_starts = [k.first_pos_of(p.first) for p in k.phases]
        self._ph_ends = [k.pos_of(p.last) for p in k.phases]
        # forward def-use: (key, def pos) -> [use pos]; per key: sorted use positions
        users = defaultdict(list)
        use_pos = defaultdict(list)
        rd = self.prov.reaching_def
        def_pos = self.prov.def_pos
        reach = None    # every definition that may reach a use, where no single one does
        joined = 0      # (definition, use) pairs through joins: bounded, see MAX_JOINED_PAIRS
        for pos, us in enumerate(self.uses):
            for key in us:
                use_pos[key].append(pos)
                d = rd(key, pos)
                if d is not None:
                    users[(key, d)].append(pos)
                elif len(def_pos.get(key, ())) > 1:   # a loop-carried value, a join of paths
                    if reach is None:
                        reach = Reaching(k)
                    ds = reach.defs(key, pos)
                    joined += len(ds)
                    if joined > MAX_JOINED_PAIRS:
                        _too_many_joins(k, key, pos, len(ds))
                    for d in ds:
                        users[(key, d)].append(pos)
        self.users = users
        self.use_pos = use_pos
        self._src = {}
        self._nstmts = len(stmts)

    # ---- places ----------------------------------------------------------------------------

    def region(self, pos: int) -> str:
        i = bisect_right(self._ph_starts, pos) - 1
        if i >= 0 and pos <= self._ph_ends[i]:
            return f"P{self.k.phases[i].index}"
        j = bisect_right(self._epi_starts, pos) - 1
        if j >= 0 and pos <= self._epi_ends[j]:
            return f"E{self.epis[j].index}"
        if not self._ph_starts or pos < self._ph_starts[0]:
            return "prologue"
        return "after the phases"

    def n(self, pos: int):
        return self.k.stmts[pos].n

    def node(self, pos: int):
        return self.k.stmts[pos].node

    def key(self, name: str, pos: int):
        r = self.k._resolve(name, self.k._scope_of[pos])
        return r[0] if r else None

    # ---- backward: what a value is made of ---------------------------------------------------

    def _leaf(self, d):
        if d in self.phase_at:
            return frozenset({("P", self.phase_at[d])})
        acc = self.prov.access_at(d)
        if acc is not None and acc.effect in (READ, READ_WRITE):   # a value read from memory
            return frozenset({("ld", d)})
        return None

    def _children(self, d):
        out = []
        leaves = set()
        rd = self.prov.reaching_def
        for key in self.uses[d]:
            x = rd(key, d)
            if x is None:
                if self.prov.def_pos.get(key):
                    leaves.add(("?", self.k.display(key), d))
                else:
                    leaves.add(("in", self.k.display(key)))
            else:
                out.append(x)
        return out, leaves

    def sources(self, d: int) -> frozenset:
        """Sources of the value(s) defined at statement index ``d`` (memoised, iterative)."""
        memo = self._src
        if d in memo:
            return memo[d]
        stack = [(d, 0)]
        busy = set()
        while stack:
            x, state = stack.pop()
            if state == 0:
                if x in memo:
                    continue
                leaf = self._leaf(x)
                if leaf is not None:
                    memo[x] = leaf
                    continue
                if x in busy:
                    continue
                busy.add(x)
                kids, _ = self._children(x)
                stack.append((x, 1))
                for c in kids:
                    if c not in memo and c not in busy:
                        stack.append((c, 0))
            else:
                kids, leaves = self._children(x)
                acc = set(leaves)
                for c in kids:
                    acc |= memo.get(c, frozenset())
                memo[x] = frozenset(acc)
                busy.discard(x)
        return memo[d]

    def operand_sources(self, pos: int) -> frozenset:
        """Sources of every register statement ``pos`` reads."""
        kids, leaves = self._children(pos)
        acc = set(leaves)
        for c in kids:
            acc |= self.sources(c)
        return frozenset(acc)

    # ---- forward: where a value goes -----------------------------------------------------------

    def mma_role(self, pos: int, key: str):
        node = self.node(pos)
        dd, aa, bb, cc = roles.mma_fragments(node)
        nm = self.k.display(key)
        for role, regs in (("A", aa), ("B", bb), ("C", cc)):
            if nm in regs:
                return role
        return "?"

    def feeds(self, d: int, key: Optional[str] = None, limit: int = 200):
        """Consumers of the value(s) defined at ``d``: a Counter of labels such as
        ``('mma', 11, 'A')``, ``('st', 'shared', base)``, ``('op', 'add.f16', region)``; the set of
        final registers reaching an mma is in the second result."""
        out = Counter()
        regs = defaultdict(set)
        keys = [key] if key else list(self.defs[d])
        todo = [(kk, d) for kk in keys]
        seen = set()
        steps = 0
        while todo and steps < limit:
            kk, x = todo.pop()
            if (kk, x) in seen:
                continue
            seen.add((kk, x))
            steps += 1
            for u in self.users.get((kk, x), ()):
                node = self.node(u)
                if u in self.phase_at:
                    role = self.mma_role(u, kk)
                    out[("mma", self.phase_at[u], role)] += 1
                    regs[(self.phase_at[u], role)].add(self.k.display(kk))
                    continue
                acc = self.prov.access_at(u)
                if _stores(acc):
                    out[("st", acc.space, _base(acc.addr, self.V.w), self.region(u))] += 1
                    continue
                if not self.guarded[u] and (node.opcode == "mov" or (
                        node.opcode == "cvt" and len(self.uses[u]) == 1
                        and "e4m3" not in node.name and "e5m2" not in node.name)):
                    for k2 in self.defs[u]:
                        todo.append((k2, u))
                    continue
                out[("op", node.name, self.region(u))] += 1
        return out, regs

    # ---- sub-sections --------------------------------------------------------------------------

    def anchor_class(self, pos: int, e) -> Optional[str]:
        """What statement ``pos`` computes by itself (None: it takes a neighbour's class,
        ``_classes``): its memory access, its conversion, its special op.  Neutral words; the
        DLDN notes' (requantise, shared staging, weight and table loads …) where the profile
        asks for them (``vocab``)."""
        node = self.node(pos)
        if type(node) is not m.Instruction:
            return None
        dldn = self.V.has("dldn-epilogue-names")
        op = node.opcode
        if op == "cvt":
            c = _cvt_class(node, dldn)
            if c:
                return c
        acc = self.prov.access_at(pos)
        if acc is not None:
            return self._access_class(acc, e, dldn)
        if op in ("bar", "barrier"):
            return "shared staging" if dldn else "barriers"
        if op == "movmatrix":
            return "transpose (movmatrix)"
        if op == "shfl":
            return "warp shuffles"
        if op in SPECIAL:
            return f"{op} (special function)"
        if op in ARITH and op not in ("set", "setp") and _is_float_op(node):
            return "float arithmetic"
        return None

    def _access_class(self, acc, e, dldn: bool) -> Optional[str]:
        if acc.kind == "ld" and acc.space == "param":
            return None
        if roles.is_shared(acc.space):
            return "shared staging" if dldn else "shared memory"
        n = acc.n
        if dldn and acc.kind == "ld" and acc.addr is not None and coef(acc.addr, "W") == 1:
            nb = e.dldn_features.get("next-B loads")
            nc = e.dldn_features.get("C-seed loads")
            if (nb and n in nb.stmts) or (nc and n in nc.stmts):
                return "next B/C loads"
            return "table loads" if coef(acc.addr, TABLE_ATOM) else "weight loads"
        if acc.kind in ("ld", "st", "red", "atom"):
            if not dldn and acc.kind == "ld" and any(
                    n in f.stmts for kk, f in e.kinds.items() if kk.startswith("loads feeding")):
                return "loads of the next phase's operands"
            fs = pointer_fields(acc.addr, field_types(self.k))
            what = "loads" if acc.kind == "ld" else "stores"
            space = "local-array" if acc.space == "local" and not dldn else acc.space
            # the DLDN notes name a store's buffer only; their loads keep their space alone
            if len(fs) != 1 or (acc.kind == "ld" and dldn):
                return f"{space} {what}"
            return f"{space} {what}" + (" into " if acc.kind != "ld" else " from ") + \
                render(((fs[0], 1),), self.V.w)
        if acc.kind in ("tex", "tld4"):
            return "texture gather" if dldn else "texture reads"
        if acc.kind in ("sust", "sured"):
            return "surface write" if dldn else "surface writes"
        return None

    def subsections(self, e, max_sections: int = 10):
        """An epilogue cut into at most ``max_sections`` runs of statements that compute one
        thing (``_classes``), adjacent runs of the same name merged, each with its histogram,
        range and name.  A name lists only classes whose anchor statements the run holds
        (``_proven_name``): a run of address arithmetic classed by the stores it feeds is
        "arithmetic feeding global stores", never "global stores" (Triton's s262–s292 held no
        store)."""
        a, b = self.k.first_pos_of(e.first), self.k.pos_of(e.last)
        cls, origin = self._classes(e, a, b)
        runs: list[dict] = []
        for pos in range(a, b + 1):   # runs over numbered statements
            if self.n(pos) is None:
                continue
            c = cls[pos]
            if runs and runs[-1]["cls"] == c:
                runs[-1]["pos"].append(pos)
                runs[-1]["mix"][c] += 1
            else:
                runs.append({"cls": c, "pos": [pos], "mix": Counter({c: 1})})
        runs = _smooth(runs, max_sections)
        for r in runs:
            r["name"] = self._proven_name(r, cls, origin)
        i = 1
        while i < len(runs):      # adjacent runs computing the same thing are one section
            if runs[i]["name"] == runs[i - 1]["name"]:
                runs[i - 1]["pos"].extend(runs[i]["pos"])
                runs[i - 1]["mix"].update(runs[i]["mix"])
                del runs[i]
            else:
                i += 1
        for r in runs:
            hist = Counter(self.node(p).name for p in r["pos"]
                           if type(self.node(p)) is m.Instruction)
            r["hist"] = hist
            r["first"], r["last"] = self.n(r["pos"][0]), self.n(r["pos"][-1])
            r["name"] = self._proven_name(r, cls, origin)
            head = r["name"].partition(", feeding ")[0]
            named = [] if head == "plumbing" or head.startswith("arithmetic feeding ") else head.split(" + ")
            r["anchors"] = {c: [self.n(p) for p in r["pos"] if origin.get(p) == "anchor" and cls[p] == c]
                            for c in named}
        return runs

    def _proven_name(self, r, cls, origin) -> str:
        """The run's name (``_name`` of its class mix) kept to the classes it holds an anchor
        statement of; a run without one is named by the class it feeds (def-use), else
        "plumbing"."""
        held = {cls[p] for p in r["pos"] if origin.get(p) == "anchor"}
        fed = {cls[p] for p in r["pos"] if origin.get(p) == "feeds"}
        named = _name(r["mix"], None).split(" + ")
        parts = [c for c in named if c in held]
        if not parts:       # the _name share rule may drop a rare anchor: keep the largest one
            parts = [c for c, _n in r["mix"].most_common() if c in held][:1]
        feeding = [c for c in named if c not in held and c in fed]
        if not parts:
            return f"arithmetic feeding {feeding[0]}" if feeding else "plumbing"
        return " + ".join(parts) + (f", feeding {' and '.join(feeding)}" if feeding else "")

    def _classes(self, e, a: int, b: int) -> tuple:
        """(position -> what the statement computes, position -> how that was decided): its
        own anchor class ('anchor'), else its earliest in-range consumer's ('feeds'), else its
        in-range producer's ('reads'); labels and branches follow the statement before them
        ('after'; "plumbing" when nothing precedes)."""
        cls = {}
        origin = {}
        for pos in range(a, b + 1):
            c = self.anchor_class(pos, e)
            if c:
                cls[pos] = c
                origin[pos] = "anchor"
        for pos in range(b, a - 1, -1):   # forward: the earliest in-range consumer's class
            if pos in cls or type(self.node(pos)) is not m.Instruction:
                continue
            best = None
            for kk in self.defs[pos]:
                for u in self.users.get((kk, pos), ()):
                    if a <= u <= b and u in cls and (best is None or u < best):
                        best = u
            if best is not None:
                cls[pos] = cls[best]
                origin[pos] = "feeds"
        prev = None
        rd = self.prov.reaching_def
        for pos in range(a, b + 1):       # backward: the producer's class, else the previous
            if pos in cls:
                prev = cls[pos]
                continue
            c = None
            if type(self.node(pos)) is m.Instruction:
                for kk in self.uses[pos]:
                    x = rd(kk, pos)
                    if x is not None and a <= x <= b and x in cls:
                        c = cls[x]
            origin[pos] = "reads" if c else "after"
            cls[pos] = c or prev or "plumbing"
            prev = cls[pos]
        return cls, origin

    # ---- constants -----------------------------------------------------------------------------

    def constants(self):
        rows = {}
        for pos, st in enumerate(self.k.stmts):
            node = st.node
            if type(node) is not m.Instruction or node.opcode != "mov" or len(node.operands) != 2:
                continue
            if not node.name.endswith((".f32", ".f64", ".f16")):
                continue
            src = node.operands[1]
            if type(src) is not m.Imm:
                continue
            txt = src.text
            try:
                v = float(src.value)
            except Exception:
                continue
            r = rows.get(txt)
            dst = self.defs[pos][0] if self.defs[pos] else None
            if r is None:
                r = rows[txt] = {"literal": txt, "value": v, "f16": f16_of(v), "defs": [],
                                 "def_regions": [], "use_regions": Counter(), "consumers": Counter(),
                                 "reg": self.k.display(dst) if dst else "?", "opcode": node.name}
            r["defs"].append(pos)
            reg = self.region(pos)
            if reg not in r["def_regions"]:
                r["def_regions"].append(reg)
            if dst:
                f, _ = self.feeds(pos, dst, limit=50)
                for lab, c in f.items():
                    if lab[0] == "op":
                        r["use_regions"][lab[2]] += c
                        r["consumers"][lab[1]] += c
                    elif lab[0] == "mma":
                        r["use_regions"][f"P{lab[1]}"] += c
                        r["consumers"][f"mma {lab[2]}"] += c
                    else:
                        r["use_regions"][lab[3]] += c
                        r["consumers"][f"st.{lab[1]}"] += c
        return sorted(rows.values(), key=lambda r: r["defs"][0])

    # ---- inputs / outputs / memory ---------------------------------------------------------------

    def describe_def(self, d):
        """(group label, statement number) of a definition."""
        if d is None:
            return "a definition that is not unique here (control-flow merge)", None
        n = self.n(d)
        if d in self.phase_at:
            return f"P{self.phase_at[d]}'s mma (D)", n
        acc = self.prov.access_at(d)
        node = self.node(d)
        reg = self.region(d)
        if acc is not None and acc.kind == "ld":
            if acc.space == "param":
                return f"{reg}: ld.param", n
            return f"{reg}: ld.{acc.space} [{base_text(acc.addr, self.V.w)}]", n
        if node.opcode == "mov" and len(node.operands) == 2 and type(node.operands[1]) is m.Imm:
            return f"{reg}: constant {node.name}", n
        return f"{reg}: {node.name}", n

    def first_consumer(self, reg: str, b: int) -> tuple:
        """(label, statement number or None) of the first statement after position ``b`` that
        reads ``reg``: an mma names its phase and operand role; none means the value is live
        only around a loop back edge."""
        key = self.key(reg, b) or reg
        ups = self.use_pos.get(key, [])
        i = bisect_right(ups, b)
        if i == len(ups):
            return "no later statement (live only around a loop back edge)", None
        u = ups[i]
        lab, n = self.describe_use(u)
        if u in self.phase_at:
            lab = f"P{self.phase_at[u]}'s mma as {self.mma_role(u, key)}"
        return lab, n

    def describe_use(self, u):
        n = self.n(u)
        if u in self.phase_at:
            return f"P{self.phase_at[u]}'s mma", n
        return f"{self.region(u)}: {self.node(u).name}", n

    def io(self, e):
        k = self.k
        abi = k.abi(e.first, e.last)
        a, b = k.first_pos_of(e.first), k.pos_of(e.last)
        ins = defaultdict(list)
        rd = self.prov.reaching_def
        for r in abi.live_in:
            key = self.key(r.reg, a) or r.reg
            lab, n = self.describe_def(rd(key, a))
            ins[lab].append((r.reg, n))
        outs = defaultdict(list)
        for r in abi.live_out:
            lab, n = self.first_consumer(r.reg, b)
            outs[lab].append((r.reg, n))
        return abi, ins, outs

    def memory(self, first: int, last: int):
        """Accesses of statements first…last grouped by (kind, space, symbolic base)."""
        k = self.k
        a, b = k.first_pos_of(first), k.pos_of(last)
        groups = {}
        for acc in self.prov.accesses:
            if acc.pos < a or acc.pos > b:
                continue
            if acc.kind in ("tex", "sust", "suld", "tld4"):
                base = (("<handle>", 1),) if acc.addr is None else symbolic_base(acc.addr)
            else:
                base = symbolic_base(acc.addr) if acc.addr is not None else None
            node = self.node(acc.pos)
            g = groups.setdefault((acc.kind, acc.space, base, node.name),
                                  {"kind": acc.kind, "space": acc.space, "opcode": node.name,
                                   "base": base, "offs": [], "stmts": []})
            g["offs"].append(const_of(acc.addr) if acc.addr is not None else None)
            g.setdefault("opaque", []).extend(opaque_terms(acc.addr))
            g["stmts"].append(acc.n)
        return sorted(groups.values(), key=lambda g: g["stmts"][0])

    def params_unread(self):
        """Byte ranges of each parameter that no ``ld.param`` reads: [(param, size, [(lo, hi)])]."""
        out = []
        fields = self.prov.fields_read()
        for p in self.k.fn.params or ():
            short = self.prov.param_short.get(p.name, p.name)
            el = 1
            for at in p.attrs:
                mm = re.match(r"^\.[bsuf](\d{1,9})$", at)
                if mm:
                    el = int(mm.group(1)) // 8
            size = el
            for dd in p.declarator.dims or ():
                size *= dd or 0
            read = []
            for f, _n, nb in fields:
                base, _, off = f.rpartition("+")
                if base == short:
                    read.append((int(off), int(off) + nb))
            gaps = _gaps(size, read)
            out.append((short, size, gaps))
        return out


def param_addresses(k) -> dict:
    """{parameter name: statement number} of the parameters whose address escapes: taken by
    an instruction (``mov.b32 %r18, p``) and used other than as an ``ld.param`` address (a TMA
    descriptor handed to ``cp.async.bulk.tensor`` through a ``cvt``, a call argument).  nvcc's
    ``mov.b64 %rd9, p; ld.param.u64 %rd2, [%rd9+40]`` stays byte-tracked (provenance reads
    those loads as fields of ``p``)."""
    names = {p.name for p in k.fn.params or ()}
    holder: dict = {}             # register key holding a parameter's address -> (param, s#)
    out: dict = {}
    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not m.Instruction or st.n is None:
            continue
        defs, uses = k.defs_uses(node, pos)
        param_ld = node.opcode == "ld" and ".param" in node.name
        for key in uses:
            if key in holder and not param_ld:
                out.setdefault(*holder[key])
        taken = [o.name for o in node.operands[1:] if type(o) is m.Sym and o.name in names]
        for d in defs:
            holder.pop(d, None)
            if taken:
                holder[d] = (taken[0], st.n)
        if taken and not defs:
            out.setdefault(taken[0], st.n)
    return out


def _gaps(size: int, read) -> list:
    """The [lo, hi) byte ranges of ``0..size`` that no ``read`` range covers, from the ranges
    alone: the size is the module's own declaration (``.b8 p[N]``, any N a user typed), so
    nothing may be allocated or walked per byte of it."""
    gaps, at = [], 0
    for lo, hi in sorted(read):
        lo, hi = min(max(lo, 0), size), min(hi, size)
        if hi <= lo:
            continue
        if lo > at:
            gaps.append((at, lo))
        at = max(at, hi)
    if at < size:
        gaps.append((at, size))
    return gaps


def symbolic_base(addr):
    """The symbolic base of an address: no constant, and every opaque term (a register value
    the affine walk could not reduce) replaced by one ``idx`` atom with its coefficient."""
    if addr is None:
        return None
    out = []
    opq = {}
    for a, c in addr:
        if a == CONST:
            continue
        if "#" in a:
            opq[c] = opq.get(c, 0) + 1
        else:
            out.append((a, c))
    for c in sorted(opq):
        # spelled like the opaque register terms it stands for ("name#def"): rendered as `idx`,
        # ordered after the base and the thread terms, never taken for a symbol
        out.append(("idx#" if len(opq) == 1 else f"idx{len(out)}#", c))
    return tuple(sorted(out))


def opaque_terms(addr):
    """[(register name, def statement index)] of the opaque terms of an address."""
    out = []
    for a, _c in addr or ():
        if "#" in a:
            nm, _, d = a.partition("#")
            out.append((nm.split("@", 1)[0], int(d) if d.isdigit() else None))
    return out


def _base(addr, w=None):
    return render(symbolic_base(addr), w) if addr is not None else "?"


def base_text(addr, w=None):
    """``base + offset`` of an address; ``w``: how the weight atom is written (``vocab``)."""
    if addr is None:
        return "?"
    b = render(tuple(x for x in addr if x[0] != CONST), w)
    c = const_of(addr)
    return f"{b} + {c}" if c and b != "0" else (b if b != "0" else str(c))


def offsets_text(offs):
    offs = [o for o in offs if o is not None]
    if not offs:
        return ""
    if len(set(offs)) == 1:
        return f"+{offs[0]}" if offs[0] else ""
    steps = {b - a for a, b in zip(offs, offs[1:])}
    lo, hi = min(offs), max(offs)
    if len(steps) == 1:
        return f"+{offs[0]} … +{offs[-1]} step {steps.pop()}"
    return f"+{lo} … +{hi} ({len(set(offs))} distinct offsets)"


def _smooth(runs, max_sections):
    def merge(i, j):   # merge runs i..j (inclusive) into i
        r = runs[i]
        for x in runs[i + 1:j + 1]:
            r["pos"].extend(x["pos"])
            r["mix"].update(x["mix"])
        del runs[i + 1:j + 1]
        r["cls"] = r["mix"].most_common(1)[0][0]

    def size(r):
        return len(r["pos"])

    def plumbing():          # plumbing joins its predecessor
        for i in range(1, len(runs)):
            if runs[i]["cls"] == "plumbing":
                merge(i - 1, i)
                return True
        return False

    def interruption():      # short interruptions between two runs of one class
        for i in range(1, len(runs) - 1):
            if runs[i - 1]["cls"] == runs[i + 1]["cls"] and \
                    size(runs[i]) <= max(2, min(size(runs[i - 1]), size(runs[i + 1])) // 4):
                merge(i - 1, i + 1)
                return True
        return False

    def neighbours():
        for i in range(1, len(runs)):
            if runs[i]["cls"] == runs[i - 1]["cls"]:
                merge(i - 1, i)
                return True
        return False

    # the rules by priority: after any merge they are tried again from the first
    rules = (plumbing, interruption, neighbours)
    solve(len(rules), lambda r: ("runs",) if rules[r]() else (), order=PRIORITY)
    # one- and two-statement runs join the run before them (the first run: the one after)
    i = 0
    while i < len(runs) and len(runs) > 1:
        if size(runs[i]) <= 2:
            if i == 0:
                merge(0, 1)
            else:
                merge(i - 1, i)
                i -= 1
            continue
        i += 1
    # too many sections: fold the smallest into its smaller neighbour
    while len(runs) > max_sections:
        i = min(range(len(runs)), key=lambda j: (size(runs[j]), j))
        if i == 0:
            merge(0, 1)
        elif i == len(runs) - 1:
            merge(i - 1, i)
        elif size(runs[i - 1]) <= size(runs[i + 1]):
            merge(i - 1, i)
        else:
            merge(i, i + 1)
    return runs


def _name(mix: Counter, hist: Optional[Counter]) -> str:
    tot = sum(mix.values())
    parts = [c for c, v in mix.most_common() if c != "plumbing" and v * 10 >= tot]
    if not parts:
        parts = [mix.most_common(1)[0][0]]
    return " + ".join(parts[:3])
