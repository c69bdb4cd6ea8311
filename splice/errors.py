"""The user-facing error of everything above the PTX front end (recipes, expectations, ptxas,
probes).  Like ``PtxSyntaxError`` it names a place — ``file:line:col`` or ``file: key`` — and
the CLI prints ``render()`` and exits with status 2."""
from __future__ import annotations

import os
import re
import stat
from typing import Optional

# C0/C1 controls but tab and newline, bidi and zero-width format characters, line/paragraph
# separators, a BOM and lone surrogates (undecodable input bytes)
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029"
                          "\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: every control or invisible formatting character becomes
    U+FFFD.  An error message quotes the user's source line, and a hostile file's line can hold
    ESC sequences (retitle the terminal, clear the screen, fake a prompt) or a bidi override that
    shows the line in another order; one replacement character per character keeps the caret
    under its column."""
    return _UNPRINTABLE.sub("\ufffd", text)


SHOWN_WIDTH = 160   # a 10 MB one-line module shows the error's neighbourhood, not the line


def caret_lines(line: str, column: int) -> str:
    """``\n  <source line>\n  <spaces>^`` with the caret under ``column`` (1-based); a long
    line is cut to a window around the column, marked with ``…``."""
    shown = line.rstrip("\r\n").expandtabs(1)
    col = max(column or 1, 1) - 1
    if len(shown) > SHOWN_WIDTH:
        start = max(0, min(col - SHOWN_WIDTH // 2, len(shown) - SHOWN_WIDTH))
        head = "…" if start > 0 else ""
        tail = "…" if start + SHOWN_WIDTH < len(shown) else ""
        col = col - start + len(head)
        shown = head + shown[start:start + SHOWN_WIDTH] + tail
    return "\n  " + shown + "\n  " + " " * col + "^"


class SpliceError(Exception):
    def __init__(self, message: str, path: "Optional[str | os.PathLike[str]]" = None, line: Optional[int] = None,
                 column: Optional[int] = None, detail: str = ""):
        self.message = message
        # a pathlib.Path is text too: ``where += ": "`` on one was a TypeError traceback in place
        # of the user's error (``--harness`` on a probe spec named by its Path)
        self.path = os.fsdecode(path) if path is not None else None
        self.line = line
        self.column = column
        self.detail = detail
        super().__init__(self._headline())

    def _headline(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line:
                where += f":{self.line}"
                if self.column:
                    where += f":{self.column}"
            where += ": "
        return where + self.message

    def render(self) -> str:
        """``file:line:col: message``, then (where the file has that line) the line itself
        and a caret under the column, then the detail."""
        text = self._headline()
        shown = self._source_line()
        if shown is not None:
            text += caret_lines(shown, self.column or 1)
        if self.detail:
            text += "\n" + self.detail
        return text

    def _source_line(self) -> Optional[str]:
        if not (self.path and self.line):
            return None
        try:
            # the file is opened again to quote its line: only a regular file (a FIFO would
            # block, or give other bytes; a device would never end)
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                return None
            with open(fd, encoding="utf-8", errors="replace") as fh:
                i, ln = 0, "\n"
                for i, ln in enumerate(fh, 1):
                    if i == self.line:
                        return ln.rstrip("\r\n")
        except (OSError, ValueError):
            return None
        # the empty line after a final newline: where "unexpected end of file" points
        return "" if self.line == i + 1 and ln.endswith("\n") else None


class SassToolError(RuntimeError):
    """A CUDA binary tool could not be run or failed (base class of ``splice.ptx.sass``'s
    errors; defined here so that the CLI can catch it without loading that module)."""


#: the exit status of a command stopped by a tool's time limit (as ``timeout(1)`` exits)
TIMEOUT_STATUS = 124


class ToolTimedOut(SassToolError):
    """A CUDA tool ran past its time limit: it judged nothing, so this is neither a rejection
    nor a pass.  The CLI exits with :data:`TIMEOUT_STATUS` and the message, which names the
    limit and how to raise it."""
