"""Every result of a tune run, in SQLite next to its output: nothing is lost.

One row per variant (keyed by its content hash): the points of the space that generate it, its
recipe, where the CPU screen ended (apply / verify / ptxas) with verify's verdict and ptxas'
resources, the GPU's findings (outputs identical, harness), every timing pair, the summary
(ratio, interval, verdict, rounds, rung) and, for a dropped variant, why.  One row per GPU batch
(``calls``: worker and its pid, device, rounds, the A/A pairs, the timing record: method, device
state, why the rounds stopped, withheld verdicts).  ``meta`` holds the run's arch, the control
cubin and the halving decisions.  The database is in WAL mode and every result is committed as
it arrives, so a killed run loses at most the results in flight; a restarted run reads what is
here and skips it.  Only the driver process writes.
"""
from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Optional

_SCHEMA = """
CREATE TABLE IF NOT EXISTS variants (
  key TEXT PRIMARY KEY, idx INTEGER NOT NULL, points TEXT NOT NULL, choices TEXT NOT NULL,
  recipe TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'pending',
  stage TEXT NOT NULL DEFAULT '', verdict TEXT NOT NULL DEFAULT '', cuts TEXT NOT NULL DEFAULT '[]',
  resources TEXT NOT NULL DEFAULT '{}', cubin TEXT NOT NULL DEFAULT '', cubin_sha TEXT NOT NULL DEFAULT '',
  identical INTEGER, harness TEXT NOT NULL DEFAULT '', pairs TEXT NOT NULL DEFAULT '[]',
  ratio REAL, low REAL, high REAL, timing TEXT NOT NULL DEFAULT '', rounds INTEGER NOT NULL DEFAULT 0,
  asked INTEGER NOT NULL DEFAULT 0, withheld TEXT NOT NULL DEFAULT '', rung INTEGER NOT NULL DEFAULT 0,
  dropped TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '',
  seconds TEXT NOT NULL DEFAULT '{}', updated REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT, worker TEXT, device TEXT, rung INTEGER, rounds INTEGER,
  keys TEXT, aa TEXT, seconds REAL, at REAL, pid INTEGER, record TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""
#: a variant's states: pending (not screened), screened (a survivor), dropped, timed (final rung)
STATES = ("pending", "screened", "dropped", "timed")
_JSON = ("points", "choices", "cuts", "resources", "pairs", "seconds")
#: paths, kept relative to the store's folder when they lie under it: the folder can be moved
#: or copied to another machine (a CPU screen's store carried to the GPU) and still resume
_PATHS = ("recipe", "cubin")


class Store:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.root = path.parent.resolve()
        self.db = sqlite3.connect(str(path), timeout=30)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self._migrate()
        self.db.commit()

    #: columns added since the first stores were made: (table, column, declaration)
    _ADDED = (("calls", "pid", "INTEGER"), ("calls", "record", "TEXT NOT NULL DEFAULT '{}'"),
              ("variants", "asked", "INTEGER NOT NULL DEFAULT 0"),
              ("variants", "withheld", "TEXT NOT NULL DEFAULT ''"))

    def _migrate(self) -> None:
        """Columns added since a store was made (a store outlives the splice that wrote it)."""
        for table, col, decl in self._ADDED:
            have = {r["name"] for r in self.db.execute(f"PRAGMA table_info({table})")}
            if col not in have:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")

    def close(self) -> None:
        self.db.close()

    # ---- meta ---------------------------------------------------------------------------------

    def get_meta(self, k: str, default=None):
        row = self.db.execute("SELECT v FROM meta WHERE k = ?", (k,)).fetchone()
        return json.loads(row["v"]) if row else default

    def set_meta(self, k: str, v) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", (k, json.dumps(v)))
        self.db.commit()

    # ---- variants -----------------------------------------------------------------------------

    def row(self, key: str) -> Optional[dict]:
        r = self.db.execute("SELECT * FROM variants WHERE key = ?", (key,)).fetchone()
        return _decode(r, self.root) if r else None

    def get(self, key: str) -> dict:
        """The row of a variant this run recorded (a missing one is a bug: KeyError)."""
        r = self.row(key)
        if r is None:
            raise KeyError(key)
        return r

    def rows(self) -> list:
        return [_decode(r, self.root) for r in self.db.execute("SELECT * FROM variants ORDER BY idx")]

    def add(self, key: str, index: int, choices: dict, recipe: str = "") -> bool:
        """Record a point; False when its variant was already there (its points grow)."""
        old = self.row(key)
        if old is None:
            self.db.execute("INSERT INTO variants (key, idx, points, choices, recipe, updated) VALUES "
                            "(?, ?, ?, ?, ?, ?)", (key, index, json.dumps([index]),
                                                   json.dumps(choices, default=str), _rel(recipe, self.root),
                                                   time.time()))
            self.db.commit()
            return True
        if index not in old["points"]:
            self.update(key, points=sorted(old["points"] + [index]))
        return False

    def update(self, key: str, **fields) -> None:
        cols = ", ".join(f"{k} = ?" for k in fields)
        vals = [json.dumps(v, default=str) if k in _JSON else _rel(v, self.root) if k in _PATHS else v
                for k, v in fields.items()]
        self.db.execute(f"UPDATE variants SET {cols}, updated = ? WHERE key = ?", (*vals, time.time(), key))
        self.db.commit()

    def drop(self, key: str, reason: str) -> None:
        self.update(key, state="dropped", dropped=reason)

    def add_pairs(self, key: str, pairs) -> list:
        """Append timing pairs; all of the variant's pairs."""
        allp = self.get(key)["pairs"] + [list(p) for p in pairs]
        self.update(key, pairs=allp, rounds=len(allp))
        return allp

    # ---- GPU calls ----------------------------------------------------------------------------

    def add_call(self, worker: str, device: str, rung: int, rounds: int, keys, aa, seconds: float,
                 pid: int = 0, record: Optional[dict] = None) -> int:
        """One GPU batch: who ran it, the A/A pairs, and the timing record (method, device state,
        why it stopped, what was withheld, every ratio of that batch)."""
        cur = self.db.execute("INSERT INTO calls (worker, device, rung, rounds, keys, aa, seconds, at, pid, record) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              (worker, device, rung, rounds, json.dumps(list(keys)), json.dumps([list(p) for p in aa]),
                               seconds, time.time(), pid, json.dumps(_finite(record or {}), allow_nan=False)))
        self.db.commit()
        return int(cur.lastrowid or 0)

    def aa_pairs(self) -> list:
        out: list = []
        for r in self.db.execute("SELECT aa FROM calls ORDER BY id"):
            out += json.loads(r["aa"])
        return out

    def calls(self) -> list:
        return [dict(r) for r in self.db.execute("SELECT * FROM calls ORDER BY id")]


def _finite(v):
    """A record with every number that is not finite as None: the store's JSON is strict."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _rel(value: str, root: Path) -> str:
    """A path under ``root`` as relative to it; others (a reference recipe) as given."""
    if not value:
        return value
    p = Path(value)
    try:
        return str(p.resolve().relative_to(root))
    except ValueError:
        return str(p.resolve())


def _decode(r: sqlite3.Row, root: Path) -> dict:
    d = dict(r)
    for k in _JSON:
        d[k] = json.loads(d[k])
    for k in _PATHS:
        if d[k] and not Path(d[k]).is_absolute():
            d[k] = str(root / d[k])
    return d
