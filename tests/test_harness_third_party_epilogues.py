"""The bound harness on every epilogue of the bundled third-party-shaped kernels (Triton,
CUTLASS DSL, nvcc: wgmma, cp.async pipelines, ldmatrix, fp8): each case is either bound or
refused with a reason naming what it cannot bind -- never a crash -- and the bound ones
assemble.  Specs come from ``splice probe init`` with the sizes filled in."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = sorted((ROOT / "tests/data/ptx/modern").glob("*.ptx")) + sorted((ROOT / "tests/data/ptx/tensor_core").glob("*.ptx"))
REASONS = ("the address of s", "the cut ", "live-in ")


def _quiet(argv) -> int:
    from splice.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def _spec(tmp: Path, f: Path, entry: str):
    from splice.errors import SpliceError
    from splice.probe.language.document import load_spec

    p = tmp / f"{f.stem}-{abs(hash(entry))}.yaml"
    if _quiet(["probe", "init", str(f), "--entry", entry, "-o", str(p)]) != 0:
        return None
    t = p.read_text().replace("grid: null", "grid: [4, 1, 1]").replace("shape: null", "shape: [65536]")
    t = t.replace("dynamic: null", "dynamic: 49152").replace("value: null", "value: 64")
    p.write_text(re.sub(r"block: null", "block: [128, 1, 1]", t))
    try:
        return load_spec(p)
    except SpliceError:            # a struct or TMA descriptor the skeleton cannot fill blindly
        return None


def _cases(tmp: Path):
    from splice.analysis import Kernel
    from splice.commands.perf import module_target
    from splice.cut.pipeline import run_apply
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import Pair
    from splice.ptx import parse

    for f in KERNELS:
        mod = parse(f.read_text(), str(f))
        for e in [it.name for it in mod.items if getattr(it, "kind", "") == ".entry" and it.body is not None]:
            k = Kernel(mod, e)
            spec = _spec(tmp, f, e) if k.phases else None
            if spec is None:
                continue
            arch = module_target(mod.source)[0]        # the module's own target (sm_90a, sm_120a …)
            for n in range(1, len(k.epilogues) + 1):
                nat = tmp / f"{f.stem}-{abs(hash(e))}-e{n}.ptx"
                if _quiet(["extract", str(f), "--entry", e, "--epilogue", str(n), "-o", str(nat)]) != 0:
                    continue
                r = nat.with_suffix(".yaml")
                r.write_text(f"module: {f}\nentry: {e}\narch: {arch}\ncuts:\n  - epilogue: {n}\n    native: {nat.name}\n")
                plan, _, out, _t = run_apply(str(r), ptxas=False)
                pair = Pair(r.stem, spec.source, f, plan.source, plan.text, str(out), e, arch, plan=plan,
                            recipe=plan.recipe)
                yield f"{f.stem}:{e[:24]}:E{n}", arch, cases(pair, k, spec, blocks=2)[0]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    return list(_cases(tmp_path_factory.mktemp("sweep")))


@pytest.mark.slow
def test_every_epilogue_is_bound_or_refused_with_a_reason(swept):
    assert len(swept) >= 18
    bound = [c for _n, _a, c in swept if c.skipped is None]
    refused = [(n, c.skipped) for n, _a, c in swept if c.skipped]
    assert len(bound) >= 14, refused
    assert all(why.startswith(REASONS) for _n, why in refused), refused


@pytest.mark.slow
@pytest.mark.needs("ptxas")
def test_the_bound_harnesses_assemble(swept):
    from splice.ptx.sass import compile_ptx

    picked = {}
    for name, arch, c in swept:                  # one per module: wgmma, cp.async, fp8, Triton ...
        if c.skipped is None and name.split(":")[0] not in picked:
            picked[name.split(":")[0]] = (arch, c)
    assert len(picked) >= 5
    for arch, c in picked.values():
        for text in (c.orig_ptx, c.spl_ptx):
            assert compile_ptx(text, arch, 3).resources["splice_harness"].registers
