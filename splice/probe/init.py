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
import re
from typing import Optional

from ..errors import SpliceError, printable
from ..analysis.global_uses import module_image_refs, named_symbols
from ..analysis.param_reads import params_read, struct_value_reads, tensor_map_params
from ..analysis.param_trace import Use, trace
from .spec import MAX_BLOCK_THREADS
from .language import dtypes as dt
from . import numba_args


# --------------------------------------------------------------------------------------------
# the skeleton
# --------------------------------------------------------------------------------------------

#: ``.extern .shared … NAME[]``, the declaration to its `;` (or the end), then the name: one
#: pattern ``\.extern\s+\.shared\s+[^;]*?(\w+)\s*\[\s*\]`` tried every split of a long name
_EXTERN_SHARED = re.compile(r"\.extern\s+\.shared\s[^;]*(?:;|\Z)")
_UNSIZED = re.compile(r"(?<!\w)(\w+)\s*\[\s*\]")


def _shared_note(text: str, named=None) -> Optional[str]:
    """The dynamic ``.extern .shared name[]`` the entry names (the first one when ``named`` is
    None); a module of several entries declares it once for all, and an entry that never names
    it (dsmem_cluster's second kernel) needs no dynamic bytes."""
    for decl in _EXTERN_SHARED.finditer(text):
        m = _UNSIZED.search(decl.group())
        if m and (named is None or m.group(1) in named):
            return m.group(1)
    return None





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
    import os
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode) or os.path.abspath(path).startswith(("/dev/", "/proc/"))
    except OSError:
        return False


def skeleton(text: str, path: str, entry: Optional[str] = None, variables: Optional[list] = None) -> tuple:
    """(YAML text, summary rows: one per parameter) for ``entry`` of the module ``text``;
    ``variables``, when given, gets one row per module global the skeleton lists."""
    from ..analysis import Kernel
    from ..ptx import parse
    from .check import entry_decl

    if any("\udc80" <= ch <= "\udcff" for ch in path):    # an undecodable byte, read with surrogateescape
        raise SpliceError("the module's file name is not UTF-8: a probe spec (UTF-8 YAML) cannot name it in "
                          "its ptx: key; rename the file", path)
    mod = parse(text, path)
    _refuse_32_bit(mod, path)
    k = Kernel(mod, entry)
    decl = entry_decl(text, k.name, path)
    y = _Yaml()
    _header(y, k, decl, path)
    y.kv("name", k.name)
    if _stream(path):    # /dev/stdin, <(gen): a later `splice probe` would read the terminal or nothing
        y.kv("ptx", None, 0, "TODO: the module's file (it was read from a stream)")
    else:
        y.kv("ptx", path)
    y.kv("entry", k.name)
    y.kv("seed", 1)
    _launch(y, k, decl, text, path)
    rows = _params(y, k, decl, text)
    from .init_tables import globals_yaml

    listed = globals_yaml(y, k, named_symbols(k))     # module variables: tables.py, init_tables.py
    if variables is not None:
        variables += listed
    y.line("frame: all                      # every output is compared bit for bit")
    return y.text(), rows


def _header(y, k, decl, path: str) -> None:
    """The skeleton's opening comments, with what the probe will not do for this entry."""
    # a newline in the path would end the comment (YAML after it); a control character is not
    # allowed in YAML, not even in a comment (the skeleton did not load)
    shown = printable(" ".join(path.splitlines()))
    y.line(f"# Probe spec skeleton for {k.name} ({shown}), written by `splice probe init`.")
    y.line("# Fill in every `null` (sizes, scalar values, grid); check each buffer's dtype and role.")
    y.line("# Format: docs/probe-spec.md.  Run: splice probe THIS.yaml MODULE.ptx")
    refs = module_image_refs(k)
    if refs:
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
    y.kv("grid", None, 1, "TODO: blocks, e.g. [64, 1, 1]")
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
        y.kv("block", None, 1, "TODO: threads per block" + (f" (.maxntid {', '.join(map(str, mx))})" if mx
                                                           else ", e.g. [128, 1, 1]"))
    smem = _shared_note(text, named_symbols(k))
    y.line("  shared:")
    if smem:
        y.kv("dynamic", None, 2, f"TODO: bytes of the dynamic .extern .shared {smem}[]")
    elif _shared_note(text):
        y.kv("dynamic", 0, 2, f"the module's .extern .shared {_shared_note(text)}[] is not named by this "
             "entry (check: a .func it calls may use it)")
    else:
        y.kv("dynamic", 0, 2)


def _params(y, k, decl, text: str) -> list:
    """``params:``, one entry per ``.param`` from its def-use (numba's parameters labelled with
    the argument they belong to); the summary rows."""
    own: dict = {}
    uses = trace(k, own)
    read = params_read(k)
    labels, why = numba_args.describe(k.name, len(decl.params)) if numba_args.is_numba(text) else ({}, None)
    if why:
        y.line("# NOTE: numba passes each array as several parameters (meminfo, parent, nitems, itemsize, data,")
        y.line(f"# shapes, strides); which array each belongs to is not said here: {why}.")
    y.line("params:" if decl.params else "params: []                      # the entry has no .param")
    rows = []
    values = struct_value_reads(k)
    prefix = _field_names_collide(decl, uses, values)
    maps = tensor_map_params(k)
    for pp in decl.params:
        if pp.index in labels:     # numba: the argument and member this parameter is
            y.line(f"# {_short(pp.name, decl)}: {labels[pp.index]}")
        rows.append(_param_yaml(y, pp, uses, decl, pp.index in read, own, values.get(pp.index, ()),
                                prefix=prefix, tensor_map=maps.get(pp.name)))
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


def _struct_scalars_yaml(y, values, pointer_offsets, stem: str = "field_") -> int:
    """The struct's bytes read as values (not inside a pointer field): scalar fields to fill in."""
    taken = [(o, o + 8) for o in pointer_offsets]
    shown = 0
    for off, tname, n, note in values:
        size = dt.TYPES[tname].size
        if any(lo < off + size and off < hi for lo, hi in taken) or off % size:
            continue
        taken.append((off, off + size))
        y.line(f"    - {{name: {_scalar(stem + str(off))}, offset: {off}, kind: scalar, dtype: {tname}, value: null}}"
               f"   # TODO: {note or f'read as a value (ld.param s{n})'}")
        shown += 1
    return shown


def _short(name: str, decl) -> str:
    """A parameter's name without the entry's name in front (``<entry>_param_3`` -> ``param_3``)."""
    return name[len(decl.name) + 1:] if name.startswith(decl.name + "_") else name


def _param_yaml(y, pp, uses: dict, decl, read: bool = True, own: Optional[dict] = None,
                values=(), prefix: bool = False, tensor_map: Optional[int] = None) -> dict:
    """``prefix``: name struct fields ``<param>_field_<offset>``: field names are unique over the
    whole spec, and two structs each read at offset 0 gave two ``field_0`` (the spec refused)."""
    short = _short(pp.name, decl)
    if pp.is_array and pp.size != 8:
        fields = sorted((off, u) for (i, off), u in uses.items() if i == pp.index)
        y.line(f"- name: {_scalar(short)}")
        y.line("  kind: struct")
        y.line(f"  size: {pp.size}")
        y.line(f"  align: {pp.align}")
        y.line("  fields:                      # pointers it dereferences, then bytes it reads as values")
        stem = f"{short}_field_" if prefix else "field_"
        for off, u in fields:
            _object_yaml(y, f"{stem}{off}", u, 2, off)
        scalars = _struct_scalars_yaml(y, values, [off for off, _u in fields], stem)
        if not fields and not scalars and tensor_map is not None:
            y.line(f"    []                         # a TMA tensor map (its address goes to s{tensor_map}): the probe "
                   "cannot build one (the host encodes it: cuTensorMapEncode), so a whole-entry probe cannot run")
        elif not fields and not scalars:
            y.line("    []                         # no ld.param reads a byte of it at a constant offset")
        return {"param": pp.index, "name": pp.name, "kind": "struct", "fields": len(fields), "scalars": scalars}
    u = uses.get((pp.index, 0))
    own = own or {}
    if u is None or u.role is None:
        t = dt.lookup(pp.type)
        tname = t.name if t is not None else "b8"
        if not read:
            y.line(f"- {{name: {_scalar(short)}, kind: scalar, dtype: {tname}, value: 0}}   "
                   "# never read by this entry: passed as 0")
        elif any(sp == "call" for sp, _w in own.get((pp.index, 0), ())):
            callees = ", ".join(dict.fromkeys(w for sp, w in own[(pp.index, 0)] if sp == "call"))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: passed to "
                   f"{callees}, whose body is not in this module (not followed): it may be a pointer or handle")
        elif own.get((pp.index, 0)):
            at = own[(pp.index, 0)]
            spaces = "/".join(dict.fromkeys("." + sp for sp, _w in at))
            y.line(f"- {{name: {short}, kind: scalar, dtype: {tname}, value: null}}   # TODO: an address in the "
                   f"kernel's own {spaces} space ({at[0][1]}), not a buffer: the probe cannot fill that "
                   "memory from the host; give the address the kernel expects")
        elif pp.size == 8 and not pp.is_array and not t_is_float(t):
            y.line(f"- {{name: {_scalar(short)}, kind: scalar, dtype: {tname}, value: null}}   "
                   "# TODO: read as a value, never dereferenced here")
        else:
            y.line(f"- {{name: {_scalar(short)}, kind: scalar, dtype: {tname}, value: null}}   # TODO")
        return {"param": pp.index, "name": pp.name, "kind": "scalar", "dtype": tname}
    _object_yaml(y, short, u, 0, None)
    kind = u.image or ("table" if u.pointers else "buffer")
    return {"param": pp.index, "name": pp.name, "kind": kind, "role": u.role,
            "dtype": "u64" if u.pointers else u.element()[0], "pointer_table": bool(u.pointers)}


def _scalar(value) -> str:
    """``value`` as one YAML scalar: PTX names may start with ``%`` (a YAML directive
    character: the skeleton of an entry with a parameter ``%p0`` did not load) or read as YAML
    booleans (``on``, ``no``) and nulls."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip().removesuffix("\n...").strip()


def t_is_float(t) -> bool:
    return t is not None and t.is_float


def _object_yaml(y, name: str, u: Use, indent: int, offset) -> None:
    pad = "  " * indent
    y.line(f"{pad}- name: {_scalar(name)}")
    if offset is not None:
        y.line(f"{pad}  offset: {offset}")
    seen = ", ".join(sorted({f"{t}{f' x{v}' if v > 1 else ''}" for t, v in u.types})) or "-"
    if u.image:
        y.line(f"{pad}  kind: {u.image}")
        from .images import skeleton_lines

        for ln in skeleton_lines(u.image, u.geometries):
            y.line(f"{pad}  {ln}")
        y.line(f"{pad}  format: rgba16f            # check: r32f, rg16f, rgba8, rgba32f")
        if u.image == "texture":
            y.line(f"{pad}  fill: {{rule: uniform, seed: 1, range: [0.0, 1.0]}}")
        return
    dtype, guessed = u.element()
    used = sorted({w for _k, _t, w in u.values})
    if used and not any(float(dt.lookup(t).is_float) for t, _v in u.types if dt.lookup(t) is not None):
        seen += "; values used by " + ", ".join(used[:3]) + (f" (+{len(used) - 3})" if len(used) > 3 else "")
    if u.pointers:
        _pointer_table_yaml(y, pad, u)
        return
    y.line(f"{pad}  kind: buffer")
    y.line(f"{pad}  dtype: {dtype}" + (f"                # guessed (accessed as {seen})" if guessed
                                          else f"                # accessed as {seen}"))
    y.line(f"{pad}  shape: null                # TODO: elements, e.g. [rows, cols]")
    y.line(f"{pad}  role: {u.role}                # {u.reads} load(s), {u.writes} store(s)")
    if not u.alone and u.partners and offset is not None and not u.parked:
        with_ = ", ".join(f"field_{o}" if i == u.param else f"param_{i}+{o}" for i, o in sorted(u.partners)[:3])
        y.line(f"{pad}  # check: every address it reaches also derives from {with_}: it may be a byte offset or")
        y.line(f"{pad}  # increment added to that pointer (CUTLASS's Params), not a buffer")
    if u.parked:
        y.line(f"{pad}  # check: the kernel copies the struct to local memory and picks a pointer from it at")
        y.line(f"{pad}  # run time: role and dtype are what any of the pointers parked there reaches")
    if u.multicast:
        y.line(f"{pad}  # TODO: multimem.* reaches it: a multicast address (cuMulticastCreate), which the")
        y.line(f"{pad}  # probe does not make; multimem on an ordinary buffer is undefined behaviour")
    if u.role != "output":
        rule = "uniform, range: [-1.0, 1.0]" if dt.TYPES[dtype].is_float else "integers, range: [0, 7]"
        y.line(f"{pad}  fill: {{rule: {rule}, seed: {u.seed}}}")


def _pointer_table_yaml(y, pad: str, u: Use) -> None:
    """A buffer the kernel loads pointers from and dereferences (batched / grouped kernels): a
    ``kind: table`` whose entries are typed by the accesses through them (init_tables.py)."""
    from .init_tables import table_yaml

    table_yaml(y, pad, u)


class _Yaml:
    """Line builder for the skeleton (comments need hand placement; values go through yaml)."""

    def __init__(self):
        self.lines: list = []

    def line(self, s: str) -> None:
        self.lines.append(s)

    def kv(self, key: str, value, indent: int = 0, comment: str = "") -> None:
        import yaml

        v = "null" if value is None else yaml.safe_dump(value, default_flow_style=True).strip()
        if v.endswith("\n..."):
            v = v[:-4].strip()
        v = v.replace("\n...", "").strip()
        self.lines.append(f"{'  ' * indent}{key}: {v}" + (f"   # {comment}" if comment else ""))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
