"""The cheap paths ``splice spec`` takes on a big module give what the full analyses give.

* ``Kernel.defs()`` (computed alone) is ``du()[0]``; ``Kernel.blocks`` is the CFG ``liveness``
  reports; ``indices_of`` lists exactly the instructions of an opcode;
* the weight-field rename re-evaluates only the values that mention the field, and the
  accesses come out as the full re-evaluation (the slow path) gives them;
* the collector helpers restore the collector's state.
"""
from __future__ import annotations

import gc

import pytest

from splice.analysis import Kernel
from splice.analysis import provenance as P
from splice.ptx import Instruction, parse_file
from splice.ptx.index import SourceLines
from splice.util import collector_paused, heap_frozen

from .conftest import MODERN, STANDIN, THIRDPARTY


def _kernels():
    files = sorted(STANDIN.glob("*.ptx")) + sorted(MODERN.glob("*.ptx")) \
        + sorted((THIRDPARTY / "gpuocelot").rglob("*.ptx"))[:20]
    for f in files:
        mod = parse_file(str(f))
        lines = SourceLines(mod.source)
        for fn in mod.entries():
            if fn.body is not None:
                yield f.name, mod, fn.name, lines


KERNELS = list(_kernels())


@pytest.mark.parametrize("name,mod,entry,lines", KERNELS, ids=[f"{k[0]}:{k[2][:30]}" for k in KERNELS])
def test_defs_blocks_and_opcode_index_match_the_full_analyses(name, mod, entry, lines):
    alone = Kernel(mod, entry, lines)
    full = Kernel(mod, entry, lines)
    assert alone.defs() == full.du()[0]
    live = full.liveness
    cfg = alone.blocks
    assert (cfg.starts, cfg.ends, cfg.block_of, cfg.succ, cfg.pred) == \
        (live.starts, live.ends, live.block_of, live.succ, live.pred)
    by_op: dict = {}
    for pos, st in enumerate(alone.stmts):
        if isinstance(st.node, Instruction):
            by_op.setdefault(st.node.opcode, []).append(pos)
    assert {op: alone.indices_of(op) for op in by_op} == by_op
    assert alone.indices_of("no-such-opcode") == []


def _full_rename(self, field):
    """The slow path of ``Provenance._rename``: everything evaluated again."""
    self._memo = {}
    self._accesses = None


@pytest.mark.parametrize("name,mod,entry,lines", KERNELS, ids=[f"{k[0]}:{k[2][:30]}" for k in KERNELS])
def test_partial_rename_gives_the_full_reevaluation(name, mod, entry, lines, monkeypatch):
    fast = Kernel(mod, entry, lines).provenance
    got = [(a.pos, a.kind, a.space, a.bytes, a.addr, a.regs) for a in fast.accesses]
    monkeypatch.setattr(P.Provenance, "_rename", _full_rename)
    slow = Kernel(mod, entry, lines).provenance
    want = [(a.pos, a.kind, a.space, a.bytes, a.addr, a.regs) for a in slow.accesses]
    assert fast.weight_atom == slow.weight_atom
    assert got == want


def test_partial_rename_is_taken_and_rewrites_the_field():
    """On enc5 the weight field is found, the partial pass runs (no cut at _MAX_DEPTH) and no
    access address keeps the field's old name."""
    k = Kernel.load(STANDIN / "enc5.ptx")
    prov = k.provenance
    assert prov.weight_atom and not prov._truncated
    assert any(P.coef(a.addr, "W") for a in prov.accesses if a.addr)
    assert not any(P._mentions(a.addr, prov.weight_atom) for a in prov.accesses if a.addr)


def test_collector_helpers_restore_the_collector():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    with heap_frozen():
        with collector_paused(freeze=True):
            assert not gc.isenabled()
            kept = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(kept)
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()      # it was off: it stays off
    finally:
        gc.enable()
