"""``splice probe init MODULE --entry E -o spec.yaml``: a probe-spec skeleton from the entry's
``.param`` list and what the kernel does with each parameter.

What each parameter reaches comes from ``param_trace.trace`` (def-use forward from each
``ld.param`` through address arithmetic to the memory instructions -- the roles table's
accesses -- it reaches, into called functions and through the local frame).  A parameter that
reaches only loads is an
``input``, only stores an ``output``, both (or an atomic) ``inout``; the element type is the one
it is loaded/stored with (``.f32``, ``.f16`` ...; plain bits ``.b16``/``.b32`` are a guess and
say so).  A parameter that never reaches an address is a scalar of its declared type.  Sizes,
values, grid and block are left as ``null`` placeholders with a ``TODO`` comment (a block
declared with ``.reqntid`` is filled in), so the spec refuses to load until they are given.
"""
from __future__ import annotations

import math
import os
import stat
from typing import Optional

from ...analysis.global_uses import extern_shared, module_image_refs, named_symbols
from ...analysis.entries import resolve_entry, resolve_name
from ...analysis.kernel import Kernel
from ...analysis.param_reads import params_read, struct_value_reads, tensor_map_uses
from ...analysis.param_trace import trace
from ...errors import SpliceError, printable
from ...ptx.parser import parse_entry
from ..kinds.base import kinds_of, param_kind
from . import numba_args
from .context import MAX_BLOCK_THREADS
from .entry import entry_decl_of
from .skeleton import Facts, Lines, Slot, yaml_scalar


def _refuse_32_bit(mod, path: str) -> None:
    """``.address_size 32``: no probe can run it (ptxas 13 has no ``--machine 32``), and its
    32-bit pointer parameters would be written as integers: say so instead of a skeleton."""
    asz = mod.directive(".address_size")
    if asz is not None and asz.args and asz.args[0] == "32":
        raise SpliceError("32-bit addressing (.address_size 32): ptxas 13 compiles no such module "
                          "(it has no --machine 32), so the probe cannot run it", path, line=asz.line)


def _stream(path: str) -> bool:
    """Whether the module was read from a stream (a pipe, ``/dev/stdin``, ``<(gen)``): its
    name is no file a spec can name."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) or os.path.abspath(path).startswith(("/dev/", "/proc/"))
    except OSError:
        return False


def _parse_entry(text: str, path: str, entry: Optional[str]):
    """The module with only the entry's body parsed (and those of the functions it calls, which
    def-use follows): a module of thousands of kernels costs its skeleton and one entry, as
    ``spec --entry`` does, not every body."""
    missed: list = []

    def choose(names: list) -> str:
        if entry is None:
            return names[0] if names else ""
        try:
            return resolve_name(names, entry, path)
        except SpliceError:          # said once the skeleton is read: it may name a .func
            missed.append(entry)
            return ""

    mod = parse_entry(text, path, choose, callees=True)
    if missed:
        resolve_entry(mod, missed[0])    # "names a .func, not an .entry", or no entry by that name
    return mod


def skeleton(text: str, path: str, entry: Optional[str] = None, variables: Optional[list] = None,
             unprobeable: Optional[list] = None) -> tuple:
    """(YAML text, summary rows: one per parameter) for ``entry`` of the module ``text``;
    ``variables``, when given, gets one row per module global the skeleton lists, and
    ``unprobeable`` why no filled TODO can make the entry probeable (it writes nothing the probe
    compares), when that is so."""
    if any("\udc80" <= ch <= "\udcff" for ch in path):    # an undecodable byte, read with surrogateescape
        raise SpliceError("the module's file name is not UTF-8: a probe spec (UTF-8 YAML) cannot name it in "
                          "its ptx: key; rename the file", path)
    mod = _parse_entry(text, path, entry)
    _refuse_32_bit(mod, path)
    k = Kernel(mod, entry)
    decl = entry_decl_of(mod, k.name, path)
    y = Lines()
    glob = Lines()
    listed = _globals(glob, k)
    _header(y, k, decl, path, {row["name"] for row in listed})
    y.kv("name", k.name)
    if _stream(path):    # /dev/stdin, <(gen): a later `splice probe` would read the terminal or nothing
        y.kv("ptx", None, 0, "TODO: the module's file (it was read from a stream)")
    else:
        y.kv("ptx", path)
    y.kv("entry", k.name)
    y.kv("seed", 1)
    _launch(y, k, decl, text, path)
    rows = _params(y, k, decl, text)
    y.lines += glob.lines
    if not _writes_something(k, rows, listed):
        why = ("the entry writes nothing the probe can compare: no store reaches a parameter's memory, a "
               "surface, a tensor map's tensor or a module variable")
        y.line(f"# NOTE: {why}")
        if unprobeable is not None:
            unprobeable.append(why)
    if variables is not None:
        variables += listed
    y.line("frame: all                      # every output is compared bit for bit")
    return y.text(), rows


def _header(y, k, decl, path: str, listed: set) -> None:
    """The skeleton's opening comments, with what the probe will not do for this entry (a
    module-scope reference no kind of ``globals:`` lists, ``listed`` being the names listed)."""
    # a newline in the path would end the comment (YAML after it); a control character is not
    # allowed in YAML, not even in a comment (the skeleton did not load)
    shown = printable(" ".join(path.splitlines()))
    y.line(f"# Probe spec skeleton for {k.name} ({shown}), written by `splice probe init`.")
    y.line("# Fill in every `null` (sizes, scalar values, grid); check each buffer's dtype and role.")
    y.line("# Format: docs/probe-spec.md.  Run: splice probe THIS.yaml MODULE.ptx")
    refs = module_image_refs(k)
    unlisted = [r for r in refs if r not in listed]
    if refs and not unlisted:
        y.line(f"# NOTE: this entry reads module-scope texture/surface references ({', '.join(refs)}): listed")
        y.line("# under globals: (kind texref / surfref), bound in each module through the driver API, where the")
        y.line("# driver still binds them (else the probe says why it cannot run the entry).")
    elif refs:
        y.line(f"# NOTE: this entry reads module-scope texture/surface references ({', '.join(refs)}); the probe")
        y.line("# binds parameters only, so what it reads through them is not set by this spec (rewrite them")
        y.line("# as texture/surface object parameters to probe them).")
    if decl.directive(".blocksareclusters") is not None:
        cl = decl.directive(".reqnctapercluster") or ()
        y.line("# NOTE: this entry declares .blocksareclusters (PTX ISA 9.0): the launch's grid counts clusters"
               + (f" of {'x'.join(map(str, cl))} CTAs" if cl else ""))
        y.line("# (%nctaid is grid x cluster); size the buffers for that.  splice's probe has not been run on")
        y.line("# such an entry: check the frames of a first run by hand.")


def _launch(y, k, decl, text: str, path: str) -> None:
    """``launch:``: the grid to fill in, the block from ``.reqntid`` (else to fill in, with
    ``.maxntid`` as a hint), the dynamic shared memory the entry names."""
    y.line("launch:")
    cl = decl.directive(".reqnctapercluster")
    cluster = list(cl) + [1] * (3 - len(cl)) if cl else [1, 1, 1]
    y.kv("grid", None, 1, f"TODO: blocks (e.g. {_flow([cluster[0] * 8, cluster[1], cluster[2]])})")
    req = decl.directive(".reqntid")
    if req and not all(isinstance(v, int) and v >= 1 for v in req):
        # no launch has a block of zero threads, and ptxas refuses the module: a skeleton saying
        # block: [0, 0, 0] went on to fail at the compile
        raise SpliceError(f"{k.name}: .reqntid {', '.join(map(str, req))} asks for a block of no thread "
                          "(ptxas refuses the module): no probe can launch it", path, line=k.fn.line)
    if req and math.prod(req) > MAX_BLOCK_THREADS:
        # ptxas takes .reqntid 32, 32, 2; the launch then fails on the device
        raise SpliceError(f"{k.name}: .reqntid {', '.join(map(str, req))} asks for {math.prod(req)} threads a "
                          f"block: no GPU launches more than {MAX_BLOCK_THREADS}", path, line=k.fn.line)
    if req:
        y.kv("block", list(req) + [1] * (3 - len(req)), 1, "from .reqntid")
    else:
        mx = decl.directive(".maxntid")
        y.kv("block", None, 1, "TODO: threads per block" + (f", .maxntid {', '.join(map(str, mx))}" if mx else "")
             + f" (e.g. {_flow(_block_example(mx))})")
    if decl.directive(".explicitcluster") is not None and not cl:
        y.kv("cluster", None, 1, "TODO: CTAs per cluster: the entry declares .explicitcluster (e.g. [1, 1, 1])")
    smem = extern_shared(k.module, named_symbols(k))
    y.line("  shared:")
    if smem:
        y.kv("dynamic", None, 2, f"TODO: bytes of the dynamic .extern .shared {smem}[] (e.g. 1024)")
    elif extern_shared(k.module):
        y.kv("dynamic", 0, 2, f"the module's .extern .shared {extern_shared(k.module)}[] is not named by this "
             "entry (check: a .func it calls may use it)")
    else:
        y.kv("dynamic", 0, 2)


def _params(y, k, decl, text: str) -> list:
    """``params:``, one entry per ``.param``, each written by the kind that claims it from its
    def-use (numba's parameters labelled with the argument they belong to); the summary rows."""
    own: dict = {}
    uses = trace(k, own)
    labels, why = numba_args.describe(k.name, len(decl.params)) if numba_args.is_numba(text) else ({}, None)
    if why:
        y.line("# NOTE: numba passes each array as several parameters (meminfo, parent, nitems, itemsize, data,")
        y.line(f"# shapes, strides); which array each belongs to is not said here: {why}.")
    y.line("params:" if decl.params else "params: []                      # the entry has no .param")
    values = struct_value_reads(k)
    maps = tensor_map_uses(k)
    facts = Facts(uses, own, params_read(k), values, {name: at[0][0] for (name, off), at in maps.items() if off == 0},
                  prefix=_field_names_collide(decl, uses, values), accesses=maps)
    rows = []
    for pp in decl.params:
        if pp.index in labels:     # numba: the argument and member this parameter is
            y.line(f"# {_short(pp.name, decl)}: {labels[pp.index]}")
        slot = Slot(pp, _short(pp.name, decl), facts)
        rows.append(param_kind(slot).skeleton(y, slot))
    return rows


def _globals(y, k) -> list:
    """``globals:``: the module variables the entry names, each by the kind that lists it."""
    body = Lines()
    named = named_symbols(k)
    rows = [row for cls in kinds_of("globals") for row in cls.global_lines(body, k, named)]
    if rows:
        y.line("globals:                        # module variables this entry names: set in both modules before")
        y.line("                                # each launch (get_global); outputs read back and compared")
        y.lines += body.lines
    return rows


def _field_names_collide(decl, uses: dict, values: dict) -> bool:
    """Whether two by-value structs would both get a ``field_<offset>`` of one offset (field
    names are unique over a whole spec)."""
    seen: set = set()
    for pp in decl.params:
        if pp.is_array and pp.size != 8:
            offs = {off for (i, off) in uses if i == pp.index} | {v[0] for v in values.get(pp.index, ())}
            if offs & seen:
                return True
            seen |= offs
    return False


def _short(name: str, decl) -> str:
    """A parameter's name without the entry's name in front (``<entry>_param_3`` -> ``param_3``)."""
    return name[len(decl.name) + 1:] if name.startswith(decl.name + "_") else name


def _flow(value) -> str:
    """``value`` as YAML flow text (what a TODO's ``(e.g. …)`` names)."""
    return yaml_scalar(value)


def _block_example(mx) -> list:
    """A block a launch may have: ``.maxntid``'s when it is one, else 128 threads."""
    if mx:
        dims = list(mx) + [1] * (3 - len(mx))
        if math.prod(dims) <= MAX_BLOCK_THREADS and dims[2] <= 64 and all(v >= 1 for v in dims):
            return dims
    return [128, 1, 1]


def _writes_something(k, rows: list, listed: list) -> bool:
    """Whether the skeleton has an output: a store through a parameter's pointer (or a pointer
    loaded from it, or a struct's field), a surface, a store through a tensor map, or a module
    variable listed as an output or inout."""
    uses = trace(k, {})
    if any(u.writes or (u.target is not None and u.target.writes) for u in uses.values()):
        return True
    if any(r.get("role") in ("output", "inout") for r in rows + listed):
        return True
    return any(".global.shared" in op or op.startswith("cp.reduce")
               for at in tensor_map_uses(k).values() for _n, op in at)
