"""The phase harness extended to epilogues: cuts that read the weight image and use shared
memory (with barriers) run outside the frame too.

The plain harness (``splice.probe.harness``) skips every cut that touches memory, because
random live-ins would be random addresses.  An epilogue case binds them instead:

* live-ins are classified by their provenance (``Provenance.value_at``):
  - an affine form over ``W``, ``smem``, ``laneid`` (and its masks), ``tid.*``/``ctaid.*``/
    ``ntid.*`` and constants is *computed* in the harness kernel, the same in both modules —
    ``W`` is a probe-owned copy of the spec's weight image, ``smem`` the module's own shared
    array (so ``W + 16·laneid + off`` loads real weights, ``smem + 512·tid.z + 16·laneid`` is
    the wave's slot);
  - a constant (a literal through ``mov``/``cvt``, e.g. E21's f16x2 splats) gets its value;
  - the rest is random by provenance and type: an mma D or f16 arithmetic result -> finite
    f16x2 in [-4, 4] (covers the activation's clamp at ±2), an e4m3 pack -> e4m3 codes
    (never NaN), a loaded word -> finite f16, predicates and integers -> random bits;
* the weight image and each block's shared memory image come from the input buffer (after the
  loaded live-ins): every block fills its shared array from its own random slice, then
  ``bar.sync 0``, then the cut; after it ``bar.sync 0`` and each block's shared array is
  written out as extra output rows (``smem word k·T + tid``), compared like live-outs — the
  memory written by the cut is compared too.

Not harnessed (the frame and the debug stages cover them): global stores, atomics, texture and
surface access, kernel-parameter reads inside the cut, values whose address the analysis
cannot bind, and branches to labels outside the cut.  The reason is reported per cut.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..analysis.provenance import CONST
from .harness import HarnessCase, _width, harness_ptx, memory_ops

SPECIAL = {"laneid": "%laneid", "tid.x": "%tid.x", "tid.y": "%tid.y", "tid.z": "%tid.z",
           "ctaid.x": "%ctaid.x", "ctaid.y": "%ctaid.y", "ctaid.z": "%ctaid.z",
           "ntid.x": "%ntid.x", "ntid.y": "%ntid.y", "ntid.z": "%ntid.z"}
LANE_MASKS = {"((laneid<<2)&12)": ("shl", 2, "and", 12), "(laneid>>2)": ("shr", 2, None, 0),
              "(laneid&3)": ("and", 3, None, 0)}
ALLOWED = ("ld.global", "ld.weak.global", "ld.shared", "st.shared", "bar.sync", "barrier.sync",
           "ld.global.nc", "ldu.global")
H = "%sphe"


@dataclass
class EpilogueCase(HarnessCase):
    """A HarnessCase whose input rows are the *loaded* live-ins, then the weight image, then
    the per-block shared images; its output rows are the live-outs, then the shared dump."""
    loaded: list = field(default_factory=list)       # [(reg, type, kind)]
    computed: list = field(default_factory=list)     # [(reg, type, form)]
    weight: bytes = b""
    shared: dict = field(default_factory=dict)       # short name -> the array's symbol
    smem_bytes: int = 0
    blocks: int = 0

    def inputs(self, threads: int, seed: int = 0) -> np.ndarray:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence((0xE9, seed))))
        rows = [random_value(kind, t, threads, rng) for _r, t, kind in self.loaded]
        mem = np.frombuffer(self.weight + b"\0" * (-len(self.weight) % (8 * threads)), dtype=np.uint64)
        sm = rng.integers(0, 2**63, self.smem_bytes // 8 * self.blocks, dtype=np.uint64)
        sm = np.concatenate([sm, np.zeros(-len(sm) % threads, dtype=np.uint64)])
        flat = np.concatenate([np.concatenate(rows) if rows else np.zeros(0, np.uint64), mem, sm])
        return flat.reshape(-1, threads)


def random_value(kind: str, t: str, threads: int, rng) -> np.ndarray:
    """One input row (``threads`` uint64 slots) for a live-in of ``kind`` and type ``t``."""
    tt = (t or ".b32").lstrip(".")
    w = _width(t)
    if kind.startswith("const:"):
        mask = (1 << (8 * w)) - 1 if w < 8 else (1 << 64) - 1
        return np.full(threads, int(kind[6:]) & mask, dtype=np.uint64)
    if kind == "e4m3" and w == 4:
        code = rng.integers(0, 0x7F, (threads, 4), dtype=np.uint8)
        sign = rng.integers(0, 2, (threads, 4), dtype=np.uint8) << np.uint8(7)
        return (code | sign).view(np.uint32).reshape(threads).astype(np.uint64)
    if kind in ("act", "f16") and w in (2, 4):
        hi = 4.0 if kind == "act" else 1.0
        v = rng.uniform(-hi, hi, (threads, w // 2)).astype(np.float16)
        return v.view(np.uint16 if w == 2 else np.uint32).reshape(threads).astype(np.uint64)
    if tt == "f32":
        return rng.uniform(-4, 4, threads).astype(np.float32).view(np.uint32).astype(np.uint64)
    if tt == "pred":
        return rng.integers(0, 2, threads, dtype=np.uint64)
    return rng.integers(0, 2**63 if w == 8 else 2 ** (8 * w), threads, dtype=np.uint64)


def classify_live_in(kernel, reg: str, pos: int) -> tuple:
    """('computed', form) | ('value', kind) | ('unbound', why) for live-in ``reg`` at ``pos``."""
    from ..cut.epilogue import literals_behind

    prov = kernel.provenance
    key = kernel._resolve(reg, kernel._scope_of[pos])
    form = prov.value_at(key[0], pos) if key else None
    atoms = [a for a, _c in form or () if a != CONST]
    if form is not None and not any("#" in a for a in atoms):
        bad = [a for a in atoms if a not in SPECIAL and a not in LANE_MASKS and a not in ("W",)
               and a not in prov.shared.values()]
        if bad:
            return "unbound", f"{reg} = {bad[0]}…"
        return ("computed", form) if atoms else ("value", f"const:{dict(form).get(CONST, 0)}")
    bits = constant_bits(kernel, reg, pos, literals_behind(kernel, reg, pos))
    if bits is not None:
        return "value", f"const:{bits}"
    d = prov.reaching_def(key[0], pos) if key else None
    node = kernel.stmts[d].node if d is not None else None
    nm = getattr(node, "name", "")
    if nm.startswith("cvt") and "e4m3x2" in nm or (nm.startswith("mov") and _packs_e4m3(kernel, d)):
        return "value", "e4m3"
    acc = prov.access_at(d) if d is not None else None
    if acc is not None and acc.kind == "ld":
        return "value", "f16"
    if getattr(node, "opcode", "") == "mma" or any(t in nm for t in (".f16", ".f32")):
        return "value", "act"
    return "value", "bits"


def _packs_e4m3(kernel, d) -> bool:
    _defs, uses, _g = kernel.du()
    prov = kernel.provenance
    for u in uses[d]:
        x = prov.reaching_def(u, d)
        if x is not None and "e4m3x2" in getattr(kernel.stmts[x].node, "name", ""):
            return True
    return False


def constant_bits(kernel, reg, pos, lits) -> int | None:
    """The bits of a live-in that is one literal through mov/cvt (f16 splat for a 32-bit
    register built from f16 halves, f16 for 16-bit, f32/f64 as declared)."""
    import struct

    if len(lits) != 1:
        return None
    from ..ptx.model import Imm

    v = float(Imm(next(iter(lits))).value)
    t = (kernel.reg_type(reg) or ".b32").lstrip(".")
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "f64":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    h = struct.unpack("<H", struct.pack("<e", v))[0]
    return h if t.endswith("16") else h | (h << 16)


def epilogue_case(pair, kernel, c, hc, header: str, decls: list, spec, blocks: int,
                  cache: Optional[dict] = None):
    """An EpilogueCase for cut ``c`` (whose code touches memory), or ``hc`` with the reason it
    cannot be harnessed in ``hc.skipped``.  ``cache``: the caller's dict, shared by the cuts of
    one recipe (the weight image and the shared declarations are computed once)."""
    cache = {} if cache is None else cache
    orig = pair.original[c.region[0]:c.region[1]]
    spl = "\n".join(c.binding.site)
    why = _unsupported(orig) or _unsupported(spl) or _unsupported("\n\n".join(c.binding.prelude))
    if why:
        hc.skipped = why
        return hc
    pos = kernel.pos_of(c.first)
    loaded, computed = [], []
    for r in c.abi.live_in:
        t = r.type or kernel.reg_type(r.reg)
        how, what = classify_live_in(kernel, r.reg, pos)
        if how == "unbound":
            hc.skipped = f"live-in {what} cannot be bound to a probe-owned buffer"
            return hc
        (computed if how == "computed" else loaded).append((r.reg, t, what))
    if "weight" not in cache:
        cache["weight"], cache["smem"] = _weight_image(spec), _shared_decls(kernel)
    weight = cache["weight"]
    if weight is None and any(any(a == "W" for a, _ in f) for _r, _t, f in computed):
        hc.skipped = "the probe spec has no weight_image field to bind W to"
        return hc
    smem = cache["smem"]
    if len(smem) > 1:
        hc.skipped = "more than one .shared array: the epilogue harness binds one"
        return hc
    smem_bytes = sum(n for _d, n, _s in smem) if re.search(r"\.shared\b|bar\.sync", orig + spl) else 0
    shared = {kernel.provenance.shared.get(name, name): name for _d, _n, name in smem}
    threads_blk = spec.block[0] * spec.block[1] * spec.block[2]
    ec = EpilogueCase(hc.cut, hc.title, hc.phase, [(r, t, "in") for r, t, _k in loaded],
                      list(hc.live_out), loaded=loaded, computed=computed, weight=weight or b"",
                      shared=shared, smem_bytes=smem_bytes, blocks=blocks)
    dump_rows = smem_bytes // 4 // threads_blk
    ec.live_out = list(hc.live_out) + [(f"smem[{k}·T+tid]", ".b32", "smem") for k in range(dump_rows)]
    threads = threads_blk * blocks
    hdr = header + "".join(f"\n{d}" for d, _n, _s in smem) if smem else header
    for side, body in (("orig", orig), ("spl", spl)):
        text = _prologue(ec, threads, threads_blk) + body.rstrip("\n") + "\n" + _epilogue(ec, threads, threads_blk,
                                                                                        len(hc.live_out))
        ptx = harness_ptx(hdr, decls + [f".reg .b64 {H}_d<4>;", f".reg .b32 {H}_r<6>;"], text,
                          ec.live_in, list(hc.live_out), threads,
                          "\n\n".join(c.binding.prelude) if side == "spl" else "",
                          c.binding.shared_bytes if side == "spl" else 0)
        if side == "orig":
            ec.orig_ptx = ptx
        else:
            ec.spl_ptx = ptx
    ec.notes.append(f"epilogue harness: {len(loaded)} live-ins random by provenance, {len(computed)} "
                    f"computed (addresses), weight image {len(ec.weight)} bytes, shared {smem_bytes} bytes")
    return ec


def _unsupported(text: str):
    bad = [op for op in memory_ops(text, allow_call_abi=True) if not op.startswith(ALLOWED)]
    if any(op.startswith("bra") for op in bad):
        targets = set(re.findall(r"\bbra(?:\.uni)?\s+([\w$]+)\s*;", text))
        labels = set(re.findall(r"^\s*([\w$]+):", text, re.M))
        if targets <= labels:
            bad = [op for op in bad if not op.startswith("bra")]
    if bad:
        return ("the cut " + ", ".join(sorted(set(bad))[:5]) + ": the frame and the stages cover it "
                "(the epilogue harness binds weight-image loads and shared memory only)")
    return None


def _weight_image(spec):
    from .inputs import weight_image

    for f in spec.fields:
        if f.fill is not None and f.fill.rule == "weight_image":
            return weight_image(f, spec.seed).tobytes()
    return None


def _shared_decls(kernel) -> list:
    """[(declaration text, bytes, symbol)] of the entry's ``.shared`` arrays (module scope in the
    harness)."""
    from ..ptx import model as m

    src = kernel.module.source
    out = []
    for st in kernel.stmts:
        n = st.node
        if isinstance(n, m.Decl) and n.space == ".shared" and n.span is not None:
            size = 0
            for d in n.declarators:
                el = {".b8": 1, ".u8": 1, ".b16": 2, ".b32": 4, ".u32": 4, ".b64": 8}.get(n.type or "", 1)
                for dim in d.dims or ():
                    size += (dim or 0) * el
            out.append((src[n.span[0]:n.span[1]].strip(), size, n.declarators[0].name))
    return out


def _form_code(reg: str, t: str, form, shared: dict) -> list:
    """PTX computing an affine form into ``reg`` (64-bit accumulation)."""
    acc, v = f"{H}_d0", f"{H}_d1"
    lines = [f"\tmov.u64 {acc}, 0;"]
    for atom, c in form:
        if atom == CONST:
            lines.append(f"\tadd.s64 {acc}, {acc}, {c};")
            continue
        if atom == "W":
            lines.append(f"\tmov.u64 {v}, {H}_d3;")
        elif atom in SPECIAL:
            lines += [f"\tmov.u32 {H}_r0, {SPECIAL[atom]};", f"\tcvt.u64.u32 {v}, {H}_r0;"]
        elif atom in LANE_MASKS:
            op1, a1, op2, a2 = LANE_MASKS[atom]
            lines += [f"\tmov.u32 {H}_r0, %laneid;", f"\t{op1}.b32 {H}_r0, {H}_r0, {a1};"]
            if op2:
                lines.append(f"\t{op2}.b32 {H}_r0, {H}_r0, {a2};")
            lines.append(f"\tcvt.u64.u32 {v}, {H}_r0;")
        else:                                   # a shared array (its short name)
            lines.append(f"\tmov.u64 {v}, {shared[atom]};")
        lines.append(f"\tmad.lo.s64 {acc}, {v}, {c}, {acc};")
    if _width(t) == 8:
        lines.append(f"\tmov.b64 {reg}, {acc};")
    else:
        lines.append(f"\tcvt.u32.u64 {reg}, {acc};")
    return lines


def _prologue(ec: EpilogueCase, threads: int, tb: int) -> str:
    """W base (%sphe_d3), computed live-ins, the block's shared image, bar.sync."""
    n_in = len(ec.loaded)
    lines = ["\t// ---- epilogue harness: bind addresses, fill shared memory ----",
             f"\tsub.s64 {H}_d3, %sphx_rd0, %sphx_rd2;",
             f"\tadd.s64 {H}_d3, {H}_d3, {n_in * threads * 8};"]
    for reg, t, form in ec.computed:
        lines += _form_code(reg, t, form, ec.shared)
    if ec.smem_bytes:
        words = ec.smem_bytes // 4
        base = n_in * threads * 8 + (len(ec.weight) + (-len(ec.weight) % (8 * threads)))
        lines += [f"\tmov.u32 {H}_r1, %tid.x;", f"\tmov.u32 {H}_r2, %tid.y;", f"\tmov.u32 {H}_r3, %tid.z;",
                  f"\tmov.u32 {H}_r4, %ntid.y;", f"\tmad.lo.u32 {H}_r3, {H}_r3, {H}_r4, {H}_r2;",
                  f"\tmov.u32 {H}_r4, %ntid.x;", f"\tmad.lo.u32 {H}_r1, {H}_r3, {H}_r4, {H}_r1;",
                  f"\tmov.u32 {H}_r2, %ctaid.x;",
                  f"\tmul.wide.u32 {H}_d1, {H}_r2, {ec.smem_bytes};",
                  f"\tadd.s64 {H}_d1, {H}_d1, {H}_d3;",
                  f"\tadd.s64 {H}_d1, {H}_d1, {base - n_in * threads * 8};"]
        lines.append(f"\tmov.u32 {H}_r4, {next(iter(ec.shared.values()))};")
        for k in range(words // tb):
            lines += [f"\tmad.lo.u32 {H}_r5, {H}_r1, 4, {4 * k * tb};",
                      f"\tcvt.u64.u32 {H}_d2, {H}_r5;", f"\tadd.s64 {H}_d2, {H}_d2, {H}_d1;",
                      f"\tld.global.b32 {H}_r0, [{H}_d2];",
                      f"\tadd.u32 {H}_r5, {H}_r5, {H}_r4;",
                      f"\tst.shared.b32 [{H}_r5], {H}_r0;"]
        lines.append("\tbar.sync 0;")
    lines.append("\t// ---- the cut ----")
    return "\n".join(lines) + "\n"


def _epilogue(ec: EpilogueCase, threads: int, tb: int, n_out: int) -> str:
    if not ec.smem_bytes:
        return ""
    lines = ["\t// ---- epilogue harness: dump this block's shared memory ----", "\tbar.sync 0;"]
    for k in range(ec.smem_bytes // 4 // tb):
        lines += [f"\tmad.lo.u32 {H}_r5, {H}_r1, 4, {4 * k * tb};",
                  f"\tadd.u32 {H}_r5, {H}_r5, {H}_r4;",
                  f"\tld.shared.b32 {H}_r0, [{H}_r5];",
                  f"\tcvt.u64.u32 {H}_d2, {H}_r0;",
                  f"\tst.global.b64 [%sphx_rd1+{(n_out + k) * threads * 8}], {H}_d2;"]
    return "\n".join(lines) + "\n"
