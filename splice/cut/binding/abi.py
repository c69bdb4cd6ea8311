"""Bind a native phase's symbolic registers to a cut's real ones, in one of three ABIs.

- ``inline``: the native statements are renamed in place — ABI names to the cut's real
  registers, scratch to fresh ``%rsplice<N>`` — inside a ``{ }`` scope that declares the scratch.
  No call overhead.  Checked: no live-in is read after the native code overwrote its real
  register (a live-out bound to the same register, e.g. an in-place accumulator), and no
  live-in is written at all (the original code may read it after the cut).
- ``call``: the native statements become a ``.func`` taking the live-ins (and named values) as
  ``.param`` arguments and returning the live-outs; the cut becomes ``st.param`` / ``call.uni``
  / ``ld.param``.
- ``call-shared``: as ``call`` but the function returns nothing: it stores the live-outs to a
  per-thread slot of a module-scope shared scratch array and the caller reloads them (the notes'
  workaround for translators that drop call return values).  The caller synchronises with
  ``bar.warp.sync -1`` when the cut holds warp-synchronous code (``mma.sync.aligned``) — the
  slot is the thread's own, so no wider barrier is needed — or as the cut's ``sync:`` says.

Checked for every ABI: the native phase names only ABI registers, named values and declared
scratch; every live-out is written; operand widths agree with the bound registers' types.
Every error names the native file's line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...errors import SpliceError
from ...ptx import model as m
from ...ptx.builder import Builder, addr
from ...ptx.operands import children
from ..kernel import defs_uses
from ..native import REG_WIDTH, NativePhase, labels_of, render, rename_node
from .operands import check_operands, relaxed
import re

ABIS = ("inline", "call", "call-shared")

_SAME_WIDTH_OPS = {"ld", "st", "mov", "add", "sub", "mul", "mad", "and", "or", "xor", "not", "min",
                   "max", "neg", "abs", "fma", "div", "rem", "selp", "shl", "shr", "ex2", "rcp",
                   "sqrt", "rsqrt", "ld.param", "st.param"}


class Namer:
    """Hands out fresh ``%rsplice<N>`` names (module-wide, above any already in the source)."""

    def __init__(self, start: int = 0, funcs: int = 0):
        self.next = start
        self.funcs = funcs         # the highest __splice_fn<N> the source already defines

    @classmethod
    def for_source(cls, source: str) -> "Namer":

        used = [int(x) for x in re.findall(r"%rsplice(\d{1,40})(?!\d)", source)]
        fns = [int(x) for x in re.findall(r"\b__splice_fn(\d{1,40})(?!\d)", source)]
        return cls(max(used) + 1 if used else 0, max(fns, default=0))

    def func(self, cut_id: int) -> str:
        """The ``.func`` of a called cut: ``__splice_fn<cut>``, numbered above any the module
        already has (a module spliced before: a second ``__splice_fn1`` was "Duplicate definition
        of function" in ptxas, and with ``--no-ptxas`` a broken module written, exit 0)."""
        return f"__splice_fn{self.funcs + cut_id}"

    def fresh(self) -> str:
        name = f"%rsplice{self.next}"
        self.next += 1
        return name


@dataclass
class Binding:
    abi: str
    site: list                    # lines replacing the cut (no base indentation)
    prelude: list = field(default_factory=list)   # module-level text blocks (.func, .shared)
    table: list = field(default_factory=list)     # rows: symbol, register, type, role, direction
    scratch: dict = field(default_factory=dict)   # native scratch name -> bound name
    added: int = 0                # statements in the site (+ function body)
    func: Optional[str] = None
    shared_bytes: int = 0
    notes: list = field(default_factory=list)
    site_origin: list = field(default_factory=list)      # per site line: (native path, line) or None
    prelude_origin: list = field(default_factory=list)   # per prelude block: list like site_origin


def sym_name(r, out: bool = False) -> str:
    """The symbolic name of an ABI register: ``%a3``, ``%d0``…; a register with the generic role
    (``v`` in splice.analysis) is ``%in<i>`` as an input and ``%out<i>`` as an output; one read
    and written in place (``acc``, ``io``) has the same name on both sides (``%acc0``)."""
    role = r.role.replace("_", "")
    if role in ("v", "in", "out", "", None):
        role = "out" if out else "in"
    return f"%{role}{r.index}"


def _sym(r) -> str:
    return sym_name(r)


def _osym(r) -> str:
    return sym_name(r, True)


def _wider_allowed(opcode: str, ty: str, have: Optional[int], want: int) -> bool:
    """PTX ISA 5.2.3 (operand size exceeding instruction-type size): ``ld`` and ``st`` of a
    plain type take data registers wider than it, so narrow values move through regular-width
    registers (LLVM writes ``ld.shared.b8 %rs1`` into a ``.b16``)."""
    return opcode in ("ld", "st", "ld.param", "st.param") and relaxed(ty) and have is not None and have > want


def _width(t: Optional[str]) -> Optional[int]:
    return REG_WIDTH.get(t) if t else None


def _bits_type(t: str) -> str:
    w = _width(t)
    return {8: ".b8", 16: ".b16", 32: ".b32", 64: ".b64"}.get(w, ".b32")


def _values(abi) -> dict:
    """Named values: the view's ``values`` (name -> register)."""
    return dict(getattr(abi, "named", None) or {})


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------

def _check_names(nat: NativePhase, abi_syms: dict, values: dict):
    known = set(abi_syms) | {"%" + k for k in values} | set(nat.scratch)
    clash = sorted(set(nat.scratch) & (set(abi_syms) | {"%" + k for k in values}))
    if clash:
        raise nat.error(f"scratch register {clash[0]} shadows an ABI register of this cut")
    for reg, line in sorted(nat.used.items(), key=lambda kv: kv[1]):
        if reg not in known:
            roles = sorted({s.rstrip("0123456789") for s in abi_syms})
            raise nat.error(f"{reg} is not an ABI register of this cut ({', '.join(r + 'N' for r in roles)}),"
                            " a named value or declared scratch", line,
                            "ABI registers: " + _ranges(abi_syms) +
                            ("\nnamed values: " + ", ".join("%" + k for k in values) if values else ""))


def _ranges(syms) -> str:
    by = {}
    for s in syms:
        base = s.rstrip("0123456789")
        by.setdefault(base, []).append(int(s[len(base):] or 0))
    return ", ".join(f"{b}0..{b}{max(v)}" for b, v in sorted(by.items()))


def _check_outputs(nat: NativePhase, live_out_syms: list):
    written = set()
    for st in m.walk(nat.body):
        d, _u = defs_uses(st)
        written.update(d)
    missing = [s for s in live_out_syms if s not in written]
    if missing:
        shown = ", ".join(missing[:12]) + (" …" if len(missing) > 12 else "")
        raise nat.error(f"native phase does not write {len(missing)} live-out(s): {shown}")


def _check_types(nat: NativePhase, types: dict):
    for st in m.walk(nat.body):
        if not isinstance(st, m.Instruction):
            continue
        line = nat.line(st)
        if st.opcode in ("mma", "wgmma"):
            want = 64 if ".f64" in st.modifiers else 32
            for op in st.operands:
                for x in (children(op) if type(op) is m.Vec else ()):   # fragment brace lists
                    if isinstance(x, m.Reg) and x.name in types and _width(types[x.name]) != want:
                        raise nat.error(f"{x.name} is {types[x.name]} but {st.name} takes {want}-bit fragments", line)
            continue
        tys = [t for t in st.modifiers if t in REG_WIDTH and t != ".pred"]
        if st.opcode not in _SAME_WIDTH_OPS or len(tys) != 1:
            continue
        w = REG_WIDTH[tys[0]]
        ops = list(st.operands)
        if st.opcode == "selp":
            ops = ops[:3]
        if st.opcode in ("shl", "shr"):
            ops = ops[:2]
        wide = ".wide" in st.modifiers
        for k, op in enumerate(ops):
            if isinstance(op, m.Addr):
                continue
            vec = isinstance(op, m.Vec) and st.opcode in ("ld", "st")
            regs = [op] if isinstance(op, m.Reg) else (list(children(op)) if vec else [])
            for r in regs:
                if not isinstance(r, m.Reg) or r.name not in types:
                    continue
                t = types[r.name]
                if t == ".pred":
                    continue
                want = 2 * w if (wide and (k == 0 or (st.opcode == "mad" and k == 3))) else w
                if _width(t) != want and not _wider_allowed(st.opcode, tys[0], _width(t), want):
                    raise nat.error(f"{r.name} is {t} but {st.name} uses it as a {want}-bit operand", line)


def _check_clobber(nat: NativePhase, real: dict, live_in_syms: set, live_out_syms: set,
                   dead_after: frozenset = frozenset()):
    """``dead_after``: live-ins nothing reads after the cut (the original overwrites them too)."""
    written = {}
    for st in m.walk(nat.body):
        d, u = defs_uses(st)
        line = nat.line(st)
        for r in u:
            if r in live_in_syms and real[r] in written and written[real[r]][0] != r:
                by, at = written[real[r]]
                raise nat.error(f"reads live-in {r} ({real[r]}) after line {at} overwrote that register"
                                f" as {by}", line,
                                "the live-out and live-in share a register in the original code; write the "
                                "live-out to scratch first, or use abi: call")
        for r in d:
            if r in live_in_syms and r not in live_out_syms and r not in dead_after:
                raise nat.error(f"writes live-in {r} ({real[r]}); live-ins are read-only under abi: inline "
                                "(copy it to scratch)", line)
            if r in real:
                written.setdefault(real[r], (r, line))


# --------------------------------------------------------------------------------------------
# binding
# --------------------------------------------------------------------------------------------

def bind(nat: NativePhase, abi, kind: str, namer: Namer, cut_id: int, *,
         threads: Optional[int] = None, sync: Optional[str] = None, func_cache: Optional[dict] = None,
         title: str = "") -> Binding:
    if kind not in ABIS:
        raise SpliceError(f"unknown abi {kind!r} (expected one of {', '.join(ABIS)})")
    values = _values(abi)
    real = {}
    types = {}
    for r in abi.live_in:
        real[_sym(r)] = r.reg
        types[_sym(r)] = r.type or ".b32"
    for r in abi.live_out:
        real[_osym(r)] = r.reg
        types[_osym(r)] = r.type or ".b32"
    value_types = getattr(abi, "value_types", {}) or {}
    for k, v in values.items():
        real["%" + k] = v
        types["%" + k] = value_types.get(k, ".b64" if v.startswith("%rd") else ".b32")
    types.update(nat.scratch)
    live_in_syms = [_sym(r) for r in abi.live_in]
    live_out_syms = [_osym(r) for r in abi.live_out]
    _check_names(nat, real, values)
    _check_outputs(nat, live_out_syms)
    _check_types(nat, types)
    check_operands(nat, types)
    in_place = set(live_in_syms) & set(live_out_syms)
    table = [{"symbol": _sym(r), "register": r.reg, "type": r.type, "role": r.role,
              "dir": "inout" if _sym(r) in in_place else "in"} for r in abi.live_in]
    table += [{"symbol": _osym(r), "register": r.reg, "type": r.type, "role": r.role, "dir": "out"}
              for r in abi.live_out if _osym(r) not in in_place]
    table += [{"symbol": "%" + k, "register": v, "type": types["%" + k], "role": "value", "dir": "in"}
              for k, v in values.items()]
    unused = [s for s in live_in_syms if s not in nat.used]
    notes = [f"{len(unused)} live-in(s) not read by the native phase: {_ranges(unused)}"] if unused else []
    n_native = sum(1 for s in m.walk(nat.body) if isinstance(s, m.Instruction))
    head = one_line(f"// splice: cut {cut_id}{' - ' + title if title else ''} <- {nat.path} (abi {kind})")
    if kind == "inline":
        dead = frozenset(_sym(r) for r in abi.live_in if getattr(r, "dead_after", False))
        return _bind_inline(nat, real, types, set(live_in_syms), set(live_out_syms), namer, cut_id,
                            head, table, notes, n_native, dead, frozenset(getattr(abi, "labels", ())))
    has_sync = any(isinstance(s, m.Instruction) and ".sync" in s.modifiers for s in m.walk(nat.body))
    return _bind_call(nat, abi, values, real, types, kind, namer, cut_id, head, table, notes, n_native,
                      threads, sync or ("warp" if has_sync else "none"), func_cache)


def _bind_inline(nat, real, types, live_in_syms, live_out_syms, namer, cut_id, head, table, notes, n_native,
                 dead_after=frozenset(), keep_labels=frozenset()):
    _check_clobber(nat, real, live_in_syms, live_out_syms, dead_after)
    regs = dict(real)
    scratch = {}
    by_type = {}
    for name, t in nat.scratch.items():
        fresh = namer.fresh()
        scratch[name] = fresh
        regs[name] = fresh
        by_type.setdefault(t, []).append(fresh)
    # a native label named like one the cut removes replaces it (branches from outside the cut
    # still reach it); any other gets a name of its own
    labels = {l: l if l in keep_labels else spliced_label(cut_id, l) for l in labels_of(nat.body)}
    body = [rename_node(n, regs, labels) for n in nat.body]
    # labels inside { } are local to it: a kept label (a target from outside) needs the body's
    # scope, so then the scratch (fresh names, no clash) is declared without a scope of its own
    scoped = not any(v == k for k, v in labels.items())
    lines = [head] + (["{"] if scoped else [])
    for t, names in by_type.items():
        lines.append(f"\t.reg {t} {', '.join(names)};")
    origin = [None] * len(lines)
    lines += render(body, "\t")
    origin += _origins(nat.body, nat)
    tail = (["}"] if scoped else []) + [f"// splice: end cut {cut_id}"]
    lines += tail
    origin += [None] * len(tail)
    table += [{"symbol": k, "register": v, "type": nat.scratch[k], "role": "scratch", "dir": ""}
              for k, v in scratch.items()]
    return Binding("inline", lines, [], table, scratch, n_native, None, 0, notes, origin, [])


def _bind_call(nat, abi, values, real, types, kind, namer, cut_id, head, table, notes, n_native,
               threads, sync, func_cache):
    """``call`` / ``call-shared``: the native code as a ``.func`` (``_call_func``), shared by
    every cut whose function text is the same, and the cut as its call site (``_call_site``)."""
    ins = [(_sym(r), r.reg, r.type or ".b32") for r in abi.live_in]
    ins += [("%" + k, v, types["%" + k]) for k, v in values.items()]
    outs = [(_osym(r), r.reg, r.type or ".b32") for r in abi.live_out]
    for s, reg, t in ins + outs:
        if t == ".pred":
            raise nat.error(f"abi {kind} cannot pass predicate {s} ({reg}) through .param; use abi: inline")
        if _width(t) not in (8, 16, 32, 64):     # a .b128 went through a .b32 slot: 4 of 16 bytes, silently
            raise nat.error(f"abi {kind} cannot pass {s} ({reg}, {t}) through .param or its shared slot "
                            f"(they carry 8 to 64 bits; a {t} stored as .b32 keeps 4 of its bytes); "
                            "use abi: inline")
    if kind == "call-shared" and not threads:
        raise SpliceError("abi call-shared needs the block size: add threads: N to the cut")
    fn = namer.func(cut_id)
    # call: ptxas takes one return parameter, so the live-outs travel in one aligned byte array;
    # call-shared: each in a per-thread slot of the module's shared scratch array
    slots = _packed(outs) if kind == "call" else _shared_layout(outs, threads)
    ret_size = max(8, slots[-1][0] + slots[-1][1]) if kind == "call" and outs else 8
    func_text, func_origin = _call_func(nat, ins, outs, kind, fn, slots, ret_size)
    shared_bytes = sum(size for _o, size in slots) * threads if kind == "call-shared" else 0
    key = func_text.replace(fn, "__FN__")
    prelude: list = []
    prelude_origin: list = []
    if func_cache is not None and key in func_cache:
        fn = func_cache[key]
        notes.append(f"reuses {fn} (same native code as an earlier cut)")
    else:
        if func_cache is not None:
            func_cache[key] = fn
        prelude.append(one_line(f"// splice: native phase of cut {cut_id} <- {nat.path} (abi {kind})") + "\n"
                       + func_text)
        prelude_origin = [func_origin]
    site = _call_site(ins, outs, kind, fn, head, namer, sync, slots, ret_size)
    site += ["}", f"// splice: end cut {cut_id}"]
    added = sum(1 for ln in site if ln.startswith("\t") and not ln.startswith("\t.") and ln.strip().endswith(";"))
    return Binding(kind, site, prelude, table, {k: k for k in nat.scratch}, added + n_native, fn,
                   shared_bytes, notes, [None] * len(site), prelude_origin)


def _call_func(nat, ins, outs, kind, fn, slots, ret_size) -> tuple:
    """(text, origin of each line) of the ``.func``: its registers, the live-ins read from its
    parameters, the native statements, the live-outs written to its return array (``call``) or
    to the caller's shared slots (``call-shared``), ``ret``."""
    decl: dict = {}
    for s, _reg, t in ins + outs:
        decl.setdefault(t, []).append(s)
    for s, t in nat.scratch.items():
        decl.setdefault(t, []).append(s)
    b = Builder()
    for t, names in decl.items():
        b.raw(f"\t.reg {t} {', '.join(dict.fromkeys(names))};")
    params = [f".param {_bits_type(t)} {fn}_in{i}" for i, (_s, _r, t) in enumerate(ins)]
    rets = [f".param .align 8 .b8 {fn}_out[{ret_size}]"] if kind == "call" and outs else []
    if kind == "call-shared":
        params += [f".param .b32 {fn}_base", f".param .b32 {fn}_tid"]
        b.raw("\t.reg .b32 %splice_base, %splice_tid, %splice_slot;")
    for i, (s, _r, t) in enumerate(ins):
        b.ins(f"ld.param{_bits_type(t)}", s, addr(f"{fn}_in{i}"))
    origin = [None] * len(b.lines) + _origins(nat.body, nat)
    b.lines += render(nat.body, "\t")
    if kind == "call":
        for (s, _r, t), (off, _n) in zip(outs, slots):
            b.ins(f"st.param{_bits_type(t)}", addr(f"{fn}_out", off), s)
    else:
        b.ins("ld.param.b32", "%splice_base", addr(f"{fn}_base"))
        b.ins("ld.param.b32", "%splice_tid", addr(f"{fn}_tid"))
        for (s, _r, t), (off, size) in zip(outs, slots):
            b.ins("mad.lo.u32", "%splice_slot", "%splice_tid", size, "%splice_base")
            b.ins(f"st.shared{_bits_type(t)}", addr("%splice_slot", off), s)
    b.ins("ret")
    head_fn = ".func " + (f"({', '.join(rets)}) " if rets else "") + f"{fn}({', '.join(params)})"
    text = "\n".join([head_fn, "{"] + b.lines + ["}"])
    # the prelude's comment line, the head and its brace; the body; the closing brace
    return text, [None, None, None] + origin + [None] * (len(b.lines) - len(origin)) + [None]


def _call_site(ins, outs, kind, fn, head, namer, sync, slots, ret_size) -> list:
    """The lines that replace the cut: the arguments stored, the call, the live-outs reloaded
    into the cut's real registers (``call-shared``: from the thread's slot, after the cut's
    synchronisation)."""
    b = Builder()
    b.raw(head)
    b.raw("{")
    tmp: dict = {}
    if kind == "call-shared":
        tmp = {nm: namer.fresh() for nm in ("tid", "t", "n", "base", "slot")}
        b.raw(f"\t.reg .b32 {', '.join(tmp.values())};")
    for i, (_s, _r, t) in enumerate(ins):
        b.raw(f"\t.param {_bits_type(t)} {fn}_arg{i};")
    if kind == "call" and outs:
        b.raw(f"\t.param .align 8 .b8 {fn}_ret[{ret_size}];")
    args = [f"{fn}_arg{i}" for i in range(len(ins))]
    if kind == "call-shared":
        b.raw(f"\t.param .b32 {fn}_arg_base;")
        b.raw(f"\t.param .b32 {fn}_arg_tid;")
        args += [f"{fn}_arg_base", f"{fn}_arg_tid"]
    for i, (_s, r, t) in enumerate(ins):
        b.ins(f"st.param{_bits_type(t)}", addr(f"{fn}_arg{i}"), r)
    arglist = f"({', '.join(args)})"
    if kind == "call":
        if outs:
            b.ins("call.uni", f"({fn}_ret)", fn, arglist)
        else:
            b.ins("call.uni", fn, arglist)
        for (_s, r, t), (off, _n) in zip(outs, slots):
            b.ins(f"ld.param{_bits_type(t)}", r, addr(f"{fn}_ret", off))
        return b.lines
    t_, tid, n_, base, slot = tmp["t"], tmp["tid"], tmp["n"], tmp["base"], tmp["slot"]
    # the thread's linear index in its block, for its slot
    b.ins("mov.u32", tid, "%tid.z")
    b.ins("mov.u32", n_, "%ntid.y")
    b.ins("mov.u32", t_, "%tid.y")
    b.ins("mad.lo.u32", tid, tid, n_, t_)
    b.ins("mov.u32", n_, "%ntid.x")
    b.ins("mov.u32", t_, "%tid.x")
    b.ins("mad.lo.u32", tid, tid, n_, t_)
    b.ins("mov.u32", base, "__splice_ret")
    b.ins("st.param.b32", addr(f"{fn}_arg_base"), base)
    b.ins("st.param.b32", addr(f"{fn}_arg_tid"), tid)
    b.ins("call.uni", fn, arglist)
    if sync == "warp":
        b.ins("bar.warp.sync", -1)
    elif sync == "cta":
        b.ins("membar.cta")
    for (_s, r, t), (off, size) in zip(outs, slots):
        b.ins("mad.lo.u32", slot, tid, size, base)
        b.ins(f"ld.shared{_bits_type(t)}", r, addr(slot, off))
    return b.lines


def _origins(nodes, nat) -> list:
    """Per line of ``render(nodes)``: the native file position it came from."""
    out = []
    for n in nodes:
        if isinstance(n, m.Block):
            out.append((nat.path, nat.line(n)))
            out.extend(_origins(n.items, nat))
            out.append(None)
        else:
            out.append((nat.path, nat.line(n)))
    return out


def _packed(outs) -> list:
    """(offset, size) of each live-out in the return byte array, naturally aligned."""
    out = []
    pos = 0
    for _s, _r, t in outs:
        size = max(1, (_width(t) or 32) // 8)
        pos = (pos + size - 1) // size * size
        out.append((pos, size))
        pos += size
    return out


def spliced_label(cut_id, label: str) -> str:
    """The name a native label gets in the spliced module: one of its own per cut, and one per
    label.  ``$x`` -> ``$Lsplice<cut>_x`` (the usual NVVM ``$L__BB0_3``); a label without the
    ``$`` -> ``$Lsplice<cut>n_x``, a ``%`` (legal first in a PTX name) written ``$p``.  Before,
    ``$`` was stripped, so ``L1`` and ``$L1`` in one native were both ``$Lsplice1_L1`` (ptxas:
    duplicate label; with --no-ptxas a broken module written), and ``%d0:`` became
    ``$Lsplice1_%d0``, a syntax error in splice's own glue (``<site>:10:14``)."""
    if label.startswith("$"):
        return f"$Lsplice{cut_id}_{label[1:]}"
    return f"$Lsplice{cut_id}n_{label.replace('%', '$p')}"


def _shared_layout(outs, threads) -> list:
    """(byte offset of the output's region, element size); regions widest first (aligned)."""
    sizes = [max(4, (_width(t) or 32) // 8) for _s, _r, t in outs]
    order = sorted(range(len(outs)), key=lambda i: -sizes[i])
    offs = [0] * len(outs)
    pos = 0
    for i in order:
        offs[i] = pos
        pos += sizes[i] * threads
    return [(offs[i], sizes[i]) for i in range(len(outs))]


def one_line(comment: str) -> str:
    """A ``//`` comment the output module carries, on one line and in printable ASCII: a native's
    path with a newline in it ended the comment, and the rest of the path was PTX (ptxas: a
    syntax error; with ``--no-ptxas`` a broken module written, exit 0); a native named ``né.ptx``
    failed ptxas ("Unexpected non-ASCII character", on a line outside the cuts), and a control
    character or an undecodable byte of a name went into the module as is.  Anything else is
    written as a Python escape (``n\\xe9.ptx``)."""
    text = " ".join(comment.splitlines())
    return "".join(ch if " " <= ch <= "~" or ch == "\t" else ascii(ch)[1:-1] for ch in text)
