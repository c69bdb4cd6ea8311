"""The identity round trip of the cut engine: ``extract`` a range, ``apply`` it unchanged, and
ask ptxas whether anything changed.

For every phase (and, with ``epilogues``, every epilogue as a ``statements:`` cut) of an entry:
extract writes the native file, a one-cut recipe applies it with ``abi: inline``, and the
spliced module and the original are compiled by ptxas and their normalised SASS compared
(``splice.ptx.sass``).  Each attempt is a :class:`Trial` that says where it stopped: ``extract``,
``apply`` (a binding check refused it), ``ptxas`` (the spliced text does not assemble), ``sass``
(it assembles to different code) or ``identical``.  Used by ``tests/test_cut_identity.py`` on
a sample and by ``bench/roundtrip_cuts.py`` over every corpus.
"""
from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..analysis import Kernel
from ..ptx import parse_file
from ..ptx.sass import PtxasError, resource_lines, compile_ptx, normalized_sass
from .extract import extract
from .recipe import load_recipe
from .splice import plan


@dataclass
class Trial:
    path: str
    entry: str
    kind: str                 # 'phase' | 'epilogue'
    target: int               # phase number, or the epilogue's index
    statements: str
    stage: str                # 'identical' | 'extract' | 'apply' | 'ptxas' | 'sass'
    reason: Optional[str] = None

    @property
    def identical(self) -> bool:
        return self.stage == "identical"

    def as_dict(self):
        return asdict(self)


def targets(k, epilogues: bool = True, phases: bool = True, limit: Optional[int] = None) -> list:
    """[(kind, index, first, last)] of the cuts tried on an entry (at most ``limit`` of each
    kind, the first ones)."""
    out = [("phase", p.index, p.first, p.last) for p in k.phases][:limit] if phases else []
    if epilogues:
        out += [("epilogue", e.index, e.first, e.last) for e in k.epilogues][:limit]
    return out


class Reference:
    """The original module compiled once: its normalised SASS (and resources) to compare with."""

    def __init__(self, path: str, arch: str, opt_level, extra=(), timeout: Optional[float] = None):

        self.path, self.arch, self.opt, self.extra = path, arch, opt_level, tuple(extra)
        self.timeout = timeout       # None: ptxas' own limit for the module's size
        c = compile_ptx(Path(path), arch, opt_level, self.extra, name=Path(path).name,
                        timeout=self.timeout)
        self.sass = normalized_sass(c.cubin) + resource_lines(c.resources)

    def compare(self, text: str) -> Optional[str]:
        """None when ``text`` compiles to the same SASS, else the first difference."""
        c = compile_ptx(text, self.arch, self.opt, self.extra, name="spliced.ptx", timeout=self.timeout)
        sb = normalized_sass(c.cubin) + resource_lines(c.resources)
        if sb == self.sass:
            return None
        for i, (a, b) in enumerate(zip(self.sass, sb)):
            if a != b:
                return f"line {i}: {a!r} != {b!r}"
        return f"{len(self.sass)} vs {len(sb)} SASS lines"


def try_cut(k, ref: Reference, kind: str, index: int, first: int, last: int, workdir: Path) -> Trial:

    t = Trial(str(ref.path), k.name, kind, index, f"s{first}-s{last}", "extract")
    try:
        if kind == "phase":
            r = extract(k, phase=index, source_name=str(ref.path))
        else:
            r = extract(k, statements=(first, last), source_name=str(ref.path))
        native = workdir / f"cut_{kind}_{index}.ptx"
        native.write_text(r["text"])
        sel = f"phase: {index}" if kind == "phase" else f"statements: s{first}-s{last}"
        recipe = workdir / f"cut_{kind}_{index}.yaml"
        recipe.write_text(f"module: {Path(ref.path).resolve()}\nentry: {_yaml_str(k.name)}\n"
                          f"arch: {ref.arch}\noutput: out.ptx\n"
                          f"cuts:\n  - {sel}\n    native: {native.name}\n")
        t.stage = "apply"
        p = plan(load_recipe(str(recipe), [workdir]), k)
        t.stage = "ptxas"
        diff = ref.compare(p.text)
    except PtxasError as e:
        errs = [d.message for d in e.diagnostics if d.severity in ("error", "fatal")]
        t.reason = (errs[0] if errs else _first_line(e.stderr))[:300]
        return t
    except SpliceError as e:
        t.reason = _first_line(e.message if hasattr(e, "message") else str(e))
        return t
    if diff is None:
        t.stage = "identical"
    else:
        t.stage, t.reason = "sass", diff
    return t


def _yaml_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0][:300] if s.strip() else s


def run_module(path: str, arch: str, opt_level=3, extra=(), epilogues: bool = True,
               entries=None, limit: Optional[int] = None, phases: bool = True, on_trial=None,
               timeout: Optional[float] = None) -> list:
    """Every trial over the entries of one module (all entries, or ``entries``); ``on_trial``
    is called with each finished Trial (progress for long sweeps)."""
    mod = parse_file(path)
    work = []
    for fn in mod.entries():
        if fn.body is None or (entries is not None and fn.name not in entries):
            continue
        k = Kernel(mod, fn.name)
        work += [(k, t) for t in targets(k, epilogues, phases, limit)]
    if not work:
        return []     # nothing to cut: the original is not even compiled
    ref = Reference(path, arch, opt_level, extra, timeout)
    trials = []
    with tempfile.TemporaryDirectory(prefix="splice-identity-") as tmp:
        for k, (kind, idx, a, b) in work:
            trials.append(try_cut(k, ref, kind, idx, a, b, Path(tmp)))
            if on_trial is not None:
                on_trial(trials[-1])
    return trials
