"""ptxas's own register pressure: live general registers before every SASS instruction, each
attributed to the PTX line it came from.

The PTX-level curve (``splice.analysis.pressure``) counts what the PTX keeps live; ptxas may
need more (its e4m3 -> f16 unpacks on sm_90, loads it hoists for latency) or less.  What decides
occupancy is ptxas's count, and ``nvdisasm --print-life-ranges --life-range-mode count`` prints
it per instruction (the ``GPR #`` column).  nvdisasm ignores ``-g`` when it prints life ranges,
so the module is marked and compiled once (``splice.ptx.sass_lines``: ``.loc`` per PTX line,
``-lineinfo``, which does not change code generation) and disassembled twice, the two listings
joined on the instruction's address.  Stdlib only, like ``splice.ptx.sass``.
"""
from __future__ import annotations

import re

from .sass_lines import ADDRESS_LINE, FUNCTION_LINE, disassemble, lines_by_address

_GPR = re.compile(r"//\s*\|\s*(?P<gpr>\d*)\s*\|")


def live_gpr(cubin: bytes) -> dict:
    """function -> {address: live general registers before the instruction} (nvdisasm -plr)."""
    funcs: dict = {}
    cur = None
    for raw in disassemble(cubin, ("-plr", "-lrm", "count")).splitlines():
        mm = FUNCTION_LINE.match(raw)
        if mm:
            cur = funcs.setdefault(mm.group("name"), {})
            continue
        mm = ADDRESS_LINE.match(raw)
        if mm and cur is not None:
            g = _GPR.search(mm.group("rest"))
            cur[int(mm.group("addr"), 16)] = int(g.group("gpr")) if g and g.group("gpr") else 0
    return funcs


def attributed_pressure(cubin: bytes, mark_file: str) -> dict:
    """function -> [(PTX line, opcode, live GPRs)] in SASS order (trailing NOP/BRA padding
    dropped), the two disassemblies joined on the address."""
    counts = live_gpr(cubin)
    out = {}
    for name, insns in lines_by_address(cubin, mark_file).items():
        live = counts.get(name, {})
        rows = [(ln, op, live.get(addr, 0)) for addr, ln, op in insns]
        while rows and rows[-1][1] in ("NOP", "BRA"):
            rows.pop()
        out[name] = rows
    return out


def region_peaks(rows: list, ranges: list) -> list:
    """Per (first line, last line) range: (highest live GPR count of an instruction attributed
    to it, its opcode, SASS instructions in the range); (0, None, 0) for a range without SASS."""
    out = []
    for lo, hi in ranges:
        best = (0, None)
        n = 0
        for ln, op, g in rows:
            if lo <= ln <= hi:
                n += 1
                if g > best[0]:
                    best = (g, op)
        out.append((best[0], best[1], n))
    return out
