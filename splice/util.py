"""Small shared functions: reading inputs byte for byte, writing outputs that never destroy anything.

Bytes survive: every module, recipe and native file is read as UTF-8 with ``surrogateescape``
(a Latin-1 comment is carried as lone surrogates, not an error) and ``newline=''`` (CRLF stays
CRLF: no universal-newline translation); outputs are encoded back the same way, so every byte
outside a cut is the original's.

Outputs never destroy anything: :func:`write_atomic` refuses an output that is one of the
command's inputs (same file after symlinks and hard links), writes a regular file through a
temporary file beside it and ``os.replace`` (a reader never sees half a file), writes *through*
what is not a regular file (``-o /dev/null``, a FIFO: the user asked for it, and swapping the
system's /dev/null for a regular file would be a disaster), and follows a symlink to write its
target.  Every failure is a :class:`~splice.errors.SpliceError` naming the output as the user
spelled it.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from pathlib import Path
from typing import Iterable, Iterator, Union

from .errors import SpliceError
import gc
import hashlib
import select
import time
import tempfile

ENCODING = "utf-8"
ERRORS = "surrogateescape"

PathLike = Union[str, "os.PathLike[str]"]


#: the most an input may hold.  A regular file larger than this is refused before it is read,
#: a pipe is read up to it: an input is never an unbounded read (``/dev/zero``, ``yes |``).
MAX_INPUT_BYTES = 1 << 30


def read_input(path: PathLike, limit: "int | None" = None) -> bytes:
    """The bytes of an input file, read with a bound.

    A regular file is refused when it is larger than ``limit`` (before a byte is read); a pipe or
    FIFO (``<(gen)``, ``/dev/stdin`` from a pipe) is read up to ``limit``; a FIFO nobody writes is
    refused after :data:`FIFO_WAIT_S`, not a hang (:func:`_await_writer`).  A device
    (``/dev/zero``, ``/dev/urandom``, a terminal), a socket or a directory is not an input file:
    reading one would never end, or block on a user who is not typing.  ``limit``: default
    :data:`MAX_INPUT_BYTES`."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:     # a socket (or a FIFO opened the other way): not a file
            raise SpliceError("not a regular file (a socket?): splice reads files and pipes", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        kind = not_a_file(st.st_mode)
        if kind:
            raise SpliceError(f"is {kind}, not a file: splice reads files and pipes", str(path))
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise SpliceError(f"{st.st_size} bytes: larger than the {limit} bytes an input may hold", str(path))
        first = _await_writer(fd, path) if stat.S_ISFIFO(st.st_mode) else b""
        os.set_blocking(fd, True)
        chunks, total = [first], len(first)
        while True:
            chunk = os.read(fd, min(max(1 << 20, st.st_size + 1), limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise SpliceError(f"more than the {limit} bytes an input may hold (an endless pipe?)", str(path))
    finally:
        os.close(fd)
    return b"".join(chunks)


#: how long a FIFO that no process has opened for writing is waited for (``mkfifo p; splice
#: stats p & gen > p``); past it the FIFO is refused instead of blocking for ever
FIFO_WAIT_S = 10.0


def _await_writer(fd: int, path: PathLike) -> bytes:
    """Wait until the FIFO on ``fd`` (open without blocking) has a writer; returns the bytes
    read while finding out.

    A writer that is already there (``<(gen)``: the shell opened the pipe first) makes a
    non-blocking read fail with EAGAIN: then the read may block as long as the writer takes, as
    ``cat`` would.  Without one the read sees end of file, and the FIFO is polled for
    :data:`FIFO_WAIT_S` (Linux reports nothing until a writer connects)."""
    try:
        first = os.read(fd, 1)
    except BlockingIOError:
        return b""
    if first:
        return first
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    if not poller.poll(int(FIFO_WAIT_S * 1000)):
        raise SpliceError(f"a FIFO that no process writes (waited {FIFO_WAIT_S:g} s): start its writer "
                          "first, or give splice a file", str(path))
    return b""


def not_a_file(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return ""


def read_text(path: PathLike, limit: "int | None" = None) -> str:
    """The text of an input file, every byte kept: UTF-8 with surrogateescape, no newline
    translation (so ``encode(read_text(p)) == p.read_bytes()``); bounded (:func:`read_input`)."""
    return read_input(path, limit).decode(ENCODING, ERRORS)


def read_utf8(path: PathLike, what: str, limit: "int | None" = None) -> str:
    """The text of a file that must be UTF-8 (a recipe, a spec: YAML refuses lone surrogates),
    newlines kept; a non-UTF-8 byte is a :class:`SpliceError` at its line and column."""
    raw = read_input(path, limit)
    try:
        return raw.decode(ENCODING)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpliceError(f"byte 0x{raw[exc.start]:02x} is not UTF-8: {what}{encoding_advice(raw[:64])}",
                          str(path), line, col) from None


def wide_encoding(head: bytes) -> str:
    """``UTF-16``/``UTF-32`` when ``head`` (a file's first bytes) is text in one of them (a byte
    order mark, or a NUL beside every ASCII byte), else ''.  An editor or PowerShell's ``>``
    saves UTF-16: read as UTF-8 it was "unexpected character '\\udcff'" at 1:1, or "byte 0xff is
    not UTF-8", which names no cause."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head = head[:64]
    if len(head) >= 8:
        for width, name in ((4, "UTF-32"), (2, "UTF-16")):
            for at in range(width):   # the ASCII byte's place in each code unit (LE or BE)
                if all(b == 0 for k, b in enumerate(head) if k % width != at) and \
                        all(b != 0 for k, b in enumerate(head) if k % width == at):
                    return name
    return ""


def encoding_advice(head: bytes) -> str:
    """``'; the file is UTF-16 text …'`` for :func:`wide_encoding`'s cases, else ''."""
    name = wide_encoding(head)
    if not name:
        return ""
    return f"; the file is {name} text, splice reads UTF-8 (convert it: iconv -f {name} -t UTF-8)"


def encode(text: str) -> bytes:
    """The bytes of ``text`` as :func:`read_text` read them."""
    return text.encode(ENCODING, ERRORS)


def write_stdout(text: str) -> None:
    """Write module text to stdout byte for byte (no newline translation, no encode error on
    the surrogates a non-UTF-8 input carries)."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    view = memoryview(encode(text))
    while view:   # a raw (unbuffered) stream may write part and return the count: write the rest
        n = out.write(view)
        if not n:
            raise OSError(errno.EIO, "standard output accepts no more bytes")
        view = view[n:]
    out.flush()


#: the most bytes of a user's name (an entry, a spec's name) that splice puts into a file name
#: it makes up: a mangled C++ kernel name runs to hundreds of characters, and a file name to 255
#: bytes (``spec --pressure`` of a CUTLASS kernel failed with "file name too long")
NAME_PART_BYTES = 96


def name_part(text: str) -> str:
    """``text`` as part of a file name splice makes up: as it is when short enough, else its
    first characters and a hash of the whole (two long names sharing a prefix stay apart)."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) <= NAME_PART_BYTES:
        return text

    head = raw[:NAME_PART_BYTES - 13].decode("utf-8", "ignore")
    return f"{head}-{hashlib.sha256(raw).hexdigest()[:12]}"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def writes_stdout(path: PathLike) -> bool:
    """Whether writing ``path`` writes where standard output goes — ``/dev/stdout``,
    ``/dev/fd/1``, or the very file or pipe stdout is redirected to — when that is a file, a
    pipe or a FIFO (a terminal only shows both; the null device keeps neither)."""
    try:
        a = os.stat(path)
        b = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and not stat.S_ISCHR(b.st_mode)


def refuse_json_on_stdout(what: str, value: PathLike) -> None:
    """Refuse an output that goes where ``--json`` prints its document (``-o /dev/stdout
    --json``, ``--png /dev/fd/1 --json``, ``-o out --json > out``, a recipe's ``output:
    /dev/stdout``): the two were one stream no JSON reader could read, exit 0."""
    if writes_stdout(value):
        raise SpliceError(f"{what} writes to standard output, where --json prints its document: the two "
                          "would be one unreadable stream; drop --json or name another output", os.fsdecode(value))


def home_dir(path: PathLike) -> Path:
    """The directory a YAML file's relative names (``module:``, ``native:``, ``output:``,
    ``ptx:``) are taken from: its own, or the working directory for a stream — a name under
    ``/dev`` or ``/proc`` (``/dev/stdin``, ``<(gen)``'s ``/dev/fd/63``, ``/proc/self/fd/0``)
    or anything but a regular file.  ``splice apply /dev/stdin < r.yaml`` took ``/dev`` for the
    recipe's directory: its natives were looked for there and, as root, ``output: out.ptx``
    was written into ``/dev``."""
    parent = Path(os.path.abspath(path)).parent
    if parent.parts[1:2] in (("dev",), ("proc",)):
        return Path.cwd()
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True      # the reader says what is wrong with it
    return Path(path).parent if regular else Path.cwd()


def user_path(spelled: str, where: "PathLike | None" = None, line=None, column=None) -> Path:
    """A file name the user wrote (a recipe's ``module:``/``native:``, ``$SPLICE_CACHE``), ``~``
    and ``~user`` expanded.  ``Path.expanduser`` raised ``RuntimeError`` (a traceback) for an
    unknown user or a ``~`` without a home; ``os.path.expanduser`` would leave ``~nobody/x`` as a
    relative name that a corpus search then finds by its base name.  Both are errors at the
    name's place, as is a URL: splice reads local files only, and ``http://h/x.ptx`` is the
    relative path ``http:/h/x.ptx``."""
    if _URL.match(spelled):
        raise SpliceError(f"{spelled!r} is a URL: splice reads local files only (download it first)",
                          where, line, column)
    if spelled.startswith("~"):
        out = os.path.expanduser(spelled)
        if out.startswith("~"):
            user = spelled[1:].split("/", 1)[0]
            why = f"no user {user!r} on this system" if user else "no home directory ($HOME is not set)"
            raise SpliceError(f"{spelled!r}: cannot expand {spelled.split('/', 1)[0]!r}: {why}", where, line, column)
        spelled = out
    return Path(spelled)


def _same_file(a: PathLike, b: PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they would resolve
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: PathLike, inputs: Iterable[PathLike] = ()) -> None:
    """Refuse an output that is one of the command's inputs (module, recipe, native file, probe
    spec), whatever the spelling: a symlink or a hard link to an input is the input."""
    for inp in inputs:
        if inp is not None and _same_file(path, inp):
            raise SpliceError(f"refusing to write the output onto an input of the command ({inp}); "
                              "nothing was written: choose another output", str(path))


def _fail(path: PathLike, what: str, exc: OSError) -> SpliceError:
    return SpliceError(f"cannot write the output: {what}{exc.strerror or exc}", str(path))


DIRECTORY_NAME = "cannot write the output: the name ends in / (a directory); name a file"


def names_a_directory(spelled: str) -> bool:
    """``out/``, ``x.ptx/.``, ``..``: a name that can only be a directory, as the shell's
    ``> out/`` says.  Check it on the user's spelling: ``Path("out/")`` is ``out``, and writing
    a file ``out`` is not what was asked."""
    return spelled.endswith(("/", "/.", "/..")) or spelled in (".", "..")


def write_atomic(path: PathLike, data: Union[str, bytes], inputs: Iterable[PathLike] = ()) -> Path:
    """Write ``data`` (str or bytes) to ``path`` without ever destroying anything.

    ``inputs`` are the command's input files: an output resolving to one of them is refused
    before anything is written.  A regular file (or a new one) is replaced atomically through a
    temporary file in the target's own directory, keeping the replaced file's permissions (a new
    file gets the umask's); a symlink's target is the file written; a FIFO, a terminal or the
    null device is written through, never replaced; any other device is refused."""
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
    elif isinstance(data, str):
        raw = encode(data)
    else:
        raise TypeError(f"write_atomic writes str or bytes, not {type(data).__name__}")
    check_output(path, inputs)
    if os.fspath(path) == "-":   # the usual spelling of stdout: a file named '-' is not what was meant
        raise SpliceError("cannot write the output: '-' would be a file named '-', not standard output; "
                          "write -o /dev/stdout (or ./- for a file of that name)", "-")
    if names_a_directory(os.fspath(path)):
        raise SpliceError(DIRECTORY_NAME, str(path))
    fd = _descriptor(path)
    if fd is not None:
        return _write_descriptor(path, fd, raw)
    _refuse_planted_link(path)
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a symlink loop, a name too long, a component that is a file
        raise _fail(path, "", exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise SpliceError("cannot write the output: it is a directory", str(path))
    if st is not None and stat.S_ISBLK(st.st_mode):   # a disk or partition: written through, its data is gone
        raise SpliceError("cannot write the output: it is a block device (a disk or partition); "
                          "splice writes files, terminals and pipes only", str(path))
    if st is not None and stat.S_ISCHR(st.st_mode) and not _writable_device(st):
        raise SpliceError("cannot write the output: it is a character device that is neither a terminal nor "
                          f"{os.devnull} (writing {target} would lose the output or feed a device); name a file",
                          str(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        return _write_through(path, target, raw)
    if st is not None and not os.access(target, os.W_OK):   # `chmod a-w out.ptx`: the user protected it
        raise SpliceError("cannot write the output: permission denied (the file is read-only: splice "
                          "replaces only a file this user may write, as `>` would)", str(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail(path, "cannot create its directory: ", exc) from None
    _replace(path, target, raw, st)
    return Path(path)


def _refuse_planted_link(path: PathLike) -> None:
    """An output that is a symlink in a sticky directory others may write (``/tmp``), owned by
    neither this user nor the directory's owner, is not followed: another user can plant
    ``/tmp/out.ptx -> ~/.bashrc``.  Linux refuses to follow such a link on ``open()``
    (``fs.protected_symlinks``), but the output is written through the path the link resolves to,
    which bypassed that check: the victim's file was replaced by the module."""
    spelled = os.path.abspath(path)
    here = os.sep
    for part in spelled.split(os.sep)[1:]:     # each component as spelled: /tmp/dir/out.ptx too
        parent, here = here, os.path.join(here, part)
        try:
            link = os.lstat(here)
            if not stat.S_ISLNK(link.st_mode):
                continue
            pst = os.stat(parent)
        except OSError:
            return
        shared = pst.st_mode & stat.S_ISVTX and pst.st_mode & stat.S_IWOTH
        if shared and link.st_uid not in (os.geteuid(), pst.st_uid):
            raise SpliceError(f"cannot write the output: {here} is a symbolic link another user made in a "
                              "shared directory (sticky, writable by all); splice does not follow it", str(path))


#: Linux terminal devices: virtual consoles and serial lines (4), ``/dev/tty`` and
#: ``/dev/console`` (5, but 5:2 ``/dev/ptmx``, which makes a new pseudo-terminal nobody reads)
#: and pseudo-terminal ends (136-143, ``/dev/pts/N``)
_TTY_MAJORS = frozenset({4, 5, *range(136, 144)})


def _writable_device(st: os.stat_result) -> bool:
    """A character device an output may be written through: the null device (``-o /dev/null``:
    a run for its status or its report only) or a terminal.  Any other (``/dev/zero`` and
    ``/dev/urandom`` swallow the output, ``/dev/full`` fails, ``/dev/kmsg``, ``/dev/mem`` or a
    GPU's node act on what they are given) is refused before it is opened: opening some devices
    acts too (a watchdog starts its countdown).  Decided from the device number, which needs no
    ``open()``."""
    try:
        if st.st_rdev == os.stat(os.devnull).st_rdev:
            return True
    except OSError:
        pass
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    return sys.platform.startswith("linux") and major in _TTY_MAJORS and (major, minor) != (5, 2)


_FD_LINK = re.compile(r"^/(?:proc/(?:self|thread-self|(?P<pid>\d+))|dev)/fd/(?P<fd>\d+)$")


def _descriptor(path: PathLike) -> "int | None":
    """The open file descriptor of this process that ``path`` names (``/dev/stdout``,
    ``/dev/fd/3``, ``/proc/self/fd/1``, or a symlink to one), or None.  Such a path is the
    shell's redirection (``-o /dev/stdout >> log``): replacing the file it resolves to would
    destroy what the redirection appends to, so it is written through the descriptor."""
    p = os.path.abspath(os.fspath(path))
    for _hop in range(40):
        mt = _FD_LINK.match(p)
        if mt and mt.group("pid") in (None, str(os.getpid())):
            return int(mt.group("fd"))
        try:
            nxt = os.readlink(p)
        except OSError:     # not a symlink (or not there): a plain path
            return None
        p = os.path.normpath(os.path.join(os.path.dirname(p), nxt))
    return None


def _write_descriptor(path: PathLike, fd: int, raw: bytes) -> Path:
    """Write ``raw`` at the descriptor's own offset, with its own flags (O_APPEND stays
    appending), as a program writing to its stdout does; nothing is truncated or replaced."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise _fail(path, "", exc) from None
    return Path(path)


def _write_through(path: PathLike, target: Path, raw: bytes) -> Path:
    """A character device, FIFO or socket the user named: open it and write, as a shell
    redirection would."""
    try:
        fd = _open_for_writing(path, target)
        with open(fd, "wb") as fh:
            fh.write(raw)
    except OSError as exc:
        raise _fail(path, "", exc) from None
    return Path(path)


def _open_for_writing(path: PathLike, target: Path) -> int:
    """A blocking descriptor on ``target``; a FIFO no process reads is waited for
    :data:`FIFO_WAIT_S`, then refused (``open()`` would block for ever)."""
    if not stat.S_ISFIFO(os.stat(target).st_mode):
        return os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    deadline = time.monotonic() + FIFO_WAIT_S
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            if exc.errno != errno.ENXIO:       # ENXIO: no reader yet
                raise
            if time.monotonic() >= deadline:
                raise SpliceError(f"cannot write the output: a FIFO that no process reads (waited "
                                  f"{FIFO_WAIT_S:g} s): start its reader first", str(path)) from None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def _replace(path: PathLike, target: Path, raw: bytes, old: "os.stat_result | None") -> None:
    # the temp file's name stays short enough for the file system even when the output's is not
    prefix = "." + target.name[:64] + "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _fail(path, "", exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        _set_mode(tmp, old)
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _fail(path, "", exc) from None
        raise


def current_umask() -> int:
    """The process's umask, read where the system shows it (Linux: ``/proc/self/status``), so
    that it is never changed to be read: ``os.umask(0)`` then ``os.umask(old)`` leaves every
    other thread a moment of umask 0 (the probe writes its cubins from a thread pool), and two
    threads doing it at once could leave the process at 0 for good: every later file and
    directory writable by all."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o077)      # elsewhere: the strictest value for the moment it is changed
    os.umask(old)
    return old


def _set_mode(tmp: str, old: "os.stat_result | None") -> None:
    """mkstemp creates 0600: a replaced file keeps its permissions (and owner, where we may set
    it); a new file gets the permissions any new file gets under the umask."""
    if old is None:
        os.chmod(tmp, 0o666 & ~current_umask())
        return
    os.chmod(tmp, stat.S_IMODE(old.st_mode))
    if hasattr(os, "chown") and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(tmp, old.st_uid, old.st_gid)
        except PermissionError:
            pass


@contextlib.contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """Cyclic garbage collection off while a big model is built, back on (as it was) after.

    A parsed 800k-line module is millions of small objects that form no cycles; every
    collection the allocations trigger walks all of those made so far, which made parsing
    CuPy's thrust PTX about 1.5x slower than the work itself (the parser pauses it too; this
    keeps it off past the parse).  Reference counting still frees everything as usual.
    ``freeze``: what is alive at the end (the model) leaves the
    collector's view (``gc.freeze``) before the collector comes back -- otherwise its first
    collection walks the whole model, still in the youngest generation (0.7 s on thrust);
    use it inside :func:`heap_frozen`, which gives the objects back."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """Everything alive on entry, or frozen inside the block (a parsed module, see
    :func:`collector_paused`), kept out of the collector's view until the block ends, so the
    many small allocations of per-entry analyses do not make the collector re-walk the whole
    model again and again (``gc.freeze``; ``gc.unfreeze`` on exit, so a library caller's later
    collections see it again -- the block should hold the output too: a command's process
    then exits before any collection walks the model)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
