"""Where a spec's value sits and what it may be: the error every spec check raises (naming the
file, the line:col of the key and its path), the context that finds those positions, and the
bounds a spec's numbers are held to before anything is allocated."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ...errors import SpliceError
from ...util import user_path

#: CUDA's gridDim limits (x, y, z) and the largest buffer a spec may declare (1 TiB: above any
#: device's memory, so only a typo reaches it)
GRID_MAX = ((1 << 31) - 1, 65535, 65535)
MAX_BUFFER_BYTES = 1 << 40
#: threads a block may have on every GPU since sm_20 (maxThreadsPerBlock)
MAX_BLOCK_THREADS = 1024
#: most dimensions of a buffer's ``shape:`` (numpy 1's limit; numpy 2's is 64)
MAX_DIMS = 32
#: largest ``align:`` of a buffer or table (the device allocates align - 1 bytes more)
MAX_ALIGN = 1 << 21
ROLES = ("input", "output", "inout")


class SpecError(SpliceError, ValueError):
    """A probe spec is malformed.  ``key`` is the YAML path (``params[2].dtype``)."""
    def __init__(self, message: str, path: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, key: str = "", detail: str = ""):
        self.key = key
        super().__init__(f"{key}: {message}" if key else message, path, line, column, detail)


class Ctx:
    """Where a value sits: the key path and the YMap/YList that holds it (for line:col).
    ``base`` is the directory a spec's relative file names are read against."""
    def __init__(self, source: str, base: Optional[Path] = None):
        self.source = source
        self.base = base if base is not None else Path(source).parent

    def err(self, where: str, msg: str, holder=None, key=None, detail: str = "") -> SpecError:
        line = col = None
        if holder is not None:
            pos = None
            if hasattr(holder, "vat") and key is not None and key in holder:
                pos = holder.vat(key)
            elif hasattr(holder, "item_at") and isinstance(key, int) and key < len(holder.item_at):
                pos = holder.item_at[key]
            elif hasattr(holder, "line"):
                pos = (holder.line, holder.column)
            if pos:
                line, col = pos
        return SpecError(msg, self.source, line, col, key=where, detail=detail)

    def keys(self, d: dict, allowed: set, where: str):
        for k in d:
            if k not in allowed:
                line = col = None
                if hasattr(d, "at"):
                    line, col = d.at(k)
                raise SpecError(f"unknown key {k!r} (known: {', '.join(sorted(allowed))})",
                                self.source, line, col, key=f"{where}.{k}" if where else str(k))

    def need(self, d, key: str, where: str):
        if not isinstance(d, dict):
            raise self.err(where, "expected a mapping", d)
        if key not in d:
            raise self.err(f"{where}.{key}" if where else key, "missing", d)
        return d[key]

    def int(self, d, key, where, lo: Optional[int] = 0, default=None) -> int:
        v = d.get(key, default) if isinstance(d, dict) else d
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(where, f"expected an integer, got {v!r}", d, key)
        if lo is not None and v < lo:
            raise self.err(where, f"{v} is below {lo}", d, key)
        return v

    def num(self, v, where, holder=None, key=None) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.err(where, f"expected a number, got {v!r}", holder, key)
        try:
            return float(v)
        except OverflowError:    # an integer of 400 digits: no float holds it (was a traceback)
            raise self.err(where, f"{str(v)[:20]}... ({len(str(v))} digits): too large for a float", holder,
                           key) from None

    def dim3(self, d, key, where) -> tuple:
        v = d[key]
        if isinstance(v, int) and not isinstance(v, bool):
            v = [v]
        if not isinstance(v, list) or not 1 <= len(v) <= 3:
            raise self.err(where, "expected a list of 1..3 integers", d, key)
        vals = []
        for i, x in enumerate(v):
            if isinstance(x, bool) or not isinstance(x, int):
                raise self.err(f"{where}[{i}]", f"expected an integer, got {x!r}", d, key)
            if x < 1:
                raise self.err(f"{where}[{i}]", f"{x} is below 1", d, key)
            vals.append(x)
        return tuple(vals + [1] * (3 - len(vals)))

    def pair(self, d, key, where) -> tuple:
        v = d[key]
        if not isinstance(v, list) or len(v) != 2:
            raise self.err(f"{where}.{key}", "expected [low, high]", d, key)
        return (self.num(v[0], f"{where}.{key}[0]", d, key), self.num(v[1], f"{where}.{key}[1]", d, key))

    def local(self, spelled: str, where: str, holder, key) -> Path:
        """A file name the spec spells: ``~`` expanded, a URL or an unknown user refused at its
        key, as in a recipe (``util.user_path``)."""
        try:
            return user_path(spelled)
        except SpliceError as exc:
            raise self.err(where, exc.message, holder, key) from None

    def role(self, d, where: str, default: str) -> str:
        role = d.get("role", default)
        if role not in ROLES:
            raise self.err(f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}", d, "role")
        return role


def position(d) -> tuple:
    """(line, column) of a mapping read with positions, (0, 0) for a plain dict."""
    return getattr(d, "line", 0), getattr(d, "column", 0)
