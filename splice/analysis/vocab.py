"""Vocabulary by evidence: neutral names by default, the user's words only from a profile whose
rules the kernel meets.

The stand-ins' notes speak of the weight image ``W``, the plane arena and its scatter, tid.z
slots and named epilogues (softmax, requantise …).  On a third-party kernel those words would
mislabel a C pointer read for ``β·C`` as "weights" or a local array as a spill.  So every
sentence splice writes uses neutral names (a parameter field is ``param_0+96``; stores are
"global stores"; an epilogue is named by what its code does), and a **profile**
(``profiles/*.yaml``, written by the user for a family of kernels) may ask for word sets
(``vocabulary:``), each used only where its rule holds on the kernel (``WORD_SETS``):

* ``weight-image``: ``W``, "weight image", weight/bias bytes, weight and table loads — the
  field the analysis picked (``Provenance.weight_atom``) is *only read* (no store, reduction or
  atomic goes through it) and a load reads it through the lane-indexed pattern (a ``laneid``
  term in its address);
* ``plane-arena-scatter``: a global ``st`` into a *written-only* buffer (no load reads the
  pointer field its address hangs off) at a lane- or thread-dependent (strided) address;
* ``tid.z-slot``: "slot stride" for the ``tid.z`` coefficient of a phase's operand loads;
* ``dldn-epilogue-names``: the DLDN notes' epilogue names (next-B loads, packs, requantise,
  softmax …), each feature kept only where its op signature holds (``epilogues._signatures``);
* ``dldn-conventions``: the notes' conventions sentence on 4-line ``mma.sync`` statements,
  only when the entry has an ``mma`` statement written over several lines.

A profile also names parameter fields (``fields: {param_0+40: weights}``).  ``find_profile``
picks the first profile whose ``entries:`` globs match the entry, from ``$SPLICE_PROFILES``
(``os.pathsep``-separated directories), then the repository's ``profiles/``.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..util import read_utf8
from ..yamlsafe import DEFAULT_LIMITS, YMap, load_yaml_marked
from .provenance import CONST, coef, name_weight, render

#: the store words: the profile's scatter, and the neutral ones by state space
SCATTER, GLOBAL_STORE, LOCAL_STORE = "plane-arena scatter", "global store", "local-array store"
#: word sets a profile may ask for (``vocabulary:``) -> the rule the kernel must meet
WORD_SETS = {
    "weight-image": "the weight field is only read, and read through lane-indexed loads",
    "plane-arena-scatter": "a strided st.global into a buffer no load reads (per store)",
    "tid.z-slot": "a phase's operand loads have a tid.z term (per phase)",
    "dldn-epilogue-names": "each epilogue feature's op signature holds (per epilogue)",
    "dldn-conventions": "the entry has an mma statement written over several lines",
}
_REPO_PROFILES = Path(__file__).resolve().parents[2] / "profiles"


@dataclass(frozen=True)
class Profile:
    path: str
    entries: tuple
    fields: dict = field(default_factory=dict)    # 'param_0+40' -> name
    vocabulary: tuple = ()                        # word sets asked for (WORD_SETS)

    def matches(self, entry: str) -> bool:
        return any(fnmatch.fnmatchcase(entry, g) for g in self.entries)


def load_profile(path) -> Profile:
    """One profile file, read like every user YAML (bounded, no alias bombs, named positions)
    and checked key by key: a glob that is not a string, or a field name that is a list, is the
    user's mistake at its line, never a traceback or a silently stringified ``['a']``."""
    path = str(path)
    try:
        text = read_utf8(path, "a profile is UTF-8 YAML", DEFAULT_LIMITS.max_bytes)
    except FileNotFoundError:
        raise SpliceError("profile not found", path) from None
    data = load_yaml_marked(text, path)
    if not isinstance(data, YMap) or not data:
        raise SpliceError("a profile is a mapping with entries: [globs] and fields: {field: name}", path, 1)
    for k in data:
        if k not in ("entries", "fields", "vocabulary"):
            raise SpliceError(f"unknown key {k!r} (a profile has entries:, fields: and vocabulary:)",
                              path, *data.at(k))
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
    return Profile(path, tuple(ents), dict(fields), _word_sets(data, path))


def _word_sets(data, path) -> tuple:
    """The profile's ``vocabulary:``: a list of ``WORD_SETS`` names (an unknown one is the
    user's mistake at its line: a typo would drop their words in silence)."""
    words = data.get("vocabulary") or []
    if isinstance(words, str):
        words = [words]
    if not isinstance(words, list):
        raise SpliceError(f"vocabulary: expected a list of word sets ({', '.join(WORD_SETS)})",
                          path, *data.vat("vocabulary"))
    for i, wset in enumerate(words):
        if wset not in WORD_SETS:
            where = words.vat(i) if hasattr(words, "vat") else data.vat("vocabulary")
            raise SpliceError(f"vocabulary: unknown word set {wset!r} (known: {', '.join(WORD_SETS)})",
                              path, *where)
    return tuple(words)


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


def field_types(k) -> dict:
    """{field: '.u64', …} as the entry's ``ld.param`` reads them, the weight field also under
    ``W`` (computed once per kernel)."""
    def build(k):
        t = dict(k.provenance.field_types())
        wf = k.provenance.weight_atom
        if wf and wf in t:
            t["W"] = t[wf]
        return t
    return k.fact("vocab.field_types", build)


def pointer_fields(addr, types: dict) -> list:
    """The parameter fields an address hangs off: atoms with coefficient 1 that an
    ``ld.param`` reads as a 64-bit value (a pointer).  A 32-bit stride field scaled into the
    address (``2·param_11+0``, or ``param_11+0`` itself) is an offset, never the buffer (the
    CUTLASS GEMM's stores were said to go into its C stride)."""
    return [a for a, v in (addr or ()) if v == 1 and types.get(a, "").endswith("64")
            and (a == "W" or a.startswith("param"))]


@dataclass(frozen=True)
class StoreFact:
    """What one store-like access of the entry is, from its address alone."""
    pos: int
    kind: str               # 'st', 'red', 'atom'
    space: str
    fields: tuple           # pointer_fields of its address
    strided: bool           # a lane-, thread- or index-dependent term beside the pointer
    written_only: bool      # no load, copy or atomic reads any of its pointer fields

    @property
    def scatter(self) -> bool:
        """The plane-arena-scatter rule (``WORD_SETS``)."""
        return (self.kind == "st" and self.space in ("global", "generic") and self.strided
                and self.written_only)

    @property
    def neutral(self) -> str:
        return {"local": LOCAL_STORE}.get(self.space, f"{self.space} store")


def store_facts(k) -> dict:
    """{statement index: StoreFact} for every store, reduction and atomic of the entry,
    computed once per kernel (``Kernel.fact``)."""
    return k.fact("vocab.store_facts", _store_facts)


def _store_facts(k) -> dict:
    prov = k.provenance
    types = field_types(k)
    read: set = set()
    for a in prov.accesses:
        if a.kind in ("ld", "cp", "ldmatrix", "atom"):
            read.update(pointer_fields(a.addr, types))
    out = {}
    for a in prov.accesses:
        if a.kind not in ("st", "red", "atom"):
            continue
        fs = tuple(pointer_fields(a.addr, types))
        strided = any(v and atom not in (CONST, *fs) for atom, v in (a.addr or ()))
        out[a.pos] = StoreFact(a.pos, a.kind, a.space, fs, strided, bool(fs) and not set(fs) & read)
    return out


def weight_evidence(k) -> tuple:
    """(proven, why): may the weight field be called the weight image ``W``?  (once per kernel)"""
    return k.fact("vocab.weight_evidence", _weight_evidence)


def _weight_evidence(k) -> tuple:
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


@dataclass(frozen=True)
class Vocabulary:
    """The words one kernel's report may use: the profile's word sets whose rules hold."""
    asked: frozenset                # word sets the profile asks for
    weight_field: Optional[str]     # the field provenance calls W
    weight: bool                    # 'weight-image' asked for and proven
    weight_why: str
    profile: Optional[str] = None

    @property
    def w(self) -> Optional[str]:
        """How the weight field's atom is written: ``W`` (None) only where granted."""
        return None if self.weight or not self.weight_field else self.weight_field

    def render(self, addr) -> str:
        return render(addr, self.w)

    def text(self, text: str) -> str:
        """A rendered value (an ABI value, a provenance text) with the weight atom named."""
        return name_weight(text, self.w)

    def has(self, wset: str) -> bool:
        return wset in self.asked

    def store_word(self, fact: StoreFact) -> str:
        if self.has("plane-arena-scatter") and fact.scatter:
            return SCATTER
        return fact.neutral


def vocabulary(k, profile: Optional[Profile] = None) -> Vocabulary:
    """The kernel's vocabulary under ``profile`` (None: no profile, neutral words only)."""
    asked = frozenset(profile.vocabulary) if profile else frozenset()
    proven, why = weight_evidence(k)
    return Vocabulary(asked, k.provenance.weight_atom, proven and "weight-image" in asked, why,
                      profile.path if profile else None)


def store_kinds(k, vocab: Optional[Vocabulary] = None) -> dict:
    """{statement index: store word} for every store-like access of the entry: the neutral
    word by state space, or the profile's scatter where its rule holds."""
    vocab = vocab or vocabulary(k)
    return {pos: vocab.store_word(f) for pos, f in store_facts(k).items()}


def field_names(k, profile: Optional[Profile]) -> dict:
    """{field: name} for the entry's parameter fields: the profile's names, and ``W`` for the
    weight field when the profile asks for the weight-image words and their rule holds."""
    names = dict(profile.fields) if profile else {}
    if vocabulary(k, profile).weight:
        names.setdefault(k.provenance.weight_atom, "W")
    return names
