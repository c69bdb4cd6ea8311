"""The records a probe spec is read into (frozen): the spec, its launch, its ``.param`` list and
the frame.  What a field is depends on its kind (``splice.probe.kinds``); a :class:`Param` holds
one field (a scalar, a buffer pointer, an object handle, a tensor map) or a by-value struct's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Param:
    """One ``.param`` of the entry: a scalar, a pointer/object (one field at offset 0) or a
    by-value struct (its fields)."""
    index: int
    name: str
    kind: str
    size: int
    align: int
    fields: tuple
    ptx_name: str = ""
    line: int = 0
    column: int = 0
    grouped: bool = False         # its fields listed under fields: (a by-value struct)

    def key(self, j: int) -> str:
        """The spec's path to field ``j``: ``params[2]``, ``params[0].fields[3]``."""
        return f"params[{self.index}]" + (f".fields[{j}]" if self.grouped else "")


@dataclass(frozen=True)
class Frame:
    field: str
    width: int
    height: int
    format: str


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_static: int = 0
    shared_dynamic: int = 0
    cluster: Optional[tuple[int, int, int]] = None
    sequence: tuple = ()          # ({scalar name: value}, ...): one launch each, in order
    stream: str = "nonblocking"   # nonblocking | default (the legacy NULL stream)

    @property
    def launches(self) -> int:
        return max(1, len(self.sequence))


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    ptx: str
    entry: str
    arch: str
    launch: Launch
    params: tuple[Param, ...]
    frame: Optional[Frame]
    frames: tuple[str, ...]       # the outputs reported as "the frame" (all outputs by default)
    seed: int = 0
    notes: str = ""
    source: str = ""
    build_arch: str = ""          # cubins for this arch; "" = the device the probe runs on
    work: tuple = ()              # declared (("flops", n), ("bytes", n)) of one frame
    legacy: bool = False          # written as the single-struct {size, fields} form
    at: tuple = ()                # (("entry", line, col), ("launch.block", line, col), ...)
    globals: tuple = ()           # module variables (the globals: section's fields)

    def where(self, key: str) -> tuple:
        """(line, col) of a top-level or launch.* key in the spec file, or (None, None)."""
        for k, line, col in self.at:
            if k == key:
                return line, col
        return None, None

    @property
    def fields(self) -> tuple:
        """Every field: the parameters' (a table's entries before it), then the globals."""
        return flatten(self.params, self.globals)

    def field(self, name: str):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def outputs(self) -> tuple:
        return tuple(f for f in self.fields if f.is_output)

    @property
    def grid(self):
        return self.launch.grid

    @property
    def block(self):
        return self.launch.block

    @property
    def shared_static(self):
        return self.launch.shared_static

    @property
    def shared_dynamic(self):
        return self.launch.shared_dynamic

    @property
    def param_size(self) -> int:
        return sum(p.size for p in self.params) if self.legacy or not self.params else self.params[0].size

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def param_fields(self):
        """(parameter, index in it, field, key) of every field of the ``.param`` list: the key is
        the spec's path to it (``params[2]``, ``params[0].fields[3]``)."""
        for p in self.params:
            for j, f in enumerate(p.fields):
                yield p, j, f, p.key(j)


def flatten(params: tuple, globals_: tuple = ()) -> tuple:
    """Every field of the spec: each parameter's fields, a field's children (a table's entries)
    just before it (the device allocates them first), then the globals."""
    out: list = []
    for p in params:
        for f in p.fields:
            out.extend(f.children())
            out.append(f)
    for g in globals_:
        out.extend(g.children())
        out.append(g)
    return tuple(out)
