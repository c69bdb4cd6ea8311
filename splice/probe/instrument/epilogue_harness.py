"""The phase harness for cuts that touch memory: epilogues (and any cut with loads, stores,
``tex``/``sust``, parameter reads or shared memory) run outside the frame, against the probe's
own buffers, textures and surfaces.

The plain harness (``splice.probe.instrument.harness``) runs register-only cuts on random live-ins.  Random
live-ins would be random addresses here, so a *bound* case reproduces every value an address
is made of and binds memory to the probe:

* the harness kernel is declared with **the entry's own ``.param`` list** (then the harness's
  in/out buffers) and launched with **the spec's arguments**: every parameter field, buffer
  pointer, texture and surface handle the cut reads is the one the frame run gets, so global
  loads read the spec's buffers (the weight image ``W`` included), ``tex`` samples the spec's
  texture and ``st.global``/``sust`` write the spec's outputs;
* live-ins are classified by their provenance (``Provenance.value_at``):
  - an affine form over parameter fields (``param_0+88``), the parameter block's address
    (``&param_0``), ``W``, module arrays (``smem``), ``laneid`` and its masks, ``tid``/
    ``ctaid``/``ntid``, ``nctaid`` (the spec's grid) and constants is *computed* in the harness
    kernel, the same in both modules;
  - a constant (a literal through ``mov``/``cvt``, e.g. E21's f16x2 splats) gets its value;
  - the rest is random by provenance and type: an mma D or f16 arithmetic result -> finite
    f16x2 in [-4, 4] (covers the activation's clamp at ±2), an e4m3 pack -> e4m3 codes (never
    NaN), a loaded word -> finite f16, predicates and integers -> random bits;
* a cut is refused (with the statement named) when any address it forms depends on a random
  live-in or on a word the harness filled (``analysis.taint``): such an address would be random;
* the block's shared array is filled from the input buffer (each block its own random slice),
  then ``bar.sync 0``, then the cut; after it ``bar.sync 0`` and the shared array is written
  out as extra output rows (``smem word k·T + tid``), compared like live-outs;
* every output of the spec is poisoned before each side runs and compared bit for bit after
  (``session.harness_stage``): the memory written by the cut is compared, not only registers.

Not harnessed (the frame and the debug stages cover them), each with its reason: atomics and
reductions (the order of concurrent updates is not reproducible), local memory, async copies,
wgmma, branches to labels outside the cut, values whose provenance the analysis cannot bind.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ...analysis.global_uses import own_symbols
from ...analysis.provenance import CONST
from ...ptx.builder import Builder, NameScope, addr, linear_id
from .harness_code import HarnessCase, enclosing_scopes, harness_ptx, memory_ops, width
from ...analysis.slices import replay_slice
from ...analysis.taint import address_taints
from ...cut.epilogue import literals_behind
from ...ptx import edit
from ...ptx import model as m
from ...ptx.model import Imm
import struct

SPECIAL = {"laneid": "%laneid", "tid.x": "%tid.x", "tid.y": "%tid.y", "tid.z": "%tid.z",
           "ctaid.x": "%ctaid.x", "ctaid.y": "%ctaid.y", "ctaid.z": "%ctaid.z",
           "ntid.x": "%ntid.x", "ntid.y": "%ntid.y", "ntid.z": "%ntid.z"}
GRID = {"nctaid.x": 0, "nctaid.y": 1, "nctaid.z": 2}       # the spec's grid, not the harness's
LANE_MASKS = {"((laneid<<2)&12)": ("shl", 2, "and", 12), "(laneid>>2)": ("shr", 2, None, 0),
              "(laneid&3)": ("and", 3, None, 0)}
H = "%sphe"
_SPACES = ("global", "shared", "param", "const")
_BOUND_OPS = ("tex", "tld4", "suld", "sust", "ldmatrix", "stmatrix", "bar", "barrier")


@dataclass
class EpilogueCase(HarnessCase):
    """A HarnessCase launched with the entry's parameters; its input rows are the *loaded*
    live-ins, then the per-block shared images; its output rows are the live-outs, then the
    shared dump."""
    loaded: list = field(default_factory=list)       # [(reg, type, kind)]
    computed: list = field(default_factory=list)     # [(reg, type, form)]
    reloaded: list = field(default_factory=list)     # [(reg, type, (space, bytes, address form))]
    replay: list = field(default_factory=list)       # the kernel's statements recomputing live-ins
    shared: dict = field(default_factory=dict)       # short name -> the array's symbol
    smem_bytes: int = 0                              # one block's image: every array, 8-aligned
    smem_layout: list = field(default_factory=list)  # [(symbol, short name, bytes)] in image order
    dynamic_smem: int = 0                            # bytes of an .extern .shared array
    blocks: int = 0
    bound: bool = True                               # launch with the spec's arguments

    def inputs(self, threads: int, seed: int = 0) -> np.ndarray:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence((0xE9, seed))))
        rows = [random_value(kind, t, threads, rng) for _r, t, kind in self.loaded]
        sm = rng.integers(0, 2**63, -(-self.smem_bytes // 8) * self.blocks, dtype=np.uint64)
        sm = np.concatenate([sm, np.zeros(-len(sm) % threads, dtype=np.uint64)])
        flat = np.concatenate([np.concatenate(rows) if rows else np.zeros(0, np.uint64), sm])
        return flat.reshape(-1, threads)


def random_value(kind: str, t: str, threads: int, rng) -> np.ndarray:
    """One input row (``threads`` uint64 slots) for a live-in of ``kind`` and type ``t``."""
    tt = (t or ".b32").lstrip(".")
    w = width(t)
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


# ---- what a live-in is made of -------------------------------------------------------------

def _bindable(atom: str, prov) -> bool:
    if atom in SPECIAL or atom in LANE_MASKS or atom in GRID or atom == "W":
        return True
    if atom in prov.shared.values():
        return True
    shorts = set(prov.param_short.values())
    if atom.startswith("&"):
        return atom[1:] in shorts
    base, plus, off = atom.partition("+")
    return bool(plus) and base in shorts and off.lstrip("-").isdigit()


def classify_live_in(kernel, reg: str, pos: int) -> tuple:
    """('computed', form) | ('value', kind) | ('reload', how) | ('replayed', statement indices)
    | ('unbound', why) for live-in ``reg`` at ``pos``: the most faithful way the harness can
    give the register the value the frame's thread had, else a random value by provenance."""
    prov = kernel.provenance
    key = kernel._resolve(reg, kernel._scope_of[pos])
    form = prov.value_at(key[0], pos) if key else None
    atoms = [a for a, _c in form or () if a != CONST]
    bad = [a for a in atoms if "#" in a or not _bindable(a, prov)]
    if form is not None and not bad:
        return ("computed", form) if atoms else ("value", f"const:{dict(form).get(CONST, 0)}")
    bits = constant_bits(kernel, reg, pos, literals_behind(kernel, reg, pos))
    if bits is not None:
        return "value", f"const:{bits}"
    again = reload_of(kernel, key[0], pos) if key else None
    if again is not None:
        return "reload", again
    if key:

        stmts, why = replay_slice(kernel, key[0], pos)
        if stmts is not None:
            return "replayed", stmts
        if form is not None and not any("#" in a for a in bad):
            return "unbound", f"{reg} = {bad[0]}… ({why})"
    return "value", _random_kind(kernel, key, pos)


def _random_kind(kernel, key, pos) -> str:
    """How a live-in the harness cannot reproduce is drawn: by the provenance of its value."""
    prov = kernel.provenance
    d = prov.reaching_def(key[0], pos) if key else None
    node = kernel.stmts[d].node if d is not None else None
    nm = getattr(node, "name", "")
    if nm.startswith("cvt") and "e4m3x2" in nm or (nm.startswith("mov") and _packs_e4m3(kernel, d)):
        return "e4m3"
    acc = prov.access_at(d) if d is not None else None
    if acc is not None and acc.kind == "ld":
        return "f16"
    if getattr(node, "opcode", "") == "mma" or any(t in nm for t in (".f16", ".f32")):
        return "act"
    return "bits"


def reload_of(kernel, key: str, pos: int):
    """(space, bytes, address form) when the live-in is a word an unguarded load read from an
    address the harness can compute (``W + 16·laneid + 428544``): the harness reads the same
    word of the spec's memory, so a native that re-loads it instead of taking the live-in (the
    qkv wave template loads its own B) sees the value the live-in holds.  None otherwise."""
    prov = kernel.provenance
    d, k2 = prov.origin(key, pos)
    if d is None:
        return None
    node = kernel.stmts[d].node
    acc = prov.access_at(d)
    if (acc is None or acc.kind != "ld" or acc.space not in ("global", "generic", "const") or not acc.addr
            or getattr(node, "guard", None) is not None or not acc.regs):
        return None
    if any("#" in a or not _bindable(a, prov) for a, _c in acc.addr if a != CONST):
        return None
    names = [prov._key(r, d) for r in acc.regs]
    if k2 not in names:
        return None
    per = acc.bytes // len(acc.regs)
    off = dict(acc.addr).get(CONST, 0) + names.index(k2) * per
    form = tuple((a, c) for a, c in acc.addr if a != CONST) + (((CONST, off),) if off else ())
    return acc.space, per, form


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
    if len(lits) != 1:
        return None

    v = float(Imm(next(iter(lits))).value)
    t = (kernel.reg_type(reg) or ".b32").lstrip(".")
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "f64":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    h = struct.unpack("<H", struct.pack("<e", v))[0]
    return h if t.endswith("16") else h | (h << 16)


# ---- the case ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BindContext:
    """What the harness kernel needs to compute a live-in: the parameters' full names, the
    fields' types, the weight field, the module arrays' symbols and the spec's grid."""
    params: dict          # short -> full parameter name
    fields: dict          # 'param_0+88' -> '.u64'
    weight: Optional[str]
    shared: dict          # short -> symbol
    grid: tuple


def epilogue_case(pair, kernel, c, hc, header: str, decls: list, spec, blocks: int,
                  cache: Optional[dict] = None):
    """An EpilogueCase for cut ``c`` (whose code touches memory), or ``hc`` with the reason it
    cannot be harnessed in ``hc.skipped``.  ``cache``: the caller's dict, shared by the cuts of
    one recipe (module-level facts are computed once)."""
    cache = {} if cache is None else cache
    orig = pair.original[c.region[0]:c.region[1]]
    spl = "\n".join(c.binding.site)
    why = _unsupported(orig) or _unsupported(spl) or _unsupported("\n\n".join(c.binding.prelude), module=True)
    if why:
        hc.skipped = why
        return hc
    pos = kernel.first_pos_of(c.first)
    loaded, computed, reloaded, replayed = [], [], [], set()
    for r in c.abi.live_in:
        t = r.type or kernel.reg_type(r.reg)
        how, what = classify_live_in(kernel, r.reg, pos)
        if how == "unbound":
            hc.skipped = f"live-in {what} cannot be bound to a probe-owned buffer"
            return hc
        if how == "replayed":
            replayed.update(what)
            continue
        {"computed": computed, "reload": reloaded}.get(how, loaded).append((r.reg, t, what))
    why = _random_address(kernel, c, loaded) or _b128_loaded(loaded)
    if why:
        hc.skipped = why
        return hc
    if "ctx" not in cache:
        cache["ctx"], cache["arrays"] = _context(kernel, spec), module_arrays(kernel)
    ctx, arrays = cache["ctx"], cache["arrays"]
    touches_smem = any(_touches_shared(s) for text in (orig, spl) for s in edit.instructions(text))
    layout, dyn = _shared_layout(arrays, spec.shared_dynamic) if touches_smem else ([], 0)
    smem_bytes = sum(-(-n // 8) * 8 for _sym, _s, n in layout)
    threads_blk = spec.block[0] * spec.block[1] * spec.block[2]
    ec = EpilogueCase(hc.cut, hc.title, hc.phase, [(r, t, "in") for r, t, _k in loaded],
                      list(hc.live_out), loaded=loaded, computed=computed, reloaded=reloaded,
                      replay=[_statement_text(kernel, p) for p in sorted(replayed)],
                      shared={s: sym for sym, _n, s, sp, _d in arrays if sp == ".shared"},
                      smem_bytes=smem_bytes, smem_layout=layout, dynamic_smem=dyn, blocks=blocks)
    ec.live_out = list(hc.live_out) + [(f"{short}[{k}·T+tid]", ".b32", "smem")
                                       for _sym, short, n in layout for k in range(_rows(n, threads_blk))]
    _build(ec, pair, c, kernel, header, decls, arrays, ctx, (orig, spl), threads_blk)
    ec.notes.append(f"bound harness: the entry's {len(ctx.params)} parameters (the spec's arguments), "
                    f"{len(loaded)} live-ins random by provenance, {len(computed)} computed, "
                    f"{len(reloaded)} re-read from the spec's memory, "
                    f"{len(ec.replay)} statements replayed, "
                    f"shared {smem_bytes} bytes")
    return ec


def _touches_shared(ins: m.Instruction) -> bool:
    """An instruction that addresses shared memory (a ``.shared`` state space) or waits at a
    block barrier (``bar.sync``, ``barrier.sync``): the cut needs the block's shared image."""
    if any(x.startswith(".shared") for x in ins.modifiers):
        return True
    return ins.opcode in ("bar", "barrier") and ins.modifiers[:1] == (".sync",)


def _b128_loaded(loaded: list) -> "str | None":
    """Why a bound harness cannot run: a ``.b128`` live-in drawn at random (its input rows are
    made per register, 64 bits each; the plain harness splits such a register in two rows)."""
    wide = [reg for reg, t, _what in loaded if (t or "").lstrip(".") == "b128"]
    if wide:
        return (f"live-in {wide[0]} is a .b128 register drawn at random: the bound harness makes "
                "64-bit input rows (the frame and --stages still compare it)")
    return None


def _build(ec, pair, c, kernel, header, decls, arrays, ctx, bodies, tb) -> None:

    threads = tb * ec.blocks
    hdr = header + "".join(f"\n{a[4]}" for a in arrays)
    params = list(kernel.fn.params or ())
    for side, body in zip(("orig", "spl"), bodies):
        scope, regs = NameScope(H), {}
        pro = _prologue(ec, threads, tb, ctx, scope, regs)
        epi = _epilogue(ec, threads, tb, len(ec.live_out) - _dump_rows(ec, tb), scope, regs)
        ptx = harness_ptx(hdr, decls + scope.decl_nodes(), pro + _single_exit(body) + epi,
                          ec.live_in, ec.live_out[:len(ec.live_out) - _dump_rows(ec, tb)], threads,
                          "\n\n".join(c.binding.prelude) if side == "spl" else "",
                          c.binding.shared_bytes if side == "spl" else 0, entry_params=params,
                          scopes=enclosing_scopes(kernel, c.first))
        if side == "orig":
            ec.orig_ptx = ptx
        else:
            ec.spl_ptx = ptx


END = "$__splice_harness_end"


def _single_exit(body: str) -> str:
    """The cut with one exit: every ``ret``/``exit`` and every branch to a label outside the
    cut (a K loop's back edge, the jump past a tail) goes to the harness's end label, where
    the live-outs are stored.  The last epilogue of a kernel ends in ``ret``, and a thread that
    returned would skip the shared dump and the live-out stores; a loop's back edge leaves the
    cut with the values the loop head receives, which are live-outs too.  The statements are
    the parsed model's: each one rewritten is a new ``bra`` node (its guard kept) in its place."""
    inside = {s.name for s in edit.fragment(body).statements() if isinstance(s, m.Label)}

    def leaves(s):
        if not isinstance(s, m.Instruction):
            return None
        target = s.operands[0] if s.operands else None
        if s.opcode in ("ret", "exit") or (s.opcode == "bra" and isinstance(target, m.Sym)
                                          and target.name not in inside):
            return (m.Instruction(s.guard, "bra", (), (m.Sym(END),)),)
        return None

    out = edit.rewrite(body, leaves)
    if out == body:
        return body
    return out.rstrip("\n") + f"\n{edit.render(m.Label(END))}\n"


def _rows(nbytes: int, tb: int) -> int:
    """Dump rows of one shared array: word ``k·T + tid`` in row k."""
    words = -(-nbytes // 4)
    return -(-words // tb)


def _dump_rows(ec, tb: int) -> int:
    return sum(_rows(n, tb) for _sym, _s, n in ec.smem_layout)


def _shared_layout(arrays: list, dynamic: int) -> tuple:
    """([(symbol, short name, bytes)], dynamic bytes) of the shared arrays the harness fills and
    dumps.  Every ``.extern .shared`` array starts at the same address (the dynamic region), so
    the first one stands for all of them, with the spec's dynamic size."""
    out, dyn = [], 0
    for sym, n, short, space, _decl in arrays:
        if space != ".shared":
            continue
        if n == 0:
            if dyn or not dynamic:
                continue
            n = dyn = dynamic
        out.append((sym, short, n))
    return out, dyn


def _context(kernel, spec) -> BindContext:
    prov = kernel.provenance
    return BindContext({v: k for k, v in prov.param_short.items()}, prov.field_types(),
                       prov.weight_atom, {v: k for k, v in prov.shared.items()}, tuple(spec.grid))


def _statement_text(kernel, p: int) -> str:
    node = kernel.stmts[p].node
    return "\t" + kernel.module.source[node.span[0]:node.span[1]].strip()


def _random_address(kernel, c, loaded) -> Optional[str]:

    seeds = [r for r, _t, kind in loaded if not kind.startswith("const:")]
    hits = address_taints(kernel, c.first, c.last, seeds)
    if not hits:
        return None
    return hits[0].text() + ": a random value would be a random address"


def _unsupported(text: str, module: bool = False):
    bad = [op for op in memory_ops(text, allow_call_abi=True, module=module)
           if not _bound_op(op) and not op.startswith("bra")]     # branches: _single_exit
    if bad:
        return ("the cut " + ", ".join(sorted(set(bad))[:5]) + ": the frame and the stages cover it "
                "(the harness binds loads, stores, tex/sust, parameters, shared memory and cp.async; "
                "not atomics, local memory, TMA bulk copies, wgmma.mma_async or indirect branches)")
    return None


def _bound_op(op: str) -> bool:
    fam, _, rest = op.partition(".")
    parts = set(rest.split("."))
    if fam in _BOUND_OPS:
        return True
    if fam in ("ld", "ldu"):
        return not (parts & {"local"})
    if fam == "st":
        return not (parts & {"local", "param", "async"})
    if fam == "wgmma":               # the phase's fence/commit/wait: no-ops with nothing in flight
        return bool(parts & {"fence", "commit_group", "wait_group"})
    if fam == "cp":                  # per-thread async copies global -> shared (not TMA bulk)
        return "async" in parts and not (parts & {"bulk", "tensor", "reduce"})
    return False


def module_arrays(kernel) -> list:
    """[(symbol, bytes, short, space, declaration text)] of the ``.shared``/``.global``/
    ``.const`` arrays the entry names (its own and the module's), declared at module scope in
    the harness.  ``bytes`` is 0 for an ``.extern`` (dynamic) array."""
    src = kernel.module.source
    named = own_symbols(kernel)
    prov = kernel.provenance
    out = []
    # the module's arrays the entry's statements name, and every array the entry declares
    nodes = [it for it in kernel.module.items if isinstance(it, m.Decl) and it.declarators
             and it.declarators[0].name in named]
    nodes += [st.node for st in kernel.stmts if isinstance(st.node, m.Decl)]
    for n in nodes:
        if n.space not in (".shared", ".global", ".const") or n.span is None:
            continue
        name = n.declarators[0].name
        el = {".b8": 1, ".u8": 1, ".s8": 1, ".b16": 2, ".u16": 2, ".b32": 4, ".u32": 4, ".s32": 4,
              ".f32": 4, ".b64": 8, ".u64": 8, ".f64": 8}.get(n.type or "", 1)
        size = sum((dim or 0) * el for d in n.declarators for dim in (d.dims or ()))
        out.append((name, size, prov.shared.get(name, name), n.space, src[n.span[0]:n.span[1]].strip()))
    return out


# ---- generated code ------------------------------------------------------------------------

def _atom_value(b: Builder, atom: str, ctx: BindContext) -> str:
    """A 64-bit register holding ``atom``'s value, as the frame's thread would see it."""
    sc = b.scope
    v = sc.reg(".b64")
    if atom in SPECIAL or atom in LANE_MASKS:
        r = sc.reg(".b32")
        if atom in SPECIAL:
            b.ins("mov.u32", r, SPECIAL[atom])
        else:
            op1, a1, op2, a2 = LANE_MASKS[atom]
            b.ins("mov.u32", r, "%laneid")
            b.ins(f"{op1}.b32", r, r, a1)
            if op2:
                b.ins(f"{op2}.b32", r, r, a2)
        b.ins("cvt.u64.u32", v, r)
    elif atom.startswith("&"):
        b.ins("mov.u64", v, ctx.params[atom[1:]])
    elif atom == "W" and ctx.weight is not None:
        _param_field(b, v, ctx.weight, ctx)
    elif "+" in atom and atom.split("+", 1)[0] in ctx.params:
        _param_field(b, v, atom, ctx)
    else:                                   # a module array (its short name)
        b.ins("mov.u64", v, ctx.shared.get(atom, atom))
    return v


def _param_field(b: Builder, v: str, fld: str, ctx: BindContext) -> None:
    """``v`` = the parameter field ``fld`` read as the kernel reads it (width, signedness)."""
    base, _, off = fld.partition("+")
    t = ctx.fields.get(fld, ".u64")
    where = addr(ctx.params[base], int(off))
    if t.endswith("64"):
        b.ins(f"ld.param{t}", v, where)
        return
    narrow = b.scope.reg(".b16" if t.endswith(("8", "16")) else ".b32")
    b.ins(f"ld.param{t}", narrow, where)
    b.ins(f"cvt{t[0:2]}64{t}", v, narrow)


def _affine(b: Builder, form, ctx: BindContext) -> str:
    """A 64-bit register holding an affine form's value (the thread's own atoms)."""
    acc = b.scope.reg(".b64")
    b.ins("mov.u64", acc, 0)
    for atom, c in form:
        if atom == CONST:
            b.ins("add.s64", acc, acc, c)
        elif atom in GRID:
            b.ins("add.s64", acc, acc, c * int(ctx.grid[GRID[atom]]))
        else:
            b.ins("mad.lo.s64", acc, _atom_value(b, atom, ctx), c, acc)
    return acc


def _assign(b: Builder, reg: str, t: str, bits64: str) -> None:
    """``reg`` = the low bits of a 64-bit value, in the register's width: a 32-bit float
    register gets the low word's bits, a predicate ``value != 0``."""
    tt = (t or ".b32").lstrip(".")
    if tt == "pred":
        b.ins("setp.ne.u64", reg, bits64, 0)
    elif width(t) == 8:
        b.ins("mov.b64", reg, bits64)
    else:
        w = 16 if width(t) == 2 else 32
        narrow = b.scope.reg(f".b{w}")
        b.ins(f"cvt.u{w}.u64", narrow, bits64)
        b.ins(f"mov.b{w}", reg, narrow)


def _form_code(b: Builder, reg: str, t: str, form, ctx: BindContext) -> None:
    _assign(b, reg, t, _affine(b, form, ctx))


def _reload_code(b: Builder, reg: str, t: str, how, ctx: BindContext) -> None:
    """``reg`` = the word the kernel's load read, read again from the spec's memory."""
    space, nbytes, form = how
    at = _affine(b, form, ctx)
    op = "ld" if space == "generic" else f"ld.{space}"
    if nbytes == 8:
        b.ins(f"{op}.b64", reg, addr(at))
        return
    w = {1: 16, 2: 16}.get(nbytes, 32)
    word, wide = b.scope.reg(f".b{w}"), b.scope.reg(".b64")
    b.ins(f"{op}.{'u8' if nbytes == 1 else f'b{8 * nbytes}'}", word, addr(at))
    b.ins(f"cvt.u64.u{w}", wide, word)
    _assign(b, reg, t, wide)


def _block_thread(b: Builder) -> str:
    """The thread's linear index in its block (tid.x + ntid.x·(tid.y + ntid.y·tid.z))."""
    return linear_id(b, "tid")


def _smem_words(b: Builder, sym: str, nbytes: int, image_off: int, tb: int, regs: dict, load: bool,
                out_row: int = 0, threads: int = 0) -> None:
    """Copy one shared array in (from the block's input slice, at ``image_off``) or out (to
    the dump rows from ``out_row``): word ``k·T + tid`` per thread, the last round guarded when
    the size is not a multiple."""
    sc = b.scope
    words = -(-nbytes // 4)
    idx, a64, w, sa, base = sc.reg(".b32"), sc.reg(".b64"), sc.reg(".b32"), sc.reg(".b32"), sc.reg(".b32")
    b.ins("mov.u32", base, sym)
    for k in range(-(-words // tb)):
        guard = ""
        b.ins("add.u32", idx, regs["t"], k * tb)
        if (k + 1) * tb > words:
            p = sc.reg(".pred")
            b.ins("setp.lt.u32", p, idx, words)
            guard = "@" + p
        b.ins("mad.lo.u32", sa, idx, 4, base)
        if load:
            b.ins("mul.wide.u32", a64, idx, 4)
            b.ins("add.s64", a64, a64, regs["image"])
            b.ins("ld.global.b32", w, addr(a64, image_off), guard=guard)
            b.ins("st.shared.b32", addr(sa), w, guard=guard)
        else:
            wide = sc.reg(".b64")
            b.ins("ld.shared.b32", w, addr(sa), guard=guard)
            b.ins("cvt.u64.u32", wide, w)
            b.ins("st.global.b64", addr("%sphx_rd1", (out_row + k) * threads * 8), wide, guard=guard)


def _prologue(ec: EpilogueCase, threads: int, tb: int, ctx: BindContext, scope: NameScope,
              regs: Optional[dict] = None) -> str:
    """Computed live-ins, the block's shared image, ``bar.sync 0``."""
    b = Builder(scope)
    regs = {} if regs is None else regs
    if ec.replay:
        b.comment("---- bound harness: the kernel's own statements recomputing live-ins ----")
        for text in ec.replay:
            b.raw(text)
    b.comment("---- bound harness: computed live-ins ----")
    for reg, t, form in ec.computed:
        _form_code(b, reg, t, form, ctx)
    for reg, t, how in ec.reloaded:
        _reload_code(b, reg, t, how, ctx)
    if ec.smem_bytes:
        b.comment("---- the block's shared image from its input slice ----")
        regs["t"] = _block_thread(b)
        regs["image"] = scope.reg(".b64")
        blk = scope.reg(".b32")
        b.ins("mov.u32", blk, "%ctaid.x")
        b.ins("sub.s64", regs["image"], "%sphx_rd0", "%sphx_rd2")
        b.ins("add.s64", regs["image"], regs["image"], len(ec.loaded) * threads * 8)
        wide = scope.reg(".b64")
        b.ins("mul.wide.u32", wide, blk, -(-ec.smem_bytes // 8) * 8)
        b.ins("add.s64", regs["image"], regs["image"], wide)
        off = 0
        for sym, _short, n in ec.smem_layout:
            _smem_words(b, sym, n, off, tb, regs, load=True)
            off += -(-n // 8) * 8
        b.ins("bar.sync", 0)
    b.comment("---- the cut ----")
    return b.text()


def _epilogue(ec: EpilogueCase, threads: int, tb: int, n_out: int, scope: NameScope,
              regs: Optional[dict] = None) -> str:
    if not ec.smem_bytes:
        return ""
    b = Builder(scope)
    b.comment("---- bound harness: dump this block's shared memory ----")
    b.ins("bar.sync", 0)
    row = n_out
    for sym, _short, n in ec.smem_layout:
        _smem_words(b, sym, n, 0, tb, regs or {}, load=False, out_row=row, threads=threads)
        row += _rows(n, tb)
    return b.text()
