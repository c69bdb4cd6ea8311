"""`splice roundtrip`: JSON per file, exit status, and SASS identity of the canonical print."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from splice.commands.roundtrip_check import check_file

from splice.cli import main

from .conftest import MODERN, THIRDPARTY

FAIL = THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_fail" / "shared_ptr.ptx"
GOOD = THIRDPARTY / "zluda" / "ptx" / "src" / "test" / "spirv_run" / "add.ptx"


def _json_lines(out):
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def test_json_objects_and_exit_status(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(GOOD, d / "good.ptx")
    assert main(["roundtrip", str(d), "--json"]) == 0
    (rec,) = _json_lines(capsys.readouterr().out)
    assert rec == {"path": str(d / "good.ptx"), "parsed": True, "identical": True,
                   "sass_identical": None, "error": None, "note": None}
    shutil.copy(FAIL, d / "bad.ptx")
    assert main(["roundtrip", str(d), "--json"]) == 1
    recs = {r["path"].rsplit("/", 1)[-1]: r for r in _json_lines(capsys.readouterr().out)}
    assert recs["bad.ptx"]["parsed"] is False
    assert recs["bad.ptx"]["error"].startswith(f"{d / 'bad.ptx'}:5:1: expected")


def test_no_files_is_an_error(tmp_path, capsys):
    assert main(["roundtrip", str(tmp_path)]) == 2


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
@pytest.mark.parametrize("name", ["fp8_mma_sm89.ptx", "tex_surf_objects.ptx", "calls_params_globals.ptx",
                                  "wgmma_sm90a.ptx", "lineinfo_inlined.ptx"])
def test_canonical_print_gives_identical_sass(name, capsys):
    assert main(["roundtrip", str(MODERN / name), "--sass", "--json"]) == 0
    (rec,) = _json_lines(capsys.readouterr().out)
    assert rec["sass_identical"] is True, rec


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_sass_check_can_fail(tmp_path, monkeypatch):
    """The SASS comparison is real: a canonical printer that changed an opcode is caught."""
    from splice.ptx import printer
    from splice.commands import roundtrip_check as rt

    real = printer.canonical

    def wrong(mod):
        return real(mod).replace("add.s32", "sub.s32", 1)

    monkeypatch.setattr(rt, "canonical", wrong)
    r = check_file(MODERN / "warp_atomics_preds.ptx", sass=True)
    assert r.parsed and r.identical and r.sass_identical is False
    assert r.note and "instruction" in r.note


def test_jobs_on_processes_same_records_same_order(tmp_path, capsys):
    """--jobs 2 runs files in worker processes; the records and their order do not change."""
    d = tmp_path / "d"
    d.mkdir()
    for f in sorted(MODERN.glob("*.ptx"))[:6]:
        shutil.copy(f, d / f.name)
    (d / "zz_bad.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n.entry k( {\n")
    assert main(["roundtrip", str(d), "--json", "--jobs", "1"]) == 1
    one = _json_lines(capsys.readouterr().out)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 1
    two = _json_lines(capsys.readouterr().out)
    assert one == two and len(one) == 7 and one[-1]["parsed"] is False


# --------------------------------------------------------------------------------------------
# --jobs N: a big file is checked as a skeleton item and body items (roundtrip_split)
# --------------------------------------------------------------------------------------------

def _big_module(n: int, bad_at: int = -1, extra: str = "") -> str:
    """A module of ``n`` functions whose bodies vary in layout (comments, a nested scope, a
    statement over two lines); function ``bad_at`` has a statement the grammar rejects."""
    out = [".version 8.0\n.target sm_90\n.address_size 64\n", extra]
    for k in range(n):
        bad = "\tadd.s32 %r2, %r1 %r1;\n" if k == bad_at else ""
        out.append(f"// f{k}\n.visible .func (.param .b32 r) f{k}(.param .b32 p)\n{{\n"
                   f"\t.reg .b32 %r<4>;  // regs\n\tld.param.b32 %r1, [p];\n{bad}"
                   f"\t{{ add.s32 %r2, %r1, {k}; }}\n\tmul.lo.s32 %r3,\n\t\t%r2, %r2;\n"
                   f"$L{k}: /* c */ st.param.b32 [r], %r3;\n\tret;\n}}\n\n")
    return "".join(out)


def _pieces(sk, size):
    """A skeleton's bodies cut as the scheduler cuts them (``_Split.take``), from the front and
    the back in turn."""
    from splice.commands import roundtrip_split as S

    split, out = S._Split(sk, None), []
    while split.spans:
        out.append(split.take(size, front=len(out) % 2 == 0)[1])
    assert sorted(sp for piece in out for sp in piece) == list(sk.spans) and split.cost == 0
    assert all(list(piece) == sorted(piece) for piece in out), "a piece is in file order"
    return out


def _corpus_with_big_files(d):
    d.mkdir()
    (d / "a_big.ptx").write_text(_big_module(600))
    (d / "b_big_bad.ptx").write_text(_big_module(600, bad_at=250))
    (d / "c_big_crlf.ptx").write_bytes(_big_module(600).replace("\n", "\r\n").encode())
    for name in ("calls_params_globals", "control_misc", "coop_groups_misc", "cp_async_pipeline"):
        shutil.copy(MODERN / f"{name}.ptx", d / f"{name}.ptx")    # named: new files in modern/ change nothing
    shutil.copy(FAIL, d / "zz_bad.ptx")


@pytest.mark.slow
def test_jobs_split_big_files_same_records(tmp_path, capsys):
    """Big files are split into a skeleton and body items; every record (verdict, message,
    line count in the table) is the one a whole-file check gives, in input order."""
    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    _corpus_with_big_files(d)
    work = [(p, False, None, None) for p in sorted(d.iterdir())]
    import gc

    sched = S.Scheduler(work, 2, split=True)
    assert sched.split_files == (0, 1, 2), "the three big files are split"
    assert gc.get_freeze_count() == 0, "the workers were forked frozen, the parent is not left so"
    list(sched.results())
    big: dict = {}
    sk = S.skeleton_job(big, 0, d / "a_big.ptx")
    assert isinstance(sk, S.Skeleton) and len(_pieces(sk, 2000)) > 4
    assert big[0] == (d / "a_big.ptx").read_text(), "the text read, kept for this worker's pieces"
    assert all(S.bodies_job(big, 0, d / "a_big.ptx", g, sk.crc) for g in _pieces(sk, 2000))
    assert all(S.bodies_job({}, 0, d / "a_big.ptx", g, sk.crc) for g in _pieces(sk, 2000)), \
        "another worker reads the file again"
    assert main(["roundtrip", str(d), "--json", "--jobs", "1"]) == 1
    one = _json_lines(capsys.readouterr().out)
    for jobs in ("2", "3"):
        assert main(["roundtrip", str(d), "--json", "--jobs", jobs]) == 1
        assert _json_lines(capsys.readouterr().out) == one
    bad = [r for r in one if not r["parsed"]]
    assert [r["path"].rsplit("/", 1)[-1] for r in bad] == ["b_big_bad.ptx", "zz_bad.ptx"]
    line = (d / "b_big_bad.ptx").read_text()[:(d / "b_big_bad.ptx").read_text().index("%r1 %r1")].count("\n") + 1
    assert bad[0]["error"].startswith(f"{d / 'b_big_bad.ptx'}:{line}:")


def test_split_results_equal_whole_file_results(tmp_path):
    from splice.commands import roundtrip as rt

    d = tmp_path / "d"
    _corpus_with_big_files(d)
    files = rt.collect([d])
    assert list(rt.check_files(files, False, jobs=2)) == [check_file(f, False) for f in files]


def test_a_failing_piece_hands_the_file_to_the_whole_check(tmp_path, monkeypatch):
    """A body item that fails (here: a parser whose blocks end one byte early) does not decide
    the verdict: the file is checked whole and gets the whole check's record."""
    from splice.commands import roundtrip as rt
    from splice.commands import roundtrip_split as S
    from splice.ptx import model as m

    d = tmp_path / "d"
    _corpus_with_big_files(d)
    real = S._body_parser
    calls = []

    def short(text, path):
        parse = real(text, path)

        def body(o, c, line):
            calls.append(o)
            b = parse(o, c, line)
            return m.Block(b.items, (o, c), b.line)
        return body

    monkeypatch.setattr(S, "_body_parser", short)
    big: dict = {}
    sk = S.skeleton_job(big, 0, d / "a_big.ptx")
    assert not S.bodies_job(big, 0, d / "a_big.ptx", _pieces(sk, 2000)[0], sk.crc) and calls
    files = rt.collect([d])   # the forked workers inherit the broken body parser
    assert list(rt.check_files(files, False, jobs=2)) == [check_file(f, False) for f in files]


def test_split_refuses_what_it_cannot_decide(tmp_path):
    """Sections or a skeleton syntax error: the whole check's record; a bad body fails its
    own item; a piece checks the text its worker's skeleton read, or the file read again when
    its CRC-32 is the skeleton's."""
    from splice.commands import roundtrip as rt
    from splice.commands import roundtrip_split as S

    def job(path):
        return S.skeleton_job({}, 0, path)

    sec = tmp_path / "sec.ptx"
    sec.write_text(_big_module(20) + ".section .debug_str\n{\n$L1:\n.b8 65\n}\n")
    assert job(sec) == check_file(sec, False)
    head = tmp_path / "head.ptx"
    head.write_text(_big_module(20).replace(".address_size 64", ".address_size 64 64"))
    assert job(head) == check_file(head, False) and not job(head).parsed
    bad = tmp_path / "bad.ptx"
    bad.write_text(_big_module(20, bad_at=3))
    r = job(bad)
    assert isinstance(r, S.Skeleton)   # the skeleton is fine: the bad body fails its own item
    assert [S.bodies_job({}, 0, bad, g, r.crc) for g in _pieces(r, 100)].count(False) == 1
    ok = tmp_path / "ok.ptx"
    ok.write_text(_big_module(20))
    texts: dict = {}
    sk = S.skeleton_job(texts, 0, ok)
    changed = _big_module(20).replace("mul.lo.s32", "mul.hi.s32")   # every body still re-emits
    ok.write_text(changed)
    assert all(S.bodies_job(texts, 0, ok, g, sk.crc) for g in _pieces(sk, 100)), "the text read first"
    assert not any(S.bodies_job({}, 0, ok, g, sk.crc) for g in _pieces(sk, 100)), \
        "another worker finds the file changed since the skeleton: the whole check decides"
    ok.unlink()
    assert not S.bodies_job({}, 0, ok, _pieces(sk, 100)[0], sk.crc)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_jobs_stopped_by_a_signal_leaves_no_traceback_and_no_worker(tmp_path, how):
    """Stopping ``roundtrip --jobs 2`` (SIGTERM to it, Ctrl-C to its process group) ends it
    with splice's status and message; no worker prints a traceback or outlives it."""
    import os
    import signal
    import subprocess
    import sys

    d = tmp_path / "d"
    d.mkdir()
    text = _big_module(5000)   # 6 × 1.2 MB: seconds of work, so the signal comes mid-run
    for k in range(6):
        (d / f"big{k}.ptx").write_text(text)
    sig = getattr(signal, how)
    proc = subprocess.Popen([sys.executable, "-m", "splice.cli", "roundtrip", str(d), "--json", "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline(), proc.communicate()   # the first file's row: the run is under way
    if how == "SIGINT":
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    _out, err = proc.communicate(timeout=60)   # EOF: every process holding its stdout has ended
    assert proc.returncode == 128 + sig, err
    assert b"Traceback" not in err
    assert _running_in_group(proc.pid) == [], "a worker outlived the command"


def _running_in_group(pgid: int) -> list:
    """Processes of the group that still run (a zombie waiting for whoever inherited it to reap
    it has ended: it is no worker left running)."""
    import os

    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append(int(pid))
    return left


def _die(*_args):
    import os

    os._exit(9)


def test_a_worker_that_dies_is_an_error_naming_the_file(tmp_path, capsys, monkeypatch):
    """A worker killed mid-item (here its skeleton item exits) is exit 2 with a message naming
    the file, not a traceback."""
    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    _corpus_with_big_files(d)
    monkeypatch.setattr(S, "skeleton_job", _die)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "worker process ended" in err and "exit code 9" in err and "Traceback" not in err
    assert "_big" in err.split(":")[0]


def test_one_big_file_alone_is_split_across_the_workers(tmp_path, capsys):
    from splice.commands import roundtrip_split as S

    f = tmp_path / "one.ptx"
    f.write_text(_big_module(400))
    sched = S.Scheduler([(f, False, None, None)], 2, split=True)
    assert sched.split_files == (0,) and len(sched.workers) == 2
    (r,) = list(sched.results())
    assert main(["roundtrip", str(f), "--json", "--jobs", "1"]) == 0
    one = _json_lines(capsys.readouterr().out)
    assert main(["roundtrip", str(f), "--json", "--jobs", "2"]) == 0
    assert _json_lines(capsys.readouterr().out) == one and one[0]["identical"] and r.identical


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_refused(tmp_path, capsys, jobs):
    """No silent clamp to one worker: the user asked for something that cannot be."""
    f = tmp_path / "m.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    assert main(["roundtrip", "--jobs", jobs, str(f)]) == 2
    err = capsys.readouterr().err
    assert f"--jobs {jobs}: must be 1 or more" in err and "m.ptx" in err and "Traceback" not in err


def _cycle(texts, box):
    """An item that leaves a reference cycle behind, as a caught error's traceback does."""
    import weakref

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    box.append(weakref.ref(a))
    return True


def _big_cycle(texts, box):
    """An item that leaves a cycle of 1000 lists behind."""
    import weakref

    class Node:
        pass

    a = Node()
    a.lists = [[a] for _ in range(1000)]
    box.append(weakref.ref(a))
    return True


class _Pipe:
    """The worker's end of the pipe: ``n`` items, then the end."""

    def __init__(self, jobs):
        self.jobs = list(jobs) + [None]
        self.sent = []

    def recv(self):
        return self.jobs.pop(0)

    def send(self, out):
        self.sent.append(out)


def test_a_worker_collects_the_cycles_its_items_leave(monkeypatch):
    """Workers run with the collector off (``_serve``), so ``_loop`` collects once COLLECT_AT
    more container objects are alive than after its last pass: the cycles of the items before
    that pass are freed, those after it are still there (nothing else freed them), and items
    that leave nothing behind never trigger a pass."""
    import gc

    from splice.commands import workers as R

    box: list = []
    n = 10
    pipe = _Pipe([[(_big_cycle, (box,))] * 2] * (n // 2))
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        # each item leaves 1000 lists and a few more objects: a pass is due after the 7th
        # item (the 4th batch's first), and the batches' own objects are a few dozen
        monkeypatch.setattr(R, "COLLECT_AT", gc.get_count()[0] + 6500)
        R._loop(pipe, {})
        alive = [r() is not None for r in box]
    finally:
        if was:
            gc.enable()
    assert [out for batch in pipe.sent for out in batch] == [(True, True)] * n
    assert alive == [False] * 7 + [True] * 3


def test_a_worker_without_garbage_never_collects(monkeypatch):
    """Items that leave no objects alive never trigger a pass, however many they are: the pass
    walks the caches that survived, which is its cost (``COLLECT_AT``)."""
    import gc

    from splice.commands import workers as R

    calls: list = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a))
    pipe = _Pipe([[(_nothing, ())] * 50] * 20)
    was = gc.isenabled()
    gc.disable()
    try:
        R._loop(pipe, {})
    finally:
        if was:
            gc.enable()
    assert len(pipe.sent) == 20 and calls == []


def _nothing(texts):
    return [object() for _ in range(3)] and None


def test_small_files_of_a_directory_are_batched_up_to_batch_chunks(tmp_path):
    """``_add_wholes``: consecutive files of one directory share a batch while its cost stays
    within ``BATCH`` chunks; a file bigger than that goes alone; directories never mix."""
    from splice.commands import roundtrip_split as R

    s = R.Scheduler.__new__(R.Scheduler)
    s.work = [(tmp_path / "a" / f"{k}.ptx", False, None, None) for k in range(7)] + \
             [(tmp_path / "b" / "x.ptx", False, None, None)]
    s.chunk, s.todo = 100 // R.BATCH, {}     # batches of up to 100
    s._add_wholes([(0, 30), (1, 30), (2, 30), (3, 500), (4, 60), (5, 20), (6, 30), (7, 10)])
    got = {fam.rsplit("/", 1)[1]: [(cost, first, [it[1] for it in batch]) for cost, first, batch in items]
           for fam, items in s.todo.items()}
    assert got == {"a": [(90, 0, [0, 1, 2]), (500, 3, [3]), (80, 4, [4, 5]), (30, 6, [6])],
                   "b": [(10, 7, [7])]}
    assert all(it[2] is R._whole for items in s.todo.values() for _c, _f, batch in items for it in batch)


def test_only_a_file_above_half_a_workers_share_is_split(tmp_path):
    """Splitting costs a skeleton and shapes learned twice: a file under half a worker's share
    of the corpus stays one item (taken first, the others fill in around it)."""
    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    d.mkdir()
    (d / "a_big.ptx").write_text(_big_module(600))
    (d / "b_mid.ptx").write_text(_big_module(200))
    for name in ("calls_params_globals", "control_misc", "coop_groups_misc", "cp_async_pipeline"):
        shutil.copy(MODERN / f"{name}.ptx", d / f"{name}.ptx")    # named: new files in modern/ change nothing
    work = [(p, False, None, None) for p in sorted(d.iterdir())]
    costs = [p.stat().st_size + S.FILE_COST for p, *_ in work]
    share = sum(costs) / (S.SHARE * 2)
    assert costs[0] > share > costs[1], "the corpus straddles the threshold"
    sched = S.Scheduler(work, 2, split=True)
    assert sched.split_files == (0,)
    assert all(r.ok for r in sched.results())


def _die_on_t30(texts, job):
    import os

    if os.path.basename(job[0]) == "t30.ptx":
        os._exit(9)
    from splice.commands.roundtrip_check import check_job as _check

    return _check(job)


def test_a_worker_that_dies_in_a_batch_names_the_batch(tmp_path, capsys, monkeypatch):
    """Results come back a batch at a time: a worker dying inside one names the first file of
    the batch that did not come back and says the culprit may be further on in it."""
    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    d.mkdir()
    for k in range(10, 50):
        (d / f"t{k}.ptx").write_text(f".version 8.0\n.target sm_90\n.address_size 64\n"
                                     f".visible .entry k{k}()\n{{\n\tret;\n}}\n")
    (d / "big.ptx").write_text(_big_module(8000))   # makes the chunk, so a batch, several tiny files
    monkeypatch.setattr(S, "_whole", _die_on_t30)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "worker process ended while checking this file" in err and "exit code 9" in err
    assert "in its batch" in err and "Traceback" not in err
    named = err.split(":")[0].rsplit("/", 1)[1]
    assert named.startswith("t") and int(named[1:3]) <= 30


def _bare_scheduler(tmp_path, n_small: int, spans, owner_costs=()):
    """A Scheduler without processes: two fake workers, file 0 split (its skeleton read by the
    first worker) with ``spans`` of 100 characters each, ``n_small`` whole files of 50 in
    another directory."""
    import types

    from splice.commands import roundtrip_split as S

    s = S.Scheduler.__new__(S.Scheduler)
    s.work = [(tmp_path / "big" / "a.ptx", False, None, None)] + \
             [(tmp_path / "small" / f"{k}.ptx", False, None, None) for k in range(n_small)]
    owner = types.SimpleNamespace(family=None, costs=list(owner_costs))
    other = types.SimpleNamespace(family=None, costs=[])
    s.workers, s.chunk, s.todo, s.done = [owner, other], 100, {}, [None] * len(s.work)
    s.splits = {0: S._Split(S.Skeleton(10, tuple((k * 1000, k * 1000 + 100, k) for k in range(spans))), owner)}
    for k in range(n_small):
        s._add_whole(k + 1, 50)
    return s, owner, other


def test_a_split_files_bodies_go_front_to_back_to_its_owner_and_back_to_front_to_others(tmp_path):
    """The worker that read the skeleton takes the bodies in file order; another takes the
    whole files first, then bodies from the back; pieces shrink with what is left."""
    s, owner, other = _bare_scheduler(tmp_path, 2, 40)
    cost, i, ((_h, _i, fn, (k, _path, spans, _crc)),) = s._pick(owner)
    assert i == k == 0 and fn.__name__ == "bodies_job"
    assert spans[0] == (0, 100, 0) and list(spans) == sorted(spans)
    assert cost == len(spans) * 100 >= (40 * 100 + 2 * 50) // 4   # a quarter of what was left
    first = s._pick(other)
    assert first[1] in (1, 2) and first[2][0][2].__name__ == "_whole"
    assert s._pick(other)[1] in (1, 2) and not s.todo
    _cost, _i, ((_h, _i2, _fn, (_k, _p, back, _crc2)),) = s._pick(other)
    assert back[-1] == (39000, 39100, 39) and list(back) == sorted(back), "the last bodies, in order"
    sizes = []
    while s.splits[0].spans:
        sizes.append(s._pick(owner)[0])
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] >= s.chunk // 2


def test_a_busy_worker_gets_a_second_item_only_while_the_others_have_enough(tmp_path):
    """``_ahead``: an item queued behind a long one would wait while the other worker runs
    dry, so a worker with a backlog gets a second item only while more than a chunk per worker
    is left once the others have checked as much as that backlog."""
    s, owner, other = _bare_scheduler(tmp_path, 0, 10, owner_costs=[500, 350])
    assert s._left() == 1000
    assert not s._ahead(owner), "1000 left - 850 the other checks meanwhile <= 2 chunks"
    assert s._ahead(other), "no backlog: 1000 > 2 chunks"
    owner.costs = [790]
    assert s._ahead(owner), "1000 - 790 > 2 chunks"


def test_the_big_files_beside_a_split_file_go_to_another_worker_first(tmp_path):
    """A worker busy with the bodies of the file it split is on no family: another worker
    takes the big whole file of that directory before the small files elsewhere, so that file
    is not left to end the run alone."""
    s, owner, other = _bare_scheduler(tmp_path, 3, 40)
    owner.family = s._family(0)
    s.work.append((tmp_path / "big" / "b.ptx", False, None, None))
    s.done.append(None)
    s._add_whole(len(s.work) - 1, 900)
    cost, i, _batch = s._pick(other)
    assert (cost, i) == (900, 4), "the 900 beside the split file, not a 50 elsewhere"
    owner.family, other.family = s._family(0), None
    s.splits[0].spans.clear()
    s.work.append((tmp_path / "big" / "c.ptx", False, None, None))
    s.done.append(None)
    s._add_whole(len(s.work) - 1, 800)
    assert s._pick(other)[:2] == (50, 1), "once the owner is back on its family, the other keeps away"


def test_a_worker_with_nothing_left_is_told_to_stop_at_once(tmp_path):
    """``_feed``: once no item is left, an idle worker is sent its stop right away (it exits
    while the others finish) and is given nothing after that; a busy one is left alone."""
    s, owner, other = _bare_scheduler(tmp_path, 1, 0)
    calls = []
    for w in (owner, other):
        w.told, w.queue = False, []
        w.end = lambda wait, w=w: (calls.append((w, wait)), setattr(w, "told", True))
        w.send = lambda cost, batch, w=w: (w.costs.append(cost), w.queue.extend(batch))
    s.splits.clear()
    owner.costs = [500]                      # busy with its last piece
    s._feed()
    assert other.costs == [50] and not calls, "the last file goes to the idle worker"
    other.costs, other.queue = [], []        # it is done
    s._feed()
    assert calls == [(other, True)], "idle with nothing left: told to stop, the busy one not"
    s._add_whole(1, 50)                      # work that turns up later (a split file failed)
    s._feed()
    assert other.costs == [] and owner.costs == [500], "not queued behind the long piece"
    owner.costs, owner.queue = [], []
    s._feed()
    assert other.costs == [] and owner.costs == [50], "never sent to a worker told to stop"


def test_a_fork_that_fails_leaves_no_worker_behind(tmp_path, capsys, monkeypatch):
    """No process left to fork (EAGAIN) on the second worker: the first is stopped and reaped,
    and the run is exit 2 with the system's reason, not a traceback."""
    import errno
    import os as _os

    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    d.mkdir()
    for k in range(4):
        (d / f"t{k}.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    real_fork, pids = _os.fork, []

    def fork():
        if pids:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(S.os, "fork", fork)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "resource temporarily unavailable" in err.lower() and "Traceback" not in err
    with pytest.raises(ChildProcessError):   # reaped: no child of this process is left
        _os.waitpid(pids[0], 0)


def _killed(*_args):
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_by_a_signal_is_said_in_words(tmp_path, capsys, monkeypatch):
    """The OOM killer's SIGKILL reads as such, not as ``exit code -9``."""
    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    _corpus_with_big_files(d)
    monkeypatch.setattr(S, "skeleton_job", _killed)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "worker process ended" in err and "(killed by SIGKILL)" in err and "exit code" not in err


def test_a_stop_signal_at_the_fork_never_runs_the_command_twice(tmp_path, capfd, monkeypatch):
    """A SIGTERM that reaches a worker the instant it is forked (before it is on its own loop)
    ends that worker, never unwinds it into a second copy of the command: one report, from
    the parent, naming a file that worker had (both die at once: which one the parent sees
    first is a race, so either's first file may be named)."""
    import os as _os
    import signal as _signal

    from splice.commands import roundtrip_split as S

    d = tmp_path / "d"
    d.mkdir()
    for k in range(4):
        (d / f"t{k}.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    real_fork = _os.fork

    def fork():
        pid = real_fork()
        if pid:
            _os.kill(pid, _signal.SIGTERM)   # the worker is still in the parent's code
        return pid

    monkeypatch.setattr(S.os, "fork", fork)
    assert main(["roundtrip", str(d), "--json", "--jobs", "2"]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("splice") <= 1 and "stopped by" not in err, (out, err)
    assert "worker process ended" in err and "Traceback" not in err
    assert sum(f"t{k}.ptx" in err for k in range(4)) == 1, err


def test_a_run_dropped_before_its_results_are_read_stops_its_workers(tmp_path):
    """An interrupt between ``check_files`` and the loop over its results (the generator never
    started, so its ``finally`` never runs): dropping the run stops and reaps its workers."""
    import gc

    from splice.commands import roundtrip as rt

    d = tmp_path / "d"
    d.mkdir()
    for k in range(6):
        (d / f"t{k}.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    rows = rt.check_files(rt.collect([d]), False, jobs=2)
    pids = [w.pid for w in rows.gi_frame.f_locals["self"].workers]
    del rows
    gc.collect()
    for pid in pids:
        with pytest.raises(ChildProcessError):   # reaped already: no such child any more
            os.waitpid(pid, 0)


class _TwoArgs(Exception):
    """An exception pickle cannot rebuild (its ``__init__`` needs two arguments, ``args`` holds
    one)."""

    def __init__(self, what, where):
        super().__init__(f"{what} at {where}")


def _raise_two_args(texts, *_args):
    raise _TwoArgs("broken", "here")


def test_an_error_a_worker_cannot_send_as_it_is_arrives_as_its_text():
    """``_loop`` hands each item's exception to the parent; one that would not survive the
    pipe arrives as a RuntimeError with its type and text, and splice's own errors (ptxas',
    the parser's) arrive whole."""
    import pickle

    from splice.commands import workers as W
    from splice.ptx.errors import PtxSyntaxError
    from splice.ptx.sass import PtxasError

    pipe = _Pipe([[(_raise_two_args, ())]])
    W._loop(pipe, {})
    ((ok, exc),) = pickle.loads(pickle.dumps(pipe.sent[0]))
    assert not ok and type(exc) is RuntimeError and str(exc) == "_TwoArgs: broken at here"
    err = PtxasError("ptxas failed", stderr="boom", command=["ptxas", "x.ptx"], repro="ptxas x.ptx",
                     diagnostics=(), returncode=1)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is PtxasError and str(back) == str(err) and back.returncode == 1
    syn = PtxSyntaxError("m.ptx", 3, 4, "bad token", "add.s32 %r1 %r2;")
    assert pickle.loads(pickle.dumps(syn)).render() == syn.render()


def test_a_large_run_lists_only_the_files_that_are_not_clean(tmp_path, capsys, monkeypatch):
    """Past MAX_ROWS files the table lists the files that did not round-trip cleanly and says
    how many it left out (rich's table took 7 of 8 s for 20,000 files); --json keeps all."""
    import json

    from splice.report import console

    monkeypatch.setattr(console, "MAX_ROWS", 3)
    # wide enough that no path is wrapped: at 80 columns where the wrap fell in "zz_bad.ptx"
    # depended on the length of pytest's temporary directory (pytest-9 passed, pytest-35 failed)
    monkeypatch.setenv("COLUMNS", "400")
    d = tmp_path / "d"
    d.mkdir()
    for k in range(6):
        (d / f"t{k}.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    (d / "zz_bad.ptx").write_text("garbage\n")
    assert main(["roundtrip", str(d)]) == 1
    out = capsys.readouterr().out
    assert "zz_bad.ptx" in out and "t0.ptx" not in out and "6 more file(s) not listed" in out
    assert "7 files: 6 parsed, 6 byte-identical" in out
    assert main(["roundtrip", str(d), "--json"]) == 1
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert len([r for r in rows if "path" in r]) == 7
    (d / "zz_bad.ptx").unlink()
    assert main(["roundtrip", str(d)]) == 0
    out = capsys.readouterr().out
    assert "6 more file(s) not listed: each round-tripped cleanly" in out and "t0.ptx" not in out
