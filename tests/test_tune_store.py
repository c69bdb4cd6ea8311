"""splice.tune.store: one row per variant, committed as each result arrives (WAL), read back by
a second connection -- what a restarted run sees."""
from __future__ import annotations

import json
import sqlite3

from splice.tune.store import Store


def test_rows_survive_a_reopen_and_points_merge(tmp_path):
    st = Store(tmp_path / "tune.db")
    assert st.add("k1", 3, {"fence@1": "start"}, str(tmp_path / "r1.yaml"))
    assert not st.add("k1", 7, {"fence@1": "both"})          # the same variant from another point
    st.update("k1", state="screened", resources={"registers": 200}, verdict="equal")
    st.add_pairs("k1", [(9.0, 10.0), (9.1, 10.0)])
    st.add_call("gpu0", "H200", 0, 2, ["k1"], [(10.0, 10.1)], 0.5)
    st.set_meta("arch", "sm_90")
    # a second connection (the next run) sees every commit without the first being closed
    again = Store(tmp_path / "tune.db")
    row = again.get("k1")
    assert row["points"] == [3, 7] and row["choices"] == {"fence@1": "start"} and row["recipe"] == str(tmp_path / "r1.yaml")
    assert row["state"] == "screened" and row["resources"] == {"registers": 200} and row["rounds"] == 2
    assert row["pairs"] == [[9.0, 10.0], [9.1, 10.0]]
    assert again.aa_pairs() == [[10.0, 10.1]] and again.get_meta("arch") == "sm_90"
    st.drop("k1", "halving: rung 0")
    assert again.get("k1")["dropped"] == "halving: rung 0"
    assert again.row("nope") is None
    st.close()
    again.close()


def test_the_database_is_in_wal_mode(tmp_path):
    Store(tmp_path / "tune.db").close()
    with sqlite3.connect(str(tmp_path / "tune.db")) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_store_without_the_newer_columns_is_brought_up_to_date(tmp_path):
    """A store of an earlier splice (calls without pid and the timing record, variants without
    the rounds asked and the withheld reason) gets the columns, its rows kept."""
    with sqlite3.connect(str(tmp_path / "tune.db")) as c:
        c.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, worker TEXT, device TEXT, rung INTEGER, "
                  "rounds INTEGER, keys TEXT, aa TEXT, seconds REAL, at REAL)")
        c.execute("CREATE TABLE variants (key TEXT PRIMARY KEY, idx INTEGER NOT NULL, points TEXT NOT NULL, "
                  "choices TEXT NOT NULL, recipe TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'pending', "
                  "stage TEXT NOT NULL DEFAULT '', verdict TEXT NOT NULL DEFAULT '', cuts TEXT NOT NULL DEFAULT '[]', "
                  "resources TEXT NOT NULL DEFAULT '{}', cubin TEXT NOT NULL DEFAULT '', "
                  "cubin_sha TEXT NOT NULL DEFAULT '', identical INTEGER, harness TEXT NOT NULL DEFAULT '', "
                  "pairs TEXT NOT NULL DEFAULT '[]', ratio REAL, low REAL, high REAL, timing TEXT NOT NULL DEFAULT '', "
                  "rounds INTEGER NOT NULL DEFAULT 0, rung INTEGER NOT NULL DEFAULT 0, "
                  "dropped TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', "
                  "seconds TEXT NOT NULL DEFAULT '{}', updated REAL NOT NULL DEFAULT 0)")
        c.execute("INSERT INTO variants (key, idx, points, choices, rounds) VALUES ('k', 0, '[0]', '{}', 8)")
    st = Store(tmp_path / "tune.db")
    st.add_call("gpu0", "H200", 0, 1, [], [], 0.1, pid=4242, record={"stopped": "runs", "w": [float("inf"), 1.5]})
    assert st.calls()[0]["pid"] == 4242
    assert json.loads(st.calls()[0]["record"]) == {"stopped": "runs", "w": [None, 1.5]}     # strict JSON
    r = st.get("k")
    assert r["rounds"] == 8 and r["asked"] == 0 and r["withheld"] == ""
    st.close()


def test_paths_under_the_store_travel_with_it(tmp_path):
    """A store whose folder is moved (a CPU screen carried to the GPU machine) still finds its
    recipes and cubins; a path outside the folder stays as it is."""
    import shutil

    a = tmp_path / "a"
    st = Store(a / "tune.db")
    (a / "variants/k").mkdir(parents=True)
    st.add("k", 0, {}, str(a / "variants/k/recipe.yaml"))
    st.update("k", cubin=str(a / "cubins/k.cubin"))
    st.add("r", -1, {"reference": "x"}, str(tmp_path / "ref.yaml"))
    st.close()
    shutil.move(str(a), str(tmp_path / "b"))
    moved = Store(tmp_path / "b" / "tune.db")
    assert moved.get("k")["recipe"] == str(tmp_path / "b/variants/k/recipe.yaml")
    assert moved.get("k")["cubin"] == str(tmp_path / "b/cubins/k.cubin")
    assert moved.get("r")["recipe"] == str(tmp_path / "ref.yaml")
    moved.close()
