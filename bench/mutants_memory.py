"""Mutants over every memory form ``splice verify`` models, with their ground truth.

Each mutant is a small sm_90a kernel (``kernel``): a prologue fills shared memory, a scratch
global buffer, a local buffer and per-thread values from the input; the **cut** is a few memory
instructions; an epilogue writes the registers the cut loaded and a dump of shared memory to the
output.  The mutant is the cut's own extracted native code (``splice extract``) edited — two
instructions swapped, one moved across an ordering point, one dropped, an offset changed — and
spliced back by ``splice apply`` (``plan.text``: the module the GPU runs is the one verify
judged).

The ground truth (``Mutant.truth``) is known by construction, under the PTX memory model
(ISA 9.1 chapter 8), not under one compiler's schedule:

* ``equal``     — the same bytes for every input: disjoint addresses in every lane, loads moved
  past loads, reorders inside one lane's private memory;
* ``different`` — different bytes on every execution the memory model allows: a store and an
  access to the same bytes in the other order *in one lane* (program order), or across lanes
  where a barrier orders them (``bar.sync``, ``bar.warp.sync``, an mbarrier phase waited for)
  or a warp-collective access (``ldmatrix``, ``stmatrix``, ``wmma``: each lane takes part after
  its earlier accesses) carries the bytes; a store moved across the wait that made it visible,
  a dropped store or load;
* ``racy``      — the outputs may or may not differ: an asynchronous copy, wgmma or
  texture/surface access whose completion the mutant no longer waits for, or two lanes'
  conflicting accesses that nothing orders (a data race: ptxas may move a load past another
  lane's store to a disjoint per-thread address, and does — the SASS of ``st [x+4]; ld [x]``
  loads first).

Soundness: no mutant whose truth is ``different`` or ``racy`` may be proved equal, and none
whose truth is ``equal`` proved different.  ``tests/test_verify_mutants.py`` checks every CPU
verdict; ``bench/verify_mutants.py`` runs original and mutant on an H200 and compares the bits.

Mutants whose ``gpu`` is False use forms the bench cannot launch (a multicast object): they
get a CPU verdict and a ptxas check only.  Every address a kernel forms is checked against the
ISA's alignment rules and the bed's buffers before anything runs (``bench/mutants_layout.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import mutants_async as ma

ROOT = Path(__file__).resolve().parents[1]
HEADER = ".version 8.6\n.target {arch}\n.address_size 64\n"
IN_BYTES, OUT_BYTES, G_BYTES = 16384, 65536, 16384
SURF_ELEMS = 256                  # the CUDA array behind the texture and the surface (int32)
CUT_BEGIN, CUT_END = "// cut begins", "// cut ends"


@dataclass(frozen=True)
class Mutant:
    id: str
    form: str                     # the instruction form under test
    scenario: str                 # what the edit does
    truth: str                    # equal | different | racy
    cut: tuple                    # the cut's instructions, with the kernel's registers
    edits: tuple                  # ("swap", i, j) | ("move", i, j) | ("drop", i) | ("sub", i, pattern, repl)
    threads: int = 32
    gpu: bool = True
    arch: str = "sm_90a"
    prologue: tuple = ()          # extra prologue lines (before the cut's bar.sync)
    tmap: bool = False            # the host writes a tensor map into the input (mutants_async)


# --- the kernel every mutant lives in ---------------------------------------------------------
# %rd1 in  %rd2 out  %rd3 g (scratch global)  %rd4 texture  %rd5 surface
# %rd10 smem (uniform)  %rd11 smem+4·tid  %rd12 smem+16·tid  %rd13 smem+64·tid  %rd14 g+4·tid
# %rd15 lbuf (.local)  %rd16 g+64·tid  %rd17 g+16·tid  %rd18 smem+8·tid
# %r1 tid.x  %r2 4·tid.x  %r10-%r17 per-thread values  %r18 %r19 values the same in every thread
# %r20-%r35 and %f0-%f7: the cut's results (zero before it)  %f8-%f15 values  %p1 true
_DECLS = """\t.reg .pred %p<8>;
\t.reg .b16 %h<8>;
\t.reg .b32 %r<64>;
\t.reg .f32 %f<16>;
\t.reg .b64 %rd<48>;
\t.shared .align 128 .b8 smem[4096];
\t.local .align 16 .b8 lbuf[64];"""


def _prologue(threads: int) -> list:
    chunk = 4096 // threads               # bytes of shared memory each thread fills and dumps
    out = [f"ld.param.u64 %rd{i}, [{p}];" for i, p in ((1, "pin"), (2, "pout"), (3, "pg"), (4, "ptex"), (5, "psurf"))]
    out += [f"cvta.to.global.u64 %rd{i}, %rd{i};" for i in (1, 2, 3)]
    out += ["mov.u32 %r1, %tid.x;", "shl.b32 %r2, %r1, 2;", "mov.u64 %rd10, smem;", "mov.u64 %rd15, lbuf;"]
    for reg, base, scale in ((11, 10, 4), (12, 10, 16), (13, 10, 64), (18, 10, 8), (14, 3, 4), (16, 3, 64), (17, 3, 16)):
        out += [f"mul.wide.u32 %rd{20 + reg}, %r1, {scale};", f"add.s64 %rd{reg}, %rd{base}, %rd{20 + reg};"]
    out += ["mul.wide.u32 %rd6, %r1, 32;", "add.s64 %rd7, %rd1, %rd6;",
            "ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd7];",
            "ld.global.v4.u32 {%r14, %r15, %r16, %r17}, [%rd7+16];",
            "ld.global.v2.u32 {%r18, %r19}, [%rd1+4096];",
            f"mul.wide.u32 %rd8, %r1, {chunk};", "add.s64 %rd9, %rd1, %rd8;", "add.s64 %rd9, %rd9, 8192;",
            "add.s64 %rd19, %rd10, %rd8;"]
    for k in range(chunk // 16):
        out += [f"ld.global.v4.u32 {{%r36, %r37, %r38, %r39}}, [%rd9+{16 * k}];",
                f"st.shared.v4.u32 [%rd19+{16 * k}], {{%r36, %r37, %r38, %r39}};"]
    for k in range(4):
        out.append(f"st.local.v4.u32 [%rd15+{16 * k}], {{%r1{k}, %r1{k + 1}, %r1{k + 2}, %r1{k + 3}}};")
    out += [f"mov.b32 %f{8 + k}, %r1{k};" for k in range(8)]
    out += ["cvt.u16.u32 %h0, %r18;", "cvt.u16.u32 %h1, %r19;"]
    out += [f"mov.b32 %r{k}, 0;" for k in range(20, 36)] + [f"mov.f32 %f{k}, 0f00000000;" for k in range(8)]
    out.append("setp.eq.u32 %p1, %r1, %r1;")
    return out


def _epilogue(threads: int) -> list:
    chunk = 4096 // threads
    out = ["mul.wide.u32 %rd40, %r1, 64;", "add.s64 %rd41, %rd2, %rd40;"]
    for k in range(4):
        regs = ", ".join(f"%r{20 + 4 * k + j}" for j in range(4))
        out.append(f"st.global.v4.u32 [%rd41+{16 * k}], {{{regs}}};")
    out += ["mul.wide.u32 %rd42, %r1, 32;", "add.s64 %rd43, %rd2, %rd42;", "add.s64 %rd43, %rd43, 16384;",
            "st.global.v4.f32 [%rd43], {%f0, %f1, %f2, %f3};", "st.global.v4.f32 [%rd43+16], {%f4, %f5, %f6, %f7};",
            f"mul.wide.u32 %rd44, %r1, {chunk};", "add.s64 %rd45, %rd2, %rd44;", "add.s64 %rd45, %rd45, 32768;",
            "add.s64 %rd46, %rd10, %rd44;"]
    for k in range(chunk // 16):
        out += [f"ld.shared.v4.u32 {{%r36, %r37, %r38, %r39}}, [%rd46+{16 * k}];",
                f"st.global.v4.u32 [%rd45+{16 * k}], {{%r36, %r37, %r38, %r39}};"]
    return out + ["ret;"]


def kernel(mut: Mutant, name: str = "mutant") -> str:
    """The original kernel of a mutant: prologue, bar.sync, the cut, bar.sync, epilogue."""
    body = _prologue(mut.threads) + list(mut.prologue) + ["bar.sync 0;", CUT_BEGIN, *mut.cut, CUT_END,
                                                          "bar.sync 0;"] + _epilogue(mut.threads)
    params = ", ".join(f".param .u64 {p}" for p in ("pin", "pout", "pg", "ptex", "psurf"))
    return (HEADER.format(arch=mut.arch) + f"\n.visible .entry {name}({params})\n{{\n{_DECLS}\n\n"
            + "\n".join("\t" + line for line in body) + "\n}\n")


def cut_range(k, text: str) -> tuple:
    """(first, last) statement numbers of the cut in kernel ``k`` built from ``text``."""
    lines = text.splitlines()
    a = lines.index("\t" + CUT_BEGIN) + 1
    b = lines.index("\t" + CUT_END) + 1
    nums = [s.n for s in k.stmts if s.n is not None and a < s.line < b]
    return nums[0], nums[-1]


def edit(native: str, edits) -> str:
    """The native file with its body lines (one instruction each) edited."""
    lines = native.splitlines()
    idx = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("//")]
    body = [lines[i] for i in idx]
    for e in edits:
        if e[0] == "swap":
            body[e[1]], body[e[2]] = body[e[2]], body[e[1]]
        elif e[0] == "move":
            body.insert(e[2], body.pop(e[1]))
        elif e[0] == "drop":
            body.pop(e[1])
        elif e[0] == "sub":
            new = re.sub(e[2], e[3], body[e[1]], count=1)
            if new == body[e[1]]:
                raise ValueError(f"edit {e} changes nothing in {body[e[1]]!r}")
            body[e[1]] = new
        else:
            raise ValueError(f"unknown edit {e}")
    head = [ln for ln in lines[:idx[0]]] if idx else lines
    return "\n".join(head + body) + "\n"


# --- the mutants -------------------------------------------------------------------------------
SWAP = (("swap", 0, 1),)
ORDERS = ("bar.sync 0;", "bar.warp.sync -1;", "membar.cta;", "fence.acq_rel.cta;", "fence.sc.cta;",
          "fence.proxy.async.shared::cta;", "membar.gl;")


def _plain() -> list:
    """Per-thread ld/st: shared, global, local; scalar and vector; overlapping, cross-lane,
    disjoint off a uniform base, disjoint off per-lane bases."""
    out = []
    for sp, uni, lane, wide, vec, val in (("shared", "%rd10", "%rd11", "%rd13", "%rd12", "%r10"),
                                          ("global", "%rd3", "%rd14", "%rd16", "%rd17", "%r10")):
        f = f"st.{sp}+ld.{sp}"
        out += [
            (f, "same address, swapped", "different", (f"st.{sp}.u32 [{lane}], {val};", f"ld.{sp}.u32 %r20, [{lane}];"), SWAP),
            # lane T loads the word lane T-1 stores, and nothing orders the two lanes: a data race
            (f, "neighbour lane's word, swapped (no barrier: a race)", "racy",
             (f"st.{sp}.u32 [{lane}+4], {val};", f"ld.{sp}.u32 %r20, [{lane}];"), SWAP),
            (f, "neighbour lane's word, load and store exchanged across bar.warp.sync", "different",
             (f"st.{sp}.u32 [{lane}+4], {val};", "bar.warp.sync -1;", f"ld.{sp}.u32 %r20, [{lane}];"), (("swap", 0, 2),)),
            (f, "disjoint in every lane (per-lane base, stride 4), swapped", "equal",
             (f"st.{sp}.u32 [{lane}+128], {val};", f"ld.{sp}.u32 %r20, [{lane}];"), SWAP),
            (f, "disjoint in every lane (per-lane base, stride 64), swapped", "equal",
             (f"st.{sp}.u32 [{wide}+4], {val};", f"ld.{sp}.u32 %r20, [{wide}];"), SWAP),
            (f, "uniform base, disjoint words, swapped", "equal", (f"st.{sp}.u32 [{uni}+4], %r18;", f"ld.{sp}.u32 %r20, [{uni}];"), SWAP),
            (f, "uniform base, same word, swapped", "different", (f"st.{sp}.u32 [{uni}], %r18;", f"ld.{sp}.u32 %r20, [{uni}];"), SWAP),
            (f, "uniform base, u16 store inside the u32 load, swapped", "different",
             (f"st.{sp}.u16 [{uni}+2], %h0;", f"ld.{sp}.u32 %r20, [{uni}];"), SWAP),
            (f, "uniform base, u8 store beside the u16 load, swapped", "equal",
             (f"st.{sp}.u8 [{uni}+2], %h0;", f"ld.{sp}.u16 %r20, [{uni}];"), SWAP),
            (f"st.{sp}+st.{sp}", "two stores to one word, swapped", "different",
             (f"st.{sp}.u32 [{uni}], %r18;", f"st.{sp}.u32 [{uni}], %r19;"), SWAP),
            (f"st.{sp}+st.{sp}", "two stores, uniform base, disjoint, swapped", "equal",
             (f"st.{sp}.u32 [{uni}], %r18;", f"st.{sp}.u32 [{uni}+4], %r19;"), SWAP),
            (f"st.{sp}+st.{sp}", "two stores, neighbour lanes' words, swapped (no barrier: a race)", "racy",
             (f"st.{sp}.u32 [{lane}], %r10;", f"st.{sp}.u32 [{lane}+4], %r11;"), SWAP),
            (f"st.{sp}.v4+ld.{sp}.v2", "v4 store, v2 load overlapping its last 8 bytes, swapped", "different",
             (f"st.{sp}.v4.u32 [{uni}+16], {{%r18, %r19, %r18, %r19}};", f"ld.{sp}.v2.u32 {{%r20, %r21}}, [{uni}+24];"), SWAP),
            (f"st.{sp}.v4+ld.{sp}.v2", "v4 store, v2 load just below it, swapped", "equal",
             (f"st.{sp}.v4.u32 [{uni}+16], {{%r18, %r19, %r18, %r19}};", f"ld.{sp}.v2.u32 {{%r20, %r21}}, [{uni}+8];"), SWAP),
            (f"st.{sp}.v2+ld.{sp}.v4", "v2 store in every lane's own 16 bytes, v4 load of them, swapped", "different",
             (f"st.{sp}.v2.u32 [{vec}+8], {{%r10, %r11}};", f"ld.{sp}.v4.u32 {{%r20, %r21, %r22, %r23}}, [{vec}];"), SWAP),
            (f"ld.{sp}+ld.{sp}", "two loads of one word, swapped", "equal",
             (f"ld.{sp}.u32 %r20, [{lane}];", f"ld.{sp}.u32 %r21, [{lane}];"), SWAP),
            (f"st.{sp}", "store dropped", "different", (f"st.{sp}.u32 [{lane}], %r10;", f"ld.{sp}.u32 %r20, [{lane}+128];"),
             (("drop", 0),)),
            (f"st.{sp}", "store of another value", "different", ("add.u32 %r36, %r10, 1;", f"st.{sp}.u32 [{lane}], %r36;"),
             (("sub", 0, r", 1;", ", 2;"),)),
            (f"st.{sp}", "store to the next word", "different", (f"st.{sp}.u32 [{lane}], %r10;",),
             (("sub", 0, r"\]", "+4]"),)),
        ]
    out += [
        ("st.local+ld.local", "private bytes, disjoint, swapped", "equal", ("st.local.u32 [%rd15+4], %r10;", "ld.local.u32 %r20, [%rd15];"), SWAP),
        # the prologue left %r10 in lbuf's first word: store another value, or the swap shows nothing
        ("st.local+ld.local", "private bytes, same word, swapped", "different", ("st.local.u32 [%rd15], %r17;", "ld.local.u32 %r20, [%rd15];"), SWAP),
        ("st.local+st.local", "private bytes, two stores, disjoint, swapped", "equal",
         ("st.local.u32 [%rd15], %r10;", "st.local.u32 [%rd15+4], %r11;", "ld.local.v2.u32 {%r20, %r21}, [%rd15];"), SWAP),
        ("st.local+st.local", "private bytes, two stores, one word, swapped", "different",
         ("st.local.u32 [%rd15], %r10;", "st.local.u32 [%rd15], %r11;", "ld.local.u32 %r20, [%rd15];"), SWAP),
    ]
    return out


def _widths() -> list:
    """Every access width at a uniform base: the next bytes (disjoint) and the same bytes."""
    out = []
    for ty, size, val, dst in (("u8", 1, "%h0", "%r20"), ("u16", 2, "%h0", "%r20"), ("u32", 4, "%r18", "%r20"),
                               ("u64", 8, "%rd1", "%rd39"), ("v2.u32", 8, "{%r18, %r19}", "{%r20, %r21}"),
                               ("v4.u32", 16, "{%r18, %r19, %r18, %r19}", "{%r20, %r21, %r22, %r23}"),
                               ("v2.u64", 16, "{%rd1, %rd3}", "{%rd38, %rd39}")):
        out += [(f"st.shared.{ty}", f"{size}-byte store, load of the next {size} bytes, swapped", "equal",
                 (f"st.shared.{ty} [%rd10+64], {val};", f"ld.shared.{ty} {dst}, [%rd10+{64 + size}];", "mov.b32 %r30, 1;")
                 if ty != "u64" and ty != "v2.u64" else
                 (f"st.shared.{ty} [%rd10+64], {val};", f"ld.shared.{ty} {dst}, [%rd10+{64 + size}];",
                  "cvt.u32.u64 %r30, %rd39;"), SWAP),
                (f"st.shared.{ty}", f"{size}-byte store, load of the same bytes, swapped", "different",
                 (f"st.shared.{ty} [%rd10+64], {val};", f"ld.shared.{ty} {dst}, [%rd10+64];", "mov.b32 %r30, 1;")
                 if ty != "u64" and ty != "v2.u64" else
                 (f"st.shared.{ty} [%rd10+64], {val};", f"ld.shared.{ty} {dst}, [%rd10+64];", "cvt.u32.u64 %r30, %rd39;"),
                 SWAP)]
    return out


def _semantics() -> list:
    """Volatile, relaxed and non-coherent accesses: never moved by the checker."""
    return [
        ("st.volatile", "volatile store, uniform base, disjoint, swapped", "equal",
         ("st.volatile.shared.u32 [%rd10+4], %r18;", "ld.shared.u32 %r20, [%rd10];"), SWAP),
        ("st.volatile", "volatile store, same word, swapped", "different",
         ("st.volatile.shared.u32 [%rd11], %r10;", "ld.shared.u32 %r20, [%rd11];"), SWAP),
        ("ld.volatile", "volatile load after a store to its word, swapped", "different",
         ("st.shared.u32 [%rd11], %r10;", "ld.volatile.shared.u32 %r20, [%rd11];"), SWAP),
        ("ld.relaxed", "relaxed load, uniform base, disjoint, swapped", "equal",
         ("st.global.u32 [%rd3+4], %r18;", "ld.relaxed.gpu.global.u32 %r20, [%rd3];"), SWAP),
        ("ld.global.nc", "non-coherent load of the word just stored, swapped", "racy",
         ("st.global.u32 [%rd14], %r10;", "ld.global.nc.u32 %r20, [%rd14];"), SWAP),
        ("ld.global.nc", "non-coherent load of the input, store to scratch, swapped", "equal",
         ("st.global.u32 [%rd3+4], %r18;", "ld.global.nc.u32 %r20, [%rd1];"), SWAP),
        # a release store orders nothing for a plain (not acquire) load of another lane: a race
        ("st.release", "release store, load of the neighbour's word, swapped", "racy",
         ("st.release.cta.shared.u32 [%rd11+4], %r10;", "ld.shared.u32 %r20, [%rd11];"), SWAP),
        ("st.release", "release store, load of this lane's word, swapped", "different",
         ("st.release.cta.shared.u32 [%rd11], %r10;", "ld.shared.u32 %r20, [%rd11];"), SWAP),
    ]


def _matrix() -> list:
    """ldmatrix / stmatrix: 8·num rows of 16 bytes at the addresses lanes hold (here smem+16·lane)."""
    out = []
    for num, regs in (("x1", "{%r20}"), ("x2", "{%r20, %r21}"), ("x4", "{%r20, %r21, %r22, %r23}")):
        foot = {"x1": 128, "x2": 256, "x4": 512}[num]
        for trans in ("", ".trans"):
            ld = f"ldmatrix.sync.aligned.m8n8.{num}{trans}.shared.b16 {regs}, [%rd12];"
            f = f"ldmatrix.{num}{trans}"
            out += [
                (f, "store into this lane's row, swapped", "different", ("st.shared.u32 [%rd12+4], %r10;", ld), SWAP),
                (f, "store of lane T into row T/4 (another lane's), swapped", "different", ("st.shared.u32 [%rd11], %r10;", ld), SWAP),
                (f, "store past every row (uniform), swapped", "equal", ("st.shared.u32 [%rd10+1024], %r18;", ld), SWAP),
                (f, "per-lane store at byte 256+4T, swapped", "different" if foot > 256 else "equal",
                 ("st.shared.u32 [%rd11+256], %r10;", ld), SWAP),
                (f, "store moved across bar.sync", "different", ("st.shared.u32 [%rd12+4], %r10;", "bar.sync 0;", ld),
                 (("move", 0, 2),)),
            ]
        st = f"stmatrix.sync.aligned.m8n8.{num}.shared.b16 [%rd12], {regs.replace('%r2', '%r1')};"
        f = f"stmatrix.{num}"
        out += [
            (f, "load of this lane's row, swapped", "different", (st, "ld.shared.u32 %r20, [%rd12+4];"), SWAP),
            (f, "load past every row (uniform), swapped", "equal", (st, "ld.shared.u32 %r20, [%rd10+1024];"), SWAP),
            (f, "store to this lane's row, stores swapped", "different", ("st.shared.u32 [%rd12], %r14;", st), SWAP),
            (f, "stmatrix dropped", "different", (st, "ld.shared.u32 %r20, [%rd12+4];"), (("drop", 0),)),
        ]
    out += [("ldmatrix.x4", "two ldmatrix, swapped", "equal",
             ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%rd12];",
              "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r24, %r25}, [%rd12];"), SWAP)]
    return out


def _wmma() -> list:
    a = "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}, [%rd10], 16;"
    ag = a.replace(".shared.", ".global.").replace("[%rd10]", "[%rd3]")
    c = "wmma.load.c.sync.aligned.row.m16n16k16.shared.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd10], 16;"
    d = "wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%rd10], {%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15}, 16;"
    return [
        ("wmma.load.a", "store of lane T at smem+4T (inside the fragment), swapped", "different", ("st.shared.u32 [%rd11], %r10;", a), SWAP),
        ("wmma.load.a", "store past the fragment (uniform), swapped", "equal", ("st.shared.u32 [%rd10+2048], %r18;", a), SWAP),
        ("wmma.load.a", "global fragment, store of lane T inside it, swapped", "different", ("st.global.u32 [%rd14], %r10;", ag), SWAP),
        ("wmma.load.a", "store moved across membar.cta", "different", ("st.shared.u32 [%rd11], %r10;", "membar.cta;", a), (("move", 0, 2),)),
        ("wmma.load.c", "store inside the f32 fragment, swapped", "different", ("st.shared.u32 [%rd11+512], %r10;", c), SWAP),
        ("wmma.load.c", "store past the f32 fragment, swapped", "equal", ("st.shared.u32 [%rd10+1024], %r18;", c), SWAP),
        ("wmma.store.d", "load of lane T's word of the stored tile, swapped", "different", (d, "ld.shared.u32 %r20, [%rd11];"), SWAP),
        ("wmma.store.d", "load past the stored tile, swapped", "equal", (d, "ld.shared.u32 %r20, [%rd10+1024];"), SWAP),
        ("wmma.store.d", "plain store into the tile, stores swapped", "different", ("st.shared.u32 [%rd11], %r10;", d), SWAP),
    ]


def _cp_async() -> list:
    out = []
    for size, dst, src in ((4, "%rd11", "%rd14"), (8, "%rd18", "%rd17"), (16, "%rd12", "%rd17")):
        cache = "cg" if size == 16 else "ca"
        cp = f"cp.async.{cache}.shared.global [{dst}], [{src}], {size};"
        body = (cp, "cp.async.commit_group;", "cp.async.wait_group 0;", f"ld.shared.u32 %r20, [{dst}];")
        f = f"cp.async.{size}"
        out += [
            (f, "load moved before the copy", "different", body, (("move", 3, 0),)),
            (f, "load moved before the wait", "racy", body, (("move", 3, 2),)),
            (f, "wait dropped", "racy", body, (("drop", 2),)),
            (f, "store to the destination moved after the wait", "different",
             (f"st.shared.u32 [{dst}], %r10;",) + body[:3], (("move", 0, 3),)),
            (f, "store elsewhere (uniform) moved after the copy", "equal",
             ("st.shared.u32 [%rd10+3072], %r18;",) + body[:3], (("move", 0, 1),)),
        ]
    out.append(("cp.async.wait_all", "load moved before wait_all", "racy",
                ("cp.async.ca.shared.global [%rd11], [%rd14], 4;", "cp.async.wait_all;", "ld.shared.u32 %r20, [%rd11];"),
                (("move", 2, 1),)))
    return out


def _bulk() -> list:
    """Each lane copies its own 16 bytes (smem+16T -> g+1024+16T): no lane's copy reads another
    lane's store, so the ground truth needs no ordering between lanes."""
    out = []
    for name, cp in (("cp.async.bulk", "cp.async.bulk.global.shared::cta.bulk_group [%rd17+1024], [%rd12], 16;"),
                     ("cp.reduce.async.bulk",
                      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd17+1024], [%rd12], 16;")):
        body = ("st.shared.u32 [%rd12+4], %r10;", "fence.proxy.async.shared::cta;", cp, "cp.async.bulk.commit_group;",
                "cp.async.bulk.wait_group 0;", "ld.global.u32 %r20, [%rd17+1028];")
        out += [
            (name, "source store moved after the wait", "different", body, (("move", 0, 4),)),
            (name, "source store moved after the copy", "racy", body, (("move", 0, 2),)),
            (name, "proxy fence dropped", "racy", body, (("drop", 1),)),
            (name, "destination load moved before the copy", "different", body, (("move", 5, 2),)),
            (name, "destination load moved before the wait", "racy", body, (("move", 5, 4),)),
        ]
    out.append(("cp.async.bulk.wait_group.read", "destination load before a .read wait", "racy",
                ("cp.async.bulk.global.shared::cta.bulk_group [%rd17+1024], [%rd12], 16;", "cp.async.bulk.commit_group;",
                 "cp.async.bulk.wait_group.read 0;", "ld.global.u32 %r20, [%rd17+1028];"), (("move", 3, 2),)))
    return out


def _atomics() -> list:
    out = []
    for sp, lane, far in (("shared", "%rd11", "[%rd10+2048]"), ("global", "%rd14", "[%rd3+2048]")):
        for op, operands in (("add.u32", "%r10"), ("exch.b32", "%r10"), ("max.s32", "%r10")):
            at = f"atom.{sp}.{op} %r21, [{lane}], {operands};"
            f = f"atom.{sp}.{op.split('.')[0]}"
            out += [(f, "load of the atomic's word, swapped", "different", (at, f"ld.{sp}.u32 %r20, [{lane}];"), SWAP),
                    (f, "load far away (uniform), swapped", "equal", (at, f"ld.{sp}.u32 %r20, {far};"), SWAP)]
        # compare-and-swap against the word's own value: it succeeds, so a load after it sees %r10
        cas = (f"ld.{sp}.u32 %r37, [{lane}];", f"atom.{sp}.cas.b32 %r21, [{lane}], %r37, %r10;", f"ld.{sp}.u32 %r20, [{lane}];")
        out += [(f"atom.{sp}.cas", "load of the swapped word, moved before the cas", "different", cas, (("swap", 1, 2),)),
                (f"atom.{sp}.cas", "compare and new value exchanged", "different", cas,
                 (("sub", 1, r"(%\w+), (%\w+);", r"\2, \1;"),))]
        red = f"red.{sp}.add.u32 [{lane}], %r10;"
        out += [(f"red.{sp}", "load of the reduced word, swapped", "different", (red, f"ld.{sp}.u32 %r20, [{lane}];"), SWAP),
                (f"red.{sp}", "store to the reduced word, swapped", "different", (f"st.{sp}.u32 [{lane}], %r11;", red), SWAP),
                (f"red.{sp}", "load far away (uniform), swapped", "equal", (red, f"ld.{sp}.u32 %r20, {far};"), SWAP),
                (f"red.{sp}", "reduction dropped", "different", (red, f"ld.{sp}.u32 %r20, {far};"), (("drop", 0),))]
    return out


def _mbarrier() -> tuple:
    pro = ("setp.eq.u32 %p2, %r1, 0;", "@%p2 mbarrier.init.shared.b64 [%rd10+3072], 32;")
    wait = ("mbarrier.arrive.shared.b64 %rd30, [%rd10+3072];", "$L_mbar_wait:",
            "mbarrier.try_wait.parity.shared.b64 %p3, [%rd10+3072], 0;", "@!%p3 bra $L_mbar_wait;")
    return pro, [
        # arrive releases, but the plain load after it acquires nothing: the lanes race
        ("mbarrier.arrive", "store of the neighbour's word moved across arrive (no wait: a race)", "racy",
         ("st.shared.u32 [%rd11+4], %r10;", "mbarrier.arrive.shared.b64 %rd30, [%rd10+3072];", "ld.shared.u32 %r20, [%rd11];"),
         (("move", 0, 2),)),
        ("mbarrier.arrive", "store far away (uniform) moved across arrive", "equal",
         ("st.shared.u32 [%rd10+2048], %r18;", "mbarrier.arrive.shared.b64 %rd30, [%rd10+3072];", "ld.shared.u32 %r20, [%rd10];"),
         (("move", 0, 1),)),
        # the mutant's load, above its own arrive, is unordered with the neighbour's store: a race
        ("mbarrier.test_wait", "load of the neighbour's word moved across test_wait (a race)", "racy",
         ("st.shared.u32 [%rd11+4], %r10;", "mbarrier.arrive.shared.b64 %rd30, [%rd10+3072];",
          "mbarrier.test_wait.shared.b64 %p3, [%rd10+3072], %rd30;", "ld.shared.u32 %r20, [%rd11];", "selp.u32 %r21, 1, 0, %p3;"),
         (("move", 3, 0),)),
        # the phase completes once all 32 lanes arrived: the neighbour's store happens before the
        # original's load, the mutant's load before the neighbour's store
        ("mbarrier.try_wait", "neighbour's word: load and store exchanged across arrive and the wait loop", "different",
         ("st.shared.u32 [%rd11+4], %r10;", *wait, "ld.shared.u32 %r20, [%rd11];"), (("swap", 0, 5),)),
        ("mbarrier.try_wait", "this lane's word: load moved above the wait loop and the store", "different",
         ("st.shared.u32 [%rd11], %r10;", *wait, "ld.shared.u32 %r20, [%rd11];"), (("move", 5, 0),)),
    ]


def _orders() -> list:
    """Each ordering point: this lane's word (program order: always different), the neighbour's
    word (a race unless a barrier synchronises the lanes), a disjoint uniform word (equal)."""
    out = []
    for order in ORDERS:
        f = order.split()[0].rstrip(";")
        out += [
            (f, "this lane's word: load moved above the ordering point and the store", "different",
             ("st.shared.u32 [%rd11], %r10;", order, "ld.shared.u32 %r20, [%rd11];"), (("move", 2, 0),)),
            # in the mutant nothing orders lane T's load against lane T-1's store (behind a fence
            # alone, not even in the original): a race, and ptxas does move the load
            (f, "neighbour's word: load moved above the ordering point and the store (a race)", "racy",
             ("st.shared.u32 [%rd11+4], %r10;", order, "ld.shared.u32 %r20, [%rd11];"), (("move", 2, 0),)),
            (f, "disjoint load (uniform) moved across the ordering point", "equal",
             ("st.shared.u32 [%rd10+4], %r18;", order, "ld.shared.u32 %r20, [%rd10];"), (("move", 2, 1),)),
            (f, "ordering point dropped", "racy",
             ("st.shared.u32 [%rd11+4], %r10;", order, "ld.shared.u32 %r20, [%rd11];"), (("drop", 1),)),
        ]
        if f.startswith("bar."):
            out.append((f, "neighbour's word: load and store exchanged across the barrier", "different",
                        ("st.shared.u32 [%rd11+4], %r10;", order, "ld.shared.u32 %r20, [%rd11];"), (("swap", 0, 2),)))
    return out


def _wgmma() -> tuple:
    """A warpgroup (128 threads): A (64x16 f16) at smem+0, B (16x8) at smem+2048, no swizzle,
    leading byte offset 128, stride byte offset 256 (9.7.15.5.1.2.2); D starts non-zero, so
    scale-d matters."""
    pro = ("mov.u32 %r40, smem;", "shr.u32 %r41, %r40, 4;", "and.b32 %r41, %r41, 16383;", "cvt.u64.u32 %rd32, %r41;",
           "or.b64 %rd33, %rd32, 0x0000001000080000;", "add.s64 %rd34, %rd33, 128;",
           "mov.f32 %f0, %f8;", "mov.f32 %f1, %f9;", "mov.f32 %f2, %f10;", "mov.f32 %f3, %f11;")
    mma = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd33, %rd35, %p4, 1, 1, 0, 0;"
    body = ("setp.eq.u32 %p4, %r1, %r1;", "add.s64 %rd35, %rd34, 0;", "st.shared.u32 [%rd11], %r18;",
            "fence.proxy.async.shared::cta;", "bar.sync 0;", "wgmma.fence.sync.aligned;", mma,
            "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;")
    far = body[:2] + ("st.shared.u32 [%rd10+3584], %r18;",) + body[3:]
    return pro, [
        ("wgmma.mma_async", "operand store moved after wait_group", "different", body, (("move", 2, 8),)),
        ("wgmma.mma_async", "operand store moved between mma_async and wait_group", "racy", body, (("move", 2, 6),)),
        ("wgmma.fence.proxy", "proxy fence dropped", "racy", body, (("drop", 3),)),
        ("wgmma.mma_async", "store outside the operands (uniform) moved after wait_group", "equal", far, (("move", 2, 8),)),
        ("wgmma.wait_group", "wait_group dropped", "racy", body, (("drop", 8),)),
        ("wgmma.mma_async", "scale-d false (D = A·B, the old D dropped)", "different", body, (("sub", 0, r"\.eq\.", ".ne."),)),
        ("wgmma.mma_async", "B descriptor 16 bytes further", "different", body, (("sub", 1, r", 0;", ", 1;"),)),
        ("wgmma.fence", "wgmma.fence dropped", "racy", body, (("drop", 5),)),
    ]


def _texture() -> list:
    sust = "sust.b.1d.b32.trap [%rd5, {%r2}], {%r10};"
    return [
        ("sust+suld", "surface store and load of one element, swapped", "racy", (sust, "suld.b.1d.b32.trap {%r20}, [%rd5, {%r2}];"), SWAP),
        ("sust+suld", "surface store and load of other elements, swapped", "equal",
         ("sust.b.1d.b32.trap [%rd5, {%r2}], {%r10};", "add.u32 %r36, %r2, 512;", "suld.b.1d.b32.trap {%r20}, [%rd5, {%r36}];"),
         (("move", 0, 2),)),
        ("suld", "surface load and shared store, swapped", "equal",
         ("suld.b.1d.b32.trap {%r20}, [%rd5, {%r2}];", "st.shared.u32 [%rd11], %r10;"), SWAP),
        ("tex", "texture fetch and shared store, swapped", "equal",
         ("tex.1d.v4.s32.s32 {%r20, %r21, %r22, %r23}, [%rd4, {%r1}];", "st.shared.u32 [%rd11], %r10;"), SWAP),
        ("tex", "surface store and texture fetch of one element, swapped", "racy",
         (sust, "tex.1d.v4.s32.s32 {%r20, %r21, %r22, %r23}, [%rd4, {%r1}];"), SWAP),
        ("sust", "surface store dropped", "different", (sust, "ld.shared.u32 %r20, [%rd11];"), (("drop", 0),)),
    ]


def _misc() -> list:
    return [
        ("prefetch", "prefetch moved across a store", "equal",
         ("st.global.u32 [%rd14], %r10;", "prefetch.global.L2 [%rd14];", "ld.global.u32 %r20, [%rd14+128];"), SWAP),
        ("cp.async.bulk.prefetch", "bulk prefetch moved across a store", "equal",
         ("st.global.u32 [%rd14], %r10;", "cp.async.bulk.prefetch.L2.global [%rd3], 256;"), SWAP),
    ]


def _named(entries, threads=32, gpu=True, prologue=(), arch="sm_90a", tmap=False) -> list:
    return [dict(form=f, scenario=s, truth=t, cut=tuple(c), edits=tuple(e), threads=threads, gpu=gpu,
                 prologue=tuple(prologue), arch=arch, tmap=tmap) for f, s, t, c, e in entries]


def mutants() -> list:
    """Every mutant, numbered in a fixed order (``m001`` …)."""
    specs = _named(_plain() + _widths() + _semantics() + _matrix() + _wmma() + _cp_async() + _bulk() + _atomics()
                   + _orders() + _texture() + _misc())
    pro, entries = _mbarrier()
    specs += _named(entries, prologue=pro)
    pro, entries = _wgmma()
    specs += _named(entries, threads=128, prologue=pro)
    specs += _named(ma.launched(), prologue=ma.PROLOGUE, tmap=True)
    specs += _named(ma.multicast(), gpu=False)
    return [Mutant(id=f"m{i + 1:03d}", **s) for i, s in enumerate(specs)]


# --- planning: the CPU verdict and the spliced module ----------------------------------------
@dataclass
class Planned:
    mutant: Mutant
    original: str                 # the original kernel's text
    spliced: str = ""             # splice apply's output (the mutant kernel)
    verdict: str = ""
    reason: str = ""
    exit: int = 0
    seconds: float = 0.0
    error: str = ""               # extract/apply refused the mutant (a defect of the bed)
    notes: list = field(default_factory=list)


def plan_all(workdir: Path, only=None, timeout: float = 5.0) -> list:
    """Every mutant planned and verified (``only``: ids).  The originals are written under
    ``workdir``; each kernel is parsed once for all its mutants."""
    import time

    import yaml

    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel
    from splice.cut.pipeline import search_path
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan as make_plan
    from splice.errors import SpliceError
    from splice.verify.compare import EXIT, verify_plan

    workdir.mkdir(parents=True, exist_ok=True)
    kernels: dict = {}
    out = []
    for mut in mutants():
        if only and mut.id not in only:
            continue
        text = kernel(mut)
        p = Planned(mut, text)
        out.append(p)
        try:
            if text not in kernels:
                path = workdir / f"k{len(kernels):03d}.ptx"
                path.write_text(text)
                k = load_kernel(str(path))
                first, last = cut_range(k, text)
                kernels[text] = (path, k, first, last, extract(k, statements=(first, last))["text"])
            path, k, first, last, native = kernels[text]
            (workdir / f"{mut.id}.native.ptx").write_text(edit(native, mut.edits))
            recipe = workdir / f"{mut.id}.yaml"
            recipe.write_text(yaml.safe_dump({"module": str(path), "entry": "mutant", "cuts": [
                {"statements": f"s{first}-s{last}", "native": f"{mut.id}.native.ptx", "abi": "inline"}]}))
            plan = make_plan(load_recipe(str(recipe), search_path(str(recipe)), None), k)
        except (SpliceError, ValueError) as exc:
            p.error = str(exc).splitlines()[0]
            continue
        t = time.perf_counter()
        [r] = verify_plan(plan, timeout)
        p.seconds = time.perf_counter() - t
        p.spliced, p.verdict, p.reason, p.exit = plan.text, r.verdict, r.reason, EXIT[r.verdict]
    return out


def sound(p: Planned) -> bool:
    """No mutant that may differ is proved equal, no equal one proved different."""
    if p.mutant.truth in ("different", "racy"):
        return p.verdict != "proved equal"
    return p.verdict != "proved different"


def rename_entry(text: str, name: str) -> str:
    return text.replace(".visible .entry mutant(", f".visible .entry {name}(", 1)


def batch_modules(planned: list, batches: int) -> list:
    """(module text, [(mutant id, original entry, mutant entry)]) per batch, for ptxas and the
    GPU: each module holds the original and the spliced kernel of its mutants."""
    runnable = [p for p in planned if not p.error]
    groups: list = [[] for _ in range(max(1, batches))]
    for i, p in enumerate(runnable):
        groups[i % len(groups)].append(p)
    out = []
    for grp in groups:
        if not grp:
            continue
        arch = "sm_100a" if any(p.mutant.arch == "sm_100a" for p in grp) else "sm_90a"
        parts, names = [HEADER.format(arch=arch)], []
        for p in grp:
            o, m = f"{p.mutant.id}_o", f"{p.mutant.id}_m"
            parts += [_body(rename_entry(p.original, o)), _body(rename_entry(p.spliced, m))]
            names.append((p.mutant.id, o, m))
        out.append(("\n".join(parts), names))
    return out


def _body(text: str) -> str:
    """A kernel's text without its .version/.target/.address_size header."""
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith((".version", ".target", ".address_size")))
