"""On-disk cache of ptxas compiles: same PTX, same ptxas, same options -> same cubin.

Why: ``splice apply`` validates by compiling the unchanged original and the spliced module;
ptxas is ~90 % of its time and the original never changes between runs, and ``roundtrip
--sass`` / ``probe`` compile the same texts again and again.  ptxas is deterministic for a given
input, binary and command line, so its result can be looked up by content.

* Key: sha256 over the PTX text, the target arch, the ``-O`` level, the extra flags (``-v``
  among them: a compile without it has no resource usage to give back) and the ptxas binary's
  identity (resolved path, size, mtime and its ``--version`` text, asked once per cache
  object: a wrapper script's answer may change with the environment), so a new toolkit,
  another of the installed ptxas or a different flag never returns a stale cubin.
* Value: one file per key holding the cubin and ptxas' ``-v`` text (the resource usage and the
  warnings are re-parsed from it on a hit, so they are exactly what a fresh compile reports).
  Only successful compiles are stored: a failure must always show ptxas' own current message.
* Location: ``$SPLICE_CACHE``, else ``$XDG_CACHE_HOME/splice``, else ``~/.cache/splice``;
  entries live in its ``ptxas/`` folder.  Writes are atomic (temp file + ``os.replace``), so a
  concurrent reader sees a whole entry or none.  An entry that does not verify (truncated,
  overwritten, wrong magic, checksum mismatch) is a miss: it is removed and rewritten, never an
  error.
* Bound: after each store, the oldest entries (by mtime; a hit refreshes it, so this is LRU) are
  removed until the folder is under ``max_bytes`` (512 MB by default).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..errors import SpliceError
import stat
from . import sass
from .sass import Compiled, SassToolError, find_tool, parse_diagnostics, parse_resource_usage
from ..util import user_path

__all__ = ["CompileCache", "default_cache", "default_cache_dir"]

MAGIC = b"SPLICE-PTXAS-1\n"
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
_SUFFIX = ".entry"


def default_cache_dir(env=None) -> Path:
    """``$SPLICE_CACHE`` > ``$XDG_CACHE_HOME/splice`` > ``~/.cache/splice``."""
    env = os.environ if env is None else env
    if env.get("SPLICE_CACHE"):

        try:
            return user_path(env["SPLICE_CACHE"])
        except SpliceError as exc:
            raise SpliceError(f"SPLICE_CACHE: {exc.message}") from None
    xdg = env.get("XDG_CACHE_HOME") or ""
    # the XDG base directory spec: a relative path is invalid and ignored (it was taken from the
    # working directory: each directory splice ran in got a cache of its own, rel/splice/ptxas)
    base = xdg if os.path.isabs(xdg) else os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "splice"


def grammar_cache() -> "str | bool":
    """Where Lark keeps the built PTX grammar (``Lark(cache=...)``), or False for no cache.

    Lark's own default is ``$TMPDIR/.lark_cache_<user>_<sha>_<python>.tmp``, a name anyone can
    compute, in a directory anyone can write, and Lark *unpickles* that file (its first
    ``pickle.load`` runs before the checksum is compared): another user of a shared ``/tmp``
    could plant one and run code as whoever parses a module next.  Here the file lives in
    splice's cache folder, in a ``lark`` directory that must be this user's own and writable by
    no one else; a file there that is not this user's own, or that group or others may write, is
    removed before Lark sees it.  Anything else (the folder cannot be made, belongs to someone
    else) means no grammar cache: the grammar is built each run, slower but never loaded from a
    stranger's file."""
    try:
        d = default_cache_dir() / "lark"
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        up = os.lstat(d.parent)     # a folder others may write: they could swap `lark` for their own
        if not stat.S_ISDIR(up.st_mode) or not ours(up) or up.st_mode & 0o022:
            return False
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or not ours(st):
            return False
        if st.st_mode & 0o077:      # private: then the file's own mode (umask 002) does not matter
            os.chmod(d, 0o700)
        f = d / "grammar.pickle"
        try:
            st = os.lstat(f)
        except FileNotFoundError:
            return str(f)
        if not stat.S_ISREG(st.st_mode) or not ours(st):
            f.unlink()
        return str(f)
    except (OSError, SpliceError):
        return False


def default_cache(enabled: bool = True) -> Optional["CompileCache"]:
    """The cache commands use, or None with ``--no-cache`` (``enabled=False``)."""
    return CompileCache(default_cache_dir() / "ptxas") if enabled else None


@dataclass
class CompileCache:
    """A folder of ptxas results.  Plain data (a path and a bound), so it can be handed to
    worker processes; the ptxas identity is memoised per instance, never process-wide."""

    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    _identity: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        self.root = Path(self.root)

    # ---------------------------------------------------------------------------------
    def key(self, text: str, ptxas: str, arch: str, oflag: Sequence[str], extra: Sequence[str]) -> str:
        h = hashlib.sha256()
        head = [1, self.ptxas_identity(ptxas), arch, list(oflag), list(extra)]
        h.update(json.dumps(head).encode())
        h.update(b"\0")
        h.update(text.encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def ptxas_identity(self, ptxas: str) -> list:
        """Resolved path, size, mtime and ``--version`` text of the ptxas binary."""
        real = os.path.realpath(ptxas)
        st = os.stat(real)
        stamp = (real, st.st_size, st.st_mtime_ns)
        ident = self._identity.get(stamp)
        if ident is None:
            try:
                out = sass.run_tool([ptxas, "--version"], timeout=60)   # a SIGTERM stops it too
                version = (out.stdout + out.stderr).decode("utf-8", "replace").strip()
            except (OSError, subprocess.TimeoutExpired) as exc:
                version = f"unknown ({exc})"
            ident = [*stamp, version]
            self._identity[stamp] = ident
        return ident

    def warm(self) -> None:
        """Look ptxas' identity up now, before this object is copied into worker processes (each
        copy would otherwise run ``ptxas --version`` once per task).  A missing ptxas is left for
        the compile to report."""
        try:
            ptxas = find_tool("ptxas")
            if ptxas is not None:
                self.ptxas_identity(ptxas)
        except (SassToolError, OSError):
            pass

    def path(self, key: str) -> Path:
        return self.root / key[:2] / (key + _SUFFIX)

    # ---------------------------------------------------------------------------------
    def get(self, key: str, display: str):
        """The cached :class:`~splice.ptx.sass.Compiled` for ``key`` (diagnostics named after
        ``display``), or None.  A damaged entry is removed and reported as a miss."""
        p = self.path(key)
        blob = _read_entry(p, self.max_bytes)
        if blob is None:
            return None
        entry = _decode(blob, key)
        if entry is None:
            _unlink(p)
            return None
        try:
            os.utime(p)  # LRU: a hit is a use
        except OSError:
            pass
        return _compiled(entry, display)

    def put(self, key: str, compiled) -> None:
        """Store a successful compile; never fails the caller (a read-only or full disk only
        costs the next run a compile)."""
        src = compiled.command[-3] if len(compiled.command) >= 3 else ""
        head = {"key": key, "arch": compiled.arch, "stderr": compiled.stderr, "src": src,
                "command": list(compiled.command), "cubin_sha256": hashlib.sha256(compiled.cubin).hexdigest(),
                "cubin_len": len(compiled.cubin)}
        hb = json.dumps(head).encode()
        blob = MAGIC + len(hb).to_bytes(8, "big") + hb + compiled.cubin
        p = self.path(key)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=p.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(blob)
                os.replace(tmp, p)
            except BaseException:
                _unlink(Path(tmp))
                raise
        except OSError:
            return
        self.evict()

    def evict(self) -> int:
        """Remove the least recently used entries until the folder holds at most
        ``max_bytes``; returns how many were removed."""
        entries = []
        total = 0
        for sub in _scandir(self.root):
            if not sub.is_dir():
                continue
            for e in _scandir(sub.path):
                if e.name.endswith(_SUFFIX):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
                    total += st.st_size
        removed = 0
        if total <= self.max_bytes:
            return 0
        for _mtime, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if _unlink(Path(path)):
                removed += 1
            total -= size
        return removed


def _read_entry(p: Path, limit: int) -> Optional[bytes]:
    """The bytes of a cache entry, or None when there is none to trust: only a regular file no
    larger than the cache itself is read (a FIFO or device put in its place must not block or
    flood the command; it is a miss, and the next store replaces it)."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or not ours(st):
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def ours(st: os.stat_result) -> bool:
    """An entry this user wrote.  The checksum in an entry proves it whole, not who made it:
    anyone who can write into a shared ``$SPLICE_CACHE`` (``/tmp/cache``) can compute the key of
    a module and plant a well-formed entry with a cubin of their own, which the probe would then
    load onto the GPU as the module under test.  Another user's entry is a miss, recompiled and
    replaced by this user's own."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or st.st_uid == geteuid()


#: what each header field of an entry must be: an entry written by another version (or by hand)
#: with the right checksum but a field missing or of another type is a miss, not a crash
_HEAD_TYPES = {"key": str, "arch": str, "stderr": str, "src": str, "command": list, "cubin_sha256": str,
               "cubin_len": int}
ELF_MAGIC = b"\x7fELF"


def _decode(blob: bytes, key: str) -> Optional[dict]:
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 8:
        return None
    at = len(MAGIC)
    n = int.from_bytes(blob[at:at + 8], "big")
    try:
        head = json.loads(blob[at + 8:at + 8 + n])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(head, dict) or head.get("key") != key:
        return None
    if any(not isinstance(head.get(k), t) or isinstance(head.get(k), bool) for k, t in _HEAD_TYPES.items()):
        return None
    if not all(isinstance(c, str) for c in head["command"]):
        return None
    cubin = blob[at + 8 + n:]
    if len(cubin) != head.get("cubin_len") or hashlib.sha256(cubin).hexdigest() != head.get("cubin_sha256"):
        return None
    if not cubin.startswith(ELF_MAGIC):      # a cubin is an ELF image: anything else was not ptxas' output
        return None
    head["cubin"] = cubin
    return head


def _compiled(entry: dict, display: str):

    stderr = entry["stderr"]
    rename = {entry["src"]: display, "input.ptx": display}
    return Compiled(cubin=entry["cubin"], stderr=stderr, resources=parse_resource_usage(stderr),
                    arch=entry["arch"], command=tuple(entry["command"]),
                    diagnostics=tuple(parse_diagnostics(stderr, rename)))


def _scandir(path):
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _unlink(p: Path) -> bool:
    try:
        p.unlink()
        return True
    except OSError:
        return False
