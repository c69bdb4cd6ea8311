"""The user-facing error of everything above the PTX front end (recipes, expectations, ptxas,
probes).  Like ``PtxSyntaxError`` it names a place — ``file:line:col`` or ``file: key`` — and
the CLI prints ``render()`` and exits with status 2."""
from __future__ import annotations

from typing import Optional


class SpliceError(Exception):
    def __init__(self, message: str, path: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, detail: str = ""):
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.detail = detail
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line:
                where += f":{self.line}"
                if self.column:
                    where += f":{self.column}"
            where += ": "
        text = where + self.message
        if self.detail:
            text += "\n" + self.detail
        return text
