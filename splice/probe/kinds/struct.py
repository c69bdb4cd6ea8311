"""``kind: struct``: a by-value ``.param .align N .b8 name[size]`` -- a C++ struct the kernel
takes whole (CUTLASS's ``Params``, a tuple of pointers and sizes): its ``fields:`` at their
offsets, each of a kind that may sit in a struct, zero padding elsewhere."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from ..language.context import Ctx, position
from ..language.records import Param
from ..language.skeleton import Slot, yaml_scalar
from .base import Kind, by_claim, stuck

STRUCT_KEYS = frozenset({"size", "align", "fields"})


@dataclass(frozen=True, kw_only=True)
class Struct(Kind):
    """Only ever a whole ``.param``: ``parse_param`` reads it into a :class:`Param` of its
    fields; it has no field record of its own."""
    kind: ClassVar[str] = "struct"
    noun: ClassVar[Optional[str]] = "by-value struct"
    order: ClassVar[int] = 70
    in_struct: ClassVar[bool] = False
    keys: ClassVar[frozenset] = STRUCT_KEYS
    claim_order: ClassVar[int] = 300
    #: its mapping holds ``fields:``, each a field of another kind
    groups: ClassVar[bool] = True

    @classmethod
    def parse_param(cls, c: Ctx, d, i: int, parse_field) -> Param:
        """``parse_field(mapping, where, legacy)`` reads one field of any kind a struct may
        hold (the spec language's dispatch)."""
        where = f"params[{i}]"
        c.keys(d, {"name", "kind", "size", "align", "fields", "ptx_name", "what"}, where)
        name = c.need(d, "name", where)
        size = c.int(c.need(d, "size", where) and d, "size", f"{where}.size", 1)
        align = c.int(d, "align", f"{where}.align", 1, 8)
        fields = cls.fields_of(c, c.need(d, "fields", where), size, where, False, parse_field)
        line, col = position(d)
        return Param(i, str(name), "struct", size, align, fields, str(d.get("ptx_name", "")), line, col,
                     grouped=True)

    @classmethod
    def parse_legacy(cls, c: Ctx, raw, parse_field) -> Param:
        """The first specs' ``params: {size, fields}``: one by-value struct, the only parameter."""
        c.keys(raw, {"size", "fields", "align", "name"}, "params")
        size = c.int(c.need(raw, "size", "params") and raw, "size", "params.size", 1)
        fields = cls.fields_of(c, c.need(raw, "fields", "params"), size, "params", True, parse_field)
        line, col = position(raw)
        return Param(0, str(raw.get("name", "params")), "struct", size, c.int(raw, "align", "params.align", 1, 8),
                     fields, line=line, column=col, grouped=True)

    @staticmethod
    def fields_of(c: Ctx, raw, size: int, where: str, legacy: bool, parse_field) -> tuple:
        """The ``fields:`` list: each inside the struct's ``size`` bytes, none overlapping."""
        if not isinstance(raw, list) or not raw:
            raise c.err(f"{where}.fields", "expected a non-empty list", raw)
        fields = tuple(parse_field(f, f"{where}.fields[{i}]", legacy) for i, f in enumerate(raw))
        spans: list = []
        for i, f in enumerate(fields):
            w = f"{where}.fields[{i}].offset"
            if f.offset + f.size > size:
                raise c.err(w, f"{f.name} ends at {f.offset + f.size} > {where}.size {size}", raw[i], "offset")
            for j, (lo, hi) in enumerate(spans):
                if f.offset < hi and lo < f.offset + f.size:
                    raise c.err(w, f"{f.name} overlaps {where}.fields[{j}]", raw[i], "offset")
            spans.append((f.offset, f.offset + f.size))
        return fields

    @staticmethod
    def declaration_of(p: Param, pp) -> Optional[str]:
        """Why the struct ``p`` does not fit the declared ``pp``, or None."""
        if not pp.is_array:
            return f"a {p.size}-byte struct, but the PTX declares a scalar {pp.type}"
        if pp.size != p.size:
            return f"a {p.size}-byte struct, but the PTX array is {pp.size} bytes"
        if p.align != pp.align:
            return f"align {p.align}, but the PTX declares .align {pp.align}"
        return None

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims(cls, slot: Slot) -> bool:
        """A byte array some of which the entry reads: pointers, values, tensor maps (an array
        of 8 bytes read as one pointer is that pointer's kind; one nothing reads is opaque)."""
        pp = slot.pp
        if not pp.is_array:
            return False
        return bool(slot.fields or slot.value_reads or slot.maps_at()) and \
            (pp.size != 8 or not (slot.use is not None and slot.use.role is not None))

    @classmethod
    def skeleton(cls, y, slot: Slot) -> dict:
        """Its members, each written by the kind that claims it (``struct_members``: tensor
        maps at their offsets, the pointers it dereferences, then the bytes it reads as
        values), none overlapping another."""
        pp, short = slot.pp, slot.short
        y.line(f"- name: {yaml_scalar(short)}")
        y.line("  kind: struct")
        y.line(f"  size: {pp.size}")
        y.line(f"  align: {pp.align}")
        y.line("  fields:                      # pointers it dereferences, then bytes it reads as values")
        stem = f"{short}_field_" if slot.facts.prefix else "field_"
        taken: list = []
        counts, whys = {}, []
        for k in by_claim():
            if "struct_members" in k.__dict__:
                counts[k.kind], why = k.struct_members(y, slot, stem, taken)
                whys += [why] if why else []
        row = slot.row("struct", fields=counts.get("buffer", 0), scalars=counts.get("scalar", 0))
        if counts.get("tensor_map"):
            row["tensor_maps"] = counts["tensor_map"]
        return stuck(row, "; ".join(whys))
