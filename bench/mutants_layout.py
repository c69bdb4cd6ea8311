"""Every address a mutant kernel of the soundness bed forms, lane by lane, against the PTX ISA's
alignment rules and the bed's own buffers — checked on the CPU before anything runs.

A misaligned access faults on the GPU (``cudaErrorMisalignedAddress``) and leaves the CUDA
context unusable, so one bad kernel used to cost every later mutant of its process its GPU
check.  The bed's kernels are straight-line code over a fixed layout, so their addresses are
computable: the registers are evaluated for every thread (``%tid.x`` = 0 … threads-1) from the
kernel's own text, each address as a buffer plus a byte offset, the buffers placed at their
guaranteed alignment only (``smem`` ``.align 128``, ``lbuf`` ``.align 16``, the device buffers
256 bytes as cudaMalloc guarantees).  Then each access is checked:

* ld / st / atom / red / st.async / red.async / multimem: the access size — element size times
  vector length — divides the address (ISA 6.4.1 Addresses as Operands: "the address must be
  naturally aligned to a multiple of the access size"; a vector's access size is the whole
  vector);
* ldmatrix / stmatrix: every row address 16-byte aligned (a row is 16 bytes, 9.7.14.5.15);
* wmma.load / wmma.store: the start of every row aligned to the fragment's size in bytes, so the
  base and the stride in bytes both (9.7.14.4.2 Matrix Storage for WMMA);
* cp.async: source and destination aligned to cp-size (9.7.9.25.3); cp.async.bulk and
  cp.reduce.async.bulk: 16-byte aligned, a size that is a multiple of 16; a tensor copy's shared
  memory 128-byte aligned, its tensor map 64-byte aligned (9.7.9.25.5);
* mbarrier objects 8-byte aligned (9.7.13.15.1);
* every access inside its buffer, in the state space its instruction names.

An instruction with a memory operand that no rule covers is itself a problem: a new form cannot
slip past the check.
"""
from __future__ import annotations

import re

import mutants_memory as mm

# buffer -> (guaranteed alignment, bytes, state space)
BUFFERS = {"smem": (128, 4096, "shared"), "lbuf": (16, 64, "local"), "in": (256, mm.IN_BYTES, "global"),
           "out": (256, mm.OUT_BYTES, "global"), "g": (256, mm.G_BYTES, "global")}
PARAMS = {"pin": "in", "pout": "out", "pg": "g"}
TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_TYPE = re.compile(r"^(?:[usbf](8|16|32|64|128)|f16x2|bf16x2)$")
_ADDR = re.compile(r"^(%?[\w$]+)(?:\s*\+\s*(-?\d+))?$")


# --- the values of the registers, thread by thread ------------------------------------------------
def _split(operands: str) -> list:
    """Operands split at the top-level commas (not inside [] or {})."""
    out, depth, cur = [], 0, ""
    for ch in operands:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def statements(text: str) -> list:
    """(line number, opcode, operands) of every instruction of a kernel's body, in order."""
    body = text[text.index("{") + 1:]
    out = []
    for n, raw in enumerate(body.splitlines(), text[:text.index("{")].count("\n") + 1):
        line = raw.split("//")[0].strip().rstrip(";").strip()
        if not line or line in "{}" or line.startswith(".") or line.endswith(":"):
            continue
        line = re.sub(r"^@!?%\w+\s+", "", line)
        op, _, rest = line.partition(" ")
        out.append((n, op, _split(rest)))
    return out


class Lanes:
    """Register values for every thread: an int, or (buffer, offset) for an address; None where
    the bed's layout does not fix the value (a loaded word, a float)."""

    def __init__(self, threads: int):
        self.threads = threads
        self.regs: dict = {}

    def value(self, operand: str):
        """Per-thread values of an operand (register, immediate, special register, symbol)."""
        operand = operand.strip()
        if operand == "%tid.x":
            return list(range(self.threads))
        if operand in self.regs:
            return self.regs[operand]
        if re.fullmatch(r"-?\d+|0[xX][0-9a-fA-F]+", operand):
            return [int(operand, 0)] * self.threads
        if operand in BUFFERS:
            return [(operand, 0)] * self.threads
        return None

    def step(self, op: str, args: list) -> None:
        """Evaluate one instruction; an instruction not modelled here leaves its destination
        unknown (every bed instruction writes at most its first operand)."""
        base = op.split(".")[0]
        dst = args[0] if args else ""
        val = None
        if op == "ld.param.u64":
            name = args[1].strip("[] ")
            val = [(PARAMS[name], 0)] * self.threads if name in PARAMS else None
        elif base in ("mov", "cvta") or (base == "mapa" and args[2:] == ["0"]):
            val = self.value(args[1])      # cvta.to.global / cvta.global: the same bytes; mapa to rank 0: this CTA
        elif base == "cvt" and op.endswith(".u32"):
            src = self.value(args[1])
            val = src if src is not None and all(isinstance(v, int) for v in src) else None
        elif base in ("add", "sub", "mul", "shl") and len(args) == 3:
            val = self._arith(base, self.value(args[1]), self.value(args[2]))
        if not dst.startswith(("[", "{")) and dst.startswith("%"):
            self.regs[dst] = val
        elif dst.startswith("{"):
            for reg in _split(dst.strip("{}")):
                self.regs[reg] = None

    def _arith(self, base: str, a, b):
        if a is None or b is None:
            return None
        out = []
        for x, y in zip(a, b, strict=True):
            if isinstance(x, int) and isinstance(y, int):
                out.append({"add": x + y, "sub": x - y, "mul": x * y, "shl": x << y}[base])
            elif base == "add" and isinstance(y, int) and not isinstance(x, int):
                out.append((x[0], x[1] + y))
            elif base == "add" and isinstance(x, int) and not isinstance(y, int):
                out.append((y[0], y[1] + x))
            elif base == "sub" and isinstance(y, int) and not isinstance(x, int):
                out.append((x[0], x[1] - y))
            else:
                return None
        return out


# --- the rules: (operand, alignment, bytes) of every memory operand -------------------------------
def _space(parts: list) -> str:
    for p in parts:
        if p.startswith("shared"):
            return "shared"
        if p in ("global", "local"):
            return p
    return "generic"


def _access_bytes(parts: list) -> int:
    """Element size times vector length, from the last type qualifier (ld/st/atom/red)."""
    types = [p for p in parts if _TYPE.match(p)]
    if not types:
        return 0
    t = types[-1]
    size = 4 if t.endswith("x2") else TYPE_BYTES[_TYPE.match(t).group(1)]
    vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v[248]", p)), 1)
    return size * vec


def _wmma(parts: list, args: list) -> list:
    frag_regs = args[0] if parts[1] == "load" else args[1]
    frag = 4 * len(_split(frag_regs.strip("{}")))
    elem = _access_bytes(parts[-1:])
    stride = int(args[-1]) if len(args) == 3 else 16
    mem = args[1] if parts[1] == "load" else args[0]
    if (stride * elem) % frag:
        return [("rule", f"stride {stride}×{elem} bytes is not a multiple of the {frag}-byte fragment")]
    return [(mem, frag, 15 * stride * elem + 16 * elem, _space(parts))]


def _bulk(op: str, parts: list, args: list) -> list:
    """cp.async.bulk{.tensor,.prefetch} and cp.reduce.async.bulk: 16-byte addresses and sizes, a
    tensor map 64-byte aligned, a tensor copy's shared memory 128-byte aligned, the mbarrier."""
    import mutants_async as ma

    out = []
    mem = [a for a in args if a.startswith("[")]
    if "mbarrier::complete_tx::bytes" in parts:
        out.append((mem.pop(), 8, 8, "shared"))
    spaces = [_space([p]) for p in parts if p.startswith("shared") or p == "global"]
    sizes = [int(a) for a in args if re.fullmatch(r"\d+", a)]
    if sizes and sizes[0] % 16:
        return [("rule", f"bulk size {sizes[0]} is not a multiple of 16")]
    if len(mem) != len(spaces):
        return [("rule", f"{len(mem)} addresses for the state spaces {spaces} of {op}")]
    for a, space in zip(mem, spaces, strict=True):
        if "{" in a:
            out.append((a, 64, 128, "generic"))
        elif ".tensor" in op:
            out.append((a, 128, 4 * ma.BOX, space))
        else:
            out.append((a, 16, sizes[0], space))
    return out


def _surface(op: str, parts: list, args: list) -> list:
    """tex / suld.b / sust.b on the bed's 1-D array of SURF_ELEMS int32: the coordinate in range
    (tex: an element index; .b surfaces: a byte offset aligned to the element)."""
    coord = [a for a in args if a.startswith("[")][0]
    x = coord[coord.index("{") + 1:coord.index("}")].split(",")[0].strip()
    return [("coord", x, "bytes" if parts[1] == "b" else "elements", _access_bytes(parts) or 4)]


def rules(op: str, args: list) -> list:
    """(operand, alignment, bytes, state space) for every memory operand of one instruction; a
    ("rule", message) entry where the operand breaks a rule by itself or no rule covers it."""
    parts = op.split(".")
    mem = [a for a in args if a.startswith("[")]
    if not mem or op.startswith("ld.param"):
        return []
    if parts[0] in ("ldmatrix", "stmatrix"):
        return [(mem[0], 16, 16, "shared")]
    if parts[0] == "wmma":
        return _wmma(parts, args)
    if op.startswith(("cp.async.bulk", "cp.reduce.async.bulk")):
        return _bulk(op, parts, args)
    if parts[:2] == ["cp", "async"] and parts[2] in ("ca", "cg"):
        size = int(args[2])
        return [(args[0], size, size, "shared"), (args[1], size, size, "global")]
    if parts[0] == "mbarrier":
        return [(mem[0], 8, 8, "shared")]
    if op.startswith("fence.proxy.tensormap"):
        return [(mem[0], 64, 128, "generic")]
    if parts[0] == "prefetch":
        return [(mem[0], 1, 1, _space(parts))]
    if parts[0] in ("tex", "suld", "sust"):
        return _surface(op, parts, args)
    if parts[0] in ("ld", "st", "atom", "red", "multimem") and _access_bytes(parts):
        size = _access_bytes(parts)
        return [(m, size, size, _space(parts)) for m in mem]
    return [("rule", f"no alignment rule for {op}")]


# --- the check ---------------------------------------------------------------------------------------
def _addresses(lanes: Lanes, operand: str):
    """Per-thread (buffer, offset) of a memory operand ``[base+offset]`` (a tensor's or an image's
    ``[handle, {coordinates}]``: the handle); None where the layout does not fix it."""
    inner = operand.strip("[]").split(",")[0].strip()
    m = _ADDR.match(inner)
    base = lanes.value(m.group(1)) if m else None
    if base is None or any(isinstance(v, int) for v in base):
        return None
    off = int(m.group(2) or 0)
    return [(buf, o + off) for buf, o in base]


def _one(lanes: Lanes, operand: str, align: int, extent: int, space: str) -> str:
    addrs = _addresses(lanes, operand)
    if addrs is None:
        return f"{operand}: the address is not fixed by the bed's layout"
    for t, (buf, off) in enumerate(addrs):
        buf_align, size, buf_space = BUFFERS[buf]
        if space != "generic" and space != buf_space:
            return f"{operand}: thread {t} addresses {buf} ({buf_space}) through .{space}"
        if align > buf_align or off % align:
            return f"{operand}: thread {t} address {buf}+{off} is not a multiple of {align} bytes"
        if off < 0 or off + extent > size:
            return f"{operand}: thread {t} bytes {buf}+{off}..+{extent} fall outside {buf} ({size} bytes)"
    return ""


def _coordinate(lanes: Lanes, x: str, unit: str, elem: int) -> str:
    vals = lanes.value(x)
    if vals is None or not all(isinstance(v, int) for v in vals):
        return f"coordinate {x} is not fixed by the bed's layout"
    limit = mm.SURF_ELEMS * (4 if unit == "bytes" else 1)
    step = elem if unit == "bytes" else 1
    bad = [(t, v) for t, v in enumerate(vals) if v < 0 or v + step > limit or v % step]
    return f"coordinate {x}: thread {bad[0][0]} has {bad[0][1]} {unit} (array of {limit})" if bad else ""


def check(text: str, threads: int) -> list:
    """Every problem of one kernel's memory operands: 'line N: opcode operand: why'."""
    lanes = Lanes(threads)
    problems = []
    for n, op, args in statements(text):
        for rule in rules(op, args):
            if rule[0] == "rule":
                why = rule[1]
            elif rule[0] == "coord":
                why = _coordinate(lanes, *rule[1:])
            else:
                why = _one(lanes, *rule)
            if why:
                problems.append(f"line {n}: {op} {why}")
        lanes.step(op, args)
    return problems


def check_planned(p) -> list:
    """The problems of a planned mutant's original and spliced kernels."""
    out = [f"original {w}" for w in check(p.original, p.mutant.threads)]
    if p.spliced:
        out += [f"mutant {w}" for w in check(p.spliced, p.mutant.threads)]
    return out
