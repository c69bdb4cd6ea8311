"""Vocabulary by evidence: the stand-ins' names only where their pattern is proven.

The notes' words — the weight image ``W``, the plane arena, its scatter — describe the DLDN
engine's kernels.  On a third-party kernel they would mislabel a C pointer read for ``β·C`` as
"weights" or a register spill as "plane-arena scatter".  So:

* **weight image** (``W``): the field the analysis picked (``Provenance.weight_atom``) is *only
  read* (no store, reduction or atomic goes through it) and at least one load reads it through
  the lane-indexed pattern (an address with a ``laneid`` term).  Otherwise the field keeps its
  neutral name (``param_0+96``).
* **plane-arena scatter**: a global store into a *written-only* buffer (no load reads the field
  its address hangs off) at a lane- or thread-dependent (strided) address.  Other global
  stores are "global store", ``st.local`` is "local spill".
* a **profile** (``profiles/*.yaml``, written by the user for a family of kernels) names
  parameter fields: ``entries:`` (globs of entry names) and ``fields:`` (``param_0+40:
  weights``).  ``find_profile`` picks the first profile whose globs match the entry, from
  ``$SPLICE_PROFILES`` (``os.pathsep``-separated directories), then the repository's
  ``profiles/``.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from .provenance import coef

SCATTER, GLOBAL_STORE, LOCAL_SPILL = "plane-arena scatter", "global store", "local spill"
_REPO_PROFILES = Path(__file__).resolve().parents[2] / "profiles"


@dataclass(frozen=True)
class Profile:
    path: str
    entries: tuple
    fields: dict = field(default_factory=dict)    # 'param_0+40' -> name

    def matches(self, entry: str) -> bool:
        return any(fnmatch.fnmatchcase(entry, g) for g in self.entries)


def load_profile(path) -> Profile:
    """One profile file, read like every user YAML (bounded, no alias bombs, named positions)
    and checked key by key: a glob that is not a string, or a field name that is a list, is the
    user's mistake at its line, never a traceback or a silently stringified ``['a']``."""
    from ..util import read_utf8
    from ..yamlsafe import DEFAULT_LIMITS, YMap, load_yaml_marked

    path = str(path)
    try:
        text = read_utf8(path, "a profile is UTF-8 YAML", DEFAULT_LIMITS.max_bytes)
    except FileNotFoundError:
        raise SpliceError("profile not found", path) from None
    data = load_yaml_marked(text, path)
    if not isinstance(data, YMap) or not data:
        raise SpliceError("a profile is a mapping with entries: [globs] and fields: {field: name}", path, 1)
    for k in data:
        if k not in ("entries", "fields"):
            raise SpliceError(f"unknown key {k!r} (a profile has entries: and fields:)", path, *data.at(k))
    ents = data.get("entries") or ["*"]
    if isinstance(ents, str):
        ents = [ents]
    if not isinstance(ents, list) or not all(isinstance(e, str) and e for e in ents):
        raise SpliceError(f"entries: expected a glob or a list of globs, got {ents!r}", path, *data.vat("entries"))
    fields = data.get("fields") or {}
    if not isinstance(fields, YMap) and fields != {}:
        raise SpliceError(f"fields: expected a mapping field -> name, got {fields!r}", path, *data.vat("fields"))
    for k, v in fields.items():
        if not isinstance(k, str) or not isinstance(v, str) or not v:
            raise SpliceError(f"fields: {k!r}: expected a name, got {v!r}", path,
                              *(fields.vat(k) if isinstance(fields, YMap) else data.vat("fields")))
    return Profile(path, tuple(ents), dict(fields))


def profile_dirs() -> list:
    extra = [Path(p) for p in os.environ.get("SPLICE_PROFILES", "").split(os.pathsep) if p]
    return extra + [_REPO_PROFILES]


def load_profiles(dirs=None) -> list:
    """Every profile of the search directories, in search order (load once per command).  A
    ``$SPLICE_PROFILES`` entry that is not a directory is an error: a typo would otherwise drop
    the user's names in silence."""
    out = []
    for d in profile_dirs() if dirs is None else dirs:
        if not Path(d).is_dir():
            if d == _REPO_PROFILES:
                continue
            raise SpliceError("SPLICE_PROFILES names this, which is not a directory (profile directories, "
                              f"separated by {os.pathsep!r})", str(d))
        if d != _REPO_PROFILES and not os.access(d, os.R_OK | os.X_OK):   # glob saw nothing: names dropped
            raise SpliceError("SPLICE_PROFILES names this directory, which this user cannot read", str(d))
        out += [load_profile(f) for f in sorted(Path(d).glob("*.yaml"))]
    return out


def find_profile(entry: str, dirs=None, profiles=None) -> Optional[Profile]:
    """The first profile whose ``entries:`` globs match ``entry`` (``profiles``: already loaded)."""
    for prof in load_profiles(dirs) if profiles is None else profiles:
        if prof.matches(entry):
            return prof
    return None


def _fields_of(addr) -> list:
    """Pointer atoms of an address form: the weight image ``W`` or a ``param_N+off`` field."""
    return [a for a, v in (addr or ()) if v == 1 and (a == "W" or a.startswith("param"))]


def weight_evidence(k) -> tuple:
    """(proven, why): may the weight field be called the weight image ``W``?"""
    prov = k.provenance
    if not prov.weight_atom:
        return False, "no weight field"
    writes = [a.n for a in prov.accesses
              if a.kind in ("st", "red", "atom") and a.addr and coef(a.addr, "W") == 1]
    if writes:
        return False, f"{prov.weight_atom} is written (s{writes[0]}): not a read-only image"
    lane = [a.n for a in prov.accesses if a.kind == "ld" and a.addr and coef(a.addr, "W") == 1
            and any("laneid" in atom for atom, _v in a.addr)]
    if not lane:
        return False, f"no lane-indexed load reads {prov.weight_atom}"
    return True, f"only read, lane-indexed loads (s{lane[0]} …)"


def store_kinds(k) -> dict:
    """{statement index: 'plane-arena scatter' | 'global store' | 'local spill'} for every
    store-like access of the entry."""
    prov = k.provenance
    read = set()
    for a in prov.accesses:
        if a.kind in ("ld", "cp", "ldmatrix") or a.kind == "atom":
            read.update(_fields_of(a.addr))
    out = {}
    for a in prov.accesses:
        if a.kind not in ("st", "red", "atom"):
            continue
        if a.space == "local":
            out[a.pos] = LOCAL_SPILL
        elif a.space in ("global", "generic"):
            fs = _fields_of(a.addr)
            strided = any(v and atom not in ("", *fs) for atom, v in (a.addr or ()))
            written_only = bool(fs) and not (set(fs) & read)
            out[a.pos] = SCATTER if (written_only and strided and a.kind == "st") else GLOBAL_STORE
    return out


def field_names(k, profile: Optional[Profile]) -> dict:
    """{field: name} for the entry's parameter fields: the profile's names, and ``W`` for the
    weight field when its pattern is proven."""
    names = dict(profile.fields) if profile else {}
    if weight_evidence(k)[0]:
        names.setdefault(k.provenance.weight_atom, "W")
    return names
