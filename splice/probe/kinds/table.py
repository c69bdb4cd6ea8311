"""``kind: table``: a pointer table -- a ``.param`` (or struct field) that points at an array of
device pointers (grouped / batched GEMM's ``T** ptrs``, CUTLASS's ``ptr_A`` arrays, Triton pointer
lists).  The probe allocates every pointed-to buffer from its own entry (dtype, shape, fill,
role), then a ``u64`` buffer holding their device addresses, in order, restored before every
launch.  The entries are buffers like any other: outputs among them are poisoned before each
launch and compared bit for bit."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from ..language import dtypes as dt
from ..language.context import MAX_ALIGN, MAX_BUFFER_BYTES, Ctx, position
from ..language.fills import Fill
from ..language.skeleton import yaml_scalar
from .base import device_restore
from .buffer import Buffer, written_input

#: the keys a table's mapping may hold (a table's own role is refused with a reason, not as unknown)
TABLE_KEYS = {"name", "kind", "offset", "entries", "count", "each", "align", "ptx_name", "what"}
ENTRY_KEYS = {"name", "dtype", "shape", "bytes", "align", "role", "fill", "poison", "image_bytes", "what"}

#: most entries a table may list: a typo's 10^9 would allocate that many buffers
MAX_ENTRIES = 1 << 16


@dataclass(frozen=True, kw_only=True)
class Table(Buffer):
    entries: tuple = ()           # the buffers it points at, in order

    kind: ClassVar[str] = "table"
    noun: ClassVar[Optional[str]] = "pointer table"
    order: ClassVar[int] = 50
    keys: ClassVar[frozenset] = frozenset({"entries", "count", "each", "align", "role"})
    claim_order: ClassVar[int] = 200

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Table":
        """``entries:`` (one buffer each) or ``count:`` copies of ``each:`` (entry i named
        ``<name>_<i>``, its fill seed + i, so the buffers differ and a splice that swaps two of
        them is caught)."""
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
            entries = tuple(_entry(c, e, f"{where}.entries[{i}]", f"{name}_{i}", raw, i)
                            for i, e in enumerate(raw))
            count = len(entries)
        else:
            c.need(d, "count", where)
            count = c.int(d, "count", f"{where}.count", 0)
            each = c.need(d, "each", where)
            if not isinstance(each, dict):
                raise c.err(f"{where}.each", "expected a mapping (dtype, shape, role, fill)", d, "each")
            c.keys(each, ENTRY_KEYS - {"name"}, f"{where}.each")
            one = Buffer.parse(c, each, f"{where}.each", f"{name}_0", 0, False)
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
        line, col = position(d)
        return cls(name=name, offset=offset, dtype="u64", bytes=8 * count, fill=Fill("zeros"), shape=(count,),
                   role="input", align=align, entries=entries, line=line, column=col)

    @property
    def writable(self) -> bool:
        return False          # its entries are; the table is rewritten before each launch

    def children(self) -> tuple:
        return self.entries

    def kernel_checks(self, spec, facts, key: str) -> list:
        if spec.legacy or not any(e.role == "input" for e in self.entries):
            return []
        return [(3, lambda: self._entries_not_written(spec, facts, key))]

    def _entries_not_written(self, spec, facts, key: str) -> None:
        u = facts.use_of(self)
        if u is None or u.target is None or not u.target.writes:
            return
        names = [e.name for e in self.entries if e.role == "input"]
        raise written_input(spec, self, key, f"{spec.entry} stores through its pointers (entries of role input: "
                            f"{', '.join(names[:4])}{' ...' if len(names) > 4 else ''})", u.target.writes)

    def allocate(self, dev) -> Optional[int]:
        """After its entries (listed before it): their device addresses, kept to restore."""
        return dev.place(self, self.addresses(dev.handles), keep=True)

    def addresses(self, handles: dict) -> np.ndarray:
        """The device address of each entry, in order, as little-endian u64 bytes."""
        return np.array([int(handles[e.name]) for e in self.entries], dtype="<u8").view(np.uint8)

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        """Its addresses again: a kernel that wrote into the table would send the next render
        elsewhere."""
        dev.views[self.name].set(dev.host[self.name], stream=stream)

    def read(self, dev, stream, module_name: str):
        return None

    def moved_bytes(self) -> int:
        """0: addresses, not frame data."""
        return 0

    def timed_restores(self, dev) -> list:
        """Its entries' addresses, whatever its role (a kernel that wrote into the table would
        send the next sample elsewhere)."""
        return [(self.name, None, device_restore(dev, dev.views[self.name], dev.host[self.name]))]

    @classmethod
    def claims_use(cls, u) -> bool:
        return bool(u.pointers)

    @classmethod
    def object_row(cls, u) -> dict:
        return {"role": u.role, "dtype": "u64", "pointer_table": True}

    @classmethod
    def object_lines(cls, y, name: str, u, indent: int, offset) -> Optional[str]:
        """A buffer the kernel loads pointers from and dereferences (batched / grouped kernels):
        entries typed and roled by the accesses through them; how many pointers it reads and how
        big each buffer is are run-time values def-use cannot decide (``null`` with a TODO)."""
        pad = "  " * indent
        y.line(f"{pad}- name: {yaml_scalar(name)}")
        if offset is not None:
            y.line(f"{pad}  offset: {offset}")
        seen = sorted(set(u.pointers))
        at = ", ".join(seen[:3]) + (f" (+{len(seen) - 3})" if len(seen) > 3 else "")
        t = u.target
        y.line(f"{pad}  kind: table                # device pointers: the kernel loads 64-bit values from it and")
        y.line(f"{pad}  # dereferences them ({at})")
        if u.writes:
            y.line(f"{pad}  # check: the kernel also stores to the table itself ({u.writes} store(s)); the probe")
            y.line(f"{pad}  # rewrites the addresses before every launch and does not compare the table")
        y.line(f"{pad}  count: null                # TODO: how many pointers it reads "
               "(a run-time bound: not decided here) (e.g. 2)")
        mixed = _not_a_table(u)
        if mixed:
            y.line(f"{pad}  # TODO: {mixed}: an array of structs holding pointers? A table holds")
            y.line(f"{pad}  # one 8-byte pointer per entry, so this entry cannot be probed as one")
            y.line(f"{pad}  each: null")
            return f"{name}: {mixed}, not a table of pointers"
        if t is not None and t.image:
            y.line(f"{pad}  # TODO: the loaded values are {t.image} handles, not buffer addresses: the probe's tables")
            y.line(f"{pad}  # hold buffers only, so this entry cannot be probed as it is")
            y.line(f"{pad}  each: null")
            return f"{name}: a table of {t.image} handles (the probe's tables hold buffers)"
        dtype, guessed = t.element() if t is not None else ("u8", True)
        kinds = ", ".join(sorted({f"{x}{f' x{v}' if v > 1 else ''}" for x, v in t.types})) if t is not None else ""
        kinds = kinds or "untyped copies only"
        role = (t.role if t is not None else None) or "inout"
        y.line(f"{pad}  each:                      # every pointed-to buffer alike (or list them as entries: [...])")
        y.line(f"{pad}    dtype: {dtype}" + (f"              # guessed (accessed as {kinds})" if guessed
                                              else f"              # accessed as {kinds}"))
        y.line(f"{pad}    shape: null              # TODO: elements of each buffer (e.g. [1024])")
        reads, writes = (t.reads, t.writes) if t is not None else (0, 0)
        y.line(f"{pad}    role: {role}              # {reads} load(s), {writes} store(s) through its pointers")
        if role != "output":
            rule = "uniform, range: [-1.0, 1.0]" if dt.TYPES[dtype].is_float else "integers, range: [0, 7]"
            y.line(f"{pad}    fill: {{rule: {rule}, seed: {u.seed}}}   # entry i gets seed + i")
        return None


def _entry(c, e, where: str, default: str, holder, i: int) -> Buffer:
    if not isinstance(e, dict):
        raise c.err(where, f"expected a buffer mapping (dtype, shape, role, fill), got {e!r}", holder, i)
    c.keys(e, ENTRY_KEYS, where)
    name = e.get("name", default)
    if not isinstance(name, str) or not name:
        raise c.err(f"{where}.name", "expected a non-empty string", e, "name")
    return Buffer.parse(c, e, where, name, 0, False)


def _seeded(fill: Optional[Fill], i: int) -> Optional[Fill]:
    if fill is None or fill.rule in ("zeros", "constant", "constant_u16", "arange", "from"):
        return fill
    return dataclasses.replace(fill, seed=fill.seed + i)


def _not_a_table(u) -> str:
    """Why the buffer is not a plain array of pointers (its index scaled by other than 8, or
    values other than 64-bit read from it), or ''."""
    scales = sorted(x for x in u.scales if x != 8)
    other = sorted({t for t, _v in u.types if dt.lookup(t) is not None and dt.lookup(t).size != 8})
    why = ([f"its index is scaled by {', '.join(map(str, scales))}"] if scales else []) + \
        ([f"it also loads {', '.join(other)} values"] if other else [])
    return "; ".join(why)
