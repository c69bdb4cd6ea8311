"""One error type for everything a user can get wrong in PTX: ``file:line:col: message``,
followed by the source line and a caret (pycparser's ``coord`` idea).  The CLI prints it and
exits with status 2; no traceback ever reaches a user."""
from __future__ import annotations

from ..errors import caret_lines

__all__ = ["PtxSyntaxError", "caret_lines", "line_col", "source_line"]


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
