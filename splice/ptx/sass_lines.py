"""SASS attributed to PTX lines, and the instruction mix of a line range.

To find the machine code of a statement range (a cut, a phase) the module is *marked*: a
``.file`` directive with a fresh index and, before every line that holds an instruction, a
``.loc FILE LINE 0`` carrying that line's number in the unmarked text.  ptxas with ``-lineinfo``
keeps those locations through scheduling, and ``nvdisasm -g`` prints them back
(``//## File "…", line N``) before each SASS instruction, so every SASS instruction is attributed
to the PTX line it came from even where ptxas interleaved statements.

``-lineinfo`` is documented not to change optimisation; :func:`marking_is_neutral` checks it on
the module at hand by comparing the normalised SASS of the plain and the marked build (the
tests do this on the stand-in layers).  Instructions before the first location (the prologue
ptxas inserts) are attributed to line 0.
"""
from __future__ import annotations

import re
from collections import Counter

from . import model as m
from .sass import compile_any, compile_ptx, find_tool, normalized_sass, require_tool
import os
import subprocess
import tempfile
from .sass import SassToolError, ToolTimedOut, run_tool, scaled_timeout, timeout_hint

MARK_FILE = "splice-lines.ptx"

# SASS opcode (without modifiers) -> class of the mix; first match on the prefix list
CLASSES = (
    ("HMMA", ("HMMA", "IMMA", "HGMMA", "QMMA", "OMMA", "BMMA", "DMMA")),
    ("conversion", ("F2FP", "F2F", "I2F", "F2I", "I2I", "I2FP", "F2IP", "FRND")),
    ("LDL", ("LDL",)), ("STL", ("STL",)),
    ("LDG", ("LDG", "LD")), ("STG", ("STG", "ST", "RED", "ATOM")),
    ("LDS", ("LDS", "LDSM")), ("STS", ("STS",)),
    ("SHFL", ("SHFL",)), ("MUFU", ("MUFU",)),
    ("texture/surface", ("TEX", "TLD", "TLD4", "SUST", "SULD", "SURED")),
    ("barrier", ("BAR", "WARPSYNC", "DEPBAR")),
)
CLASS_NAMES = tuple(c for c, _ in CLASSES) + ("other",)


def sass_class(opcode: str) -> str:
    """The mix class of a SASS opcode (``HMMA.16832.F16.E4M3`` -> ``HMMA``).  Every tensor-core
    opcode is in the ``HMMA`` class, by its ``MMA`` ending: warpgroup ``HGMMA``/``QGMMA``
    (fp8)/``IGMMA``/``BGMMA``, sm_100's ``UTCHMMA``/``UTCQMMA``/``UTCIMMA``…, sm_120's
    ``OMMA``/``QMMA``, as well as the warp-level ones listed."""
    base = opcode.split(".", 1)[0]
    if base.endswith("MMA"):
        return "HMMA"
    for cls, bases in CLASSES:
        if base in bases:
            return cls
    return "other"


def instruction_lines(module: m.Module) -> list:
    """1-based lines where an instruction of any function body starts (sorted, unique)."""
    out = set()
    for f in module.functions():
        if f.body is None:
            continue
        for it in m.walk(f.body.items):
            if isinstance(it, m.Instruction) and it.line:
                out.add(it.line)
    return sorted(out)


def _file_index(module: m.Module) -> int:
    used = [0]
    for it in module.items:
        if isinstance(it, m.Directive) and it.name == ".file" and it.args:
            try:
                used.append(int(it.args[0]))
            except ValueError:
                pass
    return max(used) + 1


def mark_lines(module: m.Module) -> str:
    """The module's text with a ``.loc`` (its own line number) before every instruction line and
    the ``.file`` they refer to after ``.address_size`` (or ``.target``)."""
    src = module.source
    lines = src.split("\n")
    fidx = _file_index(module)
    anchor = module.directive(".address_size") or module.directive(".target")
    if anchor is None:
        raise ValueError("module has no .target: cannot place the .file directive")
    marks = set(instruction_lines(module))
    out = []
    for i, text in enumerate(lines, 1):
        if i in marks:
            indent = text[:len(text) - len(text.lstrip())]
            out.append(f"{indent}.loc\t{fidx} {i} 0")
        out.append(text)
        if i == anchor.line:
            out.append(f'.file\t{fidx} "{MARK_FILE}"')
    return "\n".join(out)


_LOC = re.compile(r'^\s*//## File "(?P<file>[^"]*)", line (?P<line>\d+)')
#: an instruction row of an nvdisasm listing, and the section line that starts a function
ADDRESS_LINE = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*?)\s*;(?P<rest>.*)$")
FUNCTION_LINE = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")


def disassemble(cubin: bytes, flags: tuple) -> str:
    """``nvdisasm FLAGS`` of ``cubin``: one runner for every listing splice reads (``-g`` here,
    the life ranges of ``splice.ptx.sass_pressure``), so each is stopped with the command and
    bounded by a limit said as a timeout."""
    exe = require_tool("nvdisasm")
    limit = scaled_timeout(len(cubin))
    with tempfile.TemporaryDirectory(prefix="splice-sass-") as tmp:
        path = os.path.join(tmp, "in.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        try:     # run_tool: a stop kills nvdisasm too, and a timeout is said as one
            proc = run_tool([exe, *flags, "-c", path], cwd=tmp, timeout=limit)
        except subprocess.TimeoutExpired:
            raise ToolTimedOut(f"nvdisasm timed out after {limit:g} s: {timeout_hint('nvdisasm')}") from None
    if proc.returncode != 0:
        raise SassToolError(f"nvdisasm failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "replace")


def lines_by_address(cubin: bytes, mark_file: str = MARK_FILE) -> dict:
    """function -> [(address, PTX line, opcode)] from ``nvdisasm -g`` (line 0 before the first
    location of ``mark_file``)."""
    funcs: dict = {}
    cur = None
    line = 0
    for raw in disassemble(cubin, ("-g",)).splitlines():
        mm = FUNCTION_LINE.match(raw)
        if mm:
            cur = funcs.setdefault(mm.group("name"), [])
            line = 0
            continue
        mm = _LOC.match(raw)
        if mm:
            line = int(mm.group("line")) if mm.group("file") == mark_file else line
            continue
        mm = ADDRESS_LINE.match(raw)
        if mm and cur is not None:
            words = mm.group("text").split()
            if not words:
                continue
            op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            cur.append((int(mm.group("addr"), 16), line, op))
    return funcs


def attributed_sass(cubin: bytes) -> dict:
    """function -> [(ptx line, opcode with modifiers)] from ``nvdisasm -g`` (trailing NOP
    padding and the end-of-function self-branch dropped)."""
    funcs = {name: [(line, op) for _addr, line, op in insns] for name, insns in lines_by_address(cubin).items()}
    for body in funcs.values():
        while body and (body[-1][1] == "NOP" or body[-1][1] == "BRA"):
            body.pop()
    return funcs


def compile_marked(module: m.Module, arch: str, opt_level: int = 3, entry: str | None = None):
    """(Compiled, {function: [(line, opcode)]}) of the marked module (compiled only, ``-c``, when
    it is relocatable device code with externs defined elsewhere).  ``entry``: the one entry
    whose mix is read; ptxas generates its code alone (``-e``) when it calls no function, so one
    kernel's mix of a module of thousands of entries does not wait for all of them.  An entry
    that calls a function is compiled with the whole module: whole-program optimisation gives
    a function other code when it sees fewer of its callers (``-e`` turned an ``LDG.E`` of a
    caller into ``LDG.E.64`` in tests/data/ptx/modern/calls_params_globals.ptx), and the mix
    must be the one the module really has."""
    alone = entry is not None and calls_nothing(module, entry)
    extra = ("-lineinfo", *(("-e", entry) if alone else ()))
    c = compile_any(mark_lines(module), arch, opt_level, extra=extra, name=module.path)
    return c, attributed_sass(c.cubin)


def calls_nothing(module: m.Module, entry: str) -> bool:
    """Does ``entry`` hold no ``call`` (direct, indirect, in inline asm)?  Then its code is its
    own, whatever else the module holds."""
    try:
        fn = module.function(entry)
    except KeyError:
        return False
    return fn.body is not None and not any(isinstance(it, m.Instruction) and it.opcode == "call"
                                           for it in m.walk(fn.body.items))


def mix(insns, ranges) -> list:
    """Per (first line, last line) range: a Counter of classes plus ``total``."""
    out = []
    for lo, hi in ranges:
        c = Counter(sass_class(op) for ln, op in insns if lo <= ln <= hi)
        c["total"] = sum(c.values())
        out.append(c)
    return out


def marking_is_neutral(module: m.Module, arch: str) -> bool:
    """Does marking leave the machine code unchanged (same normalised SASS)?"""
    plain = compile_ptx(module.source, arch, resources=False)
    marked = compile_ptx(mark_lines(module), arch, extra=("-lineinfo",), resources=False)
    return normalized_sass(plain.cubin) == normalized_sass(marked.cubin)


def have_disassembler() -> bool:
    return find_tool("nvdisasm") is not None
