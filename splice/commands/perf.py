"""Performance views of a kernel: ``splice spec --pressure`` (register pressure against ptxas)
and ``splice sass-mix`` (per-cut SASS instruction mix).  Analysis lives in splice.analysis and
splice.ptx.sass; this module orchestrates and hands data to splice.report."""
from __future__ import annotations

import itertools
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

from ..analysis import Kernel
from ..analysis import pressure as pressure_analysis  # its functions read at call time (a test stands in for them)
from ..analysis.pressure import live_at, regions
from ..cut.native import REG_WIDTH, parse_native, render
from ..cut.pipeline import run_apply
from ..errors import SpliceError
from ..ptx import model as mm
from ..ptx import parse, parse_file
from ..ptx.operands import registers
from ..ptx.sass import compile_any
from ..ptx.sass_lines import MARK_FILE, compile_marked, have_disassembler, mark_lines, mix
from ..ptx.sass_pressure import attributed_pressure, region_peaks
from ..report import jsonout
from ..report.plot_pressure import pressure_chart, print_pressure, print_sass_mix
from ..util import check_output, name_part, read_text, write_atomic
from . import checked_arch
from .roundtrip_check import ptxas_options


def cmd_pressure(args, kernels) -> int:
    """Pressure curve and peaks of each kernel; ptxas -v next to it unless --no-ptxas, with
    ptxas's own live registers per region when nvdisasm is there (``_sass_side``).  The target
    is a module, a recipe (the module it splices, planned as ``apply`` does, nothing written)
    or a native alone (wrapped in an entry: ``pressure_target``)."""
    args.arch = checked_arch(args.arch, args.file)
    inputs = [args.file, getattr(args, "profile", None)]
    if args.png not in (None, "none"):
        check_output(args.png, inputs)    # before the analysis: nothing runs for a refused PNG
    target = pressure_target(args, kernels)
    out = []
    side: dict = {}
    for k in _one_png_one_kernel(args, target.kernels):
        d = pressure_analysis.pressure(k, top=args.top).as_dict(curve=True)
        d["target"] = target.describe()
        if not args.no_ptxas:
            if not side:
                side = _sass_side(target, args.arch)
            d["ptxas"] = side["usage"].get(k.name)
            _add_sass(d, k, side, target)
        if getattr(args, "live", None):
            n = _live_statement(k, args.live, target, args.file)
            d["live"] = {"statement": n, "line": target.line(k.stmt(n).line), "text": k.text(n),
                         "values": [v.as_dict() for v in live_at(k, n)]}
        target.relabel(d)
        if args.png != "none":
            png = args.png or str(Path("build") / f"{name_part(Path(args.file).stem + '_' + k.name)}_pressure.png")
            write_atomic(str(png), pressure_chart(d), inputs=inputs)     # never onto an input (--png MODULE)
            d["png"] = str(png)
        out.append(d)
    if args.json:
        jsonout.dump({"path": args.file, "entries": out}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print_pressure(out)
    return 0


# ---------------------------------------------------------------------------------------------
# what --pressure looks at: a module, the module a recipe splices, or a native alone
# ---------------------------------------------------------------------------------------------

class _Target:
    """The kernels to analyse, the PTX text ptxas compiles for them, and how to show places:
    ``offset`` lines of wrapping before a native's own first line."""

    def __init__(self, kind: str, kernels, module=None, note: str = ""):
        self.kind, self.kernels, self.module, self.note = kind, kernels, module, note
        self.line_map: dict = {}      # a wrapped native: wrapper line -> the native file's line
        self.cuts: list = []          # a recipe: (first line, last line, "cut N sA-sB") of each site
        self.lines_of: dict = {}      # a recipe: statement number -> its line in the spliced module

    def describe(self) -> dict:
        return {"kind": self.kind, **({"note": self.note} if self.note else {})}

    def line(self, line: int):
        """The line to show for a line of the analysed text (None: the native wrapper's own)."""
        if not self.line_map:
            return line
        return self.line_map.get(line)

    def source_line(self, line: int) -> int:
        """The analysed text's line of a line the user gave (a native's own line)."""
        if not self.line_map:
            return line
        hits = [w for w, n in self.line_map.items() if n == line]
        return min(hits) if hits else -1

    def cut_of(self, line) -> Optional[str]:
        """The recipe's cut whose spliced code holds this line of the spliced module."""
        for lo, hi, name in self.cuts:
            if line is not None and lo <= line <= hi:
                return name
        return None

    def relabel(self, d: dict) -> None:
        """A native's peaks at the native file's own lines; a recipe's peaks (and ptxas's peak
        region) with the cut they lie in (the spliced module's phases are numbered afresh)."""
        if self.line_map:
            for p in d["peaks"]:
                p["line"] = self.line(p["line"])
        if self.cuts:
            for p in d["peaks"]:
                p["cut"] = self.cut_of(p["line"])
            sass = d.get("sass") or {}
            reg = next((r for r in d["regions"] if r["name"] == sass.get("region")), None)
            if reg is not None:
                sass["cut"] = self.cut_of(self.lines_of.get(reg["first"]))


def pressure_target(args, kernels) -> _Target:
    """``kernels``: spec's lazy module reader, used when the file is neither a recipe nor a
    native."""
    path = str(args.file)
    if getattr(args, "entry", None) and path.endswith((".yaml", ".yml")):
        raise SpliceError("--entry is for a module; a recipe names its entry (entry: in the recipe)", path)
    if path.endswith((".yaml", ".yml")):
        plan, _val, out, _t = run_apply(path, None, ptxas=False)
        mod = parse(plan.text, path=f"{path} (spliced: {out})")
        k = Kernel(mod, plan.entry)
        t = _Target("recipe", [k], mod, note=f"the module {plan.recipe.module} with {len(plan.cuts)} cut(s) spliced")
        t.cuts = [(pc.out_line, pc.out_line + pc.n_lines - 1, f"cut {pc.cut.cut.index} {pc.cut.title}")
                  for pc in plan.pieces if pc.kind == "site" and pc.cut is not None]
        t.lines_of = {st.n: st.line for st in k.stmts if st.n is not None}
        return t
    text = read_text(path)
    if _is_native(text):
        if getattr(args, "entry", None):
            raise SpliceError("--entry is for a module; a native alone is one fragment", path)
        return _native_target(path, text, getattr(args, "arch", None) or "sm_90")
    ks = kernels()
    first = next(ks)
    return _Target("module", itertools.chain([first], ks), first.module)


_NATIVE_HEADER = re.compile(r"^\s*//\s*splice-native\s*:", re.M)
_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\b", re.M)


def _live_statement(k, spec: str, target: _Target, path) -> int:
    """The statement number ``--live`` names: ``sNNNN`` or ``LNNNN`` (a line: the statement
    starting there or the first after it; a native's own line for a native)."""
    mt = re.fullmatch(r"\s*([sSlL])(\d{1,9})\s*", str(spec))
    if not mt:
        raise SpliceError(f"--live: expected a statement like s1443 or a line like L3918, got {spec!r}", path)
    num = int(mt.group(2))
    if mt.group(1) in "sS":
        if target.kind == "native":
            raise SpliceError("--live: a native alone has no statement numbers of its own: give its line (L12)",
                              path)
        k.pos_of(num)               # refuses a number the entry does not have (SpliceError)
        return num
    line = target.source_line(num)
    for st in k.stmts:
        if st.n is not None and st.line >= line >= 0:
            if target.kind == "native" and target.line(st.line) is None:
                break
            return st.n
    raise SpliceError(f"--live: no statement at or after line {num}", path)


def _is_native(text: str) -> bool:
    """A native file: a ``// splice-native:`` header and no ``.entry`` of its own."""
    return bool(_NATIVE_HEADER.search(text)) and not _ENTRY.search(text)


#: the wrapped native's entry and parameter (a native's ``{{param0}}`` names it)
NATIVE_ENTRY, NATIVE_PARAM = "__splice_native", "__splice_native_param_0"
#: the facts a cut gives a native's templates (docs/recipes.md), for a native seen alone
NATIVE_CONTEXT = {"phase": 0, "first": 0, "last": 0, "mma": 0, "weight_lo": 0, "weight_hi": 0,
                  "slot_stride": 0, "entry": NATIVE_ENTRY, "param0": NATIVE_PARAM, "cut": 1, "epilogue": 0,
                  "next_phase": 0, "next_weight_lo": 0, "next_weight_hi": 0}
_OUTPUT = re.compile(r"^%(?:out|d|acc|io)\d+$")


#: the PTX ISA of the wrapper: 8.7 is the first with every mma form the stand-ins use (e4m3 with
#: f16 accumulators); ptxas 12.8 and later read it
NATIVE_VERSION = "8.7"


def _native_target(path: str, text: str, arch: str) -> _Target:
    """A native alone, as an entry ptxas and the analyses take: every register it reads and
    does not write first (its live-ins, named values included) loaded from a buffer, every
    live-out (``%out``, ``%d``, ``%acc``, ``%io``) stored to it at the end, so the curve is the
    native's own with its outputs live to its end; the ABI registers' types are read off their
    uses (``_abi_types``).  Places are reported at the native file's lines."""
    nat = parse_native(text, path, None, NATIVE_CONTEXT)
    abi = _abi_types(nat)
    outs = sorted((r for r in abi if _OUTPUT.match(r)), key=_natural_key)
    ins = sorted((r for r in abi if r not in outs), key=_natural_key)
    head = [f".version {NATIVE_VERSION}", f".target {arch}", ".address_size 64",
            f".visible .entry {NATIVE_ENTRY}(.param .u64 {NATIVE_PARAM})", "{",
            ".reg .b64 %__splice_p;", ".reg .b32 %__splice_v;"]
    head += [f".reg {t} {r};" for r, t in {**abi, **nat.scratch}.items()]
    head.append(f"ld.param.u64 %__splice_p, [{NATIVE_PARAM}];")
    for k, r in enumerate(ins):
        head += _move(r, abi[r], 8 * k, load=True)
    lines, line_map = list(head), {}
    for node in nat.body:
        for ln in render([node], "\t"):
            lines.append(ln)
            line_map[len(lines)] = nat.line(node)
    lines.append(f"ld.param.u64 %__splice_p, [{NATIVE_PARAM}];")    # not live across the native
    for k, r in enumerate(outs):
        lines += _move(r, abi[r], 8 * (len(ins) + k), load=False)
    lines += ["ret;", "}", ""]
    mod = parse("\n".join(lines), path=f"{path} (wrapped native)")
    note = (f"native alone: {len(ins)} live-ins loaded before it, {len(outs)} live-outs stored after it "
            "(types read off their uses)")
    t = _Target("native", [Kernel(mod, NATIVE_ENTRY)], mod, note=note)
    t.line_map = line_map
    return t


def _move(reg: str, ty: str, off: int, load: bool) -> list:
    """Load a live-in from / store a live-out to the wrapper's buffer (a predicate through a
    32-bit word)."""
    if ty == ".pred":
        if load:
            return [f"ld.global.u32 %__splice_v, [%__splice_p+{off}];", f"setp.ne.u32 {reg}, %__splice_v, 0;"]
        return [f"selp.u32 %__splice_v, 1, 0, {reg};", f"st.global.u32 [%__splice_p+{off}], %__splice_v;"]
    bits = {".b16": "b16", ".b64": "b64"}.get(ty, "b32")
    return [f"ld.global.{bits} {reg}, [%__splice_p+{off}];"] if load else \
        [f"st.global.{bits} [%__splice_p+{off}], {reg};"]


def _natural_key(name: str):
    mt = re.match(r"(%\D*)(\d*)$", name)
    return (mt.group(1), int(mt.group(2)) if mt and mt.group(2) else -1, name) if mt else (name, -1, name)


def _abi_types(nat) -> dict:
    """{ABI register or named value: type} of a native: every register it names that is not
    scratch, typed by its first use — a guard, a setp destination or a selp selector is a
    predicate, an address a 64-bit register (32-bit in a shared-memory access), a ``cvt``
    operand its side's type, a ``mul.wide`` destination twice its type, anything else the
    instruction's last type (a 32-bit register where none is written)."""
    out: dict = {}
    for st in mm.walk(nat.body):
        if not isinstance(st, mm.Instruction):
            continue
        for reg, ty in _operand_types(st):
            if reg not in nat.scratch and reg not in out:
                out[reg] = ty
    return out


def _operand_types(st) -> list:
    """(register, type) of each register operand of one instruction (``_abi_types``)."""
    tys = [t for t in st.modifiers if t in REG_WIDTH and t != ".pred"]
    by_width = {1: ".pred", 8: ".b16", 16: ".b16", 32: ".b32", 64: ".b64", 128: ".b32"}
    last = by_width.get(REG_WIDTH.get(tys[-1], 32), ".b32") if tys else ".b32"
    out = [(st.guard.pred, ".pred")] if st.guard is not None else []
    shared = ".shared" in st.modifiers or any(m_.startswith(".shared") for m_ in st.modifiers)
    for i, op in enumerate(st.operands):
        names: list = []
        registers(op, names, syms=False)
        if isinstance(op, mm.Addr):
            out += [(r, ".b32" if shared else ".b64") for r in names]
            continue
        if st.opcode in ("setp", "set") and i == 0 or st.opcode == "selp" and i == 3:
            ty = ".pred" if st.opcode != "set" else last
        elif st.opcode == "cvt" and len(tys) == 2:
            ty = by_width.get(REG_WIDTH.get(tys[0 if i == 0 else 1], 32), ".b32")
        elif st.opcode in ("mul", "mad") and ".wide" in st.modifiers and i == 0:
            ty = by_width.get(2 * REG_WIDTH.get(tys[-1], 32), ".b64") if tys else ".b64"
        elif R_MMA.match(st.opcode) or isinstance(op, (mm.Vec,)) and st.opcode == "mov":
            ty = ".b16" if st.opcode == "mov" and len(tys) == 1 and REG_WIDTH.get(tys[0]) == 32 \
                and len(getattr(op, "items", ())) == 2 else ".b32"
        else:
            ty = last
        out += [(r, ty) for r in names]
    return out


R_MMA = re.compile(r"^(?:mma|wmma|wgmma|movmatrix|shfl|prmt)$")


#: the most PNGs one ``spec --pressure`` writes by default (one per entry under build/): a
#: module of 50000 kernels wrote 50000 files in ten minutes, where the report shows the first
#: ``console.MAX_ENTRIES``; past it the user chooses an entry or ``--png none``
MAX_PNGS = 100


def _one_png_one_kernel(args, kernels):
    """The kernels, refusing before any PNG is written ``--png P`` for a module of several
    entries (each entry's curve replaced the one before in P; the JSON named P for every entry)
    and the default one-PNG-per-entry for a module of more than ``MAX_PNGS`` entries."""
    it = iter(kernels)
    head = list(itertools.islice(it, MAX_PNGS + 1))
    if len(head) > 1 and args.png not in (None, "none"):
        raise SpliceError("--png names one file and the module has several entries: add --entry NAME, "
                          "or leave --png out (one PNG per entry under build/)", args.file)
    if len(head) > MAX_PNGS and args.png is None:
        raise SpliceError(f"the module has more than {MAX_PNGS} entries and --pressure writes one PNG per entry "
                          f"under build/ (at most {MAX_PNGS} a run): add --entry NAME for one, or --png none "
                          "for the curves without PNGs", args.file)
    yield from itertools.chain(head, it)


def module_target(text: str, arch=None) -> tuple:
    """(arch, opt level) to compile a module with: ``--arch`` when given, else the module's own
    ``.target`` when it is sm_90 or newer (an ``sm_90a`` module's wgmma/setmaxnreg do not
    assemble for ``sm_90``), else sm_90; ``-O0`` for a ``debug`` target (ptxas refuses
    optimised debugging), as ``splice roundtrip --sass`` does."""
    a, opt = ptxas_options(text, arch)
    return a, (0 if opt is None else opt)


def _sass_side(target: _Target, arch) -> dict:
    """ptxas -v figures per entry (one ptxas run of the analysed text) and, when nvdisasm is
    installed, ptxas's own live registers before every SASS instruction, attributed to PTX lines
    (a second, marked build: ``-lineinfo``, which does not change code generation —
    ``sass_lines.marking_is_neutral``).  Without nvdisasm the reason is kept for the report."""
    text = target.module.source
    arch, opt = module_target(text, arch)
    name = target.module.path
    c = compile_any(text, arch, opt, name=name)
    usage = {fn: {"arch": c.arch, "registers": r.registers, "spill_stores": r.spill_stores,
                  "spill_loads": r.spill_loads, "stack_frame": r.stack_frame}
             for fn, r in c.resources.items()}
    if not have_disassembler():
        return {"usage": usage, "rows": {}, "why": "nvdisasm not found: no ptxas-side live registers"}
    cm = compile_any(mark_lines(target.module), arch, opt, extra=("-lineinfo",), name=name)
    return {"usage": usage, "rows": attributed_pressure(cm.cubin, MARK_FILE), "why": None}


def _add_sass(d: dict, k, side: dict, target: _Target) -> None:
    """ptxas's live registers next to the PTX count: the highest per region (and so per peak),
    and a curve over the statements (each statement: the most live registers before any SASS
    instruction attributed to its line; null where ptxas emitted none)."""
    rows = side["rows"].get(k.name)
    if rows is None:
        d["sass"] = {"error": side["why"] or f"no SASS for {k.name} in the disassembly"}
        return
    regs = regions(k)
    peaks = region_peaks(rows, _region_lines(k, regs))
    by_region = {nm: {"live": g, "opcode": op, "instructions": n}
                 for (nm, _a, _b, _kd), (g, op, n) in zip(regs, peaks)}
    at_line: dict = {}
    for ln, _op, g in rows:
        at_line[ln] = max(at_line.get(ln, 0), g)
    curve = [at_line.get(k.stmt(n).line) for n in d["curve"]["statement"]]
    top = max(by_region.items(), key=lambda kv: kv[1]["live"], default=(None, {"live": 0}))
    d["sass"] = {"max": top[1]["live"], "region": top[0], "regions": by_region,
                 "note": "ptxas's live general registers (nvdisasm --print-life-ranges), by PTX line"}
    d["curve"]["sass"] = curve
    for p in d["peaks"]:
        p["sass"] = by_region.get(p["region"], {}).get("live")


def cmd_sass_mix(args) -> int:
    """``splice sass-mix RECIPE|FILE``: SASS instruction mix per cut (original vs spliced) or,
    for a plain module, per phase and epilogue."""
    arch = checked_arch(args.arch, args.target)   # None: the recipe's or the module's own target
    if str(args.target).endswith((".yaml", ".yml")):
        if args.entry is not None:    # the recipe's entry: is what its cuts are of, --entry was dropped
            raise SpliceError("--entry is for a module; a recipe names its entry (entry: in the recipe)",
                              args.target)
        data = _recipe_mix(args.target, arch)
    else:
        data = _module_mix(args.target, args.entry, arch)
    if args.json:
        jsonout.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print_sass_mix(data)
    return 0


def _region_lines(k, regions) -> list:
    """Physical line range of each (name, first n, last n, kind) region of a kernel."""
    out = []
    for i, (_name, first, _last, _kind) in enumerate(regions):
        lo = k.stmt(first).line
        hi = k.stmt(regions[i + 1][1]).line - 1 if i + 1 < len(regions) else 10 ** 9
        out.append((lo, hi))
    return out


def _module_mix(path, entry, arch) -> dict:
    mod = parse_file(path)
    k = Kernel(mod, entry)
    regs = regions(k)
    arch, opt = module_target(mod.source, arch)
    c, funcs = compile_marked(mod, arch, opt, entry=k.name)   # that entry's code only (ptxas -e)
    lines = _region_lines(k, regs)
    counts = mix(funcs.get(k.name, []), lines)
    r = c.resources.get(k.name)
    rows = [{"name": nm, "first": a, "last": b, "lines": list(ln), **dict(cnt)}
            for (nm, a, b, _kd), ln, cnt in zip(regs, lines, counts)]
    return {"path": str(path), "entry": k.name, "arch": arch, "kind": "module",
            "registers": r.registers if r else None,
            "spill_stores": r.spill_stores if r else None,
            "spill_loads": r.spill_loads if r else None, "regions": rows}


def _recipe_mix(recipe_path, arch) -> dict:
    """Per cut: the mix of the original's cut lines and of the spliced module's cut site (plus
    its native ``.func`` when the cut is called)."""
    plan, _val, out, _t = run_apply(recipe_path, None, ptxas=False)
    orig = parse(plan.source, path=str(plan.recipe.module))
    spl = parse(plan.text, path=str(out))
    arch = arch or plan.recipe.arch      # the recipe's own ptxas target (sm_90a for wgmma)
    opt = plan.recipe.opt_level
    c0, f0 = compile_marked(orig, arch, opt, entry=plan.entry)   # the recipe's entry only (ptxas -e)
    c1, f1 = compile_marked(spl, arch, opt, entry=plan.entry)
    cuts = []
    for cp in plan.cuts:
        before = mix(f0.get(plan.entry, []), [cp.lines])[0]
        # the cut site, and the native .func of a called cut (ptxas may inline it into the
        # entry or keep it as a function of its own: both are counted by line)
        ranges = [(p.out_line, p.out_line + p.n_lines - 1) for p in plan.pieces
                  if p.kind in ("site", "prelude") and p.cut is cp]
        fn = cp.binding.func
        after = _counter()
        for name in {plan.entry, fn} - {None}:
            for cnt in mix(f1.get(name, []), ranges):
                after.update({kk: v for kk, v in cnt.items() if kk != "total"})
        after["total"] = sum(v for kk, v in after.items() if kk != "total")
        cuts.append({"cut": cp.cut.index, "title": cp.title, "lines": list(cp.lines),
                     "before": dict(before), "after": dict(after), "func": fn})
    return {"recipe": str(recipe_path), "entry": plan.entry, "arch": arch, "kind": "recipe",
            "before": _usage(c0, plan.entry), "after": _usage(c1, plan.entry), "cuts": cuts}


def _counter():
    return Counter()


def _usage(c, entry) -> dict:
    r = c.resources.get(entry)
    return {"registers": r.registers, "spill_stores": r.spill_stores,
            "spill_loads": r.spill_loads} if r else {}
