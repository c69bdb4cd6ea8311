"""Regenerate the streamed natives of recipes/perf/enc5_stream*.yaml and dec1_stream*.yaml.

    python recipes/perf/make_stream_natives.py            # both layers, every variant

Each native is a statement range of the stand-in layer, extracted with ``splice extract`` and
re-scheduled by recipes/perf/reorder.py: the same statements (each mma with its operands and
accumulator chain, each floating-point operation of the softmax and the norm), in an order that
keeps fewer values live, plus rematerialised loads, merged repeats and schedule fences.  What
each range does and why is in the recipes' headers and in docs/results/perf-enc5.md.

The ranges (statement numbers of the committed corpus PTX; ``expect:`` in the recipes refuses
another module):

* enc5 s926-s3995 (``attention``): the A tiles read back after the prologue's bar.sync, the
  Q/K and V projections (phases 1-10), the score bias loads and packs (E10), the scores
  (phase 11), the cubic-exponent softmax and V transpose (E11), P.V (phase 12);
* enc5 s3996-s4904 (``outproj``): E12 (P.V packed and restaged through shared memory, the
  160-column table) and the out-projection phases 13-20 with their epilogues;
* enc5 s4905-s10352 (``mlp``): the RMS norm (E20) and the 40 MLP phases 21-60 with their
  epilogues;
* dec1 s1-s559 (``patch``): the prologue's input and weight loads, phase 1 (48x128x96) and the
  packs of E1 before its guarded stores;
* dec1 s1717-s4581 (``attention``): the same attention block as enc5's, two k-slices;
* dec1 s4639-s7871 (``mlp``): E7's tail, the norm and the MLP phases 8-25.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import reorder as RO  # noqa: E402

ROOT = HERE.parent.parent
NATIVE = HERE / "native"

#: (layer, range name) -> (first statement, last statement)
RANGES = {
    ("enc5", "attention"): (926, 3995),
    ("enc5", "outproj"): (3996, 4904),
    ("enc5", "mlp"): (4905, 10352),
    ("dec1", "patch"): (1, 559),
    ("dec1", "attention"): (1717, 4581),
    ("dec1", "mlp"): (4639, 7871),
}


def _is(s, prefix: str) -> bool:
    return isinstance(s.node, RO.m.Instruction) and s.node.name.startswith(prefix)


def _mma(prog) -> list:
    return [s for s in prog.stmts if s.is_mma]


def _producers(prog, regs) -> list:
    want = set(regs)
    return [s.i for s in prog.stmts if want & set(s.defs)]


def _light(s) -> bool:
    """What a flush may emit: no mma, no load (arithmetic, packs, shuffles, transposes)."""
    return not s.is_mma and s.mem != "load"


def _loads_and_addresses(prog, addresses: bool = True) -> list:
    """Rematerialisable statements: loads from shared memory and weak global loads (the weight
    image, read-only while the kernel runs), and the ``add.s64`` that form their addresses."""
    return [s.i for s in prog.stmts if _is(s, "ld.shared") or (_is(s, "ld.") and ".global" in s.node.name)
            or (addresses and _is(s, "add.s64"))]


def extract_range(layer: str, name: str):
    from splice.analysis import Kernel
    from splice.cut.extract import extract

    path = ROOT / "corpus" / f"{layer}.ptx"
    k = Kernel.load(str(path))
    first, last = RANGES[(layer, name)]
    ex = extract(k, statements=(first, last), source_name=f"corpus/{layer}.ptx")
    types = {r["symbol"]: r["type"] for r in ex["live_in"] + ex["live_out"]}
    return RO.load(ex["text"], str(path), types), ex


# ---------------------------------------------------------------------------------------------
# the attention block (enc5 phases 1-12, dec1 phases 2-7)
# ---------------------------------------------------------------------------------------------

def attention(prog, kslices: int, fence_every: int = 3, fences: bool = True):
    """Schedule of the attention block: ``kslices`` Q/K phases interleaved with as many V phases
    (enc5 5, dec1 2), each 6 m-tiles x 4 n-tiles; the scores 4 x 12; P.V 4 x 4 x 3.

    * Q/K first, one m-tile at a time through all its k-slices (the accumulator chain of each
      tile in its order), and as soon as a tile is complete its packs (E10's A and B operands of
      the scores) — 8 accumulators live instead of 48; V likewise, each pair of tiles transposed
      and packed (E11's movmatrix) as soon as it is complete — so neither projection is ever
      held whole.  Each pass reloads its A tile from shared memory and its B pair from the
      weight image (rematerialised loads) instead of holding all of them.
    * then per query m-tile: its 12 score mma (each C seed loaded just before it), the softmax of
      its two rows (the same exponent, sum tree, shuffles and reciprocals, just in time for the
      packs that read them) and its 12 P.V mma: 24 scores live instead of 96.
    """
    mm = _mma(prog)
    nq = 24 * 2 * kslices
    assert len(mm) == nq + 96, len(mm)
    ph = {p: mm[24 * (p - 1):24 * p] for p in range(1, 2 * kslices + 1)}
    scores, pv = mm[nq:nq + 48], mm[nq + 48:nq + 96]
    for p in ph:
        for m in range(6):        # m-tile outer, n inner: the 4 mma of a tile share their A
            assert len({s.operand_regs(1) for s in ph[p][4 * m:4 * m + 4]}) == 1
    qk_ops = [r for s in scores for r in s.operand_regs(1) + s.operand_regs(2)]
    packs = RO.Flush(tuple(_producers(prog, qk_ops)), _light)
    vt = RO.Flush(tuple(_producers(prog, [r for s in pv for r in s.operand_regs(2)])), _light)
    groups: list = []
    marks = []
    for q in (1, 2):              # odd phases: Q/K; even phases: V
        for m in range(6):
            groups.append([s.i for j in range(kslices) for s in ph[2 * j + q][4 * m:4 * m + 4]])
            if (6 * (q - 1) + m + 1) % fence_every == 0:
                marks.append(groups[-1][-1])
            groups.append(packs if q == 1 else vt)
    for mt in range(4):
        groups.append([s.i for s in scores[12 * mt:12 * mt + 12]])
        groups.append([s.i for s in pv[12 * mt:12 * mt + 12]])
        marks.append(groups[-1][-1])
    em = RO.schedule(prog, groups, _loads_and_addresses(prog))
    return em, _positions(em, marks) if fences else []


def _positions(em, marks) -> list:
    last = {}
    for k, e in enumerate(em):
        last[e.stmt.i] = k
    return [last[i] for i in marks]


# ---------------------------------------------------------------------------------------------
# the MLP band (enc5 E20-P60, dec1 E7-P25)
# ---------------------------------------------------------------------------------------------

def mlp(prog, per_phase: int, fences: bool = False):
    """The band: every mma in its original order (one group per phase), each statement just in
    time for its first reader (the B fragments of a phase loaded as its mma reach them, not all
    in the epilogue before), and the odd phases' A operand packed once: the even epilogues
    re-pack it from the same registers, and those repeats are merged into the first, so the
    normalised rows (40 registers in enc5) die after the norm's packs."""
    RO.merge_repeats(prog)
    mm = _mma(prog)
    groups = [[s.i for s in mm[k:k + per_phase]] for k in range(0, len(mm), per_phase)]
    em = RO.schedule(prog, groups)
    return em, _positions(em, [g[-1] for g in groups]) if fences else []


# ---------------------------------------------------------------------------------------------
# dec1's phase 1 (48x128x96)
# ---------------------------------------------------------------------------------------------

def patch(prog, fences: bool = True, fence_mma: int = 48):
    """dec1 prologue + phase 1: one 16-row m-tile at a time (its 16 chains of 3 k-slices in
    order, each B fragment loaded when its chain reaches it, reloaded for the next m-tile), the
    packs of E1 as soon as their tile is complete: 32 accumulators live instead of 96, and the
    24 B fragments (96 registers) are never held at once."""
    mm = _mma(prog)
    assert len(mm) == 144, len(mm)
    after = [s.i for s in prog.stmts if s.i > mm[-1].i]
    groups: list = []
    marks = []
    for m in range(3):
        groups.append([s.i for s in mm[48 * m:48 * m + 48]])
        marks += [s.i for s in mm[48 * m + fence_mma - 1:48 * m + 48:fence_mma]]
        groups.append(RO.Flush(tuple(after), _light))
    em = RO.schedule(prog, groups, _loads_and_addresses(prog))
    return em, _positions(em, marks) if fences else []


# ---------------------------------------------------------------------------------------------

def write(layer: str, name: str, suffix: str, em, fences, prog, why: list, out_dir: Path = NATIVE,
          wparam: int = 40) -> Path:
    first, last = RANGES[(layer, name)]
    title = (f"{layer} s{first}-s{last} ({name}), re-scheduled by recipes/perf/make_stream_natives.py "
             "(reorder.py): the original statements, another order")
    text = RO.render_native(prog, em, fences, title=title, why=why, wparam=wparam)
    out = Path(out_dir) / f"{layer}_stream_{name}{suffix}.ptx"
    out.write_text(text)
    return out


def build(layer: str, name: str, suffix: str = "", out_dir: Path = NATIVE, **kw) -> Path:
    prog, _ex = extract_range(layer, name)
    if name == "attention":
        em, fences = attention(prog, 5 if layer == "enc5" else 2, **kw)
        why = [ln.strip() for ln in attention.__doc__.strip().splitlines()]
    elif name in ("mlp", "outproj"):
        em, fences = mlp(prog, 20 if layer == "enc5" else 16, **kw)
        why = [ln.strip() for ln in mlp.__doc__.strip().splitlines()]
    else:
        em, fences = patch(prog, **kw)
        why = [ln.strip() for ln in patch.__doc__.strip().splitlines()]
    return write(layer, name, suffix, em, fences, prog, why, out_dir)


VARIANTS = {
    ("enc5", "attention", ""): {"fence_every": 1},
    ("enc5", "mlp", ""): {},
    ("enc5", "mlp", "_fenced"): {"fences": True},
    ("enc5", "outproj", ""): {},
    ("enc5", "outproj", "_fenced"): {"fences": True},
    ("dec1", "patch", ""): {"fence_mma": 12},
    ("dec1", "attention", ""): {"fence_every": 1},
    ("dec1", "mlp", ""): {"fences": True},
}


def main(argv: list, out_dir: Path = NATIVE) -> list:
    """Write the natives ``argv`` names (``enc5``, ``dec1:mlp``; all when empty)."""
    want = set(argv)
    written = []
    for (layer, name, suffix), kw in VARIANTS.items():
        if want and layer not in want and f"{layer}:{name}" not in want:
            continue
        written.append(build(layer, name, suffix, out_dir, **kw))
    return written


if __name__ == "__main__":
    for path in main(sys.argv[1:]):
        print(f"wrote {path.relative_to(ROOT)}")
