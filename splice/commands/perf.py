"""Performance views of a kernel: ``splice spec --pressure`` (register pressure against ptxas)
and ``splice sass-mix`` (per-cut SASS instruction mix).  Analysis lives in splice.analysis and
splice.ptx.sass; this module orchestrates and hands data to splice.report."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def cmd_pressure(args, kernels) -> int:
    """Pressure curve and peaks of each kernel; ptxas -v next to it unless --no-ptxas."""
    from ..analysis.pressure import pressure
    from ..report.plot_pressure import pressure_png, print_pressure

    out = []
    usage = {}
    for k in kernels:
        d = pressure(k, top=args.top).as_dict(curve=True)
        if not args.no_ptxas:
            if not usage:
                usage = _all_usage(args.file, args.arch)
            d["ptxas"] = usage.get(k.name)
        if args.png != "none":
            png = args.png or str(Path("build") / f"{Path(args.file).stem}_{k.name}_pressure.png")
            d["png"] = pressure_png(d, png)
        out.append(d)
    if args.json:
        json.dump({"path": args.file, "entries": out}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print_pressure(out)
    return 0


def _all_usage(path, arch) -> dict:
    """entry -> ptxas -v figures (one ptxas run for the whole module)."""
    from ..ptx.sass import compile_ptx

    c = compile_ptx(Path(path), arch or "sm_90")
    return {name: {"arch": c.arch, "registers": r.registers, "spill_stores": r.spill_stores,
                   "spill_loads": r.spill_loads, "stack_frame": r.stack_frame}
            for name, r in c.resources.items()}
