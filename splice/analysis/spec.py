"""The data of ``splice spec``: one dict per entry, built from the analyses (no printing here).

``build_spec(k)`` is what ``--json`` emits: ``phases`` (``Phase.as_dict``), ``epilogues``,
``weight_image_bytes``, ``tables``, ``params`` (fields read), ``shared`` (arrays and who stores
and loads them).
"""
from __future__ import annotations

import re

from .provenance import CONST, TABLE_ATOM, coef, const_of, render
from .roles import READ, is_shared



def w_loads(k):
    """Every load off the weight image: (Access, offset)."""
    out = []
    for a in k.provenance.accesses:
        if a.kind == "ld" and a.addr is not None and coef(a.addr, "W") == 1:
            out.append((a, const_of(a.addr)))
    return out


def weight_image_bytes(k):
    """Extent of the weight image the entry reads: max over W loads of offset + bytes (lane and
    tid.z terms excluded, as in the notes); None when nothing is read off W."""
    best = None
    for a, off in w_loads(k):
        e = off + a.bytes
        best = e if best is None or e > best else best
    return best


def table_loads(k):
    """Groups of per-column table loads (``W + ((laneid<<2)&12) + off``): consecutive loads of one
    opcode off one base at a 16-byte step.  Each: bytes [lo, hi], loads, opcode, first, last."""
    from bisect import bisect_right

    starts = [k.first_pos_of(p.first) for p in k.phases]
    groups = []
    cur = None
    for a, off in w_loads(k):
        region = bisect_right(starts, a.pos)   # groups never cross a phase
        if not coef(a.addr, TABLE_ATOM):
            continue
        base = tuple(x for x in a.addr if x[0] != CONST)
        node = k.stmts[a.pos].node
        opname = node.name
        if cur and cur["opcode"] == opname and cur["_base"] == base and off == cur["_last"] + 16 \
                and cur["_region"] == region:
            cur["loads"] += 1
            cur["_last"] = off
            cur["bytes"][1] = off + a.bytes - 4
            cur["last"] = a.n
        else:
            cur = {"bytes": [off, off + a.bytes - 4], "loads": 1, "opcode": opname,
                   "first": a.n, "last": a.n, "_base": base, "_last": off, "_region": region,
                   "address": render(a.addr)}
            groups.append(cur)
    for g in groups:
        g.pop("_base")
        g.pop("_last")
        g.pop("_region")
    return groups


_FIELD = re.compile(r"^(\w+)\+(-?\d+)$")


def param_fields(k, names=None):
    """Parameter fields the entry reads: [{param, offset, bytes, statements, name}] by offset;
    ``name`` from ``names`` (``vocab.field_names``: a profile's, ``W`` where proven)."""
    prov = k.provenance
    seen = {}
    for a, param, off in prov.param_loads():
        f = seen.setdefault((param, off), {"param": param, "offset": off, "bytes": a.bytes,
                                  "statements": [], "name": None})
        f["statements"].append(a.n)
    if names is None:
        from .vocab import field_names

        names = field_names(k, None)
    for (p, off), f in seen.items():
        f["name"] = names.get(f"{p}+{off}")
    return sorted(seen.values(), key=lambda f: (f["param"], f["offset"]))


def _local_to_other_function(name: str, entry: str) -> bool:
    """A module-level ``.shared`` array that is a local static of another function
    (``_ZZ14wg_s8u8_n64PKaPKhPiE2sb``: ``sb`` of ``wg_s8u8_n64``): several entries of one module
    each declare their own ``sa``/``sb``, and the entry's notes gave it another's size."""
    if not name.startswith("_ZZ"):
        return False
    return (entry[2:] if entry.startswith("_Z") else entry) not in name


def shared_arrays(k):
    """Shared arrays: {name: {bytes, stores: [n], loads: [n], addresses: {text: count}}}."""
    from ..ptx import model as m

    prov = k.provenance
    sizes = {}
    items = list(k.module.decls()) + [s.node for s in k.stmts]
    for it in items:
        if isinstance(it, m.Decl) and it.space == ".shared":
            for d in it.declarators:
                if _local_to_other_function(d.name, k.name):
                    continue
                el = _type_bytes(it.type)
                n = 1
                for x in d.dims:
                    n *= x or 0
                sizes[prov.shared.get(d.name, d.name)] = n * el if d.dims else el
    out = {nm: {"bytes": sz, "stores": [], "loads": []} for nm, sz in sizes.items()}
    for a in prov.accesses:
        if not is_shared(a.space) or a.addr is None:
            continue
        for atom, v in a.addr:
            if atom in out and v == 1:
                key = "loads" if a.effect == READ else "stores"     # a copy writes its destination
                out[atom][key].append(a.n)
    return out


def _type_bytes(t):
    if not t:
        return 1
    mm = re.search(r"(?<!\d)(\d{1,9})$", t)
    return int(mm.group(1)) // 8 if mm else 1


def _display_name(name):
    from .entries import display_name

    return display_name(name)


def build_spec(k, phases=True, epilogues=True, profile=None, display_name=None) -> dict:
    """``profile``: a ``vocab.Profile`` naming parameter fields (None: the first profile whose
    entry globs match, ``vocab.find_profile``; False: none).  ``display_name``: the entry's,
    when the caller demangled every entry of the module at once (None: demangled here)."""
    from .vocab import field_names, find_profile, vocabulary, weight_evidence

    if profile is None:
        profile = find_profile(k.name)
    profile = profile or None          # False: the caller looked and found none
    proven, why = weight_evidence(k)
    V = vocabulary(k, profile)

    d = {"entry": k.name, "display_name": display_name or _display_name(k.name), "path": str(k.path),
         "statements": k.last_number,
         "weight_field": k.provenance.weight_atom,
         "weight_image_bytes": weight_image_bytes(k),
         "weight_proven": proven, "weight_evidence": why,
         "profile": profile.path if profile else None,
         # the profile's word sets a report may use (vocab.WORD_SETS; their rules checked per
         # use), and whether the weight-image words hold on this kernel
         "vocabulary": sorted(V.asked), "weight_words": V.weight}
    if phases:
        d["phases"] = [p.as_dict() for p in k.phases]
        d["mma_total"] = sum(len(p.mma) for p in k.phases)
        ex = [p.executions for p in k.phases]
        d["mma_executed"] = (sum(len(p.mma) * e for p, e in zip(k.phases, ex))
                             if all(e is not None for e in ex) else None)
        d["phases_without_weight"] = [p.index for p in k.phases if p.weight_bytes is None]
        from .calls import mma_in_calls

        d["mma_in_calls"] = mma_in_calls(k)      # tensor-core code in called .func: not phases
    d["tables"] = table_loads(k)
    d["params"] = param_fields(k, field_names(k, profile))
    d["shared"] = shared_arrays(k)
    if epilogues:
        d["epilogues"] = [e.as_dict(V.has("dldn-epilogue-names"), V.weight, V.w) for e in k.epilogues]
    return d
