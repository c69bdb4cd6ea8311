"""``splice probe init MODULE --entry E -o spec.yaml``: a probe-spec skeleton from the entry's
``.param`` list and what the kernel does with each parameter.

Def-use, forward: every value loaded from a ``.param`` (``ld.param [p]`` or ``[p+off]`` of a
by-value struct) is followed through address arithmetic (mov, add, mad, cvta, cvt, shl, ...)
to the memory instructions whose address it reaches.  A parameter that reaches only loads is an
``input``, only stores an ``output``, both (or an atomic) ``inout``; the element type is the one
it is loaded/stored with (``.f32``, ``.f16`` ...; plain bits ``.b16``/``.b32`` are a guess and
say so).  A parameter that never reaches an address is a scalar of its declared type.  Sizes,
values, grid and block are left as ``null`` placeholders with a ``TODO`` comment (a block
declared with ``.reqntid`` is filled in), so the spec refuses to load until they are given.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import dtypes as dt

_ARITH = {"mov", "add", "sub", "mad", "mul", "cvta", "cvt", "selp", "and", "or", "xor", "shl",
          "shr", "min", "max", "neg", "slct", "prmt", "bfi"}
# the spaces a parameter's pointer reaches the kernel's caller through (shared, local, const and
# param accesses are the kernel's own business); 'tex'/'surf' are image handles
_CALLER_SPACES = ("global", "generic", "tex", "surf")
_IMAGES = {"tex": "texture", "surf": "surface"}
_OWN_SPACES = ("shared", "const", "local")
# texture/surface geometries (PTX ISA 9.7.10/9.7.11); the probe makes 2-D images only
_GEOMETRIES = (".1d", ".2d", ".3d", ".a1d", ".a2d", ".cube", ".acube", ".2dms", ".a2dms")


def _addresses(node, own: bool = False) -> list:
    """[(address operand, space, effect)] of the caller-visible addresses ``node`` reaches, from
    the roles table: a copy's global source is read even when its destination is shared.  With
    ``own``: the addresses in the kernel's own spaces (shared, const, local) instead."""
    from ..analysis import roles

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
    from ..ptx import model as m

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
    from ..ptx import model as m

    for o in node.operands[1:]:
        if type(o) is m.Addr and type(o.base) is m.Reg:
            key = kernel._resolve(o.base.name, kernel._scope_of[pos])
            for lab in taint.get(key[0], ()) if key else ():
                if lab[0] == "&":
                    return (lab[1], lab[2] + o.offset)
    return None


def _param_source(kernel, node, pos: int, params: dict, taint: dict, defs, wide: bool):
    """The label a ``mov``/``ld.param`` of a parameter gives its destination: frozenset() when
    the node reads no parameter, None for a 32-bit scalar (index arithmetic, not a base)."""
    if not (node.opcode == "mov" or (node.opcode == "ld" and ".param" in node.name)):
        return frozenset()
    lab = _param_label(node, params)
    if lab is None and node.opcode == "ld":     # ld.param [%rd+off], %rd = the param's address
        lab = _through_address(kernel, node, pos, taint)
    if lab is None:
        return frozenset()
    if not wide and not _half_of_pointer(kernel, defs, lab):
        return None
    if not wide and lab[0] != "&":   # a pointer read in two 32-bit halves: its field
        lab = (lab[0], lab[1] - lab[1] % 8)
    return frozenset({lab})


def _frame_keys(kernel) -> dict:
    """{register key: its byte offset in the local frame, None when run-time}: ``mov %SPL,
    __local_depot0`` (0) and what is derived from it (``cvta.local %SP, %SPL``, ``add %rd1,
    %SPL, 96``).  nvcc copies by-value structs into the frame: -O3 with ``st.local``, -G through
    the generic ``%SP`` (``st.u64 [%SP+8]``)."""
    from ..ptx import model as m

    local_syms = {d.name for it in kernel.fn.body.items if type(it) is m.Decl and it.space == ".local"
                  for d in it.declarators}
    if not local_syms:
        return {}
    defs_all, uses_all, _g = kernel.du()
    frame: dict = {}
    for _round in range(2):                 # a loop-carried frame pointer settles on the second pass
        for pos, st in enumerate(kernel.stmts):
            node = st.node
            if type(node) is not m.Instruction or node.opcode not in ("mov", "cvta", "add") or not defs_all[pos]:
                continue
            if node.opcode == "mov" and any(getattr(o, "name", None) in local_syms for o in node.operands[1:]):
                frame[defs_all[pos][0]] = 0
                continue
            base = [u for u in uses_all[pos] if u in frame]
            if base:
                imm = getattr(node.operands[-1], "value", None)
                off = frame[base[0]]
                moved = off + imm if node.opcode == "add" and isinstance(imm, int) and off is not None else None
                frame[defs_all[pos][0]] = off if node.opcode in ("mov", "cvta") else moved
    return frame


def _frame_slot(kernel, node, pos: int, frame: dict):
    """(in the frame?, byte offset of the access or None when run-time) of an ``ld``/``st``."""
    from ..ptx import model as m

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


def _stored_labels(kernel, node, pos: int, taint: dict) -> frozenset:
    """The labels of the value a ``st`` writes (its last operand)."""
    from ..ptx.operands import registers

    regs: list = []
    registers(node.operands[-1], regs)
    keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
    return frozenset().union(*(taint.get(k[0], frozenset()) for k in keys if k))


def _loaded_pointers(kernel, node, pos: int, taint: dict) -> frozenset:
    """``ld.global.u64 %rd, [<buffer of param p>]``: the loaded value may be a pointer kept in
    p's memory (``const float* const* ptr_a``, an array of structs holding pointers); labelled
    ``('*', p, offset)`` so that an access through it marks p as a table of pointers."""
    from ..ptx.operands import registers

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
    from ..ptx.operands import registers

    if node.opcode in _INDEX_ONLY:
        return ()
    if node.opcode == "mad" and len(node.operands) == 4:
        regs: list = []
        registers(node.operands[3], regs)
        keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
        return tuple(k[0] for k in keys if k)
    return used


def _half_of_pointer(kernel, defs, lab) -> bool:
    """A 32-bit load of a by-value struct's bytes into a 64-bit register: nvcc reads a pointer
    field as two ``ld.param.u32 %rd`` halves joined by ``bfi.b64`` (a scalar parameter read
    into a 64-bit register stays a scalar)."""
    if lab[0] == "&" or len(defs) != 1 or (kernel.reg_type(defs[0]) or "")[-2:] != "64":
        return False
    dims = kernel.fn.params[lab[0]].declarator.dims
    return bool(dims) and (dims[0] or 0) >= 8


def _taint(kernel) -> tuple:
    """Forward def-use to a fixpoint: ({register key: {(param, offset)}}, {label: {scales}}).
    Only 64-bit parameter values are bases (32-bit ones are index arithmetic); an ``add`` of a
    base and a value scaled by a constant (``mul.wide … 2``, ``shl … 1``) records that scale.
    A 64-bit value stored to ``.local`` and a 64-bit ``.local`` load are joined without
    addresses: nvcc copies a by-value struct to the local frame when a pointer field is chosen
    at run time (``L.src[i]``), so the load may be any parked field (conservative)."""
    from ..ptx import model as m

    params = {p.name: i for i, p in enumerate(kernel.fn.params or ())}
    defs_all, uses_all, _g = kernel.du()
    taint: dict = {}
    scale: dict = {}          # register key -> constant it was scaled by
    scales: dict = {}         # label -> {scale, ...}
    local: set = set()        # labels of 64-bit values stored to .local (read back by index)
    parked: set = set()       # labels read back from .local
    frame = _frame_keys(kernel)   # registers holding local-frame addresses (nvcc -G's %SP)
    slots: dict = {}          # frame byte offset -> labels stored there (None: a run-time offset)
    changed = True
    while changed:
        changed = False
        for pos, st in enumerate(kernel.stmts):
            node = st.node
            if type(node) is not m.Instruction:
                continue
            defs, used = defs_all[pos], uses_all[pos]
            op = node.opcode
            wide = any(mm in (".u64", ".b64", ".s64") for mm in node.modifiers)
            src = _param_source(kernel, node, pos, params, taint, defs, wide)
            if src is None:
                continue          # a 32-bit scalar: index arithmetic, not a base
            if op in ("mul", "shl") and defs:
                imm = getattr(node.operands[-1], "value", None)
                if isinstance(imm, int) and (".wide" in node.name or any("64" in mm for mm in node.modifiers)):
                    scale[defs[0]] = imm if op == "mul" else 1 << imm
            in_frame, slot = _frame_slot(kernel, node, pos, frame) if op in ("st", "ld") else (False, None)
            if op == "ld" and wide and not src and not in_frame:
                src = _loaded_pointers(kernel, node, pos, taint)
            if in_frame and wide:
                if op == "st":       # a 64-bit value parked in the local frame (nvcc's struct copy)
                    new = _stored_labels(kernel, node, pos, taint)
                    changed = changed or not new <= local or not new <= slots.get(slot, set())
                    local |= new
                    slots.setdefault(slot, set()).update(new)
                    continue
                if slot is None:     # read back at a run-time index: any value parked there
                    src = frozenset(local)
                    parked.update(local)
                else:                # its own slot, and any store at a run-time offset
                    src = frozenset(slots.get(slot, ())) | frozenset(slots.get(None, ()))
            if not src and op in _ARITH and used:
                src = frozenset().union(*(taint.get(u, frozenset()) for u in _base_operands(kernel, node, pos, used)))
                src = _moved_addresses(node, src)
                if op == "add" and src:
                    for u in (u for u in used if u in scale):
                        for lab in src:
                            scales.setdefault(lab, set()).add(scale[u])
            for d in defs:
                if src and not src <= taint.get(d, frozenset()):
                    taint[d] = taint.get(d, frozenset()) | src
                    changed = True
    return taint, scales, parked


def _record(u: Use, node, space: str, effect: str) -> None:
    from ..analysis.roles import READ, WRITE, memory_typed, multicast

    u.reads += effect != WRITE
    u.writes += effect != READ
    u.multicast = u.multicast or multicast(node)
    t = next((mm for mm in reversed(node.modifiers) if dt.lookup(mm) is not None), None)
    if t:
        u.types.append((t, next((int(mm[2:]) for mm in node.modifiers if mm in (".v2", ".v4", ".v8")), 1)))
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
    from ..analysis.roles import memory_access

    if node.opcode in _NO_EVIDENCE or memory_access(node) is not None:
        return None
    typed = [mm[1:] for mm in node.modifiers if dt.lookup(mm) is not None or mm in (".f16x2", ".bf16x2")]
    if node.opcode == "cvt":
        typed = typed[-1:]
    typed = list(dict.fromkeys(t for t in typed if dt.lookup(t) is None or dt.lookup(t).kind != "bits"))
    # one type, or none: an instruction of several (mma-like forms) does not say which operand
    return typed[0] if len(typed) == 1 else None


def _value_uses(kernel, pos: int, consumers: dict) -> list:
    """[(kind, type, 'sN')] of the instructions that use the registers the load at ``pos``
    writes (through plain copies, two deep)."""
    from ..ptx import model as m

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


def _consumers(kernel) -> dict:
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
    from ..ptx import model as m
    from ..ptx.operands import registers

    from ..analysis.roles import READ

    taint, scales, parked = _taint(kernel)
    uses: dict = {}
    consumers = None
    for pos, st in enumerate(kernel.stmts):
        node = st.node
        if type(node) is not m.Instruction:
            continue
        for addr, space, _effect in _addresses(node, own=True):
            regs = []
            registers(addr, regs)
            keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
            for lab in frozenset().union(*(taint.get(k[0], frozenset()) for k in keys if k)):
                if lab[0] not in ("&", "*"):
                    where = f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")
                    if own is not None:
                        own.setdefault(lab, []).append((space, where))
        for addr, space, effect in _addresses(node):
            regs: list = []
            registers(addr, regs)
            keys = [kernel._resolve(r, kernel._scope_of[pos]) for r in regs]
            every = frozenset().union(*(taint.get(k[0], frozenset()) for k in keys if k))
            for lab in (lab for lab in every if lab[0] == "*"):
                where = f"{node.name} " + (f"s{st.n}" if st.n is not None else f"L{st.line}")
                uses.setdefault(lab[1:], Use()).pointers.append(where)
            labs = frozenset(lab for lab in every if lab[0] not in ("&", "*"))
            for lab in labs:
                if lab[0] != "&":
                    u = uses.setdefault(lab, Use())
                    _record(u, node, space, effect)
                    u.alone = u.alone or len(labs) == 1
                    u.partners |= labs - {lab}
                    if effect == READ and node.opcode == "ld":
                        consumers = consumers if consumers is not None else _consumers(kernel)
                        u.values += _value_uses(kernel, pos, consumers)
    if depth < _CALL_DEPTH:
        _follow_calls(kernel, taint, uses, depth, seen or frozenset({kernel.name}), {} if memo is None else memo,
                      own)
    for lab, u in uses.items():
        u.scales = scales.get(lab, set())
        u.parked = lab in parked
        u.param = lab[0]
        u.seed = 1 + lab[0] * 1000 + lab[1]
    return uses


_CALL_DEPTH = 4     # nvcc -G calls a helper per texture fetch; deeper chains are rare


def _call_args(kernel, taint: dict) -> list:
    """[(callee name, [labels of argument j])] of the direct calls in ``kernel``: an argument's
    labels are those of the value ``st.param [argN]`` stores before the call."""
    from ..ptx import model as m

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
            ops = [o for o in node.operands]
            callee = next((o.name for o in ops if type(o) is m.Sym), None) or "an indirect call"
            lists = [o for o in ops if type(o) is m.ParenList]
            args = lists[-1].items if lists and (len(lists) == 2 or type(ops[-1]) is m.ParenList) else ()
            if callee is not None:
                out.append((callee, [slots.get(getattr(a, "name", None), frozenset()) for a in args]))
    return out


def _follow_calls(kernel, taint: dict, uses: dict, depth: int, seen: frozenset, memo: dict,
                  own: Optional[dict] = None) -> None:
    """What a called ``.func`` does with a parameter's value is the parameter's use: nvcc -G
    calls a helper for every texture fetch, so the handle was "never dereferenced here"."""
    from ..analysis import Kernel

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
    u.image = u.image or v.image
    u.geometries += [g for g in v.geometries if g not in u.geometries]
    u.multicast = u.multicast or v.multicast
    u.alone = True               # the callee's accesses are through this value


# --------------------------------------------------------------------------------------------
# the skeleton
# --------------------------------------------------------------------------------------------

def _shared_note(text: str) -> Optional[str]:
    import re

    m = re.search(r"\.extern\s+\.shared\s+[^;]*?(\w+)\s*\[\s*\]", text)
    return m.group(1) if m else None


_IMAGE_REF_TYPES = (".texref", ".surfref", ".samplerref")


def module_image_refs(kernel) -> list:
    """Module-scope texture, surface and sampler references (``.global .texref t;``, old
    ``.tex .u32 t;``) this entry names in an operand, in the order declared.  The probe binds
    kernel parameters only: what ``tex``/``suld`` read through such a reference is not its to
    set, so the skeleton says so instead of promising a comparable frame."""
    from ..ptx import model as m

    refs = [d.name for it in kernel.module.items if type(it) is m.Decl
            and (it.space == ".tex" or it.type in _IMAGE_REF_TYPES) for d in it.declarators]
    if not refs:
        return []
    named = set()
    for st in kernel.stmts:
        if type(st.node) is m.Instruction:
            for o in st.node.operands:
                items = o.items if type(o) is m.Addr else (o,)
                named.update(i.name for i in items if type(i) is m.Sym)
    return [r for r in refs if r in named]


def _refuse_32_bit(mod, path: str) -> None:
    """``.address_size 32``: no probe can run it (ptxas 13 has no ``--machine 32``), and its
    32-bit pointer parameters would be written as integers: say so instead of a skeleton."""
    from ..errors import SpliceError

    asz = mod.directive(".address_size")
    if asz is not None and asz.args and asz.args[0] == "32":
        raise SpliceError("32-bit addressing (.address_size 32): ptxas 13 compiles no such module "
                          "(it has no --machine 32), so the probe cannot run it", path, line=asz.line)


def skeleton(text: str, path: str, entry: Optional[str] = None) -> tuple:
    """(YAML text, summary rows) for ``entry`` of the module ``text``."""
    from ..analysis import Kernel
    from ..ptx import parse
    from .check import entry_decl

    mod = parse(text, path)
    _refuse_32_bit(mod, path)
    k = Kernel(mod, entry)
    decl = entry_decl(text, k.name, path)
    own: dict = {}
    uses = trace(k, own)
    read = params_read(k)
    y = _Yaml()
    y.line(f"# Probe spec skeleton for {k.name} ({path}), written by `splice probe init`.")
    y.line("# Fill in every `null` (sizes, scalar values, grid); check each buffer's dtype and role.")
    y.line("# Format: docs/probe-spec.md.  Run: splice probe THIS.yaml MODULE.ptx")
    refs = module_image_refs(k)
    if refs:
        y.line(f"# NOTE: this entry reads module-scope texture/surface references ({', '.join(refs)}); the probe")
        y.line("# binds parameters only, so what it reads through them is not set by this spec (rewrite them")
        y.line("# as texture/surface object parameters to probe them).")
    y.kv("name", k.name)
    y.kv("ptx", path)
    y.kv("entry", k.name)
    y.kv("seed", 1)
    y.line("launch:")
    y.kv("grid", None, 1, "TODO: blocks, e.g. [64, 1, 1]")
    req = decl.directive(".reqntid")
    if req:
        y.kv("block", list(req) + [1] * (3 - len(req)), 1, "from .reqntid")
    else:
        mx = decl.directive(".maxntid")
        y.kv("block", None, 1, "TODO: threads per block" + (f" (.maxntid {', '.join(map(str, mx))})" if mx
                                                           else ", e.g. [128, 1, 1]"))
    smem = _shared_note(text)
    y.line("  shared:")
    if smem:
        y.kv("dynamic", None, 2, f"TODO: bytes of the dynamic .extern .shared {smem}[]")
    else:
        y.kv("dynamic", 0, 2)
    y.line("params:")
    rows = []
    for pp in decl.params:
        rows.append(_param_yaml(y, pp, uses, decl, pp.index in read, own))
    y.line("frame: all                      # every output is compared bit for bit")
    return y.text(), rows


def params_read(kernel) -> set:
    """Indices of the parameters the entry reads at all (``ld.param`` of it, or its address
    taken by ``mov``/``cvta.param``): the others can be passed as 0 safely."""
    from ..ptx import model as m

    params = {p.name: i for i, p in enumerate(kernel.fn.params or ())}
    out = set()
    for st in kernel.stmts:
        node = st.node
        if type(node) is not m.Instruction:
            continue
        for o in node.operands:
            name = getattr(o.base, "name", None) if type(o) is m.Addr else getattr(o, "name", None)
            if name in params:
                out.add(params[name])
    return out


def _param_yaml(y, pp, uses: dict, decl, read: bool = True, own: Optional[dict] = None) -> dict:
    short = pp.name[len(decl.name) + 1:] if pp.name.startswith(decl.name + "_") else pp.name
    if pp.is_array and pp.size != 8:
        fields = sorted((off, u) for (i, off), u in uses.items() if i == pp.index)
        y.line(f"- name: {short}")
        y.line("  kind: struct")
        y.line(f"  size: {pp.size}")
        y.line(f"  align: {pp.align}")
        y.line("  fields:                      # pointers this kernel dereferences; add its scalars")
        for off, u in fields:
            _object_yaml(y, f"field_{off}", u, 2, off)
        return {"param": pp.index, "name": pp.name, "kind": "struct", "fields": len(fields)}
    u = uses.get((pp.index, 0))
    own = own or {}
    if u is None or u.role is None:
        t = dt.lookup(pp.type)
        tname = t.name if t is not None else "b8"
        if not read:
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: 0}}   "
                   "# never read by this entry: passed as 0")
        elif any(sp == "call" for sp, _w in own.get((pp.index, 0), ())):
            callees = ", ".join(dict.fromkeys(w for sp, w in own[(pp.index, 0)] if sp == "call"))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: passed to "
                   f"{callees}, whose body is not in this module (not followed): it may be a pointer or handle")
        elif own.get((pp.index, 0)):
            at = own[(pp.index, 0)]
            spaces = "/".join(dict.fromkeys("." + sp for sp, _w in at))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: an address in the "
                   f"kernel's own {spaces} space ({at[0][1]}), not a buffer: the probe cannot fill that "
                   "memory from the host; give the address the kernel expects")
        elif pp.size == 8 and not pp.is_array and not t_is_float(t):
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   "
                   "# TODO: read as a value, never dereferenced here")
        else:
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO")
        return {"param": pp.index, "name": pp.name, "kind": "scalar", "dtype": tname}
    _object_yaml(y, short, u, 0, None)
    return {"param": pp.index, "name": pp.name, "kind": u.image or "buffer", "role": u.role,
            "dtype": "u64" if u.pointers else u.element()[0], "pointer_table": bool(u.pointers)}


def t_is_float(t) -> bool:
    return t is not None and t.is_float


_GEOMETRY_WORDS = {".1d": "1-D", ".3d": "3-D", ".a1d": "layered 1-D", ".a2d": "layered 2-D", ".cube": "cube map",
                   ".acube": "layered cube map", ".2dms": "multisample 2-D", ".a2dms": "layered multisample 2-D"}


def _object_yaml(y, name: str, u: Use, indent: int, offset) -> None:
    pad = "  " * indent
    y.line(f"{pad}- name: {name}")
    if offset is not None:
        y.line(f"{pad}  offset: {offset}")
    seen = ", ".join(sorted({f"{t}{f' x{v}' if v > 1 else ''}" for t, v in u.types})) or "-"
    if u.image:
        y.line(f"{pad}  kind: {u.image}")
        other = [g for g in u.geometries if g != ".2d"]
        if other:
            kinds = ", ".join(f"{g[1:]} ({_GEOMETRY_WORDS[g]})" for g in other)
            y.line(f"{pad}  # TODO: used as {kinds}: the probe binds 2-D {u.image}s only")
            y.line(f"{pad}  # (width x height), so a probe of this entry would give it an image of the wrong kind")
        y.line(f"{pad}  width: null                # TODO")
        y.line(f"{pad}  height: null               # TODO")
        y.line(f"{pad}  format: rgba16f            # check: r32f, rg16f, rgba8, rgba32f")
        if u.image == "texture":
            y.line(f"{pad}  fill: {{rule: uniform, seed: 1, range: [0.0, 1.0]}}")
        return
    dtype, guessed = u.element()
    used = sorted({w for _k, _t, w in u.values})
    if used and not any(float(dt.lookup(t).is_float) for t, _v in u.types if dt.lookup(t) is not None):
        seen += "; values used by " + ", ".join(used[:3]) + (f" (+{len(used) - 3})" if len(used) > 3 else "")
    if u.pointers:
        _pointer_table_yaml(y, pad, u)
        return
    y.line(f"{pad}  kind: buffer")
    y.line(f"{pad}  dtype: {dtype}" + (f"                # guessed (accessed as {seen})" if guessed
                                          else f"                # accessed as {seen}"))
    y.line(f"{pad}  shape: null                # TODO: elements, e.g. [rows, cols]")
    y.line(f"{pad}  role: {u.role}                # {u.reads} load(s), {u.writes} store(s)")
    if not u.alone and u.partners and offset is not None and not u.parked:
        with_ = ", ".join(f"field_{o}" if i == u.param else f"param_{i}+{o}" for i, o in sorted(u.partners)[:3])
        y.line(f"{pad}  # check: every address it reaches also derives from {with_}: it may be a byte offset or")
        y.line(f"{pad}  # increment added to that pointer (CUTLASS's Params), not a buffer")
    if u.parked:
        y.line(f"{pad}  # check: the kernel copies the struct to local memory and picks a pointer from it at")
        y.line(f"{pad}  # run time: role and dtype are what any of the pointers parked there reaches")
    if u.multicast:
        y.line(f"{pad}  # TODO: multimem.* reaches it: a multicast address (cuMulticastCreate), which the")
        y.line(f"{pad}  # probe does not make; multimem on an ordinary buffer is undefined behaviour")
    if u.role != "output":
        rule = "uniform, range: [-1.0, 1.0]" if dt.TYPES[dtype].is_float else "integers, range: [0, 7]"
        y.line(f"{pad}  fill: {{rule: {rule}, seed: {u.seed}}}")


def _pointer_table_yaml(y, pad: str, u: Use) -> None:
    """A buffer the kernel loads pointers from and dereferences (batched / grouped kernels): the
    probe fills buffers with numbers, not device pointers, so ``fill`` is left null (the spec
    refuses to load there) and the TODO says why."""
    at = ", ".join(sorted(set(u.pointers))[:3]) + (f" (+{len(set(u.pointers)) - 3})" if len(set(u.pointers)) > 3 else "")
    y.line(f"{pad}  kind: buffer")
    y.line(f"{pad}  dtype: u64                # a table of pointers: the kernel dereferences values loaded from it")
    y.line(f"{pad}  shape: null                # TODO: elements, e.g. [rows, cols]")
    y.line(f"{pad}  role: {u.role or 'input'}                # {u.reads} load(s), {u.writes} store(s)")
    y.line(f"{pad}  # TODO: the kernel reaches memory through pointers loaded from this buffer ({at}); the")
    y.line(f"{pad}  # probe fills buffers with numbers, not device pointers: if the kernel accepts a null table,")
    y.line(f"{pad}  # pass 0 instead (a scalar, or drop the field); else this entry cannot be probed as it is")
    y.line(f"{pad}  fill: null")


class _Yaml:
    """Line builder for the skeleton (comments need hand placement; values go through yaml)."""

    def __init__(self):
        self.lines: list = []

    def line(self, s: str) -> None:
        self.lines.append(s)

    def kv(self, key: str, value, indent: int = 0, comment: str = "") -> None:
        import yaml

        v = "null" if value is None else yaml.safe_dump(value, default_flow_style=True).strip()
        if v.endswith("\n..."):
            v = v[:-4].strip()
        v = v.replace("\n...", "").strip()
        self.lines.append(f"{'  ' * indent}{key}: {v}" + (f"   # {comment}" if comment else ""))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
