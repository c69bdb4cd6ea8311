"""The text of a probe-spec skeleton (``splice probe init``): lines placed by hand, because each
carries the comment that says what def-use found or left to the user, and values spelled as YAML
spells them.  Each kind writes its own lines (``Kind.skeleton``) through :class:`Lines`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import yaml


def yaml_scalar(value) -> str:
    """``value`` as one YAML scalar: PTX names may start with ``%`` (a YAML directive
    character: the skeleton of an entry with a parameter ``%p0`` did not load) or read as YAML
    booleans (``on``, ``no``) and nulls."""
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip().removesuffix("\n...").strip()


class Lines:
    """Line builder for the skeleton (comments need hand placement; values go through yaml)."""
    def __init__(self):
        self.lines: list = []

    def line(self, s: str) -> None:
        self.lines.append(s)

    def kv(self, key: str, value, indent: int = 0, comment: str = "") -> None:
        v = "null" if value is None else yaml.safe_dump(value, default_flow_style=True).strip()
        if v.endswith("\n..."):
            v = v[:-4].strip()
        v = v.replace("\n...", "").strip()
        self.lines.append(f"{'  ' * indent}{key}: {v}" + (f"   # {comment}" if comment else ""))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass
class Facts:
    """What def-use found about an entry's parameters (``splice.analysis``), for the kinds'
    skeletons: ``uses`` {(param, offset): Use}, ``own`` {(param, offset): [(space, where)]} of
    values that reach the kernel's own spaces, ``read`` the parameters read at all, ``values``
    {param: [(offset, dtype, statement, note)]} of struct bytes read as values, ``maps``
    {parameter name: statement} of tensor-map parameters, ``accesses`` {(parameter name, byte
    offset): [(statement, instruction)] reading a tensor map there}, ``prefix``: struct fields
    named ``<param>_field_<offset>``."""
    uses: dict
    own: dict
    read: set
    values: dict
    maps: dict
    prefix: bool = False
    accesses: dict = field(default_factory=dict)


@dataclass
class Slot:
    """One ``.param`` a skeleton describes: its declaration (``entry.PtxParam``), its name as
    the spec writes it, what was found about it."""
    pp: Any        # entry.PtxParam (entry imports the kinds, which read slots)
    short: str
    facts: Facts

    @property
    def use(self):
        return self.facts.uses.get((self.pp.index, 0))

    @property
    def fields(self) -> list:
        """[(offset, Use)] of a by-value struct's pointer fields."""
        return sorted((off, u) for (i, off), u in self.facts.uses.items() if i == self.pp.index)

    @property
    def value_reads(self) -> tuple:
        return tuple(self.facts.values.get(self.pp.index, ()))

    @property
    def tensor_map(self) -> Optional[int]:
        return self.facts.maps.get(self.pp.name)

    def maps_at(self) -> dict:
        """{byte offset: [(statement, instruction)]} of the tensor maps read in this parameter."""
        return {off: at for (name, off), at in self.facts.accesses.items() if name == self.pp.name}

    @property
    def read(self) -> bool:
        return self.pp.index in self.facts.read

    @property
    def own_uses(self) -> list:
        return self.facts.own.get((self.pp.index, 0), [])

    def row(self, kind: str, **more) -> dict:
        """The skeleton's summary row of this parameter (``probe init --json``: ``params``)."""
        return {"param": self.pp.index, "name": self.pp.name, "kind": kind, **more}
