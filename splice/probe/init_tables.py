"""``splice probe init``'s pointer tables and module globals (init.py writes the rest).

A pointer table (a buffer the kernel loads 64-bit values from and dereferences) is written as
``kind: table`` with ``count: null`` and one ``each:`` buffer typed and roled by what the kernel
does through the loaded pointers (``param_trace.Use.target``): how many pointers it reads and
how big each buffer is are run-time values def-use cannot decide, so they are ``null`` with a
``TODO`` and the spec refuses to load until they are given.

Every ``.global`` / ``.const`` variable the entry names is listed under ``globals:`` with the
declared size, the element type of its accesses and the role they say (``tables.global_uses``):
an initialised one keeps the module's bytes (``fill: module``), one the kernel reads that the
module leaves uninitialised (the host sets it: ``cudaMemcpyToSymbol``) gets a seeded fill, and
one whose address escapes (stored, passed to a call) says what was not followed.
"""
from __future__ import annotations

from ..analysis.global_uses import global_uses, module_variables, own_symbols
from .language import dtypes as dt


def table_yaml(y, pad: str, u) -> None:
    """The lines after ``- name:`` (and ``offset:``) of a parameter or field ``u`` that is a
    table of pointers."""
    seen = sorted(set(u.pointers))
    at = ", ".join(seen[:3]) + (f" (+{len(seen) - 3})" if len(seen) > 3 else "")
    t = u.target
    y.line(f"{pad}  kind: table                # device pointers: the kernel loads 64-bit values from it and")
    y.line(f"{pad}  # dereferences them ({at})")
    if u.writes:
        y.line(f"{pad}  # check: the kernel also stores to the table itself ({u.writes} store(s)); the probe")
        y.line(f"{pad}  # rewrites the addresses before every launch and does not compare the table")
    y.line(f"{pad}  count: null                # TODO: how many pointers it reads (a run-time bound: not decided here)")
    mixed = _not_a_table(u)
    if mixed:
        y.line(f"{pad}  # TODO: {mixed}: an array of structs holding pointers? A table holds")
        y.line(f"{pad}  # one 8-byte pointer per entry, so this entry cannot be probed as one")
        y.line(f"{pad}  each: null")
        return
    if t is not None and t.image:
        y.line(f"{pad}  # TODO: the loaded values are {t.image} handles, not buffer addresses: the probe's tables")
        y.line(f"{pad}  # hold buffers only, so this entry cannot be probed as it is")
        y.line(f"{pad}  each: null")
        return
    dtype, guessed = t.element() if t is not None else ("u8", True)
    kinds = ", ".join(sorted({f"{x}{f' x{v}' if v > 1 else ''}" for x, v in t.types})) if t is not None else ""
    kinds = kinds or "untyped copies only"
    role = (t.role if t is not None else None) or "inout"
    y.line(f"{pad}  each:                      # every pointed-to buffer alike (or list them as entries: [...])")
    y.line(f"{pad}    dtype: {dtype}" + (f"              # guessed (accessed as {kinds})" if guessed
                                          else f"              # accessed as {kinds}"))
    y.line(f"{pad}    shape: null              # TODO: elements of each buffer")
    reads, writes = (t.reads, t.writes) if t is not None else (0, 0)
    y.line(f"{pad}    role: {role}              # {reads} load(s), {writes} store(s) through its pointers")
    if role != "output":
        rule = "uniform, range: [-1.0, 1.0]" if dt.TYPES[dtype].is_float else "integers, range: [0, 7]"
        y.line(f"{pad}    fill: {{rule: {rule}, seed: {u.seed}}}   # entry i gets seed + i")


def _not_a_table(u) -> str:
    """Why the buffer is not a plain array of pointers (its index scaled by other than 8, or
    values other than 64-bit read from it), or ''."""
    scales = sorted(x for x in u.scales if x != 8)
    other = sorted({t for t, _v in u.types if dt.lookup(t) is not None and dt.lookup(t).size != 8})
    why = ([f"its index is scaled by {', '.join(map(str, scales))}"] if scales else []) + \
        ([f"it also loads {', '.join(other)} values"] if other else [])
    return "; ".join(why)


def globals_yaml(y, kernel, named: set) -> list:
    """The ``globals:`` section for the module variables ``kernel`` names; the summary rows."""
    found = module_variables(kernel.module)
    names = [n for n, v in found.items() if n in named and v.space in (".global", ".const")]
    if not names:
        return []
    uses, escapes = global_uses(kernel, names)
    y.line("globals:                        # module variables this entry names: set in both modules before")
    y.line("                                # each launch (get_global); outputs read back and compared")
    rows = []
    own = own_symbols(kernel)
    for i, n in enumerate(names):
        rows.append(_global_yaml(y, found[n], uses.get(n), escapes.get(n, ()), 9001 + i))
        if n not in own:
            y.line("  # named only in a function the entry calls: its accesses there are not traced")
            y.line("  # (dtype guessed; role inout compares it whatever the function does)")
    return rows


def _global_yaml(y, v, u, escapes, seed: int) -> dict:
    from .init import _scalar

    dtype, guessed = u.element() if u is not None and u.types else ("u8", True)
    t = dt.TYPES[dtype]
    if v.size and v.size % t.size:          # accessed with a type that does not divide it: bytes
        dtype, guessed, t = "u8", True, dt.TYPES["u8"]
    kinds = ", ".join(sorted({f"{x}{f' x{w}' if w > 1 else ''}" for x, w in u.types})) if u is not None else ""
    role = (u.role if u is not None else None) or "inout"
    if escapes and role == "input":
        role = "inout"                       # not every access was followed: compare it too
    y.line(f"- name: {_scalar(v.name)}")
    y.line(f"  dtype: {dtype}" + (f"                # guessed (accessed as {kinds or 'nothing traced'})"
                                   if guessed else f"                # accessed as {kinds}"))
    y.line(f"  # PTX line {v.line}: {v.text}")
    if v.size:
        y.line(f"  shape: [{v.size // t.size}]")
    else:
        y.line("  shape: null                # TODO: an unsized array: the probe cannot size it (and get_global")
        y.line("  # reports the linked size only)")
    reads, writes = (u.reads, u.writes) if u is not None else (0, 0)
    y.line(f"  role: {role}                # {reads} load(s), {writes} store(s)"
           + ("; .const: the kernel cannot write it" if v.space == ".const" else ""))
    if escapes:
        shown = ", ".join(dict.fromkeys(escapes)) if len(escapes) <= 3 else \
            ", ".join(list(dict.fromkeys(escapes))[:3]) + f" (+{len(escapes) - 3})"
        y.line(f"  # check: its address also reaches {shown}, not followed: role and dtype may be")
        y.line("  # incomplete (role inout compares it either way)")
    if u is not None and u.pointers:
        at = ", ".join(sorted(set(u.pointers))[:3])
        y.line(f"  # TODO: the kernel loads pointers from it and dereferences them ({at}): a pointer")
        y.line("  # variable (__device__ T* p); the probe fills globals with numbers, not device addresses,")
        y.line("  # so this entry cannot be probed as it is")
        y.line("  fill: null")
        return _row(v, dtype, role, "pointer")
    if role == "output":
        return _row(v, dtype, role, "poisoned")
    if v.initialised:
        y.line("  fill: module               # as the module initialises it")
        return _row(v, dtype, role, "module")
    if role == "input":
        rule = "uniform, range: [-1.0, 1.0]" if t.is_float else "integers, range: [0, 7]"
        y.line(f"  fill: {{rule: {rule}, seed: {seed}}}   # not initialised in the module: the host sets it")
        if v.type == ".b8" and u is not None and len({x for x, _w in u.types}) > 1:   # a struct's fields
            y.line(f"  # check: accessed as {kinds}: a struct? its fields need their own values")
            y.line("  # (fill: {rule: from, path: FILE.npy}), not one uniform fill")
        return _row(v, dtype, role, "seeded")
    y.line("  fill: module               # not initialised in the module: zeros, as CUDA loads it")
    return _row(v, dtype, role, "module")


def _row(v, dtype: str, role: str, fill: str) -> dict:
    return {"name": v.name, "space": v.space, "bytes": v.size, "dtype": dtype, "role": role, "fill": fill}
