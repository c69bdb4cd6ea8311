"""Probe specs: how to run one kernel (grid, block, shared memory, clusters, the entry's
``.param`` list parameter by parameter, seeded fills, which outputs are compared).

``load_spec(path)`` reads a YAML spec (format: docs/probe-spec.md) into frozen records
(``records``) and validates it; every error is a :class:`SpecError` (a ``SpliceError``) naming the
file, the line:col of the offending key and the key's path, e.g.
``probes/enc5.yaml:24:13: params.fields[1].offset: 12 is not 8-byte aligned``.  Each field is
read by its kind (``splice.probe.kinds``): this module reads the document around them.

Two shapes of ``params:`` are read:

* a list, one entry per ``.param`` of the entry in order: scalars, buffer pointers, texture and
  surface objects, tensor maps, by-value structs (``kind: struct`` with ``size`` and ``fields``);
* the first specs' mapping ``{size, fields}``: one by-value struct, the entry's only parameter.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ...ptx.sass import normalize_arch
from ...util import home_dir, read_utf8
from ...yamlsafe import DEFAULT_LIMITS, load_yaml_marked
from ..kinds.base import COMMON_KEYS, kinds_of, lookup, registry
from .context import GRID_MAX, MAX_BLOCK_THREADS, Ctx, SpecError, position
from .records import Frame, Launch, Param, ProbeSpec, flatten

TOP_KEYS = {"name", "ptx", "entry", "arch", "build_arch", "seed", "launch", "params", "frame",
            "notes", "work", "globals"}

LAUNCH_KEYS = {"grid", "block", "shared", "cluster", "sequence", "stream"}


def _field(c: Ctx, d: Any, where: str, offset: Optional[int], legacy: bool):
    """A struct field (``offset`` None: read it from ``d``) or a whole ``.param`` (offset 0),
    read by its kind."""
    if not isinstance(d, dict):
        raise c.err(where, "expected a mapping", d)
    known = kinds_of("params", in_struct=True)
    cls = lookup(d.get("kind")) if isinstance(d.get("kind"), str) else None
    cls = cls if cls in known else None
    c.keys(d, set(COMMON_KEYS) | set(cls.keys if cls else frozenset().union(*(k.keys for k in known))), where)
    name = c.need(d, "name", where)
    if not isinstance(name, str) or not name:
        raise c.err(f"{where}.name", "expected a non-empty string", d, "name")
    if offset is None:
        offset = c.int(c.need(d, "offset", where) and d, "offset", f"{where}.offset")
    kind = c.need(d, "kind", where)
    if cls is None:
        raise c.err(f"{where}.kind", f"{kind!r} is not one of {', '.join(k.kind for k in known)}", d, "kind")
    if offset % cls.offset_align:
        raise c.err(f"{where}.offset", f"{offset} is not {cls.offset_align}-byte aligned", d, "offset")
    return cls.parse(c, d, where, name, offset, legacy)


def _param(c: Ctx, d, i: int) -> Param:
    where = f"params[{i}]"
    if not isinstance(d, dict):
        raise c.err(where, "expected a mapping", d)
    line, col = position(d)
    grouping = lookup(d.get("kind")) if isinstance(d.get("kind"), str) else None
    if grouping is not None and grouping.groups:
        return grouping.parse_param(c, d, i, lambda f, w, legacy: _field(c, f, w, None, legacy))
    if "offset" in d:
        raise c.err(f"{where}.offset", "a .param has no offset (fields of a kind: struct do)", d, "offset")
    f = _field(c, d, where, 0, False)
    return Param(i, f.name, f.kind, f.size, f.align, (f,), str(d.get("ptx_name", "")), line, col)


def _params(c: Ctx, data) -> tuple:
    raw = c.need(data, "params", "")
    if isinstance(raw, dict):              # the first specs: one by-value struct
        grouping = next(k for k in registry() if k.groups)
        return (grouping.parse_legacy(c, raw, lambda f, w, legacy: _field(c, f, w, None, legacy)),), True
    if not isinstance(raw, list) or (not raw and not data.get("globals")):   # [] : globals only
        raise c.err("params", "expected a list (one entry per .param) or {size, fields}", data, "params")
    params = tuple(_param(c, d, i) for i, d in enumerate(raw))
    return params, False


def _globals(c: Ctx, data) -> tuple:
    """The ``globals:`` list: one module variable each, by its PTX name, of a kind that lives in
    a module (``kind:`` left out: a ``.global``/``.const`` variable)."""
    raw = data.get("globals")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise c.err("globals", "expected a list of module variables ({name, dtype, shape, fill, role})",
                    data, "globals")
    return tuple(_global(c, g, f"globals[{i}]", raw, i) for i, g in enumerate(raw))


def _global(c: Ctx, g, where: str, holder, i: int):
    if not isinstance(g, dict):
        raise c.err(where, f"expected a mapping (name, dtype, shape, fill, role), got {g!r}", holder, i)
    known = kinds_of("globals")
    kind = g.get("kind", known[0].kind)
    cls = lookup(kind, "globals") if isinstance(kind, str) else None
    c.keys(g, {"name", "kind", "what"} | (cls.keys if cls else frozenset().union(*(k.keys for k in known))), where)
    name = c.need(g, "name", where)
    if not isinstance(name, str) or not name.strip():
        raise c.err(f"{where}.name", "expected the variable's PTX name", g, "name")
    if cls is None:
        raise c.err(f"{where}.kind", f"{kind!r} is not one of {', '.join(k.kind for k in known)}", g, "kind")
    return cls.parse(c, g, where, name, 0, False)


def _launch(c: Ctx, data, params) -> Launch:
    launch = c.need(data, "launch", "")
    if not isinstance(launch, dict):
        raise c.err("launch", "expected a mapping", data, "launch")
    c.keys(launch, LAUNCH_KEYS, "launch")
    c.need(launch, "grid", "launch")
    c.need(launch, "block", "launch")
    grid = c.dim3(launch, "grid", "launch.grid")
    for a, (g, most) in enumerate(zip(grid, GRID_MAX)):
        if g > most:     # cuLaunchKernel would refuse it, after the inputs were built and copied
            raise c.err(f"launch.grid[{a}]", f"{g} blocks: more than the {most} CUDA allows in "
                        f"dimension {'xyz'[a]}", launch, "grid")
    block = c.dim3(launch, "block", "launch.block")
    if block[0] * block[1] * block[2] > MAX_BLOCK_THREADS:
        raise c.err("launch.block", f"{block[0] * block[1] * block[2]} threads: more than {MAX_BLOCK_THREADS}",
                    launch, "block")
    if block[2] > 64:
        raise c.err("launch.block", f"block z {block[2]} is more than 64", launch, "block")
    shared = launch.get("shared", {}) or {}
    if not isinstance(shared, dict):
        raise c.err("launch.shared", "expected {static: N, dynamic: N}", launch, "shared")
    c.keys(shared, {"static", "dynamic"}, "launch.shared")
    dyn = c.int(shared, "dynamic", "launch.shared.dynamic", 0, 0)
    if dyn > 227 * 1024:
        raise c.err("launch.shared.dynamic", f"{dyn} bytes: more than the 227 KiB a Hopper block can have",
                    shared, "dynamic")
    cluster = c.dim3(launch, "cluster", "launch.cluster") if "cluster" in launch else None
    if cluster is not None:
        for a, (g, k) in enumerate(zip(grid, cluster)):
            if g % k:
                raise c.err("launch.cluster", f"grid {list(grid)} is not a multiple of the cluster "
                            f"{list(cluster)} in dimension {'xyz'[a]}", launch, "cluster")
    seq = _sequence(c, launch, params)
    stream = launch.get("stream", "nonblocking")
    if stream not in ("nonblocking", "default"):
        raise c.err("launch.stream", f"{stream!r} is not nonblocking or default", launch, "stream")
    return Launch(grid, block, c.int(shared, "static", "launch.shared.static", 0, 0), dyn, cluster,
                  seq, stream)


def _sequence(c: Ctx, launch, params) -> tuple:
    """launch.sequence: one mapping per launch, {scalar name: value}: e.g. split-K tiles."""
    raw = launch.get("sequence", []) or []
    if not isinstance(raw, list):
        raise c.err("launch.sequence", "expected a list of {scalar: value} mappings", launch, "sequence")
    scalars = {f.name: f for p in params for f in p.fields if f.sequenced}
    out = []
    for i, step in enumerate(raw):
        w = f"launch.sequence[{i}]"
        if not isinstance(step, dict):
            raise c.err(w, "expected a mapping {scalar: value}", raw, i)
        for k, v in step.items():
            if k not in scalars:
                raise c.err(f"{w}.{k}", f"not a scalar parameter (scalars: {', '.join(scalars) or 'none'})",
                            step, k)
            n = len(scalars[k].value)
            vals = v if isinstance(v, list) else [v]
            if len(vals) != n or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in vals):
                raise c.err(f"{w}.{k}", f"expected {n} number(s) like the parameter's value", step, k)
            for j, x in enumerate(vals):
                scalars[k].check_value(c, x, f"{w}.{k}[{j}]", step, k)
        out.append(tuple(sorted((k, tuple(v if isinstance(v, list) else [v])) for k, v in step.items())))
    return tuple(out)


def _frame(c: Ctx, data, fields) -> tuple:
    by_name = {f.name: f for f in fields}
    outputs = [f.name for f in fields if f.is_output]
    fr = data.get("frame", "all")
    if fr in ("all", None):
        names = tuple(outputs)
    else:
        if not isinstance(fr, dict):
            raise c.err("frame", "expected {field: NAME} or 'all'", data, "frame")
        c.keys(fr, {"field"}, "frame")
        fname = c.need(fr, "field", "frame")
        if fname not in by_name:
            raise c.err("frame.field", f"{fname!r} is not a parameter field", fr, "field")
        if not by_name[fname].is_output:
            raise c.err("frame.field", f"{fname!r} is a {by_name[fname].kind} with role "
                        f"{by_name[fname].role}, not an output", fr, "field")
        names = (fname,)
    if not outputs:
        raise c.err("params", "no output: give a buffer (a table entry, a global) role: output/inout, or a surface",
                    data, "params")
    first = by_name[names[0]] if names else None
    frame = None
    if first is not None:
        w, h, fmt = first.frame_extent()
        frame = Frame(first.name, w, h, fmt)
    return frame, names


def _work(c: Ctx, data) -> tuple:
    w = data.get("work")
    if w is None:
        return ()
    if not isinstance(w, dict):
        raise c.err("work", "expected {flops: N, bytes: N}", data, "work")
    c.keys(w, {"flops", "bytes"}, "work")
    return tuple((k, c.int(w, k, f"work.{k}", 0)) for k in ("flops", "bytes") if k in w)


def parse_spec(data: Any, source: str = "<spec>", base: Optional[Path] = None) -> ProbeSpec:
    """Validate a decoded YAML document (plain dicts, or recipe.YMap with positions)."""
    c = Ctx(source, base or Path(source).parent)
    if data is None:
        raise c.err("top level", "empty file: expected a mapping (name, ptx, entry, launch, params)")
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise c.err("top level", f"expected a mapping, got {kind}", data)
    c.keys(data, TOP_KEYS, "")
    name = c.need(data, "name", "")
    # the report's file names: build/probe/reports/<name>-<module>/ (str() of a list, None, or a
    # name with '/' or '..' put the reports elsewhere, outside the report directory)
    if not isinstance(name, (str, int)) or isinstance(name, bool) or not str(name).strip() or \
            "/" in str(name) or "\\" in str(name) or str(name).strip(".") == "":
        raise c.err("name", f"expected a name for the report files (no '/'), got {name!r}", data, "name")
    for k in ("arch", "build_arch", "notes"):
        if k in data and not isinstance(data[k], str):
            raise c.err(k, f"expected text, got {data[k]!r}", data, k)
    build_arch = ""
    if data.get("build_arch"):    # ptxas' -arch: refused on the GPU run (after the build started) before
        try:
            build_arch = normalize_arch(data["build_arch"])     # "90a" -> "sm_90a", as --arch
        except ValueError:
            raise c.err("build_arch", f"not a GPU architecture: {data['build_arch']!r} (expected e.g. sm_90 "
                        "or sm_90a)", data, "build_arch") from None
    entry = c.need(data, "entry", "")
    if not isinstance(entry, str) or not entry:
        raise c.err("entry", "expected the .entry name", data, "entry")
    ptx = c.need(data, "ptx", "")
    if not isinstance(ptx, str) or not ptx.strip():
        raise c.err("ptx", f"expected the module's file name, got {ptx!r}", data, "ptx")
    ptx = str(c.local(ptx, "ptx", data, "ptx"))
    params, legacy = _params(c, data)
    globals_ = _globals(c, data)
    seen: dict = {}
    for f in flatten(params, globals_):
        if f.name in seen:
            raise SpecError(f"{f.name!r} repeats the one at line {seen[f.name]}", source,
                            f.line or None, f.column or None, key="params")
        seen[f.name] = f.line
    frame, frames = _frame(c, data, flatten(params, globals_))
    return ProbeSpec(
        name=str(name), ptx=ptx, entry=entry,
        arch=str(data.get("arch", "")), launch=_launch(c, data, params), params=params,
        frame=frame, frames=frames, seed=c.int(data, "seed", "seed", 0, 0),
        notes=str(data.get("notes", "")), source=source,
        build_arch=build_arch, work=_work(c, data), legacy=legacy,
        at=_positions(data), globals=globals_)


def _positions(data) -> tuple:
    out = []
    if hasattr(data, "vat"):
        out += [(k, *data.vat(k)) for k in data]
        launch = data.get("launch")
        if hasattr(launch, "vat"):
            out += [(f"launch.{k}", *launch.vat(k)) for k in launch]
    return tuple(out)


def load_spec(path: str | Path) -> ProbeSpec:
    path = Path(path)
    if path.is_dir():
        raise SpecError("is a directory, not a probe spec", str(path))
    try:
        text = read_utf8(path, "a probe spec is UTF-8 YAML", DEFAULT_LIMITS.max_bytes)
    except FileNotFoundError:
        raise SpecError("no such file", str(path)) from None
    if not text.strip():
        raise SpecError("empty file: expected a probe spec mapping (docs/probe-spec.md)", str(path))
    data = load_yaml_marked(text, str(path))
    return parse_spec(data, str(path), home_dir(path))     # a stream's (/dev/stdin): the working directory
