"""Phase harness: a fast per-cut equivalence check outside the frame.

For every cut of a recipe two micro-kernels are generated:

    .visible .entry splice_harness(.param .u64 splice_harness_in, .param .u64 splice_harness_out)
    {   <the entry's own .reg declarations>
        ld.global live-ins   (slot i of thread g at in + (i * T + g) * 8)
        <the original statements of the cut>  |  <the bound native phase: the spliced site>
        st.global live-outs  (same layout in out)
    }

(call ABIs: the generated ``.func`` goes before the entry; call-shared: the ``__splice_ret``
array too).  Both run on the same random live-ins -- e4m3 bytes for A/B fragments (never the
NaN codes), finite f16 pairs for C, random bits elsewhere -- over a few blocks of the spec's
block shape, and the live-outs are compared byte for byte.

A cut whose statements (or native code) touch memory other than the call ABI's own
``.param``/``__splice_ret`` traffic, and every epilogue cut, goes to the *bound* harness
(``epilogue_harness``): random live-ins would be random addresses there, so it binds the
entry's parameters to the spec's arguments and computes addresses by provenance.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...analysis.global_uses import operand_symbols, reached_in
from ...ptx import edit
from .epilogue_harness import epilogue_case
from .harness_code import (ENTRY, HarnessCase, module_header, reg_decls, enclosing_scopes, expand_b128,
                           harness_ptx, memory_ops, width)

__all__ = ["ENTRY", "HarnessCase", "cases", "compare_outs", "harness_inputs", "memory_ops", "random_live_ins"]


def cases(pair, kernel, spec, blocks: int = 8) -> list:
    """One HarnessCase per cut of the recipe (empty for PROBE+MODULE targets)."""
    out = []
    if pair.plan is None:
        return out
    header = module_header(kernel.module)
    decls = reg_decls(kernel)
    threads = spec.block[0] * spec.block[1] * spec.block[2] * blocks
    ecache = {}
    for c in pair.cuts:
        li = expand_b128([(r.reg, r.type or kernel.reg_type(r.reg), r.role) for r in c.abi.live_in])
        lo = expand_b128([(r.reg, r.type or kernel.reg_type(r.reg), r.role) for r in c.abi.live_out])
        hc = HarnessCase(c.cut.index, c.title, c.phase, li, lo)
        orig_body = pair.original[c.region[0]:c.region[1]]
        spl_body = "\n".join(c.binding.site)
        prelude = "\n\n".join(c.binding.prelude)
        bad_o = memory_ops(orig_body)
        bad_s = memory_ops(spl_body, allow_call_abi=True) + memory_ops(prelude, allow_call_abi=True, module=True)
        if bad_o or bad_s or c.cut.select in ("epilogue", "epilogues", "phase+epilogue"):

            case = epilogue_case(pair, kernel, c, hc, header, decls, spec, blocks, ecache)
            if not case.skipped:
                case.skipped = _reaches_globals(kernel, spec, c, (orig_body, spl_body, prelude))
            out.append(case)
            continue
        scopes = enclosing_scopes(kernel, c.first)
        hc.orig_ptx = harness_ptx(header, decls, orig_body, li, lo, threads, scopes=scopes)
        hc.spl_ptx = harness_ptx(header, decls, spl_body, li, lo, threads, prelude,
                                 c.binding.shared_bytes, scopes=scopes)
        out.append(hc)
    return out


def _reaches_globals(kernel, spec, c, texts) -> Optional[str]:
    """Why a bound case is not run when its cut reaches the spec's module globals (by def-use
    in the original, by name in either side's code): the bound harness runs the cut in a module
    of its own, where a global is neither set from the spec nor compared -- a native that wrote
    one wrongly came out "equal"."""
    if not spec.globals:
        return None

    # an input the module initialises holds the same bytes there as in the frame run
    names = {g.name for g in spec.globals if g.role != "input" or g.fill is None or g.fill.rule != "module"}
    if not names:
        return None
    words = _named(texts)
    i, j = kernel.first_pos_of(c.first), kernel.pos_of(c.last)
    hit = sorted(set(reached_in(kernel, names, i, j, [r.reg for r in c.abi.live_in])) | (words & names))
    if not hit:
        return None
    return (f"the cut reaches the spec's module global(s) {', '.join(hit)}: the bound harness runs it in a module "
            "of its own, where globals are neither set from the spec nor compared (the frame run does both)")


def _named(texts) -> set:
    """The symbols the instructions of a cut's texts name (the original's statements, the site,
    the prelude's functions), as the parsed model gives them."""
    orig, site, prelude = texts
    nodes = edit.instructions(orig) + edit.instructions(site)
    nodes += edit.instructions(prelude, module=True) if prelude.strip() else []
    return {name for _n, name in operand_symbols(nodes)}


def harness_inputs(case: HarnessCase, threads: int, seed: int = 0) -> np.ndarray:
    """The input rows of a case: its own (an epilogue case binds memory) or random live-ins."""
    own = getattr(case, "inputs", None)
    return own(threads, seed) if own is not None else random_live_ins(case.live_in, threads, seed)


def random_live_ins(live_in: list, threads: int, seed: int = 0) -> np.ndarray:
    """(n_in, threads) uint64: each slot's low bytes are the register's value."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence((0x5EED, seed))))
    out = np.full((max(len(live_in), 1), threads), 0, dtype=np.uint64)
    for i, (_reg, t, role) in enumerate(live_in):
        tt = (t or ".b32").lstrip(".")
        if role in ("a", "b") and width(t) == 4:
            code = rng.integers(0, 0x41, (threads, 4), dtype=np.uint8)      # |x| <= 2
            sign = rng.integers(0, 2, (threads, 4), dtype=np.uint8) << np.uint8(7)
            out[i] = (code | sign).view(np.uint32).reshape(threads).astype(np.uint64)
        elif (role in ("c", "d") and width(t) == 4) or tt in ("f16x2",):
            v = rng.uniform(-1.0, 1.0, (threads, 2)).astype(np.float16)
            out[i] = v.view(np.uint32).reshape(threads).astype(np.uint64)
        elif tt in ("f16", "b16", "u16", "s16", "bf16"):
            v = rng.uniform(-1.0, 1.0, threads).astype(np.float16)
            out[i] = v.view(np.uint16).astype(np.uint64)
        elif tt == "f32":
            out[i] = rng.uniform(-1.0, 1.0, threads).astype(np.float32).view(np.uint32).astype(np.uint64)
        elif tt == "f64":
            out[i] = rng.uniform(-1.0, 1.0, threads).view(np.uint64)
        elif tt == "pred":
            out[i] = rng.integers(0, 2, threads, dtype=np.uint64)
        elif width(t) == 8:
            out[i] = rng.integers(0, 2**63, threads, dtype=np.uint64)
        else:
            out[i] = rng.integers(0, 2**32, threads, dtype=np.uint64)
    return out


#: how a report names the row of a half of a .b128 register
_HALF = {".b128.lo": " (bits 0-63)", ".b128.hi": " (bits 64-127)"}


def compare_outs(case: HarnessCase, a: np.ndarray, b: np.ndarray) -> dict:
    """a, b: (n_out, threads) uint64 live-outs of the original / spliced harness."""
    widths = [width(t) for _, t, _ in case.live_out]
    masks = np.array([(1 << (8 * w)) - 1 if w < 8 else 0xFFFFFFFFFFFFFFFF for w in widths],
                     dtype=np.uint64)[:, None]
    da = a[:len(widths)] & masks
    db = b[:len(widths)] & masks
    diff = da != db
    regs = [i for i in range(len(widths)) if diff[i].any()]
    row = {"cut": case.cut, "title": case.title, "phase": case.phase, "equal": not regs,
           "live_outs": len(widths), "live_outs_differ": len(regs),
           "threads": int(a.shape[1]), "threads_differ": int(diff.any(axis=0).sum())}
    if regs:
        i = regs[0]
        t = int(np.argmax(diff[i]))
        reg, ty, role = case.live_out[i]
        row["first"] = {"register": reg + _HALF.get(ty, ""), "role": role, "index": i, "thread": t,
                        "original": f"0x{int(da[i, t]):x}", "spliced": f"0x{int(db[i, t]):x}"}
        row["registers_differ"] = list(dict.fromkeys(case.live_out[j][0] for j in regs))
    return row
