"""What an entry reads of its parameters as values (not as pointers): which parameters it reads
at all, the typed reads of each by-value struct's bytes (a problem size, an ``int n``), and the
by-value parameters that are TMA tensor maps (their address goes to a tensor-map instruction).
``probe init`` lists these as scalar fields, tensor maps and parameters passed as zero.
"""
from __future__ import annotations

from ..ptx import model as m
from ..ptx import types as dt
from . import byte_fields, roles
from .param_trace import consumer_index, value_uses


def params_read(kernel) -> set:
    """Indices of the parameters the entry reads at all (``ld.param`` of it, or its address
    taken by ``mov``/``cvta.param``): the others can be passed as 0 safely."""
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


def struct_value_reads(kernel) -> dict:
    """{parameter index: [(offset, dtype, statement, note or None)]}: the typed ``ld.param`` reads of each
    by-value struct (``.param .align N .b8 p[size]``), one per element of a vector read.  A struct's
    scalars (a problem size, an ``int n``, an ``__int128``) were left to the user ("add its
    scalars"): a probe passed them as zeros, so a kernel that returns early on ``i >= n`` compared
    nothing and passed any splice.  Listed with ``value: null``, the spec refuses until they are set."""
    prov = kernel.provenance
    index = {prov.param_short.get(p.name, p.name): i for i, p in enumerate(kernel.fn.params or ())}
    index.update({p.name: i for i, p in enumerate(kernel.fn.params or ())})
    out: dict = {}
    byte_loads: dict = {}       # ld.param of one byte -> (parameter index, offset)
    consumers = None
    for a, param, off in prov.param_loads():
        name = kernel.stmts[a.pos].node.name
        t = dt.lookup(name.rsplit(".", 1)[-1])
        i = index.get(param)
        if t is None or i is None or t.name not in dt.SCALAR_TYPES:
            continue
        if t.kind in ("bits", "uint") and len(a.regs) <= 1:   # Triton's fp16/bf16 scalar: .b8 p[2] read .b16
            consumers = consumers if consumers is not None else consumer_index(kernel)
            told = {ty for _k, ty, _w in value_uses(kernel, a.pos, consumers)
                    if dt.lookup(ty) is not None and dt.lookup(ty).size == t.size}
            # a .u16 read used by mul.f16 only is an f16 (CUTLASS's half alpha): an unsigned
            # read is re-typed by a float use, plain bits by any
            if len(told) == 1 and (t.kind == "bits" or dt.lookup(next(iter(told))).is_float):
                t = dt.lookup(told.pop())
        for j in range(max(1, len(a.regs))):
            out.setdefault(i, {}).setdefault(off + j * t.size, (t.name, a.n, None))
        if t.size == 1 and len(a.regs) <= 1:
            byte_loads[a.pos] = (i, off)
    merge_assembled(out, byte_loads and byte_fields.assembled(kernel, byte_loads))
    return {i: sorted((o,) + v for o, v in d.items()) for i, d in out.items()}


def merge_assembled(out: dict, found) -> None:
    """Byte reads that shl/or put together into one value (``byte_fields``) become one field of
    that value's type where a spec field can sit (a multiple of its size); elsewhere each byte
    says which value it is part of."""
    for f in found or ():
        d = out.get(f.param, {})
        if not all(d.get(f.offset + k, ("",))[0] in ("u8", "s8", "b8") for k in range(f.size)):
            continue
        if f.offset % f.size == 0:
            for k in range(f.size):
                d.pop(f.offset + k)
            d[f.offset] = (f.dtype, f.stmt[1:], f"read as a value: {f.size} bytes read one by one "
                                                f"(ld.param .u8) that {f.stmt} puts together")
            continue
        for k in range(f.size):
            tn, n, _note = d[f.offset + k]
            whole = f"the {f.dtype} at bytes {f.offset}-{f.offset + f.size - 1}"
            d[f.offset + k] = (tn, n, f"byte {k} of {whole} ({f.stmt} puts them together): a spec field must "
                                      "sit at a multiple of its size, so give each byte of that value, "
                                      "little-endian" if k == 0 else f"byte {k} of {whole}")


def tensor_map_params(k) -> dict:
    """{parameter name: statement number} of the by-value parameters whose address reaches an
    instruction that reads a tensor map (through ``mov``/``cvta`` copies).  Such a parameter is
    a ``CUtensorMap`` the host encodes (a global address, the tensor's shape, its box): no
    ``ld.param`` reads it, so the skeleton had ``fields: []`` and no word of why."""
    return {name: uses[0][0] for (name, off), uses in tensor_map_uses(k).items() if off == 0}


def tensor_map_uses(k) -> dict:
    """{(parameter name, byte offset): [(statement number, instruction name)]} of every
    instruction that reads a tensor map at that offset of a by-value parameter (through ``mov``,
    ``cvta`` and the addition of a constant: CUTLASS keeps its maps inside one Params struct, at
    ``param+128``): the copies' rank, mode and direction are what ``probe init`` can say of the
    map."""
    names = {p.name for p in k.fn.params or ()}
    holder: dict = {}             # register key holding a parameter's address -> (name, offset)
    out: dict = {}
    for pos, st in enumerate(k.stmts):
        node = st.node
        if type(node) is not m.Instruction or st.n is None:
            continue
        defs, uses = k.defs_uses(node, pos)
        held = [holder[key] for key in uses if key in holder]
        if held and roles.reads_tensor_map(node.name):
            for at in dict.fromkeys(held):
                out.setdefault(at, []).append((st.n, node.name))
        taken = [(o.name, 0) for o in node.operands[1:] if type(o) is m.Sym and o.name in names]
        moved = _moved(node, held)
        for d in defs:
            holder.pop(d, None)
            if taken or moved is not None:
                holder[d] = taken[0] if taken else moved
    return out


def _moved(node, held: list):
    """Where a copy (``mov``, ``cvta``, ``cvt``) or the addition of a constant puts one held
    parameter address, or None."""
    if len(held) != 1:
        return None
    if node.opcode in ("mov", "cvta", "cvt"):
        return held[0]
    imm = getattr(node.operands[-1], "value", None) if node.operands else None
    if node.opcode == "add" and isinstance(imm, int) and len(node.operands) == 3:
        return held[0][0], held[0][1] + imm
    return None
