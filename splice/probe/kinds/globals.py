"""Module globals: a ``.global`` / ``.const`` variable the module declares (``__device__``,
``__constant__``), listed under a spec's ``globals:``.  Set through ``RawModule.get_global`` in
every module the probe renders (original and spliced each have their own copy) before each
launch, from its fill or from the bytes the module initialised it with (``fill: module``), and
read back and compared when it is an output.  Its accesses are the entry's def-use of the
variable (``splice.analysis.global_uses``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from ...analysis.global_uses import global_uses, module_variables, own_symbols
from ..language import dtypes as dt
from ..language.context import Ctx, SpecError
from ..language.fill_data import buffer_bytes, output_poison
from ..language.fills import Fill
from ..language.skeleton import yaml_scalar
from .base import device_restore, stuck
from .buffer import Buffer, buffer_attrs

GLOBAL_KEYS = frozenset({"dtype", "shape", "bytes", "role", "fill", "poison"})
#: the fill of a global "as initialised in the module" (what ``fill: module`` reads as)
MODULE_FILL = Fill("module")


@dataclass(frozen=True, kw_only=True)
class Global(Buffer):
    kind: ClassVar[str] = "global"
    order: ClassVar[int] = 60
    section: ClassVar[str] = "globals"
    keys: ClassVar[frozenset] = GLOBAL_KEYS
    per_module: ClassVar[bool] = True

    @classmethod
    def parse(cls, c: Ctx, g, where: str, name: str, offset: int, legacy: bool) -> "Global":
        """``fill: module`` keeps the bytes the module initialised it with (restored before each
        launch); the role defaults to ``inout`` (set, then compared after the launch: a global
        the kernel writes is compared without being asked, and one it only reads compares
        equal)."""
        role = "inout" if g.get("role") is None else g["role"]      # null: the default, as for a buffer
        module = g.get("fill", "module") == "module" and role != "output"
        if g.get("fill") == "module" and role == "output":
            raise c.err(f"{where}.fill", "fill: module on an output: an output is poisoned before each launch "
                        "(role inout keeps the module's bytes and compares them)", g, "fill")
        if "fill" in g and isinstance(g["fill"], str) and g["fill"] != "module":
            raise c.err(f"{where}.fill", f"{g['fill']!r}: expected a fill mapping (rule: ...) or 'module' (as "
                        "initialised in the module)", g, "fill")
        body = _copy(g, drop=("fill",) if "fill" in g and module else (), add={"role": role})
        attrs = buffer_attrs(c, body, where, False)
        attrs.update(align=1, fill=MODULE_FILL if module else attrs["fill"])
        return cls(**attrs, name=name, offset=0)

    @property
    def writable(self) -> bool:
        return False          # the bound harness runs a module of its own, without it

    @property
    def harness_blind(self) -> bool:
        # an input the module initialises holds the same bytes there as in the frame run
        return self.role != "input" or self.fill is None or self.fill.rule != "module"

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        raise TypeError(f"{self.name}: a module global is no .param")

    # ------------------------------------------------------------------ the module

    def kernel_checks(self, spec, facts, key: str) -> list:
        out = [(0, lambda: self._declared(spec, facts))]
        if self.role == "input":
            out.append((1, lambda: self._not_written(spec, facts, key)))
        return out

    def _declared(self, spec, facts) -> None:
        """Declared at module scope in ``.global`` or ``.const`` space, of the spec's size; a
        ``.const`` one is not an ``output`` (the kernel cannot write it)."""
        found, path = facts.variables, facts.path
        v = found.get(self.name)
        if v is None:
            known = [n for n, x in found.items() if x.space in (".global", ".const")]
            raise self._bad(spec, f"{path} declares no module variable {self.name!r} (its .global/.const "
                            f"variables: {', '.join(known[:12]) or 'none'}{' ...' if len(known) > 12 else ''})")
        where = f"PTX: {path}:{v.line}: {v.text}"
        if v.space not in (".global", ".const"):
            raise self._bad(spec, f"a {v.space} variable: the host can set only .global and .const variables", where)
        if v.size != self.bytes:
            raise self._bad(spec, f"{self.bytes} bytes in the spec, but the module declares {v.size}"
                            + (" (an unsized array)" if v.size == 0 else ""), where)
        if v.space == ".const" and self.role == "output":
            raise self._bad(spec, "role output, but a .const variable cannot be written by the kernel (poisoned, "
                            "it would compare the poison): give role input", where)

    def _not_written(self, spec, facts, key: str = "") -> None:
        """``role: input`` only on a global the entry is seen not to write: one it stores to is
        refused, and so is one whose accesses the entry's def-use cannot see all of (its address
        escapes, it is named in a function the entry calls, or another variable's initialiser
        holds its address): what the kernel may write there would go uncompared, a silent pass."""
        uses, escapes, unseen = facts.input_globals(spec)
        v = facts.variables[self.name]
        where = f"PTX: {facts.path}:{v.line}: {v.text}"
        u = uses.get(self.name)
        if u is not None and u.writes:
            raise self._bad(spec, f"role input, but {spec.entry} writes it ({u.writes} store(s) or atomic(s)): "
                            "what it writes would not be compared; give role inout (or leave role out)", where)
        why = unseen.get(self.name) or (f"its address reaches {_first(escapes[self.name])}, not followed"
                                        if escapes.get(self.name) else "")
        if why and v.space != ".const":      # no kernel writes a .const variable
            raise self._bad(spec, f"role input, but {why}: a write there would not be compared; give role "
                            "inout (or leave role out)", where)

    def _bad(self, spec, msg: str, detail: str = "") -> SpecError:
        return SpecError(f"{self.name}: {msg}", spec.source, self.line or None, self.column or None, key="globals",
                         detail=detail)

    # ------------------------------------------------------------------ the device, per module

    def bind(self, dev, module, module_name: str, where: str) -> None:
        """A uint8 device view of the variable in ``module`` (``get_global``), and the bytes a
        ``fill: module`` global held at load time (before any launch), restored before every
        render."""
        try:
            ptr = module.get_global(self.name)
        except Exception as e:  # noqa: BLE001 - cupy's CUDADriverError (CUDA_ERROR_NOT_FOUND)
            if type(e).__name__ not in ("CUDADriverError", "CUDARuntimeError"):
                raise
            raise SpecError(f"{self.name}: not found in the loaded module ({e})", where, key="globals") from None
        # cupy 14 wraps the symbol as UnownedMemory of size 0 (the driver's size is dropped):
        # 0 says nothing, and the declared size was checked against the PTX (_declared)
        size = int(getattr(getattr(ptr, "mem", None), "size", 0) or 0)
        if size and size != self.bytes:
            raise SpecError(f"{self.name}: the loaded module's variable is {size} bytes, the spec says "
                            f"{self.bytes}", where, key="globals")
        view = dev.cp.ndarray((self.bytes,), dtype=dev.cp.uint8, memptr=ptr)
        host = None
        if self.fill is not None and self.fill.rule == "module":
            host = view.get()
        elif self.role != "output":
            raw = buffer_bytes(self, dev.spec.seed)
            host = raw if raw is not None else np.zeros(self.bytes, dtype=np.uint8)
        dev.bound.setdefault(module_name, {})[self.name] = (view, host)

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        """Poison an output global, set every other one to its fill (or initial bytes)."""
        view, host = dev.bound[module_name][self.name]
        view.set(output_poison(self, alt) if self.role == "output" else host, stream=stream)

    def read(self, dev, stream, module_name: str) -> Optional[np.ndarray]:
        return dev.bound[module_name][self.name][0].get(stream=stream) if self.is_output else None

    def moved_bytes(self) -> int:
        """0: module state, not the frame's data."""
        return 0

    def timed_restores(self, dev) -> list:
        """An inout global, in each module it was bound in: its initial bytes there."""
        if self.role != "inout":
            return []
        return [(f"{name}:{self.name}", name, device_restore(dev, *bound[self.name]))
                for name, bound in dev.bound.items() if self.name in bound and bound[self.name][1] is not None]

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims_use(cls, u) -> bool:
        return False

    @classmethod
    def global_lines(cls, y, kernel, named: set) -> list:
        """The ``globals:`` entries of the module variables ``kernel`` names; the summary rows."""
        found = module_variables(kernel.module)
        names = [n for n, v in found.items() if n in named and v.space in (".global", ".const")]
        if not names:
            return []
        uses, escapes = global_uses(kernel, names)
        rows = []
        own = own_symbols(kernel)
        for i, n in enumerate(names):
            rows.append(_global_lines(y, found[n], uses.get(n), escapes.get(n, ()), 9001 + i))
            if n not in own:
                y.line("  # named only in a function the entry calls: its accesses there are not traced")
                y.line("  # (dtype guessed; role inout compares it whatever the function does)")
        return rows


def _global_lines(y, v, u, escapes, seed: int) -> dict:
    dtype, guessed = u.element() if u is not None and u.types else ("u8", True)
    t = dt.TYPES[dtype]
    if v.size and v.size % t.size:          # accessed with a type that does not divide it: bytes
        dtype, guessed, t = "u8", True, dt.TYPES["u8"]
    kinds = ", ".join(sorted({f"{x}{f' x{w}' if w > 1 else ''}" for x, w in u.types})) if u is not None else ""
    role = (u.role if u is not None else None) or "inout"
    if escapes and role == "input":
        role = "inout"                       # not every access was followed: compare it too
    y.line(f"- name: {yaml_scalar(v.name)}")
    y.line(f"  dtype: {dtype}" + (f"                # guessed (accessed as {kinds or 'nothing traced'})"
                                   if guessed else f"                # accessed as {kinds}"))
    y.line(f"  # PTX line {v.line}: {v.text}")
    if v.size:
        y.line(f"  shape: [{v.size // t.size}]")
    else:
        y.line("  shape: null                # TODO: an unsized array: the probe cannot size it (and get_global")
        y.line("  # reports the linked size only): the entry cannot be probed as it is")
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
        return stuck(_row(v, dtype, role, "pointer"), f"{v.name}: a pointer variable (the probe fills globals "
                     "with numbers, not device addresses)")
    if not v.size:
        return stuck(_row(v, dtype, role, "unsized"), f"{v.name}: an unsized array the probe cannot size")
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


def _first(places) -> str:
    shown = list(dict.fromkeys(places))
    return ", ".join(shown[:3]) + (f" (+{len(shown) - 3})" if len(shown) > 3 else "")
