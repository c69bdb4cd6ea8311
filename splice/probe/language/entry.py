"""Check a probe spec against the entry it launches, before anything runs on the GPU.

The ``.param`` list of the ``.entry`` is the contract: the spec must describe every parameter
in order, with a kind and size that fit the declaration (a scalar's PTX type and size, 8 bytes
for a pointer or a texture/surface object, a by-value struct's ``.align N .b8 name[size]``).
The launch must agree with the entry's performance directives (``.reqntid``, ``.maxntid``,
``.reqnctapercluster``/``.explicitcluster``).  Each field is then checked against what the
kernel does with it (``Kind.kernel_checks``: module globals declared as the spec says, images
used with the spec's geometry, no input written).  A disagreement is a :class:`SpecError` at the
spec's own ``file:line:col`` whose detail quotes the PTX declaration and where it is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ...analysis.entries import defined_once
from ...analysis.global_uses import global_uses, module_variables, unseen_accesses
from ...analysis.kernel import Kernel
from ...analysis.param_trace import trace
from ...errors import SpliceError
from ...ptx import model as m
from ...ptx.parser import parse
from ..kinds.base import lookup
from . import dtypes as dt
from .context import SpecError
from .records import Param, ProbeSpec


@dataclass(frozen=True)
class PtxParam:
    """One declared ``.param`` of an entry, as the spec sees it."""
    index: int
    name: str
    type: str                 # .u32, .b8, ...
    size: int                 # bytes
    align: int
    is_array: bool
    text: str                 # the declaration as written (for messages)
    line: int                 # in the module


@dataclass(frozen=True)
class EntryDecl:
    name: str
    params: tuple[PtxParam, ...]
    directives: tuple          # (name, (ints...))
    target: str
    line: int
    path: str

    def directive(self, name: str) -> Optional[tuple]:
        for n, args in self.directives:
            if n == name:
                return args
        return None


def _ptx_param(i: int, p, lines: dict, fn_line: int) -> PtxParam:
    t = next((a for a in p.attrs if dt.lookup(a) is not None), ".b8")
    base = dt.lookup(t)
    size = base.size if base else 1
    vec = next((a for a in p.attrs if a in (".v2", ".v4", ".v8")), None)
    if vec:
        size *= int(vec[2:])
    n = 1
    for d in p.declarator.dims:
        n *= d or 0
    size *= n
    align = size if not p.declarator.dims else (base.size if base else 1)
    attrs = list(p.attrs)
    if ".align" in attrs and ".ptr" not in attrs:     # .ptr .align N is the pointee's alignment
        align = int(attrs[attrs.index(".align") + 1])
    dims = "".join(f"[{d if d is not None else ''}]" for d in p.declarator.dims)
    text = f".param {' '.join(p.attrs)} {p.declarator.name}{dims}"
    line = lines.get(p.declarator.name, fn_line)
    return PtxParam(i, p.declarator.name, t, size, max(align, 1), bool(p.declarator.dims), text, line)


#: a PTX identifier, as the parameter lines are searched for one
_IDENT = re.compile(r"[A-Za-z_$%][\w$]*")


def _param_lines(src_lines: list, fn_line: int) -> dict:
    """{identifier: the first line (1-based) it is on}, over the 400 lines from the entry's:
    one pass.  Each parameter searched that window on its own, every line again: a ``.param``
    list of 20000 on one line (500 KB) took minutes (``probe init`` ran past a minute)."""
    first: dict = {}
    for k in range(max(fn_line - 1, 0), min(fn_line + 400, len(src_lines))):
        for name in _IDENT.findall(src_lines[k]):
            first.setdefault(name, k + 1)
    return first


def _params_once(params: tuple, entry: str, path: str) -> None:
    """Refuse an entry that declares a parameter name twice (ptxas: duplicate definition): the
    skeleton of ``probe init`` listed both, one "never read", and its own spec check refused it."""
    seen: set = set()
    for p in params:
        if p.name in seen:
            raise SpliceError(f"{entry}: parameter {p.name!r} is declared twice: ptxas refuses the module "
                              "(duplicate definition of variable)", path, p.line)
        seen.add(p.name)


def entry_decl(text: str, entry: str, path: str = "<module>") -> Optional[EntryDecl]:
    """The entry's ``.param`` list and directives, or None when the module has no such entry."""
    return entry_decl_of(parse(text, path), entry, path)


def entry_decl_of(mod, entry: str, path: str = "<module>") -> Optional[EntryDecl]:
    """``entry_decl`` of a module already parsed (only its entry's body need be: the ``.param``
    list and directives are the skeleton's)."""
    target = ""
    for it in mod.items:
        if isinstance(it, m.Directive) and it.name == ".target":
            target = next((a for a in it.args if a != ","), "")
    lines = mod.source.splitlines()
    for it in mod.items:
        if isinstance(it, m.Function) and it.is_entry and it.name == entry and it.body is not None:
            defined_once(mod, it)     # the first of two .entry k was probed, whichever CUDA loads
            first = _param_lines(lines, it.line)
            params = tuple(_ptx_param(i, p, first, it.line) for i, p in enumerate(it.params or ()))
            _params_once(params, entry, path)
            dirs = tuple((d.name, _ints(d.args)) for d in it.directives)
            return EntryDecl(it.name, params, dirs, target, it.line, path)
    return None


def _ints(args) -> tuple:
    """A directive's integer arguments as PTX writes them (``0x40``, ``-4``, ``64U``): only
    decimal digits were read, so ``.reqntid 0x40`` was no block size at all and ``-4, 1, 1``
    read as ``1, 1``.  Other arguments (a ``.pragma``'s string) are none of them."""
    out = []
    for a in args:
        try:
            v = m.parse_number(a)
        except (ValueError, IndexError):
            continue
        if isinstance(v, int):
            out.append(v)
    return tuple(out)


def entries(text: str, path: str = "<module>") -> list:
    return [it.name for it in parse(text, path).items
            if isinstance(it, m.Function) and it.is_entry and it.body is not None]


def _err(spec: ProbeSpec, key: str, msg: str, detail: str = "") -> SpecError:
    """A SpecError at a top-level or launch.* key of the spec (file:line:col)."""
    line, col = spec.where(key)
    return SpecError(msg, spec.source, line, col, key=key, detail=detail)


def _where(decl: EntryDecl, pp: PtxParam) -> str:
    return f"{decl.path}:{pp.line}: {pp.text}"


def _mismatch(spec: ProbeSpec, p: Param, decl: EntryDecl, pp: PtxParam) -> Optional[str]:
    if p.ptx_name and p.ptx_name not in (pp.name, pp.name[len(decl.name) + 1:]):
        return f"ptx_name {p.ptx_name!r}, but .param {pp.index} is {pp.name}"
    return lookup(p.kind).declaration_of(p, pp)


def check_params(spec: ProbeSpec, decl: EntryDecl) -> None:
    """Raise SpecError at the spec's line when a parameter disagrees with the declaration."""
    if len(spec.params) != len(decl.params):
        listing = "\n".join(f"  {i}: {_where(decl, pp)}" for i, pp in enumerate(decl.params))
        raise _err(spec, "params", f"{len(spec.params)} parameter(s) described, but {decl.name} declares "
                   f"{len(decl.params)}", f"the entry's .param list ({decl.path}:{decl.line}):\n{listing}")
    shorts = {pp.name: i for i, pp in enumerate(decl.params)}
    shorts.update({pp.name[len(decl.name) + 1:]: i for i, pp in enumerate(decl.params)
                   if pp.name.startswith(decl.name + "_")})
    for p, pp in zip(spec.params, decl.params):
        why = _mismatch(spec, p, decl, pp)
        if why is None and p.name in shorts and shorts[p.name] != p.index:
            why = f"named like .param {shorts[p.name]} ({decl.params[shorts[p.name]].name}) but " \
                  f"written at position {p.index}"
        if why:
            key = f"params[{p.index}]" if not spec.legacy else "params"
            raise SpecError(f"{p.name}: {why}", spec.source, p.line or None, p.column or None, key=key,
                            detail=f"PTX: {_where(decl, pp)}")


def check_launch(spec: ProbeSpec, decl: EntryDecl) -> None:
    """Block size against .reqntid/.maxntid; clusters against .reqnctapercluster/.explicitcluster."""
    where = f"PTX: {decl.path}:{decl.line}"
    req = decl.directive(".reqntid")
    if req and tuple(spec.block) != tuple(list(req) + [1] * (3 - len(req))):
        raise _err(spec, "launch.block", f"block {list(spec.block)}, but {decl.name} requires .reqntid "
                   f"{', '.join(map(str, req))}", where)
    mx = decl.directive(".maxntid")
    if mx:
        limit = 1
        for v in mx:
            limit *= v
        if spec.threads > limit:
            raise _err(spec, "launch.block", f"{spec.threads} threads per block, but {decl.name} declares "
                       f".maxntid {', '.join(map(str, mx))}", where)
    cl = decl.directive(".reqnctapercluster")
    explicit = decl.directive(".explicitcluster") is not None
    if cl and spec.launch.cluster and tuple(list(cl) + [1] * (3 - len(cl))) != spec.launch.cluster:
        raise _err(spec, "launch.cluster", f"cluster {list(spec.launch.cluster)}, but {decl.name} requires "
                   f".reqnctapercluster {', '.join(map(str, cl))}", where)
    if explicit and not (cl or spec.launch.cluster):
        raise _err(spec, "launch.cluster", f"{decl.name} declares .explicitcluster: give launch.cluster", where)


def check(spec: ProbeSpec, text: str, path: str) -> EntryDecl:
    """The whole check: the entry exists, its .param list and directives fit the spec, and each
    field fits what the kernel does with it (the checks run in their kinds' order: module
    variables, images, written inputs)."""
    decl = entry_decl(text, spec.entry, path)
    if decl is None:
        names = entries(text, path)
        raise _err(spec, "entry", f"{path} has no .entry {spec.entry!r} (entries: {', '.join(names) or 'none'})")
    check_params(spec, decl)
    check_launch(spec, decl)
    facts = KernelFacts(spec, text, path)
    checks = [c for _p, _j, f, key in spec.param_fields() for c in f.kernel_checks(spec, facts, key)]
    checks += [c for g in spec.globals for c in g.kernel_checks(spec, facts, "globals")]
    for _order, run in sorted(checks, key=lambda c: c[0]):
        run()
    return decl


class KernelFacts:
    """What the kernel does, computed once and only when a field's check asks: the parsed
    module, the entry's ``Kernel``, each parameter's def-use (``param_trace.trace``), the module
    variables and the input globals' accesses."""
    def __init__(self, spec: ProbeSpec, text: str, path: str):
        self.spec, self.text, self.path = spec, text, path
        self._at = {f.name: (p.index, f.offset) for p, _j, f, _k in spec.param_fields()}
        self._memo: dict = {}

    def _get(self, key, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @property
    def module(self):
        return self._get("module", lambda: parse(self.text, self.path))

    @property
    def kernel(self):
        return self._get("kernel", lambda: Kernel(self.module, self.spec.entry))

    def use_of(self, f):
        """What the kernel does with field ``f``'s value (a ``Use``), or None."""
        uses = self._get("uses", lambda: trace(self.kernel, {}))
        return uses.get(self._at[f.name])

    @property
    def variables(self) -> dict:
        return self._get("variables", lambda: module_variables(self.module))

    def input_globals(self, spec) -> tuple:
        """(uses, escapes, unseen) of the spec's ``role: input`` globals."""
        def make():
            names = [g.name for g in spec.globals if g.role == "input"]
            uses, escapes = global_uses(self.kernel, names)
            return uses, escapes, unseen_accesses(self.kernel, self.module, set(names))
        return self._get("inputs", make)


def cluster_dims(spec: ProbeSpec, decl: EntryDecl) -> Optional[tuple]:
    """The cluster shape a launch must pass (the spec's, else a declared .reqnctapercluster)."""
    if spec.launch.cluster:
        return spec.launch.cluster
    cl = decl.directive(".reqnctapercluster")
    if cl and decl.directive(".explicitcluster") is not None:
        return tuple(list(cl) + [1] * (3 - len(cl)))
    return None
