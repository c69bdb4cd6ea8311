"""What a kernel does with each parameter value: the facts ``splice probe init`` writes its
skeleton from and the probe's spec checks test a spec against.

Def-use, forward: every value loaded from a ``.param`` (``ld.param [p]`` or ``[p+off]`` of a
by-value struct) is followed through copies and address additions (not products or shifts: a
stride multiplied into an offset is index arithmetic) to the memory instructions whose address it
reaches, through the local frame nvcc copies structs into, and into called ``.func`` bodies.  What
each label reaches is a :class:`Use`: loads and stores (through the roles table), their types, how
the loaded values are used, whether pointers loaded from it are dereferenced (a table of
pointers), and the kernel's own spaces it addresses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ptx import model as m
from ..ptx import types as dt
from ..ptx.operands import registers
from . import roles
from .fixpoint import reader_index, solve
from .kernel import Kernel
from .roles import READ, WRITE, memory_access, memory_typed, multicast

_ARITH = {"mov", "add", "sub", "mad", "mul", "cvta", "cvt", "selp", "and", "or", "xor", "shl",
          "shr", "min", "max", "neg", "slct", "prmt", "bfi"}
# the spaces a parameter's pointer reaches the kernel's caller through (shared, local, const and
# param accesses are the kernel's own business); 'tex'/'surf' are image handles
_CALLER_SPACES = ("global", "generic", "tex", "surf")
_IMAGES = {"tex": "texture", "surf": "surface"}
_OWN_SPACES = ("shared", "const", "local")
# texture/surface geometries (PTX ISA 9.7.10/9.7.11); the probe makes 1d, 2d, 3d, a1d, a2d (images.py)
_GEOMETRIES = (".1d", ".2d", ".3d", ".a1d", ".a2d", ".cube", ".acube", ".2dms", ".a2dms")


def _addresses(node, own: bool = False) -> list:
    """[(address operand, space, effect)] of the caller-visible addresses ``node`` reaches, from
    the roles table: a copy's global source is read even when its destination is shared.  With
    ``own``: the addresses in the kernel's own spaces (shared, const, local) instead."""
    acc = roles.memory_access(node)
    if acc is None:
        return []
    return [(node.operands[i], sp, eff) for i, sp, eff in acc.addresses()[:2]
            if (sp in _OWN_SPACES if own else sp in _CALLER_SPACES)]


@dataclass
class Use:
    """What one parameter (or struct field) reaches."""
    reads: int = 0
    writes: int = 0
    types: list = field(default_factory=list)      # ('.f32', vec) of its loads/stores
    scales: set = field(default_factory=set)       # index scalings added to it (element sizes)
    image: Optional[str] = None                    # 'texture' / 'surface' when used as a handle
    seed: int = 1                                  # the fill seed the skeleton proposes
    multicast: bool = False                        # reached by multimem.*: a multicast address
    arith: list = field(default_factory=list)      # integer types of atom/red/wmma on it
    values: list = field(default_factory=list)     # (kind, evidence) of what uses the loaded values
    parked: bool = False                           # may be read back from a local copy by index
    geometries: list = field(default_factory=list)  # texture/surface geometries it is used with
    param: int = 0                                 # the parameter it belongs to
    alone: bool = False                            # some address derives from this value alone
    pointers: list = field(default_factory=list)   # accesses through pointers loaded from it
    target: Optional["Use"] = None                 # what those accesses do (a pointer table's entries)
    partners: set = field(default_factory=set)     # other labels in the addresses it reaches

    @property
    def role(self) -> Optional[str]:
        if self.reads and self.writes:
            return "inout"
        if self.writes:
            return "output"
        if self.reads:
            return "input"
        return None

    def element(self) -> tuple:
        """(dtype name, guessed?)"""
        names = [t for t, _ in self.types]
        for t in names:
            d = dt.lookup(t)
            if d is not None and d.is_float:
                return d.name, False
        for t in self.arith:            # atom.max.s32 / red.add.u64: the memory holds that type
            return dt.lookup(t).name, False
        by_use = self._by_use(names)
        if by_use is not None:
            return by_use
        signed = {dt.lookup(t).name for t in names if dt.lookup(t) is not None and dt.lookup(t).kind == "int"}
        if len(signed) == 1:            # ld.global.s32: no copy or bit move is written signed
            return signed.pop(), False
        sizes = sorted(x for x in self.scales if x in (1, 2, 4, 8))
        if sizes:                       # the index is scaled by the element size
            return {1: "u8", 2: "f16", 4: "f32", 8: "f64"}[sizes[0]], True
        for t in names:
            d = dt.lookup(t)
            if d is not None:
                return {1: "u8", 2: "f16", 4: "f32", 8: "u64"}[d.size], True
        return "u8", True

    def _by_use(self, names: list) -> Optional[tuple]:
        """(dtype, False) when every typed use of the loaded values agrees with the access size:
        integer arithmetic, compares or indexing say an integer (signed if one use is), float
        arithmetic that float; copies, stores and bit operations say nothing.  None when the
        uses disagree, say nothing, or name another size (``.f16x2`` on a ``.u32`` load): the
        caller guesses."""
        sizes = {d.size for d in map(dt.lookup, names) if d is not None}
        types = {t for _k, t, _w in self.values}
        kinds = {dt.lookup(t).kind if dt.lookup(t) is not None else None for t in types}
        if len(sizes) != 1 or not types or None in kinds or {dt.lookup(t).size for t in types} != sizes:
            return None
        if kinds <= {"int", "uint"}:
            size = sizes.pop()
            told = {dt.lookup(t).kind for _k, t, w in self.values if _signed_use(w)}
            signed = any(dt.lookup(t).kind == "int" for t in names if dt.lookup(t) is not None) or told == {"int"}
            return ({1: "s8", 2: "s16", 4: "s32", 8: "s64"} if signed else
                    {1: "u8", 2: "u16", 4: "u32", 8: "u64"})[size], False
        return (types.pop(), False) if len(types) == 1 and kinds <= {"float"} else None


def _param_label(node, params: dict):
    """(param index, byte offset) of an ``ld.param [p]`` / ``[p+off]`` or ``mov r, p`` source."""
    for o in node.operands[1:]:
        if type(o) is m.Addr:
            name = getattr(o.base, "name", None)
            if name in params:
                return (params[name], o.offset)
        if type(o) is m.Sym and o.name in params:
            return ("&", params[o.name], 0)         # mov r, param: the parameter's address
    return None


def _through_address(kernel, node, pos: int, taint: dict):
    """``ld.param [%rd+off]`` where ``%rd`` holds a parameter's address (nvcc's by-value
    structs: ``mov.b64 %rd9, param_0; ld.param.u64 %rd2, [%rd9+40]``): the field's label."""
    for o in node.operands[1:]:
        if type(o) is m.Addr and type(o.base) is m.Reg:
            key = kernel._resolve(o.base.name, kernel._scope_of[pos])
            for lab in taint.get(key[0], ()) if key else ():
                if lab[0] == "&":
                    return (lab[1], lab[2] + o.offset)
    return None


def _param_source(kernel, node, pos: int, params: dict, taint: dict, defs, wide: bool, joined=frozenset()):
    """The label a ``mov``/``ld.param`` of a parameter gives its destination: frozenset() when
    the node reads no parameter, None for a 32-bit scalar (index arithmetic, not a base)."""
    if not (node.opcode == "mov" or (node.opcode == "ld" and ".param" in node.name)):
        return frozenset()
    lab = _param_label(node, params)
    if lab is None and node.opcode == "ld":     # ld.param [%rd+off], %rd = the param's address
        lab = _through_address(kernel, node, pos, taint)
    if lab is None:
        return frozenset()
    if not wide and not (defs and defs[0] in joined and _half_of_pointer(kernel, defs, lab)):
        return None
    if not wide and lab[0] != "&":   # a pointer read in two 32-bit halves: its field
        lab = (lab[0], lab[1] - lab[1] % 8)
    return frozenset({lab})


def _frame_keys(kernel) -> dict:
    """{register key: its byte offset in the local frame, None when run-time}: ``mov %SPL,
    __local_depot0`` (0) and what is derived from it (``cvta.local %SP, %SPL``, ``add %rd1,
    %SPL, 96``).  nvcc copies by-value structs into the frame: -O3 with ``st.local``, -G through
    the generic ``%SP`` (``st.u64 [%SP+8]``)."""
    local_syms = {d.name for it in kernel.fn.body.items if type(it) is m.Decl and it.space == ".local"
                  for d in it.declarators}
    if not local_syms:
        return {}
    defs_all, uses_all, _g = kernel.du()
    frame: dict = {}
    unset = object()

    def step(pos: int) -> tuple:
        """A frame address defined at ``pos``: an offset, or None once two differ (a pointer
        moved around a loop is at a run-time offset)."""
        node = kernel.stmts[pos].node
        if type(node) is not m.Instruction or node.opcode not in ("mov", "cvta", "add") or not defs_all[pos]:
            return ()
        value: Optional[int]
        if node.opcode == "mov" and any(getattr(o, "name", None) in local_syms for o in node.operands[1:]):
            value = 0
        else:
            base = [u for u in uses_all[pos] if u in frame]
            if not base:
                return ()
            imm = getattr(node.operands[-1], "value", None)
            off = frame[base[0]]
            moved = off + imm if node.opcode == "add" and isinstance(imm, int) and off is not None else None
            value = off if node.opcode in ("mov", "cvta") else moved
        d = defs_all[pos][0]
        old = frame.get(d, unset)
        new = value if old is unset or old == value else None
        if old is not unset and old == new:
            return ()
        frame[d] = new
        return (d,)

    solve(len(kernel.stmts), step, reader_index(uses_all))
    return frame


def _frame_slot(kernel, node, pos: int, frame: dict):
    """(in the frame?, byte offset of the access or None when run-time) of an ``ld``/``st``."""
    if ".param" in node.name or not frame and ".local" not in node.modifiers:
        return False, None
    addr = node.operands[0] if node.opcode == "st" else node.operands[-1]
    if type(addr) is not m.Addr:
        return ".local" in node.modifiers, None
    key = kernel._resolve(addr.base.name, kernel._scope_of[pos]) if type(addr.base) is m.Reg else None
    if key is None or key[0] not in frame:
        return ".local" in node.modifiers, None
    off = frame[key[0]]
    return True, (off + addr.offset if off is not None and len(addr.items) == 1 else None)


def _labels_at(kernel, operand, pos: int, taint: dict) -> frozenset:
    """The labels of the registers ``operand`` (an address, a stored value) names at ``pos``."""
    regs: list = []
    registers(operand, regs)
    keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
    return frozenset().union(*(taint.get(k[0], frozenset()) for k in keys if k))


def _stored_labels(kernel, node, pos: int, taint: dict) -> frozenset:
    """The labels of the value a ``st`` writes (its last operand)."""
    return _labels_at(kernel, node.operands[-1], pos, taint)


def _loaded_pointers(kernel, node, pos: int, taint: dict) -> frozenset:
    """``ld.global.u64 %rd, [<buffer of param p>]``: the loaded value may be a pointer kept in
    p's memory (``const float* const* ptr_a``, an array of structs holding pointers); labelled
    ``('*', p, offset)`` so that an access through it marks p as a table of pointers."""
    out = set()
    for addr, _space, _effect in _addresses(node):
        regs: list = []
        registers(addr, regs)
        for k in (kernel._resolve(r, kernel._scope_of[pos]) for r in regs):
            if k:
                out.update(("*",) + lab for lab in taint.get(k[0], ()) if lab[0] not in ("&", "*"))
    return frozenset(out)


def _moved_addresses(node, src: frozenset) -> frozenset:
    """``add %rd1, %rd23, 24`` where %rd23 holds a parameter's address: %rd1 is that address
    plus 24, so ``ld.param [%rd1+16]`` reads byte 40 (CUTLASS's Params; the 24 was dropped and
    every field after it was named 24 bytes early).  Only an immediate moves the offset."""
    imm = getattr(node.operands[-1], "value", None) if node.operands else None
    if node.opcode not in ("add", "sub") or not isinstance(imm, int) or len(node.operands) != 3:
        return src
    d = imm if node.opcode == "add" else -imm
    return frozenset((lab[0], lab[1], lab[2] + d) if lab[0] == "&" else lab for lab in src)


_INDEX_ONLY = {"mul", "shl", "shr", "div", "rem"}     # a pointer scaled or shifted is no pointer


def _base_operands(kernel, node, pos: int, used) -> tuple:
    """The registers of ``node`` a pointer may flow through: none for a product or shift (an
    index: CUTLASS's 64-bit strides and extents are multiplied into offsets, and were taken for
    buffers), only the addend of a ``mad``; every source otherwise."""
    if node.opcode in _INDEX_ONLY:
        return ()
    if node.opcode == "mad" and len(node.operands) == 4:
        regs: list = []
        registers(node.operands[3], regs)
        keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
        return tuple(k[0] for k in keys if k)
    return used


def _joined_halves(kernel) -> frozenset:
    """Register keys joined into one 64-bit value as its two halves: the sources of a ``bfi.b64
    d, hi, lo, 32, 32`` (nvcc -O3), of a ``shl.b64 t, hi, 32`` and of the ``or.b64 d, t, lo``
    that takes it (nvcc -G).  nvcc reads a by-value struct's pointer as two ``ld.param.u32``
    halves joined so; a 32-bit field zero-extended for index arithmetic is not joined and stays
    a scalar."""
    defs_all, uses_all, _g = kernel.du()
    out: set = set()
    shifted: set = set()
    for pos in kernel.indices_of("bfi") + kernel.indices_of("shl"):
        node = kernel.stmts[pos].node
        if type(node) is not m.Instruction or not any(mm.endswith("64") for mm in node.modifiers):
            continue
        if node.opcode == "bfi" or getattr(node.operands[-1], "value", None) == 32:
            out.update(uses_all[pos])
            if node.opcode == "shl":
                shifted.update(defs_all[pos])
    for pos in kernel.indices_of("or") + kernel.indices_of("add"):
        if shifted & set(uses_all[pos]):
            out.update(uses_all[pos])
    return frozenset(out)


def _half_of_pointer(kernel, defs, lab) -> bool:
    """A 32-bit load of a by-value struct's bytes into a 64-bit register: nvcc reads a pointer
    field as two ``ld.param.u32 %rd`` halves joined by ``bfi.b64`` (a scalar parameter read
    into a 64-bit register stays a scalar)."""
    if lab[0] == "&" or len(defs) != 1 or (kernel.reg_type(defs[0]) or "")[-2:] != "64":
        return False
    dims = kernel.fn.params[lab[0]].declarator.dims
    return bool(dims) and (dims[0] or 0) >= 8


#: the pseudo-register of the local frame's parked values (``_taint``): a frame load reads it
_FRAME = ("frame",)


def register_reads(kernel) -> list:
    """Per statement: the register keys it reads (its uses, and every register an operand
    names, addresses included): what a statement's transfer depends on, for ``fixpoint``."""
    _defs, uses_all, _g = kernel.du()
    out = []
    for pos, st in enumerate(kernel.stmts):
        keys = set(uses_all[pos])
        if type(st.node) is m.Instruction:
            regs: list = []
            for o in st.node.operands:
                registers(o, regs)
            keys.update(k[0] for k in (kernel._resolve(r, kernel._scope_of[pos]) for r in regs) if k)
        out.append(keys)
    return out


def _scaled(kernel) -> dict:
    """{register key: {constants}} of the 64-bit products and shifts by a constant
    (``mul.wide … 2``, ``shl.b64 … 1``): an index scaled by an element size."""
    defs_all = kernel.defs()
    out: dict = {}
    for op in ("mul", "shl"):
        for pos in kernel.indices_of(op):
            node = kernel.stmts[pos].node
            imm = getattr(node.operands[-1], "value", None) if type(node) is m.Instruction else None
            if defs_all[pos] and isinstance(imm, int) and \
                    (".wide" in node.name or any("64" in mm for mm in node.modifiers)):
                out.setdefault(defs_all[pos][0], set()).add(imm if op == "mul" else 1 << imm)
    return out


class _Taint:
    """The facts ``_taint`` computes, and the transfer of one statement over them."""

    def __init__(self, kernel):
        self.k = kernel
        self.params = {p.name: i for i, p in enumerate(kernel.fn.params or ())}
        self.defs_all, self.uses_all, _g = kernel.du()
        self.taint: dict = {}
        self.scale = _scaled(kernel)  # register key -> constants it was scaled by
        self.scales: dict = {}        # label -> {scale, ...}
        self.local: set = set()       # labels of 64-bit values stored to .local (read back by index)
        self.parked: set = set()      # labels read back from .local
        self.frame = _frame_keys(kernel)   # registers holding local-frame addresses (nvcc -G's %SP)
        self.joined = _joined_halves(kernel)
        self.slots: dict = {}         # frame byte offset -> labels stored there (None: a run-time offset)

    def step(self, pos: int) -> tuple:
        """Statement ``pos`` applied: the register keys (or ``_FRAME``) whose labels grew."""
        k, node = self.k, self.k.stmts[pos].node
        if type(node) is not m.Instruction:
            return ()
        defs, used, op = self.defs_all[pos], self.uses_all[pos], node.opcode
        wide = any(mm in (".u64", ".b64", ".s64") for mm in node.modifiers)
        src = _param_source(k, node, pos, self.params, self.taint, defs, wide, self.joined)
        if src is None:
            return ()             # a 32-bit scalar: index arithmetic, not a base
        in_frame, slot = _frame_slot(k, node, pos, self.frame) if op in ("st", "ld") else (False, None)
        if op == "ld" and wide and not src and not in_frame:
            src = _loaded_pointers(k, node, pos, self.taint)
        if in_frame and wide:
            if op == "st":        # a 64-bit value parked in the local frame (nvcc's struct copy)
                return self._park(_stored_labels(k, node, pos, self.taint), slot)
            if slot is None:      # read back at a run-time index: any value parked there
                src = frozenset(self.local)
                self.parked.update(self.local)
            else:                 # its own slot, and any store at a run-time offset
                src = frozenset(self.slots.get(slot, ())) | frozenset(self.slots.get(None, ()))
        if not src and op in _ARITH and used:
            src = frozenset().union(*(self.taint.get(u, frozenset()) for u in _base_operands(k, node, pos, used)))
            src = _moved_addresses(node, src)
            if op == "add" and src:
                for u in (u for u in used if u in self.scale):
                    for lab in src:
                        self.scales.setdefault(lab, set()).update(self.scale[u])
        grew = [d for d in defs if src and not src <= self.taint.get(d, frozenset())]
        for d in grew:
            self.taint[d] = self.taint.get(d, frozenset()) | src
        return tuple(grew)

    def _park(self, new: frozenset, slot) -> tuple:
        grew = not new <= self.local or not new <= self.slots.get(slot, set())
        self.local |= new
        self.slots.setdefault(slot, set()).update(new)
        return (_FRAME,) if grew else ()


def _taint(kernel) -> tuple:
    """Forward def-use to a fixpoint: ({register key: {(param, offset)}}, {label: {scales}},
    parked labels).  Only 64-bit parameter values are bases (32-bit ones are index arithmetic);
    an ``add`` of a base and a value scaled by a constant (``mul.wide … 2``, ``shl … 1``)
    records that scale.  A 64-bit value stored to ``.local`` and a 64-bit ``.local`` load are
    joined without addresses: nvcc copies a by-value struct to the local frame when a pointer
    field is chosen at run time (``L.src[i]``), so the load may be any parked field
    (conservative).  Solved by the fixpoint engine: a statement runs again when a register it
    reads (or the frame, for a frame load) gained labels."""
    t = _Taint(kernel)
    reads = register_reads(kernel)
    loads = [pos for pos in kernel.indices_of("ld")]
    index = reader_index(reads)
    solve(len(kernel.stmts), t.step, lambda key: loads if key == _FRAME else index(key))
    return t.taint, t.scales, t.parked


def record(u: Use, node, space: str, effect: str) -> None:

    u.reads += effect != WRITE
    u.writes += effect != READ
    u.multicast = u.multicast or multicast(node)
    t = next((mm for mm in reversed(node.modifiers) if dt.lookup(mm) is not None), None)
    vec = next((int(mm[2:]) for mm in node.modifiers if mm in (".v2", ".v4", ".v8")), 1)
    packed = next((mm for mm in reversed(node.modifiers) if mm.endswith("x2") and dt.lookup(mm[:-2])), None)
    if packed and not t:                # atom.add.noftz.f16x2 / red.bf16x2: two elements of that type
        u.types.append((packed[:-2], 2 * vec))
    if not t and ".b128" in node.modifiers:   # atom.cas.b128, ld.b128: two 64-bit words (there is
        u.types.append((".b64", 2 * vec))      # no 16-byte element type; its size was lost: "u8")
    if t:
        u.types.append((t, vec))
        d = dt.lookup(t)
        if memory_typed(node) and d is not None and d.kind in ("int", "uint"):
            u.arith.append(t)           # typed integer arithmetic / fragments (.b32 cas/exch: bits)
    if space in _IMAGES:
        u.image = _IMAGES[space]
        u.geometries += [mm for mm in node.modifiers if mm in _GEOMETRIES and mm not in u.geometries]


_VALUE_COPIES = {"mov"}                  # followed: the copy's uses are the value's uses
# copies, selections and collective/tensor-core operations say nothing of the value's type
# (memory instructions are left out through the roles table)
_NO_EVIDENCE = {"shfl", "selp", "prmt", "mov", "cvta", "vote", "bar", "mma", "wgmma", "tcgen05", "brx",
                "call", "redux", "match"}
# integer uses whose signedness means something (nvcc writes add.s32 / mul.lo.s32 for unsigned too)
_SIGNED_USES = {"setp", "set", "min", "max", "shr", "div", "rem", "cvt", "bfe", "abs", "neg"}


def _signed_use(where: str) -> bool:
    """Whether the use named ``where`` ('mul.wide.s32 s12') depends on signedness."""
    name = where.split(" ", 1)[0]
    op = name.split(".", 1)[0]
    if op in ("setp", "set"):
        return not any(c in name.split(".") for c in ("eq", "ne"))
    return op in _SIGNED_USES or (op in ("mul", "mad") and (".wide" in name or ".hi" in name))


def _use_type(node) -> Optional[str]:
    """The type a consumer reads its operand as: a ``cvt``'s source type, else the first typed
    modifier that is not plain bits; None for copies, memory and bit operations."""
    if node.opcode in _NO_EVIDENCE or memory_access(node) is not None:
        return None
    typed = [mm[1:] for mm in node.modifiers if dt.lookup(mm) is not None or mm in (".f16x2", ".bf16x2")]
    if node.opcode == "cvt":
        typed = typed[-1:]
    typed = list(dict.fromkeys(t for t in typed if dt.lookup(t) is None or dt.lookup(t).kind != "bits"))
    # one type, or none: an instruction of several (mma-like forms) does not say which operand
    return typed[0] if len(typed) == 1 else None


def value_uses(kernel, pos: int, consumers: dict) -> list:
    """[(kind, type, 'sN')] of the instructions that use the registers the load at ``pos``
    writes (through plain copies, two deep)."""
    defs = kernel.du()[0]
    out, todo, seen = [], [(k, 0) for k in defs[pos]], set()
    while todo:
        key, depth = todo.pop()
        for q in consumers.get(key, ()):
            if (q, key) in seen:
                continue
            seen.add((q, key))
            node = kernel.stmts[q].node
            if type(node) is not m.Instruction:
                continue
            if node.opcode in _VALUE_COPIES and depth < 2:
                todo += [(d, depth + 1) for d in defs[q]]
                continue
            t = _use_type(node)
            if t is not None:
                d = dt.lookup(t)
                st = kernel.stmts[q]
                out.append((d.kind if d is not None else "packed", t,
                            f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")))
    return out


def consumer_index(kernel) -> dict:
    """{register key: [statement indices that read it]}."""
    out: dict = {}
    for q, used in enumerate(kernel.du()[1]):
        for key in used:
            out.setdefault(key, []).append(q)
    return out


def trace(kernel, own: Optional[dict] = None, depth: int = 0, seen: Optional[frozenset] = None,
          memo: Optional[dict] = None) -> dict:
    """{(param index, offset): Use} for every parameter value that reaches a global/generic
    address (shared, local, const and param accesses are the kernel's own business).  ``own``,
    when given, is filled with {(param index, offset): [(space, 'opcode sN')]} of the parameter
    values that reach a shared/const/local address instead (LLVM's ``.ptr .shared`` pointers).
    Values passed to a called ``.func`` are followed into it (``_follow_calls``)."""
    taint, scales, parked = _taint(kernel)
    uses: dict = {}
    consumers = None
    for pos, st in enumerate(kernel.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        for addr, space, _effect in _addresses(node, own=True):
            for lab in _labels_at(kernel, addr, pos, taint):
                if lab[0] not in ("&", "*"):
                    where = f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")
                    if own is not None:
                        own.setdefault(lab, []).append((space, where))
        for addr, space, effect in _addresses(node):
            every = _labels_at(kernel, addr, pos, taint)
            for lab in (lab for lab in every if lab[0] == "*"):
                where = f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")
                table = uses.setdefault(lab[1:], Use())
                table.pointers.append(where)
                table.target = table.target or Use()
                record(table.target, node, space, effect)
                if effect == READ and node.opcode == "ld":
                    consumers = consumers if consumers is not None else consumer_index(kernel)
                    table.target.values += value_uses(kernel, pos, consumers)
            labs = frozenset(lab for lab in every if lab[0] not in ("&", "*"))
            for lab in labs:
                if lab[0] != "&":
                    u = uses.setdefault(lab, Use())
                    record(u, node, space, effect)
                    u.alone = u.alone or len(labs) == 1
                    u.partners |= labs - {lab}
                    if effect == READ and node.opcode == "ld":
                        consumers = consumers if consumers is not None else consumer_index(kernel)
                        u.values += value_uses(kernel, pos, consumers)
    if depth < _CALL_DEPTH:
        _follow_calls(kernel, taint, uses, depth, seen or frozenset({kernel.name}), {} if memo is None else memo,
                      own)
    for lab, u in uses.items():
        u.scales = scales.get(lab, set())
        u.parked = lab in parked
        u.param = lab[0]
        u.seed = 1 + lab[0] * 1000 + lab[1]
        if u.target is not None:         # the index scaled into the loaded pointers' offsets
            u.target.scales = scales.get(("*",) + lab, set())
    return uses


_CALL_DEPTH = 4     # nvcc -G calls a helper per texture fetch; deeper chains are rare


def _call_args(kernel, taint: dict) -> list:
    """[(callee name, [labels of argument j])] of the direct calls in ``kernel``: an argument's
    labels are those of the value ``st.param [argN]`` stores before the call."""
    slots: dict = {}
    out = []
    for pos, st in enumerate(kernel.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        if node.opcode == "st" and ".param" in node.name and type(node.operands[0]) is m.Addr:
            name = getattr(node.operands[0].base, "name", None)
            slots[name] = _stored_labels(kernel, node, pos, taint)
        elif node.opcode == "call":
            ops = list(node.operands)
            at = 1 if ops and type(ops[0]) is m.ParenList else 0     # call (ret), target, (args), list
            target = ops[at] if len(ops) > at else None
            callee = target.name if type(target) is m.Sym else "an indirect call"
            args = ops[at + 1].items if len(ops) > at + 1 and type(ops[at + 1]) is m.ParenList else ()
            out.append((callee, [slots.get(getattr(a, "name", None), frozenset()) for a in args]))
    return out


def _follow_calls(kernel, taint: dict, uses: dict, depth: int, seen: frozenset, memo: dict,
                  own: Optional[dict] = None) -> None:
    """What a called ``.func`` does with a parameter's value is the parameter's use: nvcc -G
    calls a helper for every texture fetch, so the handle was "never dereferenced here"."""
    for callee, args in _call_args(kernel, taint):
        if callee in seen or not any(args):
            continue
        fn = next((f for f in kernel.module.functions() if f.name == callee and f.body is not None), None)
        if fn is None or fn.body is None:    # .extern, an indirect call: the body is not here
            if own is not None:
                for lab in (lab for a in args for lab in a if lab[0] not in ("&", "*")):
                    own.setdefault(lab, []).append(("call", callee))
            continue
        if callee not in memo:       # a -G kernel calls the same helper from many sites
            memo[callee] = trace(Kernel(kernel.module, fn, kernel._lines), None, depth + 1, seen | {callee}, memo)
        sub = memo[callee]
        for (j, off), u2 in sub.items():
            if off != 0 or j >= len(args):
                continue             # a by-value struct of the callee: not one caller value
            for lab in args[j]:
                if lab[0] not in ("&", "*"):
                    _merge(uses.setdefault(lab, Use()), u2)


def _merge(u: Use, v: Use) -> None:
    u.reads += v.reads
    u.writes += v.writes
    u.types += v.types
    u.arith += v.arith
    u.values += v.values
    u.pointers += v.pointers
    if v.target is not None:
        u.target = u.target or Use()
        _merge(u.target, v.target)
    u.image = u.image or v.image
    u.geometries += [g for g in v.geometries if g not in u.geometries]
    u.multicast = u.multicast or v.multicast
    u.alone = True               # the callee's accesses are through this value
