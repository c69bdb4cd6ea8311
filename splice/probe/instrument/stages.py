"""Debug stages: instrument both modules to dump chosen phases' D registers (and each cut's
live-outs) into a probe-owned buffer, then compare stage by stage.

The buffer is never one of the kernel's own arenas: the instrumented module gets a module-scope
pointer ``.global .align 8 .u64 __splice_stage_ptr;`` that the host sets (``RawModule.get_global``)
to a cupy allocation.  After a stage's last statement a scoped block is inserted

    { .reg ...;  ld.global.u64 base, [__splice_stage_ptr];  index math;  @sampled st.global.b32 ... }

Everything else is the module's own text, byte for byte (insertions are whole lines after the
line where the statement ends, plus the pointer declaration after ``.address_size``).

Layout: stage *k* owns ``[offset_k, offset_k + size_k)`` (offsets 256-aligned);
inside, slot = ``(block_linear / S) * threads + tid_linear`` (only blocks with
``block_linear % S == 0`` store -- S is the sampling stride that keeps the buffer within its
budget), and register *r* of a slot is at ``slot * slot_bytes + r * width`` (width 4, 8 when
a stage holds a 64-bit register, 16 when it holds a ``.b128`` one).  With block (32, 1, W),
``tid_linear = 32 * tid.z + lane``, so the index is ((block * W + wave) * 32 + lane) * n_regs + r:
injective and aligned.

Stages follow program order.  For a recipe, a phase inside a cut becomes the cut's stage (its
live-outs, after the cut in both modules: the original's last cut statement, the spliced
module's call site); a phase outside every cut dumps its D registers after its last mma in both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...analysis.global_uses import operand_symbols
from ...errors import SpliceError
from ...ptx import edit
from ...ptx import model as m
from ...ptx.builder import Builder, NameScope, addr, linear_id
from ...ptx.parser import parse
from .epilogue_stages import epilogue_stages, phases_around_cuts, split_selection
import numpy as np

PTR = "__splice_stage_ptr"
ALIGN = 256


@dataclass
class Stage:
    index: int
    name: str                      # "phase 7" | "cut 1 (phase 8)"
    phase: Optional[int]
    regs: list                     # register names (same in both modules)
    types: list
    line_orig: int                 # insert after this 1-based line
    line_spl: int
    width: int = 4
    offset: int = 0                # byte offset in the stage buffer
    size: int = 0
    cut: Optional[int] = None
    regs_spl: Optional[list] = None    # when the spliced module names them differently

    @property
    def slot_bytes(self) -> int:
        return self.width * len(self.regs)

    def as_dict(self) -> dict:
        return {"index": self.index, "name": self.name, "phase": self.phase, "cut": self.cut,
                "registers": len(self.regs), "width": self.width, "offset": self.offset,
                "bytes": self.size, "line_original": self.line_orig, "line_spliced": self.line_spl}


@dataclass
class StagePlan:
    stages: list
    threads: int                   # per block
    blocks: int
    stride: int                    # S
    sampled: int                   # blocks that store
    total: int                     # buffer bytes
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"stages": [s.as_dict() for s in self.stages], "threads": self.threads,
                "blocks": self.blocks, "stride": self.stride, "sampled_blocks": self.sampled,
                "bytes": self.total, "notes": self.notes}


def parse_selection(sel: str, n_phases: int, cut_phases: set, has_cuts: bool = False) -> list:
    """'all' | 'cut' | '1,8,61' | '1-10,20' -> sorted phase numbers.  'cut' is every phase a cut
    touches plus its neighbours: none when the cuts (``has_cuts``) are in no phase and between
    none (a kernel without mma phases), whose own stages ``epilogue_stages`` adds."""
    sel = (sel or "all").strip().lower()
    if sel in ("all", "*"):
        return list(range(1, n_phases + 1))
    if sel == "cut":
        if not cut_phases and has_cuts:
            return []
        if not cut_phases:
            raise SpliceError("--stages cut needs a recipe (no cut is known): give phase numbers")
        out = set()
        for p in cut_phases:
            out |= {p - 1, p, p + 1}
        return sorted(p for p in out if 1 <= p <= n_phases)
    out = set()
    for part in sel.split(","):
        part = part.strip()
        if not part:
            continue
        if part == "cut":
            out |= set(cut_phases)
            continue
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise SpliceError(f"--stages: {part!r} is not a phase number or range "
                              "(all, cut, 1,8,61, 1-10)") from None
        for p in (lo, hi):     # checked before the range is expanded: 1-99999999999 is a typo, not a set
            if not 1 <= p <= n_phases:
                raise SpliceError(f"--stages: phase {p} does not exist (the kernel has {n_phases} phases)")
        if hi < lo:
            raise SpliceError(f"--stages: empty phase range {part!r}")
        out |= set(range(lo, hi + 1))
    bad = [p for p in out if not 1 <= p <= n_phases]
    if bad:
        raise SpliceError(f"--stages: phase {bad[0]} does not exist (the kernel has {n_phases} phases)")
    return sorted(out)


def _end_line(source: str, node) -> int:
    return source.count("\n", 0, node.span[1]) + 1


def _width(t: Optional[str]) -> int:
    """A staged register's bytes in its slot: 16 for ``.b128``, 8 for 64-bit types, else 4
    (a 16- or 8-bit register and a predicate are stored in a word)."""
    t = (t or ".b32").lstrip(".")
    return 16 if t == "b128" else 8 if t.endswith("64") else 4


def out_line(plan, src_line: int) -> int:
    """A source line of the original -> the same line in the spliced output (outside cuts)."""
    best = None
    for p in plan.pieces:
        if p.kind != "orig":
            continue
        last = p.src_line + p.n_lines - 1
        if p.src_line <= src_line <= last:
            best = p.out_line + (src_line - p.src_line)
            if src_line > p.src_line:
                return best
    if best is None:
        raise SpliceError(f"line {src_line} of the original is inside a cut")
    return best


def plan_stages(kernel, pair, selection: str, spec, budget: int = 1 << 30,
                kernel_spl=None) -> StagePlan:
    """Choose the stages and lay out the buffer.  ``kernel``: the original's
    ``splice.analysis.Kernel``; ``kernel_spl``: the spliced module's (PROBE+MODULE targets, where
    phases are matched by number).  A phase a cut replaces is staged once, as that cut's
    live-outs; any other selected phase as its D registers."""
    cut_phase: dict = {}
    for c in pair.cuts:
        for p in kernel.phases:
            if p.first <= c.last and p.last >= c.first:
                cut_phase.setdefault(p.index, c)
    selection, epis = split_selection(selection, max((e.index for e in kernel.epilogues), default=0))
    near = set(cut_phase) | phases_around_cuts(kernel, pair.cuts)
    phases = (parse_selection(selection, len(kernel.phases), near, bool(pair.cuts))
              if selection or epis is None else [])
    stages: list = []
    seen_cuts: set = set()
    notes: list = []
    for idx in phases:
        c = cut_phase.get(idx)
        if c is None:
            stage = _phase_stage(kernel, pair, kernel_spl, idx, notes)
        elif id(c) not in seen_cuts:
            seen_cuts.add(id(c))
            stage = _cut_stage(kernel, pair, c, idx)
        else:
            stage = None
        if stage is not None:
            stages.append(stage)
    stages += epilogue_stages(kernel, pair, epis, seen_cuts, Stage, _end_line, out_line, notes)
    stages.sort(key=lambda s: s.line_orig)
    return _laid_out(stages, spec, budget, notes)


def _cut_stage(kernel, pair, c, idx: int) -> Stage:
    """A cut's stage: its live-outs, stored after its last statement (original) and after its
    call site or inlined code (spliced)."""
    regs = [r.reg for r in c.abi.live_out]
    types = [kernel.reg_type(r) or ".b32" for r in regs]
    line_o = _end_line(pair.original, kernel.stmt(c.last).node)
    site = next(p for p in pair.plan.pieces if p.kind == "site" and p.cut is c)
    line_s = site.out_line + site.n_lines - 1
    title = f"cut {c.cut.index}" + (f" (phase {c.phase})" if c.phase is not None else f" ({c.title})")
    return Stage(0, title, idx, regs, types, line_o, line_s, cut=c.cut.index)


def _phase_stage(kernel, pair, kernel_spl, idx: int, notes: list):
    """A phase's stage: its D registers after its last mma, in both modules; None (with a note)
    when the spliced module has no such phase or its D registers differ in number."""
    ph = kernel.phase(idx)
    regs = list(ph.d_regs)
    types = [kernel.reg_type(r) or ".b32" for r in regs]
    line_o = _end_line(pair.original, kernel.stmt(ph.last).node)
    regs_spl = None
    if pair.plan is not None:
        line_s = out_line(pair.plan, line_o)
    else:
        if kernel_spl is None or idx > len(kernel_spl.phases):
            notes.append(f"phase {idx}: not in the spliced module")
            return None
        ps = kernel_spl.phase(idx)
        if list(ps.d_regs) != regs:
            if len(ps.d_regs) != len(regs):
                notes.append(f"phase {idx}: {len(regs)} D registers in the original, "
                             f"{len(ps.d_regs)} in the spliced module: not staged")
                return None
            regs_spl = list(ps.d_regs)
        line_s = _end_line(pair.spliced, kernel_spl.stmt(ps.last).node)
    return Stage(0, f"phase {idx}", idx, regs, types, line_o, line_s, regs_spl=regs_spl)


def _laid_out(stages: list, spec, budget: int, notes: list) -> StagePlan:
    """Number the stages and give each its place in the buffer: one slot per thread of every
    block, or of one block in ``stride`` when all of them would pass ``budget`` bytes."""
    threads = spec.block[0] * spec.block[1] * spec.block[2]
    blocks = spec.grid[0] * spec.grid[1] * spec.grid[2]
    for i, s in enumerate(stages):
        s.index = i + 1
        s.width = max(_width(t) for t in s.types) if s.types else 4
    per_block = sum(-(-s.slot_bytes * threads // ALIGN) * ALIGN for s in stages) or 1
    stride = max(1, -(-(per_block * blocks) // budget))
    sampled = -(-blocks // stride)
    off = 0
    for s in stages:
        s.offset = off
        s.size = sampled * threads * s.slot_bytes
        off += -(-s.size // ALIGN) * ALIGN
    if stride > 1:
        notes.append(f"1 block in {stride} stores (buffer budget {budget >> 20} MiB)")
    return StagePlan(stages, threads, blocks, stride, sampled, off, notes)


#: the store of a staged register, by its type's width (a predicate is stored as a 0/1 word)
_STORE = {"128": "st.global.b128", "64": "st.global.b64", "16": "st.global.b16", "8": "st.global.b8"}


def _stage_code(s: Stage, regs: list, types: list, sp: StagePlan) -> str:
    """The block that stores one stage: each thread of a sampled block (one in ``sp.stride``)
    writes its registers to its slot of the stage's part of the buffer.  Built with its own
    name scope (``%splstg_*``) inside a ``{ }`` of its own, so nothing stays live after it."""
    scope = NameScope("%splstg")
    b = Builder(scope)
    blk = linear_id(b, "ctaid")
    sampled, rem = scope.reg(".pred"), scope.reg(".b32")
    b.ins("rem.u32", rem, blk, sp.stride)
    b.ins("setp.eq.u32", sampled, rem, 0)
    b.ins("div.u32", rem, blk, sp.stride)          # the block's index among the sampled ones
    t = linear_id(b, "tid")
    b.ins("mad.lo.u32", t, rem, sp.threads, t)
    off, base = scope.reg(".b64"), scope.reg(".b64")
    b.ins("mul.wide.u32", off, t, s.slot_bytes)
    b.ins("ld.global.u64", base, addr(PTR))
    b.ins("add.s64", base, base, off)
    if s.offset:
        b.ins("add.s64", base, base, s.offset)
    word = None
    for r, (reg, t_) in enumerate(zip(regs, types)):
        t_ = t_.lstrip(".")
        at = addr(base, r * s.width)
        if t_ == "pred":
            word = word or scope.reg(".b32")
            b.ins("selp.u32", word, 1, 0, reg)
            b.ins("st.global.b32", at, word, guard="@" + sampled)
            continue
        width = next((w for w in _STORE if t_.endswith(w)), None)
        b.ins(_STORE[width] if width else "st.global.b32", at, reg, guard="@" + sampled)
    head = [f"\t{{ // splice probe: stage {s.index} ({s.name}), {len(regs)} registers"]
    return "\n".join(head + ["\t" + d for d in scope.decls()] + b.lines + ["\t}"]) + "\n"


def instrument(text: str, sp: StagePlan, which: str) -> str:
    """The module ``text`` with every stage's dump inserted (``which``: 'orig' or 'spl')."""
    inserts: dict = {}
    for s in sp.stages:
        ln = s.line_orig if which == "orig" else s.line_spl
        regs = s.regs_spl if (which == "spl" and s.regs_spl) else s.regs
        types = s.types
        inserts.setdefault(ln, []).append(_stage_code(s, regs, types, sp))
    return insert_code(text, {}, inserts, PTR, "debug-stage buffer")


def insert_code(text: str, before: dict, after: dict, ptr: str, what: str) -> str:
    """The module ``text`` with ``before[n]``/``after[n]`` code inserted around line n (1-based:
    each a statement boundary of a function body, ``ptx.edit.line_edits``), and a host-set
    ``.u64`` pointer global ``ptr`` declared after the ``.address_size`` directive: the one way
    the probe's instrumented modules (stages, profile) get their buffer.  The rest of the text
    is kept byte for byte."""
    module = parse(text, "<instrumented>")
    decl = module.directive(".address_size")
    if decl is None or decl.span is None:
        raise SpliceError(f"module has no .address_size directive; cannot add the {what} pointer")
    again = _naming(module, ptr)
    if again is not None:     # ptxas: duplicate definition, on the GPU run, after the whole build
        raise SpliceError(f"line {again} of the module already names {ptr}, the {what} pointer the probe adds "
                          "(a module the probe instrumented, saved and probed again?): probe the module "
                          "it was made from")
    pointer = m.Decl((), ".global", (".align", "8", ".u64"), (m.Declarator(ptr),))
    head = edit.Edit(decl, after=("", f"// splice probe: {what} (set by the host)", pointer))
    try:
        lines = edit.line_edits(module, before, after)
    except ValueError as exc:
        raise SpliceError(f"the {what}: {exc}") from None
    return edit.apply_all(text, [head, *lines])


def _naming(module, name: str) -> Optional[int]:
    """The line of the first declaration or instruction of ``module`` that names ``name``."""
    for it in module.items:
        if isinstance(it, m.Decl) and any(d.name == name for d in it.declarators):
            return it.line
    for f in module.functions():
        stmts = list(m.walk(f.body.items)) if f.body is not None else []
        hit = next((node for node, sym in operand_symbols(stmts) if sym == name), None)
        if hit is not None:
            return hit.line
    return None


# --------------------------------------------------------------------------------------------
# comparison (numpy on host arrays, or cupy arrays with the same API)
# --------------------------------------------------------------------------------------------

POISON = 0xFF


def compare(sp: StagePlan, a, b, xp=None) -> list:
    """Per stage: differing registers/slots and the first differing (block, thread, register).
    ``a``/``b``: uint8 arrays of the whole buffer (numpy or cupy)."""
    xp = xp or np
    rows = []
    for s in sp.stages:
        n = s.size
        if n == 0:
            rows.append({"stage": s.index, "name": s.name, "phase": s.phase, "equal": True, "slots": 0})
            continue
        # a register is one word (width 4) or `lanes` 64-bit words (8: one; 16, .b128: two)
        lanes = max(1, s.width // 8)
        dt = xp.uint32 if s.width == 4 else xp.uint64
        nregs = len(s.regs)
        ua = a[s.offset:s.offset + n].view(dt).reshape(-1, nregs, lanes)
        ub = b[s.offset:s.offset + n].view(dt).reshape(-1, nregs, lanes)
        diff = (ua != ub).any(axis=2)
        nd = int(diff.sum())
        full = np.uint32(0xFFFFFFFF) if s.width == 4 else np.uint64(0xFFFFFFFFFFFFFFFF)
        unwritten = int((ua == full).all(axis=(1, 2)).sum())
        row = {"stage": s.index, "name": s.name, "phase": s.phase, "cut": s.cut, "equal": nd == 0,
               "values_differ": nd, "values": int(diff.size),
               "slots_differ": int(diff.any(axis=1).sum()), "slots": int(ua.shape[0]),
               "slots_unwritten": unwritten}
        if nd:
            flat = int(xp.argmax(diff.reshape(-1)))
            slot, r = divmod(flat, nregs)
            blk_s, tid = divmod(slot, sp.threads)
            regs_d = diff.any(axis=0)
            row["first"] = {"block": blk_s * sp.stride, "thread": tid, "wave": tid // 32,
                            "lane": tid % 32, "register": s.regs[r],
                            "original": _hex(ua[slot, r], s.width), "spliced": _hex(ub[slot, r], s.width)}
            row["registers_differ"] = [s.regs[i] for i in range(nregs) if bool(regs_d[i])]
        rows.append(row)
    return rows


def _hex(words, width: int) -> str:
    """A staged value as one hexadecimal number: its words, the first the lowest (little
    endian), at least 8 digits."""
    v = 0
    for k, w in enumerate(words.tolist()):
        v |= int(w) << (64 * k)
    return f"0x{v:0{max(8, 2 * width) if width > 8 else 8}x}"


def first_divergence(rows: list) -> Optional[dict]:
    for r in rows:
        if not r["equal"]:
            return r
    return None
