"""Re-assembly: resolve each cut of a recipe against the kernel, check its expectations, bind
its native phase, and splice the text.

Everything outside the cuts is copied byte for byte from the input: the output is assembled
from slices of the original text (``source[a:b]``, with ``a``/``b`` taken from the model's
statement spans) and the generated text for each cut.  A ``.func`` (call ABIs) and the shared
scratch array (call-shared) are the only additions outside a cut, placed just before the entry.
Nothing is written here: ``plan`` returns the spliced text and a line map that turns an output
line (a ptxas diagnostic) back into the native file, the recipe, or the original module.
"""
from __future__ import annotations

import re

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..util import read_text
from ..analysis.mma_forms import is_tensor_core
from ..analysis.provenance import param_names
from ..errors import SpliceError
from ..ptx import model as m
from .binding import Binding, Namer, bind
from .kernel import exact_phase_abi, load_kernel, phase_by_index, refuse_split_carry, refuse_vector_registers
from .native import load_native
from ..analysis.epilogues import classify_range
from .epilogue import (check_epilogue_expect, epilogue_abi, epilogue_context, epilogue_facts,
                       epilogue_targets, typed_expect, widen_to_blocks)
from .directives import directive_edits
from .recipe import EPILOGUE_SELECTORS, Cut, Recipe
import os
from ..analysis.entries import resolve_entry
from ..ptx import parse_file
from ..analysis.calls import describe, mma_in_calls

EPILOGUE_FACTS = ("statement_count", "kind", "constants", "memory")


@dataclass
class CutPlan:
    cut: Cut
    title: str
    phase: Optional[int]
    first: int                   # statement numbers (sNNNN)
    last: int
    removed: int                 # numbered statements removed
    lines: tuple                 # (first, last) physical lines of the removed text
    region: tuple                # (start, end) character offsets in the source
    binding: Binding
    abi: object
    facts: dict
    native: str
    params: dict


@dataclass
class Piece:
    out_line: int                # first output line of this piece (1-based)
    n_lines: int
    kind: str                    # "orig" | "site" | "prelude" | "directive" (an entry directive)
    src_line: int = 0            # orig: first source line
    origin: list = field(default_factory=list)   # per line: (path, line) or None
    cut: Optional[CutPlan] = None


@dataclass
class Plan:
    recipe: Recipe
    entry: str
    source: str
    text: str
    cuts: list
    pieces: list
    timings: dict
    added_shared: int = 0

    def origin(self, out_line: int) -> tuple:
        """(path, line, what) for a line of the spliced output."""
        for p in self.pieces:
            if p.out_line <= out_line < p.out_line + max(p.n_lines, 1):
                k = out_line - p.out_line
                if p.kind == "orig":
                    return (str(self.recipe.module), p.src_line + k, "module")
                o = p.origin[k] if k < len(p.origin) else None
                if p.kind == "directive":
                    return (self.recipe.path, o[1] if o else None, "generated")
                if o is not None:
                    return (o[0], o[1], "native")
                line = p.cut.cut.line if p.cut else None
                return (self.recipe.path, line, "generated")
        return (str(self.recipe.module), out_line, "module")


def fmt_range(r) -> str:
    return f"{r[0]}..{r[1]}" if r else "-"


def cut_facts(kernel, i: int, j: int, abi, phase) -> dict:
    mma = 0
    for s in kernel.stmts[i:j + 1]:
        if isinstance(s.node, m.Instruction) and is_tensor_core(s.node.name):   # mma, wgmma
            mma += 1
    first = kernel.stmts[i].n
    last = kernel.stmts[j].n
    roles_in, roles_out = {}, {}
    for r in abi.live_in:
        roles_in[r.role] = roles_in.get(r.role, 0) + 1
    for r in abi.live_out:
        roles_out[r.role] = roles_out.get(r.role, 0) + 1
    shape = tuple(phase.shape) if phase is not None and phase.shape else None
    chains = len(phase.chains) if phase is not None else None
    wb = tuple(phase.weight_bytes) if phase is not None and phase.weight_bytes else None
    return {
        "statements": f"s{first}-s{last}", "mma": mma,
        "shape": "x".join(str(x) for x in shape) if shape else None,
        "weight_bytes": fmt_range(wb) if wb else None,
        "chains": chains,
        "live_in": len(abi.live_in), "live_out": len(abi.live_out),
        "live_in_roles": roles_in, "live_out_roles": roles_out,
        "live_in_regs": [r.reg for r in abi.live_in], "live_out_regs": [r.reg for r in abi.live_out],
        "phase": phase.index if phase is not None else None,
    }


def _norm_expect(key, val):
    if key == "shape":
        if isinstance(val, (list, tuple)):
            return "x".join(str(x) for x in val)
        return str(val).replace("×", "x").replace(" ", "")
    if key == "weight_bytes":
        if isinstance(val, (list, tuple)):
            return fmt_range(val)
        return str(val).replace(" ", "").replace("-", "..").replace("–", "..")
    if key == "statements":
        return str(val).replace(" ", "").replace("..", "-")
    return val


def check_expect(cut: Cut, facts: dict) -> list:
    """Rows (fact, expected, found) that disagree."""
    bad = []
    for key, want in cut.expect.items():
        if key in ("live_in", "live_out"):
            if typed_expect(want):
                continue          # by type: checked by check_epilogue_expect
            if isinstance(want, dict):
                found = facts[f"{key}_roles"]
                w = {str(k): v for k, v in want.items()}
                if any(found.get(k, 0) != v for k, v in w.items()):
                    bad.append((key, ", ".join(f"{k}={v}" for k, v in w.items()),
                                ", ".join(f"{k}={v}" for k, v in found.items())))
            elif isinstance(want, list):
                found = facts[f"{key}_regs"]
                if [str(x) for x in want] != found:
                    bad.append((key, " ".join(map(str, want)), " ".join(found)))
            elif want != facts[key]:
                bad.append((key, str(want), str(facts[key])))
            continue
        if key in EPILOGUE_FACTS:
            continue
        w = _norm_expect(key, want)
        f = facts.get(key)
        if str(w) != str(f):
            bad.append((key, str(w), str(f)))
    return bad


def expect_table(rows) -> str:
    head = ("cut", "fact", "expected", "found")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(4)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join("  " + ln for ln in lines)


class _AbiView:
    """A CutABI plus named values: the recipe's ``values:`` (name -> register), and every
    live-in whose provenance (``CutABI.values``) is a bare name such as ``W`` or ``smem``."""

    def __init__(self, abi, values: dict, value_types: dict):

        self.live_in = list(abi.live_in)
        self.live_out = list(abi.live_out)
        self.first = abi.first
        self.last = abi.last
        self.values = dict(abi.values)
        self.labels = set(abi.labels)
        named = {}
        types = {r.reg: r.type for r in self.live_in}
        for reg, text in self.values.items():
            if isinstance(text, str) and re.fullmatch(r"[A-Za-z_]\w*", text) and text not in named:
                named[text] = reg
                value_types.setdefault(text, types.get(reg) or ".b64")
        named.update(values)
        self.named = named
        self.value_types = value_types


def _phases_in(kernel, cut: Cut, first: int, last: int) -> int:
    """The ``phases`` fact of a cut: how many phases it replaces (a phase selector names them;
    a statement or line range covers every phase that lies wholly inside it)."""
    if cut.select in ("phase", "phases"):
        return len(cut.targets)
    return sum(1 for p in kernel.phases if first <= p.first and p.last <= last)


def _check_params(recipe: Recipe, cut: Cut, nat) -> None:
    """A recipe parameter the native file does not declare is a typo, not a silent no-op."""
    for k in cut.params:
        if k not in nat.declared:
            known = ", ".join(sorted(nat.declared)) or "none"
            raise recipe.error(f"params: {k!r} is not a parameter of {nat.path} (its header declares: "
                               f"{known})", f"params.{k}", cut)


def _cut_targets(recipe: Recipe, cut: Cut, kernel):
    """Yield (title, phase or None, first_pos, last_pos, epilogue or None)."""
    if cut.select in EPILOGUE_SELECTORS:
        yield from epilogue_targets(recipe, cut, kernel)
        return
    for t in _targets(recipe, cut, kernel):
        yield t + (None,)


def _targets(recipe: Recipe, cut: Cut, kernel):
    """Yield (title, phase or None, first_pos, last_pos)."""
    if cut.select in ("phase", "phases"):
        n = len(kernel.phases)
        for idx in cut.targets:
            ph = phase_by_index(kernel, idx)
            if ph is None:

                note = describe(mma_in_calls(kernel), indirect=True)
                raise recipe.error(f"phase {idx} does not exist (the kernel has {n} phases)"
                                   + (f"; {note}" if note else ""), cut.select, cut)
            yield f"phase {idx} s{ph.first}-s{ph.last}", ph, kernel.first_pos_of(ph.first), kernel.pos_of(ph.last)
        return
    lo, hi = cut.targets[0]
    if cut.select == "statements":
        nums = [s.n for s in kernel.stmts if s.n is not None]
        known = set(nums)
        if lo not in known or hi not in known:
            raise recipe.error(f"statements s{lo}-s{hi} are not in the entry (s{nums[0]}-s{nums[-1]})"
                               if nums else f"statements s{lo}-s{hi}: the entry has no statements",
                               "statements", cut)
        yield f"s{lo}-s{hi}", None, kernel.first_pos_of(lo), kernel.pos_of(hi)
        return
    idx = [p for p, s in enumerate(kernel.stmts) if s.n is not None and lo <= s.line <= hi]
    if not idx:
        raise recipe.error(f"no statement starts on lines {lo}-{hi}", "lines", cut)
    yield f"L{lo}-L{hi}", None, idx[0], idx[-1]


def cut_region(kernel, source: str, i: int, j: int) -> Optional[tuple]:
    """The character region statement indices ``i``…``j`` replace, widened to whole ``{ }``
    blocks (None when a statement has no source position).  apply refuses a region that is not
    balanced; extract asks the same question, so it does not write a native apply then refuses."""
    n_first, n_last = kernel.stmts[i].node, kernel.stmts[j].node
    if n_first.span is None or n_last.span is None:
        return None
    return _region(source, *widen_to_blocks(kernel.fn, n_first.span[0], n_last.span[1]))


def splits_scope(kernel, source: str, i: int, j: int) -> bool:
    region = cut_region(kernel, source, i, j)
    return region is not None and not _balanced(source[region[0]:region[1]])


def _region(source: str, start: int, end: int) -> tuple:
    ls = source.rfind("\n", 0, start) + 1
    if not source[ls:start].strip():
        start = ls
    return start, end


def _balanced(text: str) -> bool:
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def _load_entry(recipe: Recipe):
    """The recipe's kernel; an ``entry:`` the module lacks names the recipe's line."""
    module = parse_file(str(recipe.module))
    if recipe.entry is None:
        return load_kernel(str(recipe.module), module=module)
    try:   # an exact name, a unique substring or the demangled name
        name = resolve_entry(module, recipe.entry)
    except SpliceError as exc:
        raise recipe.error(f"entry {recipe.entry!r}: {exc.message} in {recipe.module_shown}", "entry",
                           detail=exc.detail) from None
    return load_kernel(str(recipe.module), name, module=module)


def _check_values(recipe, cut, kernel) -> None:
    """A named value (``values: {W: "%rd3"}``) must be a register the entry declares: one it
    does not (``%rd999``, a typo) would be spliced in and found by ptxas at the output's line,
    or with ``--no-ptxas`` not at all."""
    for name, reg in cut.values.items():
        if kernel.reg_type(reg) is None:
            raise recipe.error(f"values: {name}: {reg} is not a register {kernel.name} declares", "values", cut)


def _check_native_file(recipe, cut) -> None:
    """A native file that is not there (or is a directory) is named at the recipe's ``native:``
    line, where the user fixes it, with the path it was looked for at."""
    problem = ("is a directory" if cut.native.is_dir() else "" if cut.native.exists()
               # a link that dangles or loops exists as a name: "not found" sent the user looking for a file
               else "is a symbolic link to nothing (its target is missing, or the links loop)"
               if os.path.islink(cut.native) else "not found")
    if problem:
        raise recipe.error(f"native phase file {problem}: {cut.native}", "native", cut)


def plan(recipe: Recipe, kernel=None) -> Plan:
    """Every cut of the recipe bound to its target (``_plan_cut``), the expectations checked
    for all of them before anything is refused, then the spliced text assembled."""
    t0 = time.perf_counter()
    source = read_text(recipe.module)
    if kernel is None:
        kernel = _load_entry(recipe)
    t1 = time.perf_counter()
    params = param_names(kernel)
    shared = {"namer": Namer.for_source(source), "func_cache": {}, "param0": params[0] if params else ""}
    plans, bad = [], []
    targets = [(cut, t) for cut in recipe.cuts for t in _cut_targets(recipe, cut, kernel)]
    refuse_overlaps(recipe, targets)
    for cid, (cut, (title, ph, i, j, epi)) in enumerate(targets, 1):
        cp, rows = _plan_cut(recipe, kernel, source, cut, (title, ph, i, j, epi), cid, shared)
        where = f" (E{epi.index})" if epi is not None and ph is None else \
            (f" (phase {ph.index})" if ph is not None else "")
        bad += [(f"{cut.index}" + where,) + r for r in rows]
        if cp is not None:
            plans.append(cp)
    if bad:
        first_bad = next(c for c in recipe.cuts if str(c.index) == bad[0][0].split()[0])
        key = "expect" if "expect" in first_bad.at else None
        raise recipe.error(f"the module does not match the recipe's expectations ({len(bad)} mismatch"
                           f"{'es' if len(bad) > 1 else ''}); nothing was written", key, first_bad,
                           detail=expect_table(bad) + f"\n  module: {recipe.module}")
    t2 = time.perf_counter()
    text, pieces, added = _assemble(source, kernel.module, kernel.fn, plans, recipe)
    t3 = time.perf_counter()
    return Plan(recipe, kernel.name, source, text, plans, pieces,
                {"load": t1 - t0, "bind": t2 - t1, "assemble": t3 - t2}, added)


def refuse_overlaps(recipe: Recipe, targets: list) -> None:
    """Two targets whose statements overlap, or one named twice (``epilogues: [23, 23]``),
    refused before any is planned: binding a target costs milliseconds (its ABI, facts, native),
    and a recipe of 5000 copies of E23 was planned in full, 84 s, to be refused at assembly.
    ``targets``: (cut, (title, phase, first pos, last pos, epilogue)) in recipe order.  (Regions
    widened to whole ``{ }`` blocks are checked again when the text is assembled.)"""
    order = sorted(targets, key=lambda t: (t[1][2], t[1][3]))
    reach = None     # the target reaching furthest so far
    for cut, t in order:
        if reach is not None and t[2] <= reach[1][3]:
            rcut, rt = reach
            if (rt[2], rt[3]) == (t[2], t[3]):
                again = "named twice" if rcut is cut else f"cut {rcut.index}'s target too"
                raise recipe.error(f"{t[0]} is {again}: each statement is replaced once", cut.select, cut)
            raise recipe.error(f"{t[0]} overlaps {rt[0]} (cut {rcut.index})", cut.select, cut)
        if reach is None or t[3] > reach[1][3]:
            reach = (cut, t)


def _plan_cut(recipe, kernel, source, cut, target, cid: int, shared: dict):
    """(CutPlan or None, expectation mismatches) of one target of a cut: its ABI and facts,
    its ``expect:`` rows (a mismatch: no plan, the caller reports them all), then its native
    loaded with the cut's context and bound.  ``shared``: the recipe's namer, ``.func`` cache
    and first parameter's name."""
    title, ph, i, j, epi = target
    first, last = kernel.stmts[i].n, kernel.stmts[j].n
    refuse_vector_registers(kernel, i, j, recipe.module)
    refuse_split_carry(kernel, i, j, recipe.module)
    if epi is not None:
        abi = epilogue_abi(kernel, cut, ph, epi)
    else:
        abi = exact_phase_abi(kernel, ph) if ph is not None else kernel.abi(first, last)
    facts = cut_facts(kernel, i, j, abi, ph)
    facts["phases"] = _phases_in(kernel, cut, first, last)
    facts.update(epilogue_facts(kernel, i, j, abi, epi or classify_range(kernel, first, last)))
    rows = check_expect(cut, facts) + check_epilogue_expect(cut, facts)
    if rows:
        return None, rows
    region = cut_region(kernel, source, i, j)
    if region is None:
        raise recipe.error("the cut's statements have no source position", cut.select, cut)
    if not _balanced(source[region[0]:region[1]]):
        raise recipe.error(f"{title} splits a {{ }} scope: widen the cut to whole blocks", cut.select, cut)
    ctx = _native_context(kernel, ph, epi, first, last, facts, cid, shared["param0"])
    try:
        shown = str(cut.native.relative_to(Path.cwd()))
    except ValueError:
        shown = str(cut.native)
    _check_native_file(recipe, cut)
    nat = load_native(cut.native, cut.params, ctx, display=shown)
    _check_params(recipe, cut, nat)
    _check_values(recipe, cut, kernel)
    vtypes = {k: (kernel.reg_type(v) or ".b32") for k, v in cut.values.items()}
    view = _AbiView(abi, cut.values, vtypes)
    b = bind(nat, view, cut.abi, shared["namer"], cid, threads=cut.threads, sync=cut.sync,
             func_cache=shared["func_cache"], title=title)
    removed = sum(1 for s in kernel.stmts[i:j + 1] if s.n is not None)
    lines = (source.count("\n", 0, region[0]) + 1, source.count("\n", 0, region[1]) + 1)
    return CutPlan(cut, title, ph.index if ph is not None else None, first, last, removed,
                   lines, region, b, view, facts, shown, dict(nat.params)), []


def _native_context(kernel, ph, epi, first: int, last: int, facts: dict, cid: int, param0: str) -> dict:
    """What a native's ``{{ }}`` templates may name (docs/recipes.md)."""
    wb = tuple(ph.weight_bytes) if ph is not None and ph.weight_bytes else (None, None)
    ctx = {"phase": ph.index if ph is not None else 0, "first": first, "last": last,
           "mma": facts["mma"], "weight_lo": wb[0] if wb[0] is not None else 0,
           "weight_hi": wb[1] if wb[1] is not None else 0,
           "slot_stride": (ph.slot_stride or 0) if ph is not None else 0,
           "entry": kernel.name, "param0": param0, "cut": cid}
    if epi is not None:
        ctx.update(epilogue_context(kernel, epi))
    return ctx


def _line_break_before_rest(source: str, end: int) -> str:
    """A newline when the cut's last line goes on after the cut (inline asm writes
    ``...; mma ...; }`` on one line): the site ends in a ``// splice: end cut`` comment, which
    would otherwise swallow the rest of that line (a scope's closing brace)."""
    eol = source.find("\n", end)
    rest = source[end:eol if eol >= 0 else len(source)]
    return "\n" if rest.strip() else ""


_INLINED_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
#: a `.loc` line; its text is cut at a `//` and right-stripped by the reader (a lazy ``[^\n]*?``
#: before ``[ \t]*`` re-scanned the blanks of a long line from each of its characters)
_LOC_LINE = re.compile(r"^[ \t]*(\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[^\n]*)$", re.M)


def _kept_locs(source: str, start: int, end: int, named: set) -> list:
    """The ``.loc`` lines of the replaced text ``source[start:end]`` whose location an
    ``inlined_at`` names (in order, each once).  A native drops ``.loc``; ptxas refuses an
    ``inlined_at F L C`` after the cut whose ``.loc F L C`` was only inside it ("Source location
    … must be used in a preceding .loc directive"), so the site ends by stating them again
    (line information only: the code is unchanged)."""
    out, seen = [], set()
    for mt in _LOC_LINE.finditer(source, start, end):
        key = mt.group(2, 3, 4)
        if key in named and key not in seen:
            seen.add(key)
            out.append(mt.group(1).split("//", 1)[0].rstrip(" \t"))
    return out


def _assemble(source, module, fn, plans, recipe):
    """(spliced text, its pieces, the shared bytes added): the source with the preludes (the
    call-shared slots, each called cut's ``.func``) before the entry and each cut's region
    replaced by its site, every piece remembering where its lines come from."""
    order = sorted(plans, key=lambda p: p.region)
    named = set(_INLINED_AT.findall(source)) if "inlined_at" in source else set()
    for a, b in zip(order, order[1:]):
        if b.region[0] < a.region[1]:
            raise recipe.error(f"{b.title} overlaps {a.title} (cut {a.cut.index})", b.cut.select, b.cut)
    shared, pre_blocks = _preludes(source, plans, recipe)
    chunks = []   # (text, kind, info)
    pos = 0
    fstart = source.rfind("\n", 0, fn.span[0]) + 1
    if pre_blocks:
        chunks.append((source[:fstart], "orig", 1))
        pos = fstart
        for blk, org, p in pre_blocks:
            chunks.append((blk + "\n\n", "prelude", (org + [None]) if org else [], p))
    for s, e, text, key in directive_edits(recipe, source, fn):
        chunks.append((source[pos:s], "orig", source.count("\n", 0, pos) + 1))
        line = recipe.at.get(key, (None, None))[0]
        chunks.append((text, "directive", [(recipe.path, line)] * (text.count("\n") + 1), None))
        pos = e
    for p in order:
        s, e = p.region
        chunks.append((source[pos:s], "orig", source.count("\n", 0, pos) + 1))
        chunks.append(_site(source, p, named))
        pos = e
    chunks.append((source[pos:], "orig", source.count("\n", 0, pos) + 1))
    return *_joined(chunks), shared


def _preludes(source: str, plans: list, recipe) -> tuple:
    """(shared bytes, [(text, origin, plan)]): the call-shared cuts' slot array (refused when
    the module has one already: it was spliced before) and the called cuts' functions."""
    shared = max((p.binding.shared_bytes for p in plans), default=0)
    if shared and re.search(r"(?<![\w$])__splice_ret(?![\w$])", source):
        first = next(p for p in plans if p.binding.shared_bytes)
        raise recipe.error("the module already declares __splice_ret (a call-shared cut spliced it before): a "
                           "second one would redeclare it (ptxas: duplicate definition; --no-ptxas wrote the broken "
                           "module); splice the original module with every cut in one recipe", "abi", first.cut)
    blocks: list = []
    if shared:
        blocks.append((f"// splice: per-thread return slots of the call-shared cuts\n"
                       f".shared .align 8 .b8 __splice_ret[{shared}];", [None, None], None))
    for p in plans:
        for blk, org in zip(p.binding.prelude, p.binding.prelude_origin):
            blocks.append((blk, org, p))
    return shared, blocks


def _site(source: str, p, named: set) -> tuple:
    """The chunk that replaces cut ``p``'s region: its site lines at the indentation of the
    removed text's first line, then the ``.loc`` lines an ``inlined_at`` after it names."""
    s, e = p.region
    ind = ""
    k = s
    while k < len(source) and source[k] in " \t":
        ind += source[k]
        k += 1
    lines = p.binding.site
    site_origin = list(p.binding.site_origin)
    locs = _kept_locs(source, s, e, named) if named else []
    if locs:
        lines = list(lines) + ["// splice: the cut's .loc lines an inlined_at names"] + locs
        site_origin += [None] * (len(lines) - len(site_origin))
    text = "\n".join((ind + ln) if ln else ln for ln in lines)
    return text + _line_break_before_rest(source, e), "site", site_origin, p


def _joined(chunks: list) -> tuple:
    """(text, pieces) of the chunks, each piece with its first output line."""
    out, pieces = [], []
    line = 1
    for ch in chunks:
        text, kind = ch[0], ch[1]
        n = text.count("\n")
        if kind == "orig":
            pieces.append(Piece(line, n + 1, "orig", src_line=ch[2]))
        else:
            pieces.append(Piece(line, n + 1, kind, origin=list(ch[2]), cut=ch[3]))
        out.append(text)
        line += n
    return "".join(out), pieces
