"""Rich output for the front-end commands (stats, roundtrip): tables for people; the JSON
forms are printed by the commands themselves."""
from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as _RichTable
from ..errors import printable
from rich.markup import escape

#: the narrowest and widest a table is laid out: ``COLUMNS=0`` made rich print nothing at all
#: (``stats``, ``apply``, ``verify``: exit 0, an empty report), ``COLUMNS=1``..``10`` one
#: character a line.  A cell narrower than its text folds it onto more lines (``Table``); a
#: terminal narrower than 80 wraps the lines.
MIN_WIDTH, MAX_WIDTH = 80, 1000


class Table(_RichTable):
    """Every report table: a cell too narrow for its text folds it onto the next lines
    (rich's default, ``overflow="ellipsis"``, cut it to ``…``: at 80 columns the stats table
    showed a 250-character mangled entry as ``_Zxxxxxxxxxxxxxxxxxxxx…`` and no command could
    be given its name from the report).  Every ``splice.report`` table is made through here."""

    def add_column(self, *args, **kwargs) -> None:
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)


class _Console(Console):
    """A rich console whose reader may go away: rich's own ``on_broken_pipe`` raised
    ``SystemExit(1)``, so ``splice stats m.ptx | head -1`` exited 1 (1 means "a difference was
    found" for roundtrip, verify, probe) where every other command's closed pipe is the quiet 0 of
    ``cli.main``'s ``BrokenPipeError``."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(32, "the reader of the output went away")


def make_console(stderr: bool = False, width: "int | None" = None) -> Console:
    """A console for splice's reports: no highlighting (its regular expressions are quadratic on
    a long token, and they recoloured the user's text), ``width`` (default: the terminal's or
    ``$COLUMNS``) held between ``MIN_WIDTH`` and ``MAX_WIDTH``."""
    con = _Console(stderr=stderr, highlight=False, width=width)
    if not MIN_WIDTH <= con.width <= MAX_WIDTH:
        con.width = min(max(con.width, MIN_WIDTH), MAX_WIDTH)
    return con


console = make_console()
err_console = make_console(stderr=True)


def esc(value) -> str:
    """``value`` (a path, an entry, statement text, a provenance like ``ld.shared [smem + 16]``,
    a message) as rich shows it: rich reads ``[word ...]`` in a printed string as a style tag, so
    unescaped data lost its ``[smem + 16]`` address, and a file named ``[/b].ptx`` was a
    ``MarkupError`` traceback.  Every piece of data interpolated into a printed string or a
    table cell goes through here; splice's own ``[bold]`` stays markup.  Control characters (a
    file named ``$'\\e[2J.ptx'`` cleared the terminal from the stats table's title) are shown as
    U+FFFD, as in error messages (``errors.printable``)."""
    return escape(printable(str(value)))


#: the longest statement text a table cell shows whole (its statement number names the rest)
MAX_CELL_TEXT = 200


def clip(text: str, most: int = MAX_CELL_TEXT) -> str:
    """``text`` up to ``most`` characters, a cut one ending in ``…`` (it was cut at 60 with
    nothing to say so: a peak's statement read as a shorter, different statement)."""
    return text if len(text) <= most else text[:most - 1] + "…"


def progress() -> Progress:
    """A bar on a terminal's stderr; none elsewhere (on a pipe or file rich's transient bar still
    left an empty line: ``splice roundtrip m.ptx 2>log`` wrote a blank line into the log)."""
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err_console, transient=True, disable=not err_console.is_terminal)


#: the entries (functions) a report renders in full: rich lays a table out at about half a
#: millisecond a row and a few per table, so a module of 50000 kernels took minutes to show
#: (stats 75 s of per-function tables after 27 s for the one table of 50000 rows; spec two
#: minutes) where its analysis takes seconds.  Past it a line says how many are left out and how
#: to see them; ``--json`` always holds every entry.
MAX_ENTRIES = 100


def more_entries(con, total: int, shown: int, noun: str = "entries") -> None:
    """The line that ends a report cut at ``shown`` of ``total`` entries."""
    if total > shown:
        con.print(f"[dim]{total - shown} more {noun} not shown (a report shows the first {shown}): "
                  "--entry NAME shows one, --json shows every one")


def stats_table(data: dict, top: int = 25) -> None:
    t = Table(title=f"{esc(data['path'])} — {data['lines']} lines")
    for col in ("function", "kind", "line", "statements", "instructions", "labels"):
        t.add_column(col, justify="right" if col not in ("function", "kind") else "left")
    functions = data["functions"]
    for f in functions[:MAX_ROWS]:
        t.add_row(esc(f["name"]), f["kind"], str(f["line"]),
                  "" if f["statements"] is None else str(f["statements"]),
                  str(f["instructions"]), str(f["labels"]))
    console.print(t)
    more_entries(console, len(functions), MAX_ROWS, "functions")
    with_ops = [f for f in functions if f["opcodes"]]
    for f in with_ops[:MAX_ENTRIES]:
        h = Table(title=f"opcodes of {esc(f['name'])} (top {top})")
        h.add_column("opcode")
        h.add_column("count", justify="right")
        h.add_column("share", justify="right")
        total = sum(f["opcodes"].values())
        for op, n in list(f["opcodes"].items())[:top]:
            h.add_row(esc(op), str(n), f"{100 * n / total:.1f}%")
        console.print(h)
    more_entries(console, len(with_ops), MAX_ENTRIES, "opcode tables")


#: rows of the round-trip table: past this many files it lists only the files that did not
#: round-trip cleanly (rich's table took 7 of the 8 seconds of a 20,000-file run)
MAX_ROWS = 200


def _rows_shown(results) -> tuple:
    """(rows to list, how many are not listed): every row for a small run; for a large one the
    rows that are not clean (not parsed, not identical, SASS differs, an error or note), at
    most ``MAX_ROWS``."""
    if len(results) <= MAX_ROWS:
        return list(results), 0
    unclean = [r for r in results if not r.ok or r.error or r.note]
    return unclean[:MAX_ROWS], len(results) - min(len(unclean), MAX_ROWS)


def roundtrip_table(results, sass: bool) -> None:
    t = Table(title="splice roundtrip")
    t.add_column("file", overflow="fold")
    t.add_column("lines", justify="right")
    t.add_column("parsed")
    t.add_column("identical")
    if sass:
        t.add_column("SASS")
    t.add_column("error / note", overflow="fold")

    def mark(v):
        return "[green]yes" if v else ("[dim]—" if v is None else "[red]no")

    shown, hidden = _rows_shown(results)
    for r in shown:
        row = [esc(r.path), str(r.lines), mark(r.parsed), mark(r.identical if r.parsed else None)]
        if sass:
            row.append(mark(r.sass_identical))
        note = r.error or r.note or ""
        row.append(esc(note.splitlines()[0]) if note else "")
        t.add_row(*row)
    if shown:
        console.print(t)
    if hidden:
        console.print(f"[dim]{hidden} more file(s) not listed: " + (
            "each round-tripped cleanly, without a note" if len(shown) < MAX_ROWS
            else "the first rows that are not clean are listed") + "; --json lists every file")
    n = len(results)
    parsed = sum(r.parsed for r in results)
    ident = sum(r.identical for r in results)
    line = f"{n} files: {parsed} parsed, {ident} byte-identical"
    if sass:
        same = sum(r.sass_identical is True for r in results)
        skipped = sum(r.sass_identical is None for r in results)
        diff = sum(r.sass_identical is False for r in results)
        line += f", SASS identical {same}, differs {diff}, not compiled {skipped}"
    ok = all(r.ok for r in results)
    console.print(("[green]" if ok else "[red]") + line)
