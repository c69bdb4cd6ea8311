"""One error type for everything a user can get wrong in PTX: ``file:line:col: message``,
followed by the source line and a caret (pycparser's ``coord`` idea).  The CLI prints it and
exits with status 2; no traceback ever reaches a user."""
from __future__ import annotations


class PtxSyntaxError(Exception):
    def __init__(self, path: str, line: int, column: int, message: str, source_line: str = ""):
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        self.source_line = source_line
        super().__init__(self.render())

    def __reduce__(self):
        """Rebuilt from its fields (``roundtrip --jobs`` sends a worker's error to the parent):
        the default would call ``__init__`` with the rendered text alone."""
        return (type(self), (self.path, self.line, self.column, self.message, self.source_line))

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def render(self) -> str:
        text = f"{self.location}: {self.message}"
        if self.line:
            text += caret_lines(self.source_line, self.column)
        return text


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


def line_col(source: str, pos: int) -> tuple:
    """1-based (line, column) of character offset ``pos`` in ``source``."""
    line = source.count("\n", 0, pos) + 1
    col = pos - (source.rfind("\n", 0, pos) + 1) + 1
    return line, col


def source_line(source: str, line: int) -> str:
    start = 0
    for _ in range(line - 1):
        start = source.find("\n", start) + 1
        if start == 0:
            return ""
    end = source.find("\n", start)
    return source[start:] if end < 0 else source[start:end]
