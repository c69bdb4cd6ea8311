"""Small shared helpers: atomic output (inputs are never modified; outputs appear whole)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path, data) -> Path:
    """Write ``data`` (str or bytes) to ``path`` via a temp file in the same directory and
    ``os.replace``, so a reader never sees a half-written file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    fd, tmp = tempfile.mkstemp(prefix="." + p.name + ".", dir=p.parent)
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
        # mkstemp creates 0600; an output should get the permissions any new file gets
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p
