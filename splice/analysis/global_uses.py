"""Module variables and the symbols an entry names: which ``.global``/``.const`` variables it
reaches, how (loads, stores, atomics, pointers loaded from them), and where that cannot be
followed.

The probe sets the module globals a spec lists before each launch and compares those the
kernel writes (``splice.probe.kinds.globals``); ``probe init`` lists the ones an entry names.
Both need the same facts, computed here: forward def-use from each symbol the entry names
(``mov %rd, lut``, ``[lut+4]``, ``cvta.global %rd, gains``) through copies and additions, to the
memory instructions it reaches -- on the fixpoint engine (``fixpoint.solve``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ptx import model as m
from ..ptx import types as dt
from ..ptx.operands import registers
from . import roles
from .fixpoint import reader_index, solve
from .param_trace import Use, record, register_reads

#: module-scope image references (``.global .texref t;``): bound by the host, not parameters
IMAGE_REF_TYPES = (".texref", ".surfref", ".samplerref")


@dataclass(frozen=True)
class Variable:
    """A module-scope variable as the spec sees it."""
    name: str
    space: str                # .global / .const / .shared ...
    type: str
    size: int                 # bytes (0: unsized, ``[]``)
    initialised: bool
    text: str                 # the declaration, shortened
    line: int


def module_variables(mod) -> dict:
    """{name: Variable} of the module-scope state-space declarations (texture/surface/sampler
    references excluded)."""
    out = {}
    for it in mod.items:
        if type(it) is not m.Decl or it.space in (".reg", ".param", ".tex") or \
                it.type in (".texref", ".surfref", ".samplerref"):
            continue
        t = dt.lookup(it.type or ".b8")
        each = (t.size if t else 1) * (int(it.vector[2:]) if it.vector else 1)
        for d in it.declarators:
            n = 1
            for x in d.dims:
                n *= x or 0
            dims = "".join(f"[{x if x is not None else ''}]" for x in d.dims)
            text = f"{' '.join((*it.linkage, it.space, *it.attrs))} {d.name}{dims}"
            out[d.name] = Variable(d.name, it.space, it.type or ".b8", each * n, d.init is not None,
                                   text + (" = {...}" if d.init is not None else ""), it.line)
    return out


_GLOBAL_SPACES = ("global", "generic", "const")
_MOVES = {"mov", "add", "sub", "cvta", "selp", "mad"}


def global_uses(kernel, names) -> tuple:
    """({variable: Use}, {variable: [why not followed]}): def-use forward from each symbol the
    entry names (``mov %rd, lut``, ``[lut+4]``, ``cvta.global %rd, gains``) through copies and
    additions to the loads, stores and atomics it reaches; a 64-bit value loaded from it and then
    dereferenced (``__device__ float* g_ptr``) is recorded in its ``pointers``/``target``.  A
    variable whose address is stored, passed to a call or mixed with another's is listed in the
    second map: what it reaches there is not followed."""
    names = set(names)
    taint = _global_taint(kernel, names)
    out: dict = {}
    escapes: dict = {}
    for pos, st in enumerate(kernel.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        where = f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")
        acc = roles.memory_access(node)
        addrs = set()
        for i, space, effect in (acc.addresses() if acc is not None else ()):
            every = _labels(kernel, node.operands[i], pos, taint, names)
            labs = {lab for lab in every if isinstance(lab, str)}
            addrs.add(i)
            for lab in (lab[1] for lab in every if not isinstance(lab, str)):     # through a loaded pointer
                u = out.setdefault(lab, Use())
                u.pointers.append(where)
                u.target = u.target or Use()
                record(u.target, node, space, effect)
            for lab in labs:
                if space in _GLOBAL_SPACES:
                    record(out.setdefault(lab, Use()), node, space, effect)
                else:
                    escapes.setdefault(lab, []).append(f"{where} (.{space})")
            if len(labs) > 1:
                for lab in labs:
                    escapes.setdefault(lab, []).append(f"{where} (an address mixing {', '.join(sorted(labs))})")
        if node.opcode in _MOVES:
            continue
        for i, o in enumerate(node.operands):     # the address itself stored, passed, compared
            if i not in addrs:
                for lab in _labels(kernel, o, pos, taint, names):
                    if isinstance(lab, str):
                        escapes.setdefault(lab, []).append(where)
    return out, escapes


def _global_taint(kernel, names: set) -> dict:
    """{register key: labels} to a fixpoint: a variable's name through ``mov``/``add``/``cvta``…,
    and ``('*', name)`` for a 64-bit value loaded from it (a pointer the kernel may follow)."""
    defs_all, uses_all, _g = kernel.du()
    taint: dict = {}

    def step(pos: int) -> list:
        node = kernel.stmts[pos].node
        if type(node) is not m.Instruction:
            return []
        src: set
        if node.opcode == "ld" and any(mm in (".u64", ".b64", ".s64") for mm in node.modifiers):
            addr = next((o for o in node.operands[1:] if type(o) is m.Addr), None)
            src = {("*", lab) for lab in (_labels(kernel, addr, pos, taint, names) if addr else ())
                   if isinstance(lab, str)}
        elif node.opcode in _MOVES:
            src = {o.name for o in node.operands[1:]     # a variable named %g reads as a register
                   if type(o) in (m.Sym, m.Reg) and o.name in names and kernel.reg_type(o.name) is None}
            for u in uses_all[pos]:   # names, and ('*', name) of a loaded pointer moved on
                src |= taint.get(u, set())
        else:
            return []
        grew = [d for d in defs_all[pos] if src and not src <= taint.get(d, set())]
        for d in grew:
            taint[d] = taint.get(d, set()) | src
        return grew

    solve(len(kernel.stmts), step, reader_index(register_reads(kernel)))
    return taint


def _labels(kernel, operand, pos: int, taint: dict, names: set) -> set:
    regs: list = []
    registers(operand, regs)
    labs = {r for r in regs if r in names}
    for r in regs:
        k = kernel._resolve(r, kernel._scope_of[pos])
        if k:
            labs |= taint.get(k[0], set())
    return labs


def reached_in(kernel, names, i: int, j: int, live_in=()) -> list:
    """The variables of ``names`` that statements ``i``..``j`` (positions) reach: named there,
    addressed through a register carrying their address, or handed in through a live-in
    register that carries it (what a cut of those statements may read or write)."""
    names = set(names)
    taint = _global_taint(kernel, names)
    hit: set = set()
    for pos in range(i, j + 1):
        node = kernel.stmts[pos].node
        if type(node) is m.Instruction:
            for o in node.operands:
                hit |= {lab for lab in _labels(kernel, o, pos, taint, names) if isinstance(lab, str)}
    for reg in live_in:
        k = kernel._resolve(reg, kernel._scope_of[i])
        hit |= {lab for lab in taint.get(k[0], ()) if isinstance(lab, str)} if k else set()
    return sorted(hit)


def unseen_accesses(kernel, mod, names: set) -> dict:
    """{name: why} for the variables of ``names`` accessed where the entry's own def-use does
    not look: named in a function it calls (however deep), or in another module variable's
    initialiser (``.global .u64 p = {generic(buf)}``: the kernel reaches ``buf`` through ``p``)."""
    why = {n: "it is named in a function the entry calls (not traced)"
           for n in (named_symbols(kernel) - own_symbols(kernel)) & names}
    for it in mod.items:
        if type(it) is not m.Decl:
            continue
        for d in it.declarators:
            for n in (m.initializer_names(d.init) & names) - {d.name} - set(why):
                why[n] = f"{d.name}'s initialiser holds its address (line {it.line}: not traced)"
    return why


def module_image_refs(kernel) -> list:
    """Module-scope texture, surface and sampler references (``.global .texref t;``, old
    ``.tex .u32 t;``) this entry names in an operand, in the order declared.  The probe binds
    kernel parameters only: what ``tex``/``suld`` read through such a reference is not its to
    set, so the skeleton says so instead of promising a comparable frame."""
    refs = [d.name for it in kernel.module.items if type(it) is m.Decl
            and (it.space == ".tex" or it.type in IMAGE_REF_TYPES) for d in it.declarators]
    if not refs:
        return []
    named = named_symbols(kernel)
    return [r for r in refs if r in named]


def module_variable_refs(kernel) -> list:
    """Module-scope ``.global`` / ``.const`` variables without an initialiser (CUDA's
    ``__device__`` / ``__constant__`` data) this entry names in an operand, in the order
    declared.  The probe binds parameters only: what the kernel reads there is not set by the
    spec and what it writes there is not compared -- an entry without parameters compared
    nothing at all, silently."""
    decls = [d.name for it in kernel.module.items if type(it) is m.Decl and it.space in (".global", ".const")
             and it.type not in IMAGE_REF_TYPES for d in it.declarators
             if d.init is None]    # an initialised one (a table, a format string) the module sets itself
    if not decls:
        return []
    named = named_symbols(kernel)
    return [d for d in decls if d in named]


def named_symbols(kernel) -> set:
    """The symbols the entry's instructions name in an operand (alone, in an address or a
    vector, or as an offset's base: ``[g+16]``), and those of every function it calls directly,
    however deep: a ``__noinline__`` helper that bumps a ``__device__`` counter touches it for
    the entry (it was missed, so the skeleton said nothing of the counter)."""
    named: set = set()
    by_name = {f.name: f for f in kernel.module.functions() if f.body is not None}
    todo = [[st.node for st in kernel.stmts]]
    seen: set = set()
    while todo:
        for node, name in operand_symbols(todo.pop()):
            named.add(name)
            if node.opcode == "call" and name in by_name and name not in seen:
                seen.add(name)          # its body, once (recursion ends here)
                todo.append(list(m.walk(by_name[name].body.items)))
    return named - seen


def operand_symbols(nodes):
    """(instruction, name) for each symbol an instruction of ``nodes`` names in an operand:
    alone, in an address or a vector, or as an offset's base (``[g+16]``); registers too, since
    a module variable may be named like one (``%g``): callers keep the names they declare."""
    for node in nodes:
        if type(node) is not m.Instruction:
            continue
        for o in node.operands:
            for i in (o.items if type(o) in (m.Addr, m.Vec) else (o,)):
                base = i.base if type(i) is m.Offset else i
                if type(base) in (m.Sym, m.Reg):   # a variable may be named %g: read as a register
                    yield node, base.name


def own_symbols(kernel) -> set:
    """The symbols the entry's own statements name (``named_symbols`` adds those of the
    functions it calls)."""
    return {name for _node, name in operand_symbols(st.node for st in kernel.stmts)}


def extern_shared(module, named=None) -> Optional[str]:
    """The dynamic shared array (``.extern .shared .b8 smem[]``) the entry names (the first one
    the module declares when ``named`` is None); a module of several entries declares it once for
    all, and an entry that never names it needs no dynamic bytes."""
    decls = [it for it in module.items if type(it) is m.Decl]
    decls += [n for f in module.functions() if f.body is not None for n in m.walk(f.body.items) if type(n) is m.Decl]
    decls.sort(key=lambda d: d.span[0] if d.span is not None else 0)
    for d in decls:
        if d.space != ".shared" or ".extern" not in d.linkage:
            continue
        for x in d.declarators:
            if x.dims and x.dims[-1] is None and (named is None or x.name in named):
                return x.name
    return None


#: image geometries an instruction may name (PTX ISA 9.7.10-9.7.11)
_GEOMETRIES = (".1d", ".2d", ".3d", ".a1d", ".a2d", ".cube", ".acube", ".2dms", ".a2dms")


def image_ref_uses(kernel, name: str) -> tuple:
    """(geometries, writes) of the module texture/surface reference ``name``: the geometries of
    the ``tex``/``tld4``/``suld``/``sust``/``sured``/``suq`` instructions that name it, in the
    order seen, and how many of them write (``sust``/``sured``)."""
    geometries: list = []
    writes = 0
    for st in kernel.stmts:
        node = st.node
        if type(node) is not m.Instruction or not any(
                type(o) is m.Addr and getattr(o.base, "name", None) == name for o in node.operands):
            continue
        geometries += [mm for mm in node.modifiers if mm in _GEOMETRIES and mm not in geometries]
        writes += node.opcode in ("sust", "sured")
    return geometries, writes
