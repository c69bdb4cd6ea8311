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

import os
import re
import subprocess
import tempfile

from .sass import SassToolError, require_tool

_FUNC = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")
_ADDR = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*?)\s*;(?P<rest>.*)$")
_LOC = re.compile(r'^\s*//## File "(?P<file>[^"]*)", line (?P<line>\d+)')
_GPR = re.compile(r"//\s*\|\s*(?P<gpr>\d*)\s*\|")


def _nvdisasm(cubin: bytes, flags: tuple) -> str:
    exe = require_tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="splice-sassp-") as tmp:
        path = os.path.join(tmp, "in.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([exe, *flags, "-c", path], capture_output=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise SassToolError(f"nvdisasm failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "replace")


def live_gpr(cubin: bytes) -> dict:
    """function -> {address: live general registers before the instruction} (nvdisasm -plr)."""
    funcs: dict = {}
    cur = None
    for raw in _nvdisasm(cubin, ("-plr", "-lrm", "count")).splitlines():
        mm = _FUNC.match(raw)
        if mm:
            cur = funcs.setdefault(mm.group("name"), {})
            continue
        mm = _ADDR.match(raw)
        if mm and cur is not None:
            g = _GPR.search(mm.group("rest"))
            cur[int(mm.group("addr"), 16)] = int(g.group("gpr")) if g and g.group("gpr") else 0
    return funcs


def lines_by_address(cubin: bytes, mark_file: str) -> dict:
    """function -> [(address, PTX line, opcode)] from ``nvdisasm -g`` (line 0 before the first
    location of ``mark_file``)."""
    funcs: dict = {}
    cur = None
    line = 0
    for raw in _nvdisasm(cubin, ("-g",)).splitlines():
        mm = _FUNC.match(raw)
        if mm:
            cur = funcs.setdefault(mm.group("name"), [])
            line = 0
            continue
        mm = _LOC.match(raw)
        if mm:
            line = int(mm.group("line")) if mm.group("file") == mark_file else line
            continue
        mm = _ADDR.match(raw)
        if mm and cur is not None:
            words = mm.group("text").split()
            if not words:
                continue
            op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            cur.append((int(mm.group("addr"), 16), line, op))
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
