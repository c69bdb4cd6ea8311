"""The code every phase harness is made of (``harness`` for register-only cuts on random
live-ins, ``epilogue_harness`` for cuts that touch memory): the harness entry around a cut, the
live-in loads and live-out stores (one 8-byte row per register and thread), the thread's slots,
the scopes a cut sits in, and which opcodes random live-ins cannot replay."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...analysis.roles import NO_ACCESS, memory_op
from ...ptx import edit
from ...ptx import model as m
from ...ptx.builder import Builder, addr, function, module_text, param, reg_decl

ENTRY = "splice_harness"


#: what random live-ins cannot replay besides memory (``roles.memory_op``): control flow leaves
#: the cut, barriers wait for the whole block, wgmma/tcgen05 read shared-memory descriptors
_CONTROL = frozenset({"bra", "brx", "ret", "exit", "trap", "bar", "barrier", "wgmma", "tcgen05"})


@dataclass
class HarnessCase:
    cut: int
    title: str
    phase: Optional[int]
    live_in: list                # [(reg, type, role)]
    live_out: list
    orig_ptx: str = ""
    spl_ptx: str = ""
    skipped: Optional[str] = None
    notes: list = field(default_factory=list)


def memory_ops(text: str, allow_call_abi: bool = False, module: bool = False) -> list:
    """Opcodes in ``text`` (statements; ``module``: module-level items, a splice's prelude) a
    harness cannot run on random inputs: every one that addresses memory by the roles memory
    table (loads, stores, atomics, copies, textures and surfaces, wmma fragments, mbarriers,
    multimem, prefetch, discard, tensormaps), and control flow and barriers.  Anything else
    (arithmetic, conversions, mma, shuffles) replays on any inputs.  The instructions are the
    parsed model's (``ptx.edit.instructions``): a comment or a parameter list holds none."""
    bad = []
    for ins in edit.instructions(text, module=module) if text.strip() else ():
        op, suffix = ins.opcode, "".join(ins.modifiers)
        row = memory_op(op + suffix)
        if op not in _CONTROL and row.effect == NO_ACCESS and row.addr is None and not row.kind:
            continue
        if allow_call_abi:
            if op in ("ld", "st") and ".param" in suffix:
                continue
            if op in ("ld", "st") and ".shared" in suffix:   # the __splice_ret slots
                continue
            if op == "bar" and ".warp" in suffix:
                continue
            if op == "ret":
                continue
        bad.append(op + suffix)
    return bad


def module_header(module: m.Module) -> str:
    """The module's text up to its ``.address_size`` directive (``.version``, ``.target`` and
    what comes between, as written): the harness module's own header."""
    d = module.directive(".address_size")
    if d is None or d.span is None:
        raise ValueError(f"{module.path}: no .address_size directive")
    return module.source[:d.span[1]] + "\n"


def reg_decls(kernel) -> list:
    """The entry's own top-level ``.reg`` declarations (a nested scope's declarations stay in
    their block: hoisting them would declare a name twice; ``enclosing_scopes`` gives those of
    the scopes around a cut), as nodes."""
    body = kernel.fn.body
    if body is None:
        return []
    return [d for d in body.items if isinstance(d, m.Decl) and d.space == ".reg"]


def enclosing_scopes(kernel, first: int) -> list:
    """The ``.reg`` declarations of each ``{ }`` scope around statement ``s<first>``,
    outermost first: a cut inside a scope (an inline-asm block's ``.reg .b128 c, s, r;``)
    reads and writes registers only its scope declares, so the harness opens the same scopes
    around it (without them ptxas said "Unknown symbol")."""
    at = kernel.stmt(first).node.span[0]
    out = []
    block = kernel.fn.body
    while block is not None:
        block = next((it for it in block.items if isinstance(it, m.Block) and it.span is not None
                      and it.span[0] < at < it.span[1]), None)
        if block is not None:
            out.append([d for d in block.items if isinstance(d, m.Decl) and d.space == ".reg"])
    return out


def width(t: str) -> int:
    t = (t or ".b32").lstrip(".")
    if t == "pred":
        return 1
    if t.startswith("b128."):      # a half of a .b128 register (``expand_b128``)
        return 8
    return 8 if t.endswith("64") else (2 if t.endswith("16") else 4)


def expand_b128(regs: list) -> list:
    """``(reg, type, role)`` rows with each ``.b128`` register as two 64-bit rows, its low
    half (``.b128.lo``) then its high half (``.b128.hi``): a harness row is 8 bytes a thread,
    and a ``.b128`` register stored as one row kept its low 4 bytes (``st.global.b32`` of a
    wider register stores its low bits: ptxas takes it without a word)."""
    out = []
    for reg, t, role in regs:
        if (t or "").lstrip(".") == "b128":
            out += [(reg, ".b128.lo", role), (reg, ".b128.hi", role)]
        else:
            out.append((reg, t, role))
    return out


def has_b128_half(regs: list) -> bool:
    return any((t or "").startswith(".b128.") for _r, t, _role in regs)


def _io(b: Builder, regs, base: str, threads: int, load: bool) -> None:
    """Each register of ``regs`` loaded from (``load``) or stored to its row of the thread's
    column at ``base``: one 8-byte row per register, ``threads`` columns; a predicate travels
    as a 0/1 word (``%sphx_q``)."""
    for i, (reg, t, _role) in enumerate(regs):
        at = addr(base, i * threads * 8)
        if (t or "").startswith(".b128."):   # two rows, joined or split through %sphx_w0/1
            half = "%sphx_w0" if t.endswith(".lo") else "%sphx_w1"
            if load:
                b.ins("ld.global.b64", half, at)
                if t.endswith(".hi"):
                    b.ins("mov.b128", reg, "{%sphx_w0, %sphx_w1}")
            else:
                if t.endswith(".lo"):
                    b.ins("mov.b128", "{%sphx_w0, %sphx_w1}", reg)
                b.ins("st.global.b64", at, half)
            continue
        if (t or ".b32").lstrip(".") == "pred":
            if load:
                b.ins("ld.global.u32", "%sphx_q", at)
                b.ins("setp.ne.u32", reg, "%sphx_q", 0)
            else:
                b.ins("selp.u32", "%sphx_q", 1, 0, reg)
                b.ins("st.global.u32", at, "%sphx_q")
            continue
        bits = {8: "b64", 2: "b16", 4: "b32"}[width(t)]
        if load:
            b.ins(f"ld.global.{bits}", reg, at)
        else:
            b.ins(f"st.global.{bits}", at, reg)


def _harness_prologue(b: Builder) -> None:
    """The thread's in and out slots: ``%sphx_rd0`` / ``%sphx_rd1`` point at its column of the
    in and out buffers (8 bytes per thread of the whole grid, blocks one after the other);
    ``%sphx_rd2`` is the column's byte offset.  These names are the harness' own registers,
    which the bound epilogue harness (``epilogue_harness``) uses too."""
    b.ins("ld.param.u64", "%sphx_rd0", addr("splice_harness_in"))
    b.ins("ld.param.u64", "%sphx_rd1", addr("splice_harness_out"))
    b.ins("cvta.to.global.u64", "%sphx_rd0", "%sphx_rd0")
    b.ins("cvta.to.global.u64", "%sphx_rd1", "%sphx_rd1")
    for i, sreg in enumerate(("%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y")):
        b.ins("mov.u32", f"%sphx_r{i}", sreg)
    b.ins("mad.lo.u32", "%sphx_r2", "%sphx_r2", "%sphx_r4", "%sphx_r1")
    b.ins("mad.lo.u32", "%sphx_r2", "%sphx_r2", "%sphx_r3", "%sphx_r0")     # thread in block
    b.ins("mov.u32", "%sphx_r5", "%ctaid.x")
    b.ins("mov.u32", "%sphx_r6", "%ntid.z")
    b.ins("mul.lo.u32", "%sphx_r6", "%sphx_r6", "%sphx_r4")
    b.ins("mul.lo.u32", "%sphx_r6", "%sphx_r6", "%sphx_r3")                 # threads per block
    b.ins("mad.lo.u32", "%sphx_r2", "%sphx_r5", "%sphx_r6", "%sphx_r2")     # thread in grid
    b.ins("mul.wide.u32", "%sphx_rd2", "%sphx_r2", 8)
    b.ins("add.s64", "%sphx_rd0", "%sphx_rd0", "%sphx_rd2")
    b.ins("add.s64", "%sphx_rd1", "%sphx_rd1", "%sphx_rd2")


def without_locs(body: str) -> str:
    """The cut without its ``.loc`` directives: the harness has no ``.file`` table nor
    ``.debug_str`` section, and LLVM's ``.loc … function_name $L__info_stringN, inlined_at …``
    names a label of that section (ptxas: "Unresolved label"); each line stays, empty, so the
    harness keeps the cut's line count."""
    return edit.rewrite(body, lambda s: () if isinstance(s, m.Directive) and s.name == ".loc" else None)


#: the harness's own registers: the thread's in/out slots and offsets, a predicate's word
_OWN_REGS = ((".b64", "%sphx_rd", 4), (".b32", "%sphx_r", 8), (".b32", "%sphx_q", None))


def harness_ptx(header: str, decls: list, body: str, live_in, live_out, threads: int,
                prelude: str = "", shared_bytes: int = 0, entry_params: tuple | list = (),
                scopes: tuple | list = ()) -> str:
    """The harness module: ``header`` (the kernel module's, ``module_header``), the call-shared
    slots and ``prelude`` of a spliced side, then the harness entry -- ``entry_params`` (a bound
    case: the kernel's own ``.param`` nodes, launched with the spec's arguments) and the in/out
    buffers, ``decls`` (``.reg`` nodes, or their text), the thread's slots, and the live-ins'
    loads, the cut and the live-outs' stores inside the ``scopes`` around the cut
    (``enclosing_scopes``: each a ``{ }`` of its ``.reg`` declarations)."""
    b = Builder()
    for d in decls:
        if isinstance(d, m.Decl):
            b.decl(d)
        else:
            b.raw("\t" + d)
    for t, name, n in _OWN_REGS:
        b.decl(reg_decl(t, name, n))
    if has_b128_half(list(live_in) + list(live_out)):
        b.decl(reg_decl(".b64", "%sphx_w", 2))
    _harness_prologue(b)
    inner = Builder()
    _io(inner, live_in, "%sphx_rd0", threads, True)
    inner.comment("---- the cut ----")
    inner.raw(without_locs(body.rstrip("\n")))
    inner.comment("---- end of the cut ----")
    _io(inner, live_out, "%sphx_rd1", threads, False)
    items = inner.nodes
    for scope in reversed(list(scopes)):
        items = [m.Block(tuple(scope) + tuple(items))]
    for it in items:
        b.add(it)
    b.ins("ret")
    params = list(entry_params) + [param(".u64", "splice_harness_in"), param(".u64", "splice_harness_out")]
    module: list = []
    if shared_bytes:
        module.append(m.Decl((), ".shared", (".align", "8", ".b8"), (m.Declarator("__splice_ret", None,
                                                                                    (shared_bytes,)),)))
    if prelude:
        module.append(prelude)
    return module_text(header, module + [function(ENTRY, params, b.nodes)])
