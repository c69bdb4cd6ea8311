"""``splice extract``: write a phase (or statement range) as a native-phase file against the
symbolic ABI — the starting point for hand-writing one.  Applying the extracted file with
``abi: inline`` reproduces the original computation."""
from __future__ import annotations

from typing import Optional

from ..analysis.calls import describe, mma_in_calls
from ..analysis.roles import raw_defs_uses
from ..analysis.vocab import find_profile, vocabulary
from ..errors import SpliceError
from ..ptx import model as m
from .binding.abi import sym_name
from .epilogue import epilogue_abi, epilogue_by_index, epilogue_facts
from .epilogue_extract import epilogue_header
from .kernel import defs_uses, exact_phase_abi, phase_by_index, refuse_split_carry, refuse_vector_registers
from .native import REG_WIDTH, rename_node, render
from .splice import cut_facts, splits_scope

#: directives a native holds only inside a ``{ }`` scope: a range at the function's top level
#: that holds one (LLVM's ``$L_tbl: .branchtargets …; brx.idx``) is written wrapped in one (it was
#: written bare, and apply refused extract's own native)
_SCOPE_ONLY = (".branchtargets", ".calltargets", ".callprototype")


def extract(kernel, phase: Optional[int] = None, statements: Optional[tuple] = None,
            source_name: str = "", epilogue: Optional[int] = None, fused: bool = False) -> dict:
    """``fused``: with ``epilogue``, phase N and E<N> as one cut (``phase+epilogue: N``)."""
    ph, epi, first, last, abi = _target(kernel, phase, statements, source_name, epilogue, fused)
    i, j = kernel.first_pos_of(first), kernel.pos_of(last)
    refuse_vector_registers(kernel, i, j, source_name or kernel.path)
    refuse_split_carry(kernel, i, j, source_name or kernel.path)
    _refuse_split_scope(kernel, i, j, first, last, source_name)

    body, types = _renamed_body(kernel, abi, i, j)
    if any(isinstance(n, m.Directive) and n.name in _SCOPE_ONLY for n in body):
        body = [m.Block(tuple(body))]     # a native keeps these only inside a { } scope (native.py)
    facts = cut_facts(kernel, i, j, abi, ph)
    if epi is not None:
        head = epilogue_header(kernel, epi, abi, i, j, sym_name, source_name)
        facts.update(epilogue_facts(kernel, i, j, abi, epi))
    else:
        head = _phase_head(kernel, abi, ph, facts, first, last, source_name)
    sc = scratch_text(types)
    head.append("// splice-native:")
    head.append("//   params: {}")
    head.append(f"//   scratch: {{{sc}}}")
    text = "\n".join(head) + "\n" + "\n".join(ln.lstrip("\t") if not ln.startswith("\t\t") else ln[1:]
                                               for ln in render(body, "\t")) + "\n"
    return {"text": text, "first": first, "last": last, "phase": ph.index if ph is not None else None,
            "epilogue": epi.index if epi is not None else None,
            "facts": {k: v for k, v in facts.items() if not k.endswith("_regs")},
            "live_in": [{"symbol": sym_name(r), "reg": r.reg, "type": r.type, "role": r.role} for r in abi.live_in],
            "live_out": [{"symbol": sym_name(r, True), "reg": r.reg, "type": r.type, "role": r.role}
                         for r in abi.live_out],
            "scratch": types}


def scratch_text(types: dict) -> str:
    """What goes inside a native header's ``scratch: {…}``: ``name: type`` for each register."""
    return ", ".join(f"{s[1:]}: {t}" for s, t in types.items())


def phase_templates(kernel) -> list:
    """[(body, scratch, phases)]: each distinct body ``extract`` writes for a phase (its
    statements, comment lines left out) with the phases sharing it, in phase order.  A kernel's
    phases of one shape usually extract to the same text, so a generator of phase natives
    (recipes/tune/make_phase_natives.py, recipes/perf/make_fence_natives.py) writes one
    template per shape, not one per phase."""
    groups: dict = {}
    for p in kernel.phases:
        got = extract(kernel, phase=p.index)
        body = "\n".join(ln for ln in got["text"].splitlines() if not ln.startswith("//")).strip()
        groups.setdefault((body, scratch_text(got["scratch"])), []).append(p)
    return [(body, sc, phases) for (body, sc), phases in groups.items()]


def _target(kernel, phase, statements, source_name: str, epilogue, fused: bool) -> tuple:
    """(phase or None, epilogue or None, first, last, ABI) of what extract was asked for: an
    epilogue (with its phase when ``fused``), a phase, or a statement range."""
    if epilogue is not None:
        ph = phase_by_index(kernel, epilogue) if fused else None
        epi = epilogue_by_index(kernel, epilogue)
        if epi is None:
            have = [e.index for e in kernel.epilogues]
            raise SpliceError(f"epilogue {epilogue} does not exist (the kernel's epilogues are "
                              f"E{have[0]}…E{have[-1]})" if have else "the kernel has no epilogues",
                              source_name)
        first = ph.first if ph is not None else epi.first
        return ph, epi, first, epi.last, epilogue_abi(kernel, None, ph, epi)
    if phase is not None:
        ph = phase_by_index(kernel, phase)
        if ph is None:
            note = describe(mma_in_calls(kernel), indirect=True)
            raise SpliceError(f"phase {phase} does not exist (the kernel has {len(kernel.phases)} phases)"
                              + (f"; {note}" if note else ""), source_name)
        return ph, None, ph.first, ph.last, exact_phase_abi(kernel, ph)
    if statements is not None:
        first, last = statements
        try:
            kernel.pos_of(first), kernel.pos_of(last)
        except (KeyError, IndexError):
            raise SpliceError(f"statements s{first}-s{last} are not in the entry", source_name) from None
        return None, None, first, last, kernel.abi(first, last)
    raise SpliceError("extract needs --phase N, --epilogue N or --statements sA-sB")


def _refuse_split_scope(kernel, i: int, j: int, first: int, last: int, source_name) -> None:
    """A range that opens or closes a ``{ }`` scope it does not hold whole (an inline-asm block's
    tail): apply refuses it ("splits a { } scope"), so extract says so at the range's first
    statement instead of writing a native no recipe can apply."""
    if kernel.module.source and splits_scope(kernel, kernel.module.source, i, j):
        raise SpliceError(f"s{first}-s{last} splits a {{ }} scope: widen the range to whole blocks",
                          source_name or kernel.path, line=kernel.stmts[i].line)


def _phase_head(kernel, abi, ph, facts, first, last, source_name) -> list:
    """The header's facts in the kernel's vocabulary: ``weight_bytes`` and ``W`` only where a
    profile asks for the weight-image words and their rule holds (``analysis.vocab``), else the
    bytes of B loaded off the field, named by the field."""
    V = vocabulary(kernel, find_profile(kernel.name))
    source_name = " ".join(str(source_name).splitlines())   # one comment line, whatever the path holds
    head = [f"// splice native phase extracted from {source_name} "
            f"s{first}-s{last}" + (f" (phase {ph.index})" if ph is not None else "")]
    for k in ("mma", "shape", "weight_bytes", "live_in", "live_out"):
        if facts.get(k) is not None:
            label = k if k != "weight_bytes" or V.weight else f"B bytes off {V.text('W')}"
            head.append(f"//   {label}: {facts[k]}")
    head.append("//   live-in:  " + "  ".join(f"{sym_name(r)[1:]}={r.reg}" for r in abi.live_in))
    head.append("//   live-out: " + "  ".join(f"{sym_name(r, True)[1:]}={r.reg}" for r in abi.live_out))
    vals = getattr(abi, "values", None) or {}
    for r in abi.live_in:
        if isinstance(vals, dict) and r.reg in vals and vals[r.reg] != "?":
            head.append(f"//     {sym_name(r)[1:]} = {V.text(vals[r.reg])}")
    return head


def _held_blocks(kernel, i: int, j: int) -> set:
    """ids of the ``{ }`` blocks the range holds whole: every instruction and label in them lies
    in statement indices ``i``…``j`` (their ``.reg`` declarations, which no statement number
    names, may come before ``i``).  apply's ``widen_to_blocks`` replaces exactly these blocks,
    declarations included."""
    held = set()
    pos = [0]

    def visit(items) -> tuple:          # (positions of instructions/labels in items, all inside)
        n_in, inside = 0, True
        for it in items:
            if isinstance(it, m.Block):
                k, ok = visit(it.items)
                if k and ok:
                    held.add(id(it))
                n_in, inside = n_in + k, inside and ok
                continue
            p = pos[0]
            pos[0] += 1
            if isinstance(it, (m.Instruction, m.Label)):
                n_in, inside = n_in + 1, inside and i <= p <= j
        return n_in, inside

    visit(kernel.fn.body.items)
    return held


def range_nodes(kernel, i: int, j: int) -> tuple:
    """The model nodes of statement indices ``i``…``j`` with the ``{ }`` scopes they hold whole
    kept, declarations included (an inline-asm block declares its own registers: they stay
    declared inside it; a scope the range lies inside is where apply puts the native, so it is
    not repeated), the keys of the registers those kept scopes declare (``name@scope``: local to
    the cut, neither ABI nor scratch), each kept instruction's statement index (``id(node) ->
    index``: its scope decides what a name means), and the scope the native is spliced into
    (where the ABI's register names are resolved).  The body's own declarations are left out
    (the native header declares scratch)."""
    held = _held_blocks(kernel, i, j)
    local = set()
    where = {}
    held_sids = set()
    pos = [0]

    def visit(items, whole):
        out = []
        for it in items:
            if isinstance(it, m.Block):
                inner = visit(it.items, whole or id(it) in held)
                if inner and (whole or id(it) in held):
                    out.append(m.Block(tuple(inner)))
                else:       # the range lies inside this scope: apply splices it there, so a
                    out += inner    # second { } would hide its labels from the scope's branches
                continue
            p = pos[0]
            pos[0] += 1
            if isinstance(it, m.Decl) and whole:     # a kept scope's own declaration
                held_sids.add(kernel._scope_of[p])
                local.update(f"{d.name}@{kernel._scope_of[p]}" for d in it.declarators)
                out.append(it)
                continue
            if not i <= p <= j or isinstance(it, m.Decl):
                continue
            if whole:
                held_sids.add(kernel._scope_of[p])
            where[id(it)] = p
            out.append(it)
        return out

    nodes = visit(kernel.fn.body.items, False)
    site = kernel._scope_of[i]
    while site in held_sids and kernel._parent[site] is not None:
        site = kernel._parent[site]
    return nodes, local, where, site


def _key(kernel, name: str, sid: int) -> str:
    """The register a name means in scope ``sid`` (``%r5`` or ``%r5@2`` when a nested scope
    shadows it); an undeclared name is itself."""
    r = kernel._resolve(name, sid)
    return r[0] if r is not None else name


def _renamed_body(kernel, abi, i: int, j: int) -> tuple:
    """(nodes, scratch types) of the cut's statements with every register renamed by what it
    means where it is used, not by its name: a nested scope may declare a register that
    shadows one of the cut's own (``{ .reg .b32 %r5; … }`` inside code using the outer
    ``%r5``) — the shadowing one keeps its declaration and name, the shadowed one gets its
    ABI symbol or a scratch name like any other."""
    nodes, local, where, site = range_nodes(kernel, i, j)
    keymap = {}
    for r in abi.live_in:
        keymap.setdefault(_key(kernel, r.reg, site), sym_name(r))
    for r in abi.live_out:
        keymap.setdefault(_key(kernel, r.reg, site), sym_name(r, True))
    scratch = {}                     # key -> %tN
    types = {}
    for node in m.walk(nodes):
        if isinstance(node, m.Instruction):
            sid = kernel._scope_of[where[id(node)]]
            for r in _registers(kernel, node):
                key = _key(kernel, r, sid)
                if key not in keymap and key not in scratch and key not in local:
                    scratch[key] = f"%t{len(scratch)}"
                    res = kernel._resolve(r, sid)
                    types[scratch[key]] = (res[1] if res is not None else None) or kernel.reg_type(r) or ".b32"
    head, tail = _written_live_ins(kernel, abi, nodes, where, site, scratch, types)
    keymap.update(scratch)
    return head + _rename_scoped(kernel, nodes, where, keymap) + tail, types


def _rename_scoped(kernel, nodes, where, keymap) -> list:
    out = []
    for n in nodes:
        if isinstance(n, m.Block):
            out.append(m.Block(tuple(_rename_scoped(kernel, n.items, where, keymap))))
        elif isinstance(n, m.Instruction):
            sid = kernel._scope_of[where[id(n)]]
            names = {}
            for r in _registers(kernel, n):
                key = _key(kernel, r, sid)
                if key in keymap:
                    names[r] = keymap[key]
            out.append(rename_node(n, names, {}))
        else:
            out.append(n)
    return out


def _registers(kernel, node) -> list:
    """Every register one statement names: ``%`` registers, and the ``%``-less ones NVVM's
    inline-asm blocks declare (``{.reg .f16 low, high; mov.b32 {low, high}, %r1; …}``) — the
    block's declaration is not part of the extracted code, so those become scratch too."""
    d, u = defs_uses(node)
    out = list(d) + list(u)
    rd, ru = raw_defs_uses(node)
    out += [r for r in list(rd) + list(ru) if not r.startswith("%") and kernel.reg_type(r)]
    return out


def _written_live_ins(kernel, abi, nodes, where, site, scratch, types) -> tuple:
    """A live-in the range also writes that is still read after the cut is copied to scratch
    first — such live-ins are read-only under ``abi: inline`` — and, when it is a live-out too,
    copied back at the end.  A loop counter initialised before the cut and dead after it (dec1
    E26) is written in place, as the original does, so the SASS stays the original's.  Returns
    (head, tail) ``mov`` nodes and adds the scratch names to ``scratch`` (by register key) and
    their types to ``types``."""
    written = set()
    for n in m.walk(nodes):
        if isinstance(n, m.Instruction):
            sid = kernel._scope_of[where[id(n)]]
            written.update(_key(kernel, r, sid) for r in defs_uses(n)[0])
    outs = {r.reg: sym_name(r, True) for r in abi.live_out}
    head, tail = [], []
    for r in abi.live_in:
        key = _key(kernel, r.reg, site)
        if key not in written or key in scratch:
            continue
        if outs.get(r.reg) == sym_name(r):   # an in-place accumulator (%acc/%io): read and written
            continue
        if getattr(r, "dead_after", False):  # nothing reads it after the cut: written in place
            continue
        t = scratch[key] = f"%t{len(scratch)}"
        ty = types[t] = kernel.reg_type(r.reg) or ".b32"
        mty = ty if ty == ".pred" else _bits(ty)
        head.append(m.Instruction(None, "mov", (mty,), (m.Reg(t), m.Reg(sym_name(r)))))
        if r.reg in outs:
            tail.append(m.Instruction(None, "mov", (mty,), (m.Reg(outs[r.reg]), m.Reg(t))))
    return head, tail


def _bits(ty: str) -> str:
    return {16: ".b16", 32: ".b32", 64: ".b64", 8: ".b16"}.get(REG_WIDTH.get(ty, 32), ".b32")
