"""``splice roundtrip --jobs N``: files, and the function bodies of big files, as work items.

One file can be most of a corpus (gpuocelot's thrust ``Sort.ptx`` is 58 % of the shared
corpus' bytes), so a pool that hands out whole files ends when that file ends, whatever N is.
A file bigger than its share of the corpus is checked in pieces instead, which the parser's
own structure allows: ``parse`` is the skeleton (declarations and every function's signature,
bodies masked) followed by each body cut into statements on its own.  So

1. a *skeleton* item reads the file (its bytes and their CRC-32), parses the skeleton
   (``parse_entry`` choosing no entry) and checks that it re-emits the file with every body
   left as source text;
2. *body* items, a few bodies each, parse those bodies and check that each re-emits its own
   source bytes: in the worker that read the skeleton, from the text it read; in another, from
   the file read again, whose CRC-32 must be the skeleton's (a file changed in between fails
   the item, so every piece of a verdict comes from the same bytes).

When every piece passes, ``emit(parse(text)) == text`` holds for the whole file (``emit``
writes each spanned node's text and copies the text between them, so the file's emit is the
skeleton's with each body's emit in its place).  When any piece fails, or the file is anything
but the plain case (a syntax error anywhere, ``.section`` blocks), the file is checked whole
by ``check_file``: its verdict and message are exactly the ones a whole-file check gives,
because they are made by it.  Only the lossless check is split;
``--sass`` needs the whole module's canonical print and keeps one item per file.
"""
from __future__ import annotations

import dataclasses
import os

from ..ptx import PtxSyntaxError, emit
from ..ptx import model as m
from .roundtrip_check import RoundTrip, check_file, check_job
from .workers import Worker, fork_workers
import collections
import select
import zlib
from ..errors import SpliceError
from ..ptx.parser import body_reader
from ..ptx.printer import emit_node
from ..ptx.sass import exit_text
from ..util import ENCODING, ERRORS, collector_paused, read_input
from ..ptx.parser import parse_entry

#: a file is split when it is bigger than 1/(SHARE × jobs) of the corpus' cost, half a worker's
#: share: smaller files are whole items, taken biggest first, and the rest fill in around them;
#: splitting one costs its skeleton and the statement shapes each worker learns anew (splitting
#: everything above an eighth cost the workers 5 % more CPU on the shared corpus)
SHARE = 2
#: a chunk is 1/(CHUNKS × jobs) of the corpus' cost: body pieces are cut to a share of what is
#: left in the run, down to half a chunk, small enough that the run ends evenly
CHUNKS = 32
#: small files of a directory travel in batches of up to BATCH chunks of cost, one message each
#: way per batch: at half a chunk the 300-file corpus took 60 round trips, each ~0.15 ms of the
#: parent's time on a core the workers need (two chunks: 8-13 ms off `--jobs 2`'s wall time,
#: four no better); the run ends on body pieces and single files all the same
BATCH = 2


@dataclasses.dataclass(frozen=True)
class Skeleton:
    """What a skeleton item hands back: the file's line count, its bodies' (open, close,
    line) in file order, and the CRC-32 of the bytes it read."""
    lines: int
    spans: tuple
    crc: int = 0


def skeleton_job(texts: dict, i: int, path):
    """Worker: the skeleton of file ``i`` and its bodies, or the whole file's RoundTrip when
    the file is not the plain case (see the module docstring).  The text read is kept in
    ``texts`` (the worker's own) for the body items this worker gets."""
    try:
        text, crc = _read_file(path)
    except OSError:
        return check_file(path, False)   # it says why, as a whole-file check does
    texts[i] = text
    chosen = []
    try:

        # ``choose`` is only called once the skeleton went through the chunked path
        mod = parse_entry(text, str(path), lambda names: chosen.append(names))
    except PtxSyntaxError:
        return check_file(path, False)
    fns = [k for k, it in enumerate(mod.items) if isinstance(it, m.Function) and it.body is not None]
    if (not chosen or any(isinstance(it, m.Section) for it in mod.items)
            or any(mod.items[k].body.items or mod.items[k].body.span is None for k in fns)):
        return check_file(path, False)
    items = list(mod.items)
    for k in fns:   # a function without its body is written as its source text
        items[k] = dataclasses.replace(items[k], body=None)
    if emit(m.Module(tuple(items), text, str(path))) != text:
        return check_file(path, False)
    spans = tuple((mod.items[k].body.span[0], mod.items[k].body.span[1] - 1, mod.items[k].body.line)
                  for k in fns)
    if any(text[o] != "{" or text[c] != "}" for o, c, _line in spans):
        return check_file(path, False)   # a body span that is not its braces: not the plain case
    return Skeleton(text.count("\n"), spans, crc)


def _read_file(path) -> tuple:
    """(text, CRC-32 of its bytes), read as ``check_file`` reads a file."""
    raw = read_input(path)
    return raw.decode(ENCODING, ERRORS), zlib.crc32(raw)


class _Split:
    """A file checked in pieces, once its skeleton is back: the bodies not sent yet, in file
    order, and the pieces sent and not done.

    The worker that read the skeleton (the *owner*) takes the bodies from the front, in file
    order; another worker takes some only when nothing else is left, from the back.  Generated
    code repeats statements and statement shapes from one function to the next (Sort.ptx: two
    thirds of its statements are verbatim repeats), and each process learns them once: handed
    out in alternation, Sort.ptx's bodies cost the two workers 18 % more CPU than in one
    process, its tail alone costs the second worker only what it checks."""
    __slots__ = ("owner", "spans", "cost", "pending", "passed", "lines", "crc")

    def __init__(self, skeleton: Skeleton, owner):

        self.owner = owner
        self.spans = collections.deque(skeleton.spans)
        self.cost = sum(c - o for o, c, _line in skeleton.spans)
        self.pending = 0      # pieces sent and not back
        self.passed = True    # every piece back so far re-emitted its bytes
        self.lines = skeleton.lines
        self.crc = skeleton.crc

    def take(self, size: int, front: bool) -> tuple:
        """(cost, spans): consecutive bodies worth ``size`` characters or more (all that are
        left, at the end), from the front or the back, in file order."""
        pop = self.spans.popleft if front else self.spans.pop
        spans, cost = [], 0
        while self.spans and cost < size:
            o, c, line = pop()
            spans.append((o, c, line))
            cost += c - o
        self.cost -= cost
        self.pending += 1
        return cost, tuple(spans if front else reversed(spans))


def _body_parser(text: str, path: str):
    """``parse``'s own per-body step (the parser's line cutter with the process' shape cache):
    (open, close, line) -> Block, exactly as ``parse`` builds each body of a chunked module."""
    return body_reader(text, path)


def bodies_job(texts: dict, i: int, path, spans, crc: int) -> bool:
    """Worker: True when every body in ``spans`` of file ``i`` parses and re-emits its own
    source bytes, read by this worker's skeleton item or now, with the skeleton's CRC-32
    ``crc`` (False when the file changed in between: the whole-file check decides)."""
    text = texts.get(i)
    if text is None:
        try:
            text, now = _read_file(path)
        except OSError:
            return False
        if now != crc:
            return False
        texts[i] = text
    parse_body = _body_parser(text, str(path))
    for o, c, line in spans:
        try:
            with collector_paused():   # as ``parse`` builds a model
                block = parse_body(o, c, line)
        except PtxSyntaxError:
            return False
        if block.span != (o, c + 1) or emit_node(text, block) != text[o:c + 1]:
            return False
    return True


def _size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


#: the cost of a file beyond its bytes (reading it, a fresh skeleton, new statement shapes),
#: in bytes: measured on the shared corpus, 250 small files cost about 4 kB of a big one each
FILE_COST = 4096
#: batches queued per worker: one running and one waiting, so a worker never idles on the
#: parent (the second only while ``Scheduler._ahead`` allows)
IN_FLIGHT = 2


def _whole(texts: dict, job) -> RoundTrip:
    return check_job(job)


class Scheduler:
    """The workers and the bookkeeping of one run.

    Items are queued by directory (*family*): files of one directory share statement shapes
    (the parser learns each shape once per process), so a worker stays on a directory until it
    is done, then takes the biggest family nobody is on, then helps with the biggest item left.
    Big files' skeletons go first; a split file's bodies then go to the worker that read its
    skeleton, front to back, and to the others from the back once they have nothing else
    (``_Split``), in pieces of a share of what is left in the run, down to half a chunk, so the
    workers end together.  Small files of a family travel in batches of up to ``BATCH`` chunks
    of cost: a worker checking a 30-line test in 0.3 ms would otherwise wait on the parent
    (which shares the cores) between files.  Results come back a batch per message, in order,
    and are handed out in input order as soon as each is known."""

    def __init__(self, work, jobs: int, split: bool):
        # paths as text (what a record shows anyway): a pickled Path is rebuilt part by part,
        # 25 times the cost of its string on each side of the pipe
        self.work = [(str(job[0]), *job[1:]) for job in work]
        self.done: list = [None] * len(work)
        self.splits: dict = {}    # index -> _Split, from its skeleton's return to its verdict
        self.todo: dict = {}      # family -> [(cost, first index, ((handler, index, fn, args), …))]
        sizes = [_size(w[0]) for w in work]
        total = sum(sizes) + FILE_COST * len(work)
        big = total / (SHARE * jobs) if split else float("inf")
        self.chunk = max(1, int(total / (CHUNKS * jobs)))
        self.split_files = tuple(i for i, size in enumerate(sizes) if size > big)
        for i in self.split_files:
            self._add(i, sizes[i], self._skeleton_done, skeleton_job, i, self.work[i][0])
        self._add_wholes([(i, size + FILE_COST) for i, size in enumerate(sizes) if i not in self.split_files])
        self.workers = fork_workers(jobs if self.split_files else min(jobs, len(work)))
        try:
            self._feed()   # every worker process is forked here, before the caller starts threads
        except BaseException:   # Ctrl-C, a worker gone: the workers end with the error
            self._stop(False)
            raise

    def __del__(self):
        """A run dropped before its results were read to the end, or before the first (an
        interrupt between ``check_files`` and the loop over it: a generator that never
        started runs no ``finally``): its workers are stopped, not left checking for nobody."""
        if not all(getattr(w, "exitcode", 0) is not None for w in getattr(self, "workers", ())):
            self._stop(False)

    def _stop(self, wait: bool) -> None:
        """Tell every worker first (after its item, or now), then wait for each."""
        for w in self.workers:
            w.end(wait=wait)
        for w in self.workers:
            w.join()

    def _family(self, i) -> str:
        return os.path.dirname(os.path.abspath(self.work[i][0]))

    def _add(self, i, cost, handler, fn, *args) -> None:
        self.todo.setdefault(self._family(i), []).append((cost, i, ((handler, i, fn, args),)))

    def _add_whole(self, i, cost) -> None:
        self._add(i, cost, self._whole_done, _whole, self.work[i])

    def _add_wholes(self, costs) -> None:
        """Whole-file items, (index, cost) each: consecutive files of a family batched up to
        ``BATCH`` chunks of cost (a file that big alone)."""
        cap = max(1, self.chunk * BATCH)
        open_: dict = {}   # family -> [cost, first index, items]
        for i, cost in costs:
            family = self._family(i)
            cur = open_.get(family)
            if cur is not None and cur[0] + cost > cap:
                self.todo.setdefault(family, []).append((cur[0], cur[1], tuple(cur[2])))
                cur = None
            if cur is None:
                cur = open_[family] = [0, i, []]
            cur[0] += cost
            cur[2].append((self._whole_done, i, _whole, (self.work[i],)))
        for family, (cost, first, items) in open_.items():
            self.todo.setdefault(family, []).append((cost, first, tuple(items)))

    def _feed(self) -> None:
        """Top every worker up to IN_FLIGHT batches, the second only while ``_ahead`` says
        so."""
        for w in self.workers:
            if w.told:
                continue
            while len(w.costs) < IN_FLIGHT and self._has_work() and (not w.costs or self._ahead(w)):
                cost, first, batch = self._pick(w)
                try:
                    w.send(cost, batch)
                except OSError:   # it died on what it had (if anything), not on what it is sent
                    if w.queue:
                        raise self._died(w, w.queue[0][1], self._batch_left(w)) from None
                    raise self._died(w, first, len(batch)) from None
            if not w.costs and not self._has_work():
                w.end(wait=True)   # nothing left for it: it exits while the others finish

    def _has_work(self) -> bool:
        return bool(self.todo) or any(s.spans for s in self.splits.values())

    def _left(self) -> int:
        """The cost of what is not sent yet."""
        return (sum(it[0] for items in self.todo.values() for it in items)
                + sum(s.cost for s in self.splits.values()))

    def _ahead(self, w: Worker) -> bool:
        """Whether ``w``, busy, gets an item queued behind what it has: only while the others
        would not run dry before it starts it.  They check (workers - 1) times ``w``'s backlog
        meanwhile, and more than a chunk each must be left then: an item queued behind a long
        one waits for it while another worker idles (the run's end, or a big body piece)."""
        n = len(self.workers)
        return self._left() - (n - 1) * sum(w.costs) > self.chunk * n

    def _pick(self, w: Worker):
        """The next item for ``w``: the next bodies of a file whose skeleton it read, else a
        family's item (``_pick_family``), else bodies from the back of the split file with
        most left."""
        for i, s in self.splits.items():
            if s.owner is w and s.spans:
                return self._piece(i, s, front=True)
        if self.todo:
            return self._pick_family(w)
        i, s = max(((i, s) for i, s in self.splits.items() if s.spans), key=lambda kv: kv[1].cost)
        return self._piece(i, s, front=False)

    def _owns(self, w: Worker) -> bool:
        return any(s.owner is w and s.spans for s in self.splits.values())

    def _piece(self, i, s: _Split, front: bool):
        size = max(self.chunk // 2, self._left() // (2 * len(self.workers)))
        cost, spans = s.take(size, front)
        return cost, i, ((self._bodies_done, i, bodies_job, (i, self.work[i][0], spans, s.crc)),)

    def _pick_family(self, w: Worker):
        """The biggest item of ``w``'s own family, else of the biggest family no other worker
        is on, else of the biggest family left.  A worker busy with the bodies of a file it
        split is on no family: the big files left beside that file are taken first, not last
        (where one would end the run alone)."""
        if w.family not in self.todo:
            taken = {x.family for x in self.workers if x is not w and not self._owns(x)}
            weight = {f: sum(it[0] for it in items) for f, items in self.todo.items()}
            free = [f for f in weight if f not in taken] or list(weight)
            w.family = max(free, key=lambda f: (weight[f], f))
        items = self.todo[w.family]
        k = max(range(len(items)), key=lambda k: (items[k][0], -items[k][1]))
        item = items.pop(k)
        if not items:
            del self.todo[w.family]
        return item

    def _whole_done(self, i, result: RoundTrip, w: Worker) -> None:
        self.done[i] = result

    def _skeleton_done(self, i, result, w: Worker) -> None:
        if isinstance(result, RoundTrip):
            self.done[i] = result
            return
        self.splits[i] = _Split(result, w)
        if not result.spans:
            self._finish(i)

    def _bodies_done(self, i, passed: bool, w: Worker) -> None:
        s = self.splits[i]
        s.pending -= 1
        if not passed:   # the file is checked whole: its bodies not sent yet are not needed
            s.passed = False
            s.cost -= sum(c - o for o, c, _line in s.spans)
            s.spans.clear()
        if s.pending == 0 and not s.spans:
            self._finish(i)

    def _finish(self, i) -> None:
        s = self.splits.pop(i)
        if not s.passed:   # the whole-file check says what failed, exactly as without the split
            self._add_whole(i, _size(self.work[i][0]))
            return
        self.done[i] = RoundTrip(str(self.work[i][0]), True, True, None, None, s.lines)

    def results(self):
        ended = False
        try:
            for i in range(len(self.work)):
                while self.done[i] is None:
                    self._step()
                yield self.done[i]
            ended = True
        finally:
            self._stop(ended)

    def _died(self, w: Worker, i: int, batch: int = 1):
        """The error for a worker that is gone (the OOM killer, a signal to it alone): exit 2
        naming the file it had (the first of its batch that did not come back), never a result
        missing from the report."""
        code = w.join()
        which = ("this file" if batch == 1 else "this file or the next one in its batch" if batch == 2
                 else f"this file or one of the next {batch - 1} in its batch")
        return SpliceError(f"a worker process ended while checking {which} ({exit_text(code)}); "
                           "rerun with --jobs 1", str(self.work[i][0]))

    def _batch_left(self, w: Worker) -> int:
        """How many of ``w``'s queued items belong to the batch at its head."""
        return next(k + 1 for k, (_h, _i, last) in enumerate(w.queue) if last)

    def _step(self) -> None:

        busy = {w.back: w for w in self.workers if w.queue}
        for fd in select.select(list(busy), [], [])[0]:
            w = busy[fd]
            try:
                outs = w.recv()
            except (EOFError, OSError):
                raise self._died(w, w.queue[0][1], self._batch_left(w)) from None
            for ok, result in outs:
                handler, i, last = w.queue.pop(0)
                if last:
                    w.costs.pop(0)
                if not ok:
                    assert isinstance(result, BaseException), result    # the worker sends its exception
                    raise result
                handler(i, result, w)
        self._feed()
