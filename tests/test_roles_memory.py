"""The memory table of splice.analysis.roles: one statement per PTX memory family (PTX ISA 9.0),
its facts, and the passes that read them (taint, slices, provenance, the probe's parameter
trace, the epilogue stages) agreeing on the same statements."""
from __future__ import annotations

import io
import subprocess
import tokenize
from pathlib import Path
from types import SimpleNamespace

import pytest

from splice.analysis import Kernel, roles, slices, taint
from splice.analysis.roles import READ, READ_WRITE, WRITE
from splice.ptx import Instruction, parse

HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
  .reg .pred %p<8>;
  .reg .b16 %rs<8>;
  .reg .b32 %r<40>;
  .reg .f32 %f<16>;
  .reg .b64 %rd<8>;
"""
F8 = "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}"
R4 = "{%r1, %r2, %r3, %r4}"
R8 = "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}"


def kernel_of(body: str) -> Kernel:
    return Kernel(parse(HEAD + body + "\n  ret;\n}\n"))


def instr(line: str):
    k = kernel_of("  " + line)
    return next(s.node for s in k.stmts if isinstance(s.node, Instruction) and s.node.opcode != "ret")


# statement, (kind, effect, addr, space, src, src space, mbar, out, data), impure, opaque
# ``None`` for the access: the statement reads and writes no memory.
FAMILIES = [
    ("ld.global.u32 %r1, [%rd1];", ("ld", READ, 1, "global", None, None, None, (0,), ()), False, False),
    ("ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];",
     ("ld", READ, 1, "global", None, None, None, (0,), ()), False, False),
    ("ld.u32 %r1, [%rd1];", ("ld", READ, 1, "generic", None, None, None, (0,), ()), False, False),
    ("ld.param.u64 %rd1, [k_param_0];", ("ld", READ, 1, "param", None, None, None, (0,), ()), False, False),
    ("ld.volatile.shared.u32 %r1, [%r2];", ("ld", READ, 1, "shared", None, None, None, (0,), ()), True, False),
    ("ld.acquire.gpu.global.u32 %r1, [%rd1];",
     ("ld", READ, 1, "global", None, None, None, (0,), ()), True, False),
    ("ld.local.u32 %r1, [%rd1];", ("ld", READ, 1, "local", None, None, None, (0,), ()), False, False),
    ("ld.const.u32 %r1, [%rd1];", ("ld", READ, 1, "const", None, None, None, (0,), ()), False, False),
    ("ld.shared::cluster.u32 %r1, [%r2];",
     ("ld", READ, 1, "shared::cluster", None, None, None, (0,), ()), False, False),
    ("ldu.global.f32 %f1, [%rd1];", ("ld", READ, 1, "global", None, None, None, (0,), ()), False, False),
    ("st.global.u32 [%rd1], %r1;", ("st", WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    ("st.shared::cta.v4.u32 [%r5], {%r1, %r2, %r3, %r4};",
     ("st", WRITE, 0, "shared", None, None, None, (), (1,)), True, False),
    ("st.global.L2::cache_hint.u32 [%rd1], %r1, %rd2;",
     ("st", WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];",
     ("st", WRITE, 0, "shared::cluster", None, None, 2, (), (1,)), True, False),
    ("st.bulk.weak.shared::cta [%r1], 128, 0;", ("st", WRITE, 0, "shared", None, None, None, (), ()), True, False),
    ("red.global.add.u32 [%rd1], %r1;", ("red", READ_WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
     ("red", READ_WRITE, 0, "shared::cluster", None, None, 2, (), (1,)), True, False),
    ("atom.global.cas.b32 %r1, [%rd1], %r2, %r3;",
     ("atom", READ_WRITE, 1, "global", None, None, None, (0,), (2, 3)), True, False),
    ("atom.shared.add.u32 %r1, [%r2], 1;",
     ("atom", READ_WRITE, 1, "shared", None, None, None, (0,), (2,)), True, False),
    ("cp.async.ca.shared.global [%r1], [%rd1], 16;",
     ("cp", WRITE, 0, "shared", 1, "global", None, (), ()), True, False),
    ("cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;",
     ("cp", WRITE, 0, "shared", 1, "global", None, (), ()), True, False),
    ("cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];",
     ("", READ_WRITE, 0, "shared", None, None, None, (), ()), True, False),
    ("cp.async.commit_group;", None, True, False),
    ("cp.async.wait_group 0;", None, True, False),
    ("cp.async.wait_all;", None, True, False),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];",
     ("cp", WRITE, 0, "shared::cluster", 1, "global", 3, (), ()), True, False),
    ("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r2;",
     ("cp", WRITE, 0, "global", 1, "shared", None, (), ()), True, False),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
     ("cp", WRITE, 0, "shared::cluster", 1, "global", 2, (), ()), True, False),
    ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r3}], [%r1];",
     ("cp", WRITE, 0, "global", 1, "shared", None, (), ()), True, False),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], %r2;",
     ("cp", READ_WRITE, 0, "global", 1, "shared", None, (), ()), True, False),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];",
     ("cp", READ_WRITE, 0, "global", 1, "shared", None, (), ()), True, False),
    ("cp.async.bulk.prefetch.L2.global [%rd1], %r1;", ("cp", READ, 0, "global", None, None, None, (), ()), False, False),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2}];",
     ("cp", READ, 0, "global", None, None, None, (), ()), False, False),
    ("cp.async.bulk.commit_group;", None, True, False),
    ("cp.async.bulk.wait_group.read 0;", None, True, False),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];",
     ("ldmatrix", READ, 1, "shared", None, None, None, (0,), ()), False, False),
    ("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r5], {%r1, %r2, %r3, %r4};",
     ("stmatrix", WRITE, 0, "shared", None, None, None, (), (1,)), True, False),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", None, False, True),
    (f"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}}, [%rd1], 16;",
     ("ld", READ, 1, "global", None, None, None, (0,), ()), False, False),
    (f"wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {F8}, 16;",
     ("st", WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    (f"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {F8}, {R8}, {R8}, {F8};", None, False, True),
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];",
     ("tex", READ, 1, "tex", None, None, None, (0,), ()), False, False),
    ("tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];",
     ("tld4", READ, 1, "tex", None, None, None, (0,), ()), False, False),
    ("txq.width.b32 %r1, [%rd1];", None, False, True),
    ("suld.b.1d.b32.trap {%r1}, [%rd1, {%r2}];", ("suld", READ, 1, "surf", None, None, None, (0,), ()), False, False),
    ("sust.b.1d.b32.trap [%rd1, {%r2}], {%r1};", ("sust", WRITE, 0, "surf", None, None, None, (), (1,)), True, False),
    ("sured.b.add.1d.u32.trap [%rd1, {%r2}], %r1;",
     ("sured", READ_WRITE, 0, "surf", None, None, None, (), (1,)), True, False),
    ("suq.width.b32 %r1, [%rd1];", None, False, True),
    ("prefetch.global.L2 [%rd1];", ("", READ, 0, "global", None, None, None, (), ()), False, False),
    ("prefetchu.L1 [%rd1];", ("", READ, 0, "generic", None, None, None, (), ()), False, False),
    ("prefetch.tensormap [%rd1];", ("", READ, 0, "generic", None, None, None, (), ()), False, False),
    ("applypriority.global.L2::evict_normal [%rd1], 128;", None, False, False),
    ("discard.global.L2 [%rd1], 128;", ("", WRITE, 0, "global", None, None, None, (), ()), True, False),
    ("createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;", None, False, False),
    ("mbarrier.init.shared::cta.b64 [%r1], %r2;", ("", WRITE, 0, "shared", None, None, None, (), (1,)), True, False),
    ("mbarrier.inval.shared::cta.b64 [%r1];", ("", WRITE, 0, "shared", None, None, None, (), ()), True, False),
    ("mbarrier.arrive.shared::cta.b64 %rd1, [%r1];",
     ("", READ_WRITE, 1, "shared", None, None, None, (0,), ()), True, False),
    ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;",
     ("", READ_WRITE, 1, "shared", None, None, None, (0,), ()), True, False),
    ("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], 16;",
     ("", READ_WRITE, 0, "shared", None, None, None, (), ()), True, False),
    ("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r1], 16;",
     ("", READ_WRITE, 0, "shared", None, None, None, (), ()), True, False),
    ("mbarrier.test_wait.shared::cta.b64 %p1, [%r1], %rd1;",
     ("", READ, 1, "shared", None, None, None, (0,), ()), True, False),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
     ("", READ, 1, "shared", None, None, None, (0,), ()), True, False),
    ("mbarrier.pending_count.b64 %r1, %rd1;", None, False, False),
    ("mbarrier.arrive_drop.shared::cta.b64 %rd1, [%r1];",
     ("", READ_WRITE, 1, "shared", None, None, None, (0,), ()), True, False),
    ("fence.proxy.async.shared::cta;", None, True, False),
    ("fence.acq_rel.gpu;", None, True, False),
    ("membar.gl;", None, True, False),
    ("multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];",
     ("ld", READ, 1, "global", None, None, None, (0,), ()), True, False),
    ("multimem.st.relaxed.sys.global.u32 [%rd1], %r1;",
     ("st", WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    ("multimem.red.relaxed.sys.global.add.u32 [%rd1], %r1;",
     ("red", READ_WRITE, 0, "global", None, None, None, (), (1,)), True, False),
    ("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r1], 1, %r2;",
     ("", READ_WRITE, 0, "shared", None, None, None, (), (2,)), True, False),
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;",
     ("", WRITE, 0, "global", 1, "shared", None, (), ()), True, False),
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
     ("", WRITE, 0, "shared", None, None, 1, (), ()), True, False),
    ("cvta.to.global.u64 %rd1, %rd2;", None, False, False),
    ("isspacep.global %p1, %rd1;", None, False, True),
    ("istypep.texref %p1, %rd1;", None, False, False),
    ("ld.global.nc.L1::no_allocate.u32 %r1, [%rd1];",
     ("ld", READ, 1, "global", None, None, None, (0,), ()), False, False),
    ("alloca.u64 %rd1, 16;", None, True, True),
    ("stacksave.u64 %rd1;", None, True, True),
    ("stackrestore.u64 %rd1;", None, True, False),
    ("setmaxnreg.inc.sync.aligned.u32 240;", None, True, False),
    ("bar.sync 0;", None, True, True),
    ("griddepcontrol.wait;", None, True, False),
    ("trap;", None, True, False),
    ("exit;", None, True, False),
    ("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", None, False, True),
    ("add.s32 %r1, %r2, %r3;", None, False, False),
]


@pytest.mark.parametrize("line, facts, impure, opaque", FAMILIES, ids=[f[0].split(" ")[0] for f in FAMILIES])
def test_family_facts(line, facts, impure, opaque):
    node = instr(line)
    acc = roles.memory_access(node)
    if facts is None:
        assert acc is None
    else:
        kind, effect, addr, space, src, src_space, mbar, out, data = facts
        assert (acc.kind, acc.effect, acc.addr, acc.space) == (kind, effect, addr, space)
        assert (acc.src, acc.src_space, acc.mbar, acc.out, acc.data) == (src, src_space, mbar, out, data)
    assert roles.is_impure(node) is impure
    assert roles.is_opaque(node) is opaque


@pytest.mark.needs("ptxas")
def test_family_statements_are_ptx(tmp_path):
    """The facts are about real statements: ptxas assembles every one of them."""
    body = "\n".join("  " + f[0] for f in FAMILIES if f[0] not in ("exit;", "trap;"))
    src = tmp_path / "families.ptx"
    src.write_text(HEAD.replace("sm_90a", "sm_100a") + body + "\n  ret;\n}\n")
    from splice.ptx.sass import require_tool

    r = subprocess.run([require_tool("ptxas"), "-arch", "sm_100a", str(src), "-o", str(tmp_path / "f.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("line, index", [
    ("txq.width.b32 %r1, [%rd1];", 1),                        # an image handle, no data moved
    ("suq.width.b32 %r1, [%rd1];", 1),
    ("applypriority.global.L2::evict_normal [%rd1], 128;", 0),
    ("ld.global.u32 %r1, [%rd1];", 1),
    ("add.s32 %r1, %r2, %r3;", None),
    ("isspacep.global %p1, %rd1;", None),                     # a register, not an access
])
def test_address_operand(line, index):
    assert roles.address_operand(instr(line)) == index


def test_every_family_of_the_table_is_exercised():
    """A row added to MEMORY_TABLE without a statement here is a fact nobody checked."""
    names = [instr(f[0]).name for f in FAMILIES]
    missing = [key for key in roles.MEMORY_TABLE
               if not any(n == key or n.startswith(key + ".") for n in names)]
    assert sorted(missing) == sorted([     # no memory: register-only, collective or control rows
        "wgmma", "tcgen05", "barrier", "nanosleep", "vote", "match", "redux", "activemask", "elect",
        "getctarank", "mapa", "bra", "brx", "call", "ret", "brkpt", "pmevent", "mma"])


def test_state_spaces_in_written_order():
    assert roles.state_spaces("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") == \
        ("shared::cluster", "global")
    assert roles.state_spaces("ld.param::entry.u32") == ("param",)
    assert roles.mem_space("cp.async.ca.shared.global") == "shared"      # was 'global': the source's
    assert roles.mem_space("st.u32") == "generic"


@pytest.mark.parametrize("name, spaces", [
    ("st.global.u32", ("global",)),
    ("cp.async.ca.shared.global", ("shared",)),
    ("cp.async.bulk.tensor.2d.global.shared", ("global",)),    # a TMA store writes global memory
    ("cp.async.wait_group", ()),
    ("cp.async.bulk.commit_group", ()),
    ("atom.shared.add.u32", ("shared",)),
    ("sust.b.1d.b32.trap", ("surf",)),
    ("ld.global.u32", ()),
])
def test_written_spaces(name, spaces):
    assert roles.written_spaces(name) == spaces


# --- the passes read the table and nothing else -------------------------------------------------

USERS = ["splice/analysis/taint.py", "splice/analysis/slices.py", "splice/analysis/provenance.py",
         "splice/probe/language/init.py", "splice/analysis/param_trace.py", "splice/probe/instrument/epilogue_stages.py"]
DOC = ('"' * 3, "'" * 3)
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", USERS)
def test_no_private_memory_sets(path):
    """The old per-module sets are gone, and no memory family is named by string there."""
    text = (ROOT / path).read_text()
    for old in ("_LOADS", "_ADDRESSED", "_IMPURE", "_ACCESS_OPS", "_READ =", "_WRITE =", "_BOTH",
                "_STORES", "wmma_memory"):
        assert old not in text, f"{path}: {old}"
    families = ("ldu", "ldmatrix", "stmatrix", "tld4", "suld", "sust", "sured", "prefetch", "mbarrier",
                "multimem", "atom", "red", "cp", "wmma")      # 'tex' is also a space's name
    quoted = [t.string.strip("'\"") for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type == tokenize.STRING and not t.string.startswith(DOC)]
    assert not [q for q in quoted if q in families], path
    assert "roles" in text


def _pair(texts: list):
    """A stand-in for a probe Pair: each cut's original statements are one text."""
    original = "\n".join(texts)
    cuts, at = [], 0
    for i, t in enumerate(texts):
        cuts.append(SimpleNamespace(region=(at, at + len(t)), binding=SimpleNamespace(site=[], prelude=[]),
                                    cut=SimpleNamespace(index=i + 1), title=f"c{i + 1}"))
        at += len(t) + 1
    return SimpleNamespace(original=original, cuts=cuts, plan=None)


def test_epilogue_stages_writers_from_the_table():
    """Fixes: ``cp.async.wait_group`` was a memory writer (``cp`` minus ``.shared``) and a TMA
    store ``cp.async.bulk.tensor….global.shared::cta`` was not (its name mentions ``.shared``)."""
    from splice.probe.instrument.epilogue_stages import memory_writers

    pair = _pair(["\tcp.async.wait_group 0;", "\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
                  "[%rd1, {%r2, %r3}], [%r1];", "\tst.shared.u32 [%r1], %r2;", "\tsust.b.1d.b32.trap [%rd1, {%r2}], {%r1};",
                  "\tcp.async.ca.shared.global [%r1], [%rd1], 16;"])
    assert memory_writers(pair) == [(2, "c2"), (4, "c4")]


COPY = """  ld.param.u64 %rd1, [k_param_0];
  ld.param.u64 %rd2, [k_param_1];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, 0;
  cp.async.ca.shared.global [%r1], [%rd3], 16;
  cp.async.wait_all;
  ld.shared.f32 %f1, [%r1];
  st.global.f32 [%rd4], %f1;"""


def test_probe_init_reads_a_copy_source():
    """Fix: the parameter a ``cp.async`` copies from is an input (the old trace skipped every
    name mentioning ``.shared``, so the global source of a copy to shared was never seen)."""
    from splice.analysis.param_trace import trace

    uses = trace(kernel_of(COPY))
    assert {lab: (u.reads, u.writes) for lab, u in uses.items()} == {(0, 0): (1, 0), (1, 0): (0, 1)}


def test_provenance_copy_and_surface_reduction():
    """Fixes: a copy's access carries its destination's space (it was the source's), ``sured``
    is an access (it was missing), and a store's registers are its data, not its cache policy."""
    k = kernel_of(COPY + "\n  sured.b.add.1d.u32.trap [%rd1, {%r2}], %r3;"
                  "\n  st.global.L2::cache_hint.u32 [%rd4], %r2, %rd2;")
    got = [(a.kind, a.space, a.effect, a.regs) for a in k.provenance.accesses]
    assert got == [("ld", "param", READ, ("%rd1",)), ("ld", "param", READ, ("%rd2",)),
                   ("cp", "shared", WRITE, ()), ("ld", "shared", READ, ("%f1",)),
                   ("st", "global", WRITE, ("%f1",)), ("sured", "surf", READ_WRITE, ("%r3",)),
                   ("st", "global", WRITE, ("%r2",))]


def test_taint_wmma_mma_is_not_a_load():
    """Fix: taint called every ``wmma`` a load, so an address computed from ``wmma.mma``'s D
    was "memory"; only ``wmma.load`` reads memory (``wmma.mma`` is register to register)."""
    body = (f"  wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {F8}, {R8}, {R8}, {F8};\n"
            "  cvt.rzi.u64.f32 %rd1, %f1;\n  ld.global.u32 %r9, [%rd1];\n"
            "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}, "
            "[%rd2], 16;\n  cvt.u64.u32 %rd3, %r11;\n  ld.global.u32 %r9, [%rd3];")
    k = kernel_of(body)
    ns = [s.n for s in k.stmts if s.n is not None]
    hits = taint.address_taints(k, ns[0], ns[-1], [])
    assert [(h.register, h.seed) for h in hits] == [
        ("%rd3", "memory read by wmma.load.a.sync.aligned.row.m16n16k16.global.f16")]


def test_taint_checks_every_access_of_the_table():
    """Fix: ``discard`` and ``tensormap.replace`` form addresses too (the old list lacked them)."""
    k = kernel_of("  discard.global.L2 [%rd1], 128;\n"
                  "  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r1], 1, %r2;\n"
                  "  applypriority.global.L2::evict_normal [%rd1], 128;")
    ns = [s.n for s in k.stmts if s.n is not None]
    hits = taint.address_taints(k, ns[0], ns[-1], ["%rd1", "%r1"])
    assert [h.opcode.split(".")[0] for h in hits] == ["discard", "tensormap"]


@pytest.mark.parametrize("line, why", [
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", "not a pure function"),   # fix: lanes
    ("ld.global.u32 %r1, [%rd1];", "reads memory"),
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];", "reads memory"),
    ("atom.global.add.u32 %r1, [%rd1], 1;", "not a pure function"),
    ("isspacep.global %p1, %rd1;", "not a pure function"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", "reads memory"),
    ("ld.param.u64 %rd1, [k_param_0];", None),
    ("cvta.to.global.u64 %rd1, %rd2;", None),
    ("mbarrier.pending_count.b64 %r1, %rd1;", None),                              # its operand only
])
def test_slices_purity(line, why):
    got = slices._pure(instr(line))
    assert (got is None) if why is None else (why in got)


@pytest.mark.parametrize("line", [f[0] for f in FAMILIES if f[1] is not None])
def test_passes_agree_on_every_access(line):
    """One statement, one answer: an access is never replayed by slices, its address registers
    are checked by taint, and provenance lists it exactly when the table gives it a kind."""
    node = instr(line)
    acc = roles.memory_access(node)
    if not (acc.effect == READ and acc.space == "param"):
        assert slices._pure(node) is not None
    k = kernel_of("  " + line)
    regs: list = []
    for op in roles.address_operands(node):
        roles._collect(op, regs)
    regs = [r for r in regs if r.startswith("%")]
    ns = [s.n for s in k.stmts if s.n is not None]
    hits = taint.address_taints(k, ns[0], ns[-1], regs)
    assert bool(hits) == bool(regs)
    assert bool(k.provenance.accesses) == bool(acc.kind)


def test_spec_shared_arrays_count_a_copy_as_a_store():
    """Fix: a ``cp.async`` into a shared array wrote it, but the array table listed it as a load."""
    from splice.analysis.spec import shared_arrays

    src = (HEAD.replace("{\n", "{\n  .shared .align 16 .b8 buf[64];\n", 1)
           + "  ld.param.u64 %rd1, [k_param_0];\n  mov.u32 %r1, buf;\n"
           "  cp.async.ca.shared.global [%r1], [%rd1], 16;\n  ld.shared.u32 %r2, [%r1];\n  ret;\n}\n")
    k = Kernel(parse(src))
    arrays = shared_arrays(k)
    (name, row), = arrays.items()
    assert (len(row["stores"]), len(row["loads"])) == (1, 1)


def test_verify_wmma_load_observes_memory():
    """Fix: the checker's own load list lacked ``wmma.load``, so a fragment load moved past a
    store to its address was proved equal (the load was a pure function of its address)."""
    from splice.verify.canon import Graph
    from splice.verify.dataflow import Evaluator

    load = "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%o, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%rd], 16;"

    def value(text):
        body = parse(".version 8.0\n.target sm_90\n.address_size 64\n.entry v()\n{\n" + text + "\n}\n",
                     "<t>", cache=False).function("v").body.items
        ev = Evaluator(g, lambda s: ("n", "<t>", s.line))
        return ev.read(ev.run(body), "%o")

    g = Graph()
    assert value(load) == value(load)
    assert value("st.global.u32 [%rd], %x; " + load) != value(load + " st.global.u32 [%rd], %x;")


@pytest.mark.parametrize("line", [f[0] for f in FAMILIES if f[1] is not None and "%rd1" in f[0]])
def test_probe_init_agrees_with_the_table(line):
    """A parameter pointer that reaches a statement's caller-visible address is read, written
    or both exactly as the table's effect says (a copy's source is read); any other use of it
    gives the parameter no role."""
    from splice.analysis.param_trace import trace

    node = instr(line)
    acc = roles.memory_access(node)
    expect = set()
    for i, space, effect in acc.addresses()[:2]:
        regs: list = []
        roles._collect(node.operands[i], regs)
        if "%rd1" in regs and space in ("global", "generic", "tex", "surf"):
            expect.add((effect != WRITE, effect != READ))
    uses = trace(kernel_of("  ld.param.u64 %rd1, [k_param_0];\n  " + line))
    got = {(u.reads > 0, u.writes > 0) for u in uses.values()}
    assert got == expect
