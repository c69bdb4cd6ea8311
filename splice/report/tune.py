"""``splice tune``'s screens: the live view while it runs, the leaderboard when it is done."""
from __future__ import annotations

from .console import Table, esc, make_console

#: the rows the leaderboard table shows (``--json`` and leaderboard.json hold every one)
BOARD_ROWS = 40


def _interval(r: dict) -> str:
    if r.get("ratio") is None:
        return "-"
    return f"{r['ratio']:.4f} [{r['low']:.4f}, {r['high']:.4f}]"


class LiveView:
    """Variants done/total, the best so far with its interval, each worker's state.  ``note`` is
    the driver's progress callback; ``states`` the executor's per-worker states."""

    def __init__(self, states, console=None):
        self.states = states
        self.con = console or make_console(stderr=True)
        self.total = 0
        self.screened = 0
        self.timed = 0
        self.dropped = 0
        self.stage = "enumerating the space"
        self.best = None
        self.live = None

    def __enter__(self):
        from rich.live import Live

        self.live = Live(get_renderable=self.render, console=self.con, refresh_per_second=4,
                         transient=True, redirect_stdout=False, redirect_stderr=False)
        if self.con.is_terminal:
            self.live.__enter__()
        return self

    def __exit__(self, *exc):
        if self.con.is_terminal and self.live is not None:
            self.live.__exit__(*exc)
        return False

    def note(self, event: str, **data) -> None:
        if event == "variants":
            self.total = data["distinct"]
        elif event == "screen":
            self.screened = data["done"]
            self.stage = "screening on the CPU (apply, verify, ptxas)"
        elif event == "screened":
            self.screened += 1
            self.dropped += data["row"]["state"] == "dropped"
        elif event == "rung":
            self.stage = f"timing, rung {data['rung']}: {data['alive']} variants to {data['target']} rounds"
        elif event == "timed":
            self._timed(data["row"])
        elif event == "dropped":
            self.dropped += 1

    def _timed(self, row: dict) -> None:
        self.timed += 1
        if row.get("ratio") is not None and (self.best is None or row["ratio"] < self.best["ratio"]):
            self.best = row

    def render(self):
        from rich.console import Group
        from rich.text import Text

        t = Table(show_header=True, box=None)
        t.add_column("worker")
        t.add_column("state")
        for name, state in self.states():
            t.add_row(esc(name), esc(state))
        best = "-" if self.best is None else f"{self.best['key'][:12]} {_interval(self.best)}"
        head = Text.from_markup(f"[bold]splice tune[/] {esc(self.stage)}\n"
                                f"screened {self.screened}/{self.total}, dropped {self.dropped}, "
                                f"timing results {self.timed}; best so far: {esc(best)}")
        return Group(head, t)


def print_board(board: dict, con=None) -> None:
    """The leaderboard: one row per variant, the best first (200 columns wide when it goes to
    a file or a pipe: the table is the run's record, not a terminal's screen)."""
    if con is None:
        con = make_console()
        if not con.is_terminal:
            con.width = 200
    rows = board["variants"]
    t = Table(title="splice tune: variants against the original (ratio < 1 is faster)")
    for col in ("#", "variant", "choices", "verify", "regs", "spill st/ld", "ratio [95% interval]",
                "verdict", "rounds", "state / why dropped"):
        t.add_column(col)
    for i, r in enumerate(rows[:BOARD_ROWS], 1):
        spill = "-" if r["spill_stores"] is None else f"{r['spill_stores']}/{r['spill_loads']}"
        state = r["dropped"].split(";")[0] if r["dropped"] else r["state"]     # the figures are in their columns
        if r["state"] == "pending" and r["screen_stage"] == "timeout":
            state = "pending: ptxas ran out of time (the next run screens it again)"
        verify = (r["verify"] or "-") + (f" ({r['verify_why']})" if r.get("verify_why") else "")
        t.add_row(str(i), r["key"][:12], esc(_choices(r["choices"])), esc(verify),
                  str(r["registers"] if r["registers"] is not None else "-"), spill, _interval(r),
                  esc(r["verdict"] or "-"), str(r["rounds"]), esc(state))
    con.print(t)
    if len(rows) > BOARD_ROWS:
        con.print(f"[dim]{len(rows) - BOARD_ROWS} more variants not shown: --json (or leaderboard.json) "
                  "lists every one")
    _footer(board, con)


def _choices(choices: dict) -> str:
    """A variant's choices; a native file by its name (the space gives it as a full path)."""
    from pathlib import PurePath

    return ", ".join(f"{k} {PurePath(str(v)).name if k.startswith('native') else v}" for k, v in choices.items()) \
        or "the recipe as it is"


def _footer(board: dict, con) -> None:
    ctl = (board.get("original") or {}).get("resources") or {}
    aa = board.get("aa")
    counts = ", ".join(f"{n} {k}" for k, n in sorted(board["counts"].items()))
    con.print(f"store {esc(board['store'])}: {counts}; arch {esc(board.get('arch') or '-')}; "
              f"original: {ctl.get('registers', '-')} registers, spills {ctl.get('spill_stores', '-')}/"
              f"{ctl.get('spill_loads', '-')} bytes")
    if aa:
        band = f", band ±{aa['band'] * 100:.2f} %" if aa.get("band") is not None else ""
        con.print(f"A/A (the original against a second copy of itself): {_interval(aa)} over {aa['rounds']} "
                  f"rounds{band}")
    tm = board.get("timing") or {}
    if tm.get("batches"):
        why = ", ".join(f"{n} {k}" for k, n in sorted(tm["stopped"].items()))
        held = f"; verdicts withheld in {tm['withheld']}: {esc(tm['withheld_why'][0])}" if tm["withheld"] else ""
        con.print(f"GPU batches: {tm['batches']} (rounds stopped by: {esc(why) or '-'}){held}")
    best = board.get("best")
    if best:
        con.print(f"[bold]best[/] {best['key'][:12]}: ratio {_interval(best)}, {esc(best['verdict'])}; "
                  f"recipe {esc(best['recipe'])}")
    elif board.get("note"):
        con.print(esc(board["note"]))
