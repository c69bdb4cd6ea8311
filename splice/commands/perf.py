"""Performance views of a kernel: ``splice spec --pressure`` (register pressure against ptxas)
and ``splice sass-mix`` (per-cut SASS instruction mix).  Analysis lives in splice.analysis and
splice.ptx.sass; this module orchestrates and hands data to splice.report."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import SpliceError
from ..report import jsonout


def cmd_pressure(args, kernels) -> int:
    """Pressure curve and peaks of each kernel; ptxas -v next to it unless --no-ptxas."""
    from ..analysis.pressure import pressure
    from ..report.plot_pressure import pressure_png, print_pressure
    from ..util import check_output, name_part
    from . import checked_arch

    args.arch = checked_arch(args.arch, args.file)
    inputs = [args.file, getattr(args, "profile", None)]
    if args.png not in (None, "none"):
        check_output(args.png, inputs)    # before the analysis: nothing runs for a refused PNG
    out = []
    usage = {}
    for k in _one_png_one_kernel(args, kernels):
        d = pressure(k, top=args.top).as_dict(curve=True)
        if not args.no_ptxas:
            if not usage:
                usage = _all_usage(args.file, args.arch, k.module.source)
            d["ptxas"] = usage.get(k.name)
        if args.png != "none":
            png = args.png or str(Path("build") / f"{name_part(Path(args.file).stem + '_' + k.name)}_pressure.png")
            d["png"] = pressure_png(d, png, inputs)
        out.append(d)
    if args.json:
        jsonout.dump({"path": args.file, "entries": out}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print_pressure(out)
    return 0


#: the most PNGs one ``spec --pressure`` writes by default (one per entry under build/): a
#: module of 50000 kernels wrote 50000 files in ten minutes, where the report shows the first
#: ``console.MAX_ENTRIES``; past it the user chooses an entry or ``--png none``
MAX_PNGS = 100


def _one_png_one_kernel(args, kernels):
    """The kernels, refusing before any PNG is written ``--png P`` for a module of several
    entries (each entry's curve replaced the one before in P; the JSON named P for every entry)
    and the default one-PNG-per-entry for a module of more than ``MAX_PNGS`` entries."""
    import itertools

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
    from .roundtrip import ptxas_options

    a, opt = ptxas_options(text, arch)
    return a, (0 if opt is None else opt)


def _all_usage(path, arch, text) -> dict:
    """entry -> ptxas -v figures (one ptxas run for the whole module)."""
    from ..ptx.sass import compile_any

    arch, opt = module_target(text, arch)
    c = compile_any(Path(path), arch, opt)
    return {name: {"arch": c.arch, "registers": r.registers, "spill_stores": r.spill_stores,
                   "spill_loads": r.spill_loads, "stack_frame": r.stack_frame}
            for name, r in c.resources.items()}


def cmd_sass_mix(args) -> int:
    """``splice sass-mix RECIPE|FILE``: SASS instruction mix per cut (original vs spliced) or,
    for a plain module, per phase and epilogue."""
    from . import checked_arch

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
    from ..report.plot_pressure import print_sass_mix

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
    from ..analysis import Kernel
    from ..analysis.pressure import regions
    from ..ptx import parse_file
    from ..ptx.sass_lines import compile_marked, mix

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
    from ..cut.pipeline import run_apply
    from ..ptx import parse
    from ..ptx.sass_lines import compile_marked, mix

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
    from collections import Counter

    return Counter()


def _usage(c, entry) -> dict:
    r = c.resources.get(entry)
    return {"registers": r.registers, "spill_stores": r.spill_stores,
            "spill_loads": r.spill_loads} if r else {}
