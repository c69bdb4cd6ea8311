"""Pointer tables and module globals in a probe spec (docs/probe-spec.md, "Pointer tables" and
"Module globals").

A *pointer table* is a ``.param`` (or struct field) that points at an array of device pointers
(grouped / batched GEMM's ``T** ptrs``, CUTLASS's ``ptr_A`` arrays, Triton pointer lists): the
probe allocates every pointed-to buffer from its own entry (dtype, shape, fill, role), then a
``u64`` buffer holding their device addresses, in order.  The entries are buffers like any
other: outputs among them are poisoned before each launch and compared bit for bit.

A *module global* is a ``.global`` / ``.const`` variable the module declares (``__device__``,
``__constant__``): set through ``RawModule.get_global`` in every module the probe renders
(original and spliced each have their own copy) before each launch, from its fill or from the
bytes the module initialised it with, and read back and compared when it is an output.

Parsing lives here (``spec.py`` dispatches ``kind: table`` and ``globals:``), the check against
the module (``check_globals``), the def-use of the entry's variables (``global_uses``, for the
check and for ``splice probe init``) and the device side (``table_bytes``, ``ModuleGlobals``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from ..analysis.global_uses import global_uses, module_variables, unseen_accesses
from .spec import MAX_ALIGN, MAX_BUFFER_BYTES, Field, Fill, SpecError

TABLE_KEYS = {"name", "kind", "offset", "entries", "count", "each", "align", "ptx_name", "what"}
ENTRY_KEYS = {"name", "dtype", "shape", "bytes", "align", "role", "fill", "poison", "image_bytes", "what"}
GLOBAL_KEYS = {"name", "dtype", "shape", "bytes", "role", "fill", "poison", "what"}
#: most entries a table may list: a typo's 10^9 would allocate that many buffers
MAX_ENTRIES = 1 << 16
#: the fill of a global "as initialised in the module" (what ``fill: module`` reads as)
MODULE_FILL = Fill("module")


def _copy(d, drop=(), add=None):
    """``d`` less the keys ``drop``, with the keys of ``add`` set, keeping the positions a YMap
    remembers (errors keep their line:col)."""
    out = type(d)((k, v) for k, v in d.items() if k not in drop)
    out.update(add or {})
    for attr in ("key_at", "value_at"):
        if hasattr(d, attr):
            setattr(out, attr, {k: v for k, v in getattr(d, attr).items() if k not in drop})
    for attr in ("line", "column"):
        if hasattr(d, attr):
            setattr(out, attr, getattr(d, attr))
    return out


# --------------------------------------------------------------------------------------------
# spec: kind: table
# --------------------------------------------------------------------------------------------

def parse_table(c, d, where: str, name: str, offset: int, base: Path) -> Field:
    """A ``kind: table`` parameter or struct field: ``entries:`` (one buffer each) or
    ``count:`` copies of ``each:`` (entry i named ``<name>_<i>``, its fill seed + i, so the
    buffers differ and a splice that swaps two of them is caught)."""
    from .spec import _buffer

    if "role" in d:
        raise c.err(f"{where}.role", "a table's own role is input (the probe writes the addresses); "
                    "give each entry its role", d, "role")
    c.keys(d, TABLE_KEYS, where)
    if ("entries" in d) == ("count" in d or "each" in d):
        raise c.err(where, "give entries: [...] (one buffer each) or count: N with each: {...}", d)
    if "entries" in d:
        raw = d["entries"]
        if not isinstance(raw, list):
            raise c.err(f"{where}.entries", "expected a list of buffers (dtype, shape, role, fill)", d, "entries")
        entries = tuple(_entry(c, e, f"{where}.entries[{i}]", f"{name}_{i}", raw, i, base)
                        for i, e in enumerate(raw))
        count = len(entries)
    else:
        c.need(d, "count", where)
        count = c.int(d, "count", f"{where}.count", 0)
        each = c.need(d, "each", where)
        if not isinstance(each, dict):
            raise c.err(f"{where}.each", "expected a mapping (dtype, shape, role, fill)", d, "each")
        c.keys(each, ENTRY_KEYS - {"name"}, f"{where}.each")
        one = _buffer(c, each, f"{where}.each", f"{name}_0", 0, False, base)
        entries = tuple(dataclasses.replace(one, name=f"{name}_{i}", fill=_seeded(one.fill, i))
                        for i in range(min(count, MAX_ENTRIES + 1)))
    at = "entries" if "entries" in d else "count"
    if count == 0:
        raise c.err(f"{where}.{at}", "a table of zero entries: the kernel would read no pointer (pass a "
                    "null pointer as kind: scalar, value: 0, if it accepts one)", d, at)
    if count > MAX_ENTRIES:
        raise c.err(f"{where}.{at}", f"{count} entries: more than the {MAX_ENTRIES} a table may hold", d, at)
    total = sum(e.bytes for e in entries)
    if total > MAX_BUFFER_BYTES:      # each entry is checked alone; 65536 of 1 TiB are not
        raise c.err(f"{where}.{at}", f"{total} bytes in its entries: more than the {MAX_BUFFER_BYTES} a "
                    "table's buffers may hold together", d, at)
    align = c.int(d, "align", f"{where}.align", 1, 256)
    if align & (align - 1) or not 8 <= align <= MAX_ALIGN:
        raise c.err(f"{where}.align", f"{align}: expected a power of two of at least 8 (device pointers) "
                    f"and at most {MAX_ALIGN} (a 2 MiB page)", d, "align")
    return Field(name, offset, "table", 8, dtype="u64", bytes=8 * count, fill=Fill("zeros"),
                 shape=(count,), role="input", align=align, entries=entries,
                 line=getattr(d, "line", 0), column=getattr(d, "column", 0))


def _entry(c, e, where: str, default: str, holder, i: int, base: Path) -> Field:
    from .spec import _buffer

    if not isinstance(e, dict):
        raise c.err(where, f"expected a buffer mapping (dtype, shape, role, fill), got {e!r}", holder, i)
    c.keys(e, ENTRY_KEYS, where)
    name = e.get("name", default)
    if not isinstance(name, str) or not name:
        raise c.err(f"{where}.name", "expected a non-empty string", e, "name")
    return _buffer(c, e, where, name, 0, False, base)


def _seeded(fill: Optional[Fill], i: int) -> Optional[Fill]:
    if fill is None or fill.rule in ("zeros", "constant", "constant_u16", "arange", "from"):
        return fill
    return dataclasses.replace(fill, seed=fill.seed + i)


# --------------------------------------------------------------------------------------------
# spec: globals:
# --------------------------------------------------------------------------------------------

def parse_globals(c, data, base: Path) -> tuple:
    """The ``globals:`` list: one module variable each, by its PTX name.  ``fill: module`` keeps
    the bytes the module initialised it with (restored before each launch); the role defaults
    to ``inout`` (set, then compared after the launch: a global the kernel writes is compared
    without being asked, and one it only reads compares equal)."""
    raw = data.get("globals")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise c.err("globals", "expected a list of module variables ({name, dtype, shape, fill, role})",
                    data, "globals")
    return tuple(_global(c, g, f"globals[{i}]", raw, i, base) for i, g in enumerate(raw))


def _global(c, g, where: str, holder, i: int, base: Path) -> Field:
    from .spec import _buffer

    if not isinstance(g, dict):
        raise c.err(where, f"expected a mapping (name, dtype, shape, fill, role), got {g!r}", holder, i)
    c.keys(g, GLOBAL_KEYS, where)
    name = c.need(g, "name", where)
    if not isinstance(name, str) or not name.strip():
        raise c.err(f"{where}.name", "expected the variable's PTX name", g, "name")
    role = "inout" if g.get("role") is None else g["role"]      # null: the default, as for a buffer
    module = g.get("fill", "module") == "module" and role != "output"
    if g.get("fill") == "module" and role == "output":
        raise c.err(f"{where}.fill", "fill: module on an output: an output is poisoned before each launch "
                    "(role inout keeps the module's bytes and compares them)", g, "fill")
    if "fill" in g and isinstance(g["fill"], str) and g["fill"] != "module":
        raise c.err(f"{where}.fill", f"{g['fill']!r}: expected a fill mapping (rule: ...) or 'module' (as "
                    "initialised in the module)", g, "fill")
    body = _copy(g, drop=("fill",) if "fill" in g and module else (), add={"role": role})
    f = _buffer(c, body, where, name, 0, False, base)
    return dataclasses.replace(f, kind="global", fill=MODULE_FILL if module else f.fill, align=1)


def flatten(params: tuple, globals_: tuple = ()) -> tuple:
    """Every field of the spec: each parameter's fields, a table's entries just before the
    table (the device allocates them first, then writes their addresses), then the globals."""
    out: list = []
    for p in params:
        for f in p.fields:
            out.extend(f.entries)
            out.append(f)
    return tuple(out) + tuple(globals_)


# --------------------------------------------------------------------------------------------
# the module: variables, the entry's def-use of them, the check
# --------------------------------------------------------------------------------------------

def check_globals(spec, text: str, path: str) -> None:
    """Each spec global against the module: declared at module scope in ``.global`` or
    ``.const`` space, of the spec's size; a ``.const`` one is not an ``output`` (the kernel
    cannot write it); one the entry writes is not ``role: input`` (its writes would go
    uncompared).  A SpecError at the global's line, the declaration in the detail."""
    if not spec.globals:
        return
    from ..ptx import parse

    mod = parse(text, path)
    found = module_variables(mod)
    for g in spec.globals:
        v = found.get(g.name)
        if v is None:
            known = [n for n, x in found.items() if x.space in (".global", ".const")]
            raise _bad(spec, g, f"{path} declares no module variable {g.name!r} (its .global/.const variables: "
                      f"{', '.join(known[:12]) or 'none'}{' ...' if len(known) > 12 else ''})")
        where = f"PTX: {path}:{v.line}: {v.text}"
        if v.space not in (".global", ".const"):
            raise _bad(spec, g, f"a {v.space} variable: the host can set only .global and .const variables", where)
        if v.size != g.bytes:
            raise _bad(spec, g, f"{g.bytes} bytes in the spec, but the module declares {v.size}"
                      + (" (an unsized array)" if v.size == 0 else ""), where)
        if v.space == ".const" and g.role == "output":
            raise _bad(spec, g, "role output, but a .const variable cannot be written by the kernel (poisoned, "
                      "it would compare the poison): give role input", where)
    _check_written(spec, mod, path, found)


def _bad(spec, g, msg: str, detail: str = "") -> SpecError:
    return SpecError(f"{g.name}: {msg}", spec.source, g.line or None, g.column or None, key="globals",
                     detail=detail)


def _check_written(spec, mod, path: str, found: dict) -> None:
    """``role: input`` only on a global the entry is seen not to write: one it stores to is
    refused, and so is one whose accesses the entry's def-use cannot see all of (its address
    escapes, it is named in a function the entry calls, or another variable's initialiser holds
    its address): what the kernel may write there would go uncompared, a silent pass."""
    from ..analysis import Kernel

    inputs = [g for g in spec.globals if g.role == "input"]
    if not inputs:
        return
    kernel = Kernel(mod, spec.entry)      # the entry exists: check() looked it up before
    uses, escapes = global_uses(kernel, [g.name for g in inputs])
    unseen = unseen_accesses(kernel, mod, {g.name for g in inputs})
    for g in inputs:
        u = uses.get(g.name)
        where = f"PTX: {path}:{found[g.name].line}: {found[g.name].text}"
        if u is not None and u.writes:
            raise _bad(spec, g, f"role input, but {spec.entry} writes it ({u.writes} store(s) or atomic(s)): "
                       "what it writes would not be compared; give role inout (or leave role out)", where)
        why = unseen.get(g.name) or (f"its address reaches {_first(escapes[g.name])}, not followed"
                                     if escapes.get(g.name) else "")
        if why and found[g.name].space != ".const":      # no kernel writes a .const variable
            raise _bad(spec, g, f"role input, but {why}: a write there would not be compared; give role "
                       "inout (or leave role out)", where)


def _first(places) -> str:
    shown = list(dict.fromkeys(places))
    return ", ".join(shown[:3]) + (f" (+{len(shown) - 3})" if len(shown) > 3 else "")


# --------------------------------------------------------------------------------------------
# the device side
# --------------------------------------------------------------------------------------------

def table_bytes(field: Field, handles: dict) -> np.ndarray:
    """A table's content: the device address of each entry, in order, as little-endian u64."""
    return np.array([int(handles[e.name]) for e in field.entries], dtype="<u8").view(np.uint8)


class ModuleGlobals:
    """The spec's globals in one loaded module: a uint8 device view of each (``get_global``),
    and the bytes each ``fill: module`` global held at load time (before any launch), restored
    before every render."""

    def __init__(self, cp, module, spec, where: str):
        from .inputs import buffer_bytes

        self.views: dict = {}
        self.host: dict = {}
        for g in spec.globals:
            try:
                ptr = module.get_global(g.name)
            except Exception as e:  # noqa: BLE001 - cupy's CUDADriverError (CUDA_ERROR_NOT_FOUND)
                if type(e).__name__ not in ("CUDADriverError", "CUDARuntimeError"):
                    raise
                raise SpecError(f"{g.name}: not found in the loaded module ({e})", where, key="globals") from None
            # cupy 14 wraps the symbol as UnownedMemory of size 0 (the driver's size is dropped):
            # 0 says nothing, and the declared size was checked against the PTX (check_globals)
            size = int(getattr(getattr(ptr, "mem", None), "size", 0) or 0)
            if size and size != g.bytes:
                raise SpecError(f"{g.name}: the loaded module's variable is {size} bytes, the spec says "
                                f"{g.bytes}", where, key="globals")
            view = cp.ndarray((g.bytes,), dtype=cp.uint8, memptr=ptr)
            self.views[g.name] = view
            if g.fill is not None and g.fill.rule == "module":
                self.host[g.name] = view.get()
            elif g.role != "output":
                raw = buffer_bytes(g, spec.seed)
                self.host[g.name] = raw if raw is not None else np.zeros(g.bytes, dtype=np.uint8)

    def prepare(self, spec, stream, alt: bool = False) -> None:
        """Poison the output globals, set every other one to its fill (or initial bytes)."""
        from .inputs import output_poison

        for g in spec.globals:
            data = output_poison(g, alt) if g.role == "output" else self.host[g.name]
            self.views[g.name].set(data, stream=stream)

    def read(self, spec, stream) -> dict:
        """{name: uint8 host copy} of the globals that are outputs."""
        return {g.name: self.views[g.name].get(stream=stream) for g in spec.globals if g.is_output}
