"""``kind: texture`` and ``kind: surface``: a CUDA array of the spec's geometry, format and
extents behind a texture object (read with ``tex``/``tld4``, filled from the spec) or a surface
object (``suld``/``sust``/``sured``: an output by default, poisoned and compared texel by texel).
The arrays themselves: ``image_arrays``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from ...errors import SpliceError
from ..language import dtypes as dt
from ..language.context import MAX_BUFFER_BYTES, Ctx, SpecError, position
from ..language.fill_data import element_values, f16_values, poison_value
from ..language.fills import Fill, check_fill, parse_fill
from ..language.skeleton import yaml_scalar
from . import image_arrays as ia
from .base import Kind

IMAGE_KEYS = frozenset({"width", "height", "depth", "layers", "geometry", "format", "fill", "role", "poison"})
#: CUDA's 2-D texture and surface limits (maxTexture2D, maxSurface2D; every arch since sm_50);
#: every geometry's limits: image_arrays.LIMITS
MAX_IMAGE = (131072, 65536)


@dataclass(frozen=True, kw_only=True)
class Image(Kind):
    """An image object: the CUDA array's format, geometry and extents, its fill."""
    format: str = "rgba16f"
    geometry: str = "2d"          # 1d, 2d, 3d, a1d, a2d (image_arrays.EXTENTS)
    width: int = 0
    height: int = 1
    depth: int = 0                # 3d only
    layers: int = 0               # a1d / a2d only
    fill: Optional[Fill] = None
    poison: Optional[int] = None  # an element's bit pattern
    poison_is_byte: bool = False

    keys: ClassVar[frozenset] = IMAGE_KEYS
    handle: ClassVar[str] = "object handle"
    claim_order: ClassVar[int] = 100
    #: what the kernel may do to it: True for a surface
    stored: ClassVar[bool] = False
    #: the CUDA image it is (its limits: ``image_arrays.LIMITS``): texture or surface
    family: ClassVar[str] = ""

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Image":
        ext = geometry(c, d, where, cls.kind, cls.family)     # geometry, width, height, depth, layers
        fmt = d.get("format", "rgba16f")
        if fmt not in ia.FORMATS:
            raise c.err(f"{where}.format", f"{fmt!r} is not one of {', '.join(ia.FORMATS)}", d, "format")
        t = dt.TYPES[ia.FORMATS[fmt][0]]
        _image_bytes(c, d, where, cls.kind, ext, fmt)
        fill = parse_fill(c, d["fill"], f"{where}.fill", c.base, d) if "fill" in d else None
        if fill is not None:
            check_fill(c, fill, t, d, where)
        line, col = position(d)
        return cls(name=name, offset=offset, format=fmt, line=line, column=col,
                   **cls.parse_role(c, d, where, fill, t), **ext)

    @classmethod
    def parse_role(cls, c: Ctx, d, where: str, fill, t) -> dict:
        raise NotImplementedError(cls.__name__)

    @property
    def element(self) -> dt.DType:
        return dt.TYPES[ia.FORMATS[self.format][0]]

    @property
    def channels(self) -> int:
        return ia.FORMATS[self.format][1]

    def frame_extent(self) -> tuple:
        return self.width, self.height, self.format

    def texels(self, spec_seed: int) -> np.ndarray:
        """Texels as an array of the format's element type in the layout of cupy's CUDAarray
        (``image_arrays.host_shape``: ``(height, channels*width)`` for a 2-D image)."""
        fill = self.fill
        assert fill is not None
        ename, ch = ia.FORMATS[self.format]
        count = ia.texels(self) * ch
        if fill.rule == "f16_uniform" and ename == "f16":
            vals = f16_values(count, fill.low, fill.high, fill.seed, spec_seed)
        else:
            vals = element_values(dt.TYPES[ename], count, fill, spec_seed)
        return vals.reshape(ia.host_shape(self, ch))

    # ------------------------------------------------------------------ the kernel

    def kernel_checks(self, spec, facts, key: str) -> list:
        return [(2, lambda: self._as_used(spec, facts, key))]

    def _as_used(self, spec, facts, key: str) -> None:
        """The image against the geometries the entry's instructions use it with (``tex.3d``,
        ``suld.b.a1d`` ...: ``param_trace``).  A CUDA array of one geometry read with another
        gives undefined texels -- the same in both modules, so the probe would call a broken
        spec "identical": a spec geometry the kernel never uses is exit 2 at the field.  Several
        geometries on one handle (a run-time choice) pass when the spec's is one of them."""
        u = facts.use_of(self)
        if self.stored and self.role == "input" and u is not None and u.writes:
            raise SpecError(f"{self.name}: role input, but {spec.entry} writes this surface ({u.writes} sust/sured): "
                            "what it writes would not be compared", spec.source, self.line or None,
                            self.column or None, key=key, detail="give role output (poisoned, then compared) or "
                            "inout (filled, then compared)")
        seen = list(dict.fromkeys(g.lstrip(".") for g in (u.geometries if u is not None else ())))
        if not seen or self.geometry in seen:
            return
        used = ", ".join(seen)
        raise SpecError(f"{self.name}: geometry {self.geometry}, but {spec.entry} uses this {self.kind} as {used} "
                        f"({facts.path}): a {self.geometry} CUDA array read as {used} gives undefined texels",
                        spec.source, self.line or None, self.column or None, key=key,
                        detail="give the geometry the kernel's tex/tld4/suld/sust instructions name "
                               "(splice probe init fills it in)")

    # ------------------------------------------------------------------ the device

    def allocate(self, dev) -> Optional[int]:
        """A CUDA array of the field's geometry and its texture/surface object."""
        handle, arr = self.make_array(dev)
        if self.stored:
            dev.arrays[self.name] = arr
        return handle

    def make_array(self, dev) -> tuple:
        """(texture/surface object, CUDA array): texels filled for a texture and an input or
        inout surface (an output surface's are the poison)."""
        ia.check_device(dev.cp, self)
        host = self.texels(dev.spec.seed) if not self.stored or self.role in ("inout", "input") else None
        try:
            handle, arr, keep = ia.create(dev.cp, self, host, sampled=not self.stored)
        except Exception as e:  # noqa: BLE001 - cupy's CUDARuntimeError, by name
            if type(e).__name__ not in ("CUDADriverError", "CUDARuntimeError"):
                raise
            size = " x ".join(map(str, ia.extents(self)))
            raise SpliceError(f"cannot make {self.kind} {self.name} ({self.geometry}, {size}, {self.format}): {e}",
                              dev.spec.source, self.line or None) from None
        dev.keep += keep
        return handle, arr

    def place(self, idx: tuple) -> list:
        return ia.place(self, idx)

    def place_flat(self, e: int) -> list:
        return ia.index(self, e, self.channels)

    def elements(self, raw: np.ndarray) -> np.ndarray:
        return raw.reshape(ia.element_shape(self, self.channels))

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims_use(cls, u) -> bool:
        return u.image == cls.kind

    @classmethod
    def object_lines(cls, y, name: str, u, indent: int, offset) -> Optional[str]:
        pad = "  " * indent
        y.line(f"{pad}- name: {yaml_scalar(name)}")
        if offset is not None:
            y.line(f"{pad}  offset: {offset}")
        y.line(f"{pad}  kind: {cls.kind}")
        lines, why = skeleton_lines(cls.kind, u.geometries)
        for ln in lines:
            y.line(f"{pad}  {ln}")
        y.line(f"{pad}  format: rgba16f            # check: r32f, rg16f, rgba8, rgba32f")
        if not cls.stored:
            y.line(f"{pad}  fill: {{rule: uniform, seed: 1, range: [0.0, 1.0]}}")
        return why

    def moved_bytes(self) -> int:
        return ia.texels(self) * ia.FORMATS[self.format][1] * self.element.size


@dataclass(frozen=True, kw_only=True)
class Texture(Image):
    kind: ClassVar[str] = "texture"
    noun: ClassVar[Optional[str]] = "texture"
    order: ClassVar[int] = 20
    family: ClassVar[str] = "texture"

    @classmethod
    def parse_role(cls, c: Ctx, d, where: str, fill, t) -> dict:
        if fill is None:
            raise c.err(f"{where}.fill", "missing", d)
        return {"fill": fill, "role": "input"}


@dataclass(frozen=True, kw_only=True)
class Surface(Image):
    kind: ClassVar[str] = "surface"
    noun: ClassVar[Optional[str]] = "surface"
    order: ClassVar[int] = 30
    family: ClassVar[str] = "surface"
    stored: ClassVar[bool] = True

    @classmethod
    def parse_role(cls, c: Ctx, d, where: str, fill, t) -> dict:
        role = c.role(d, where, "output")
        poison = c.int(d, "poison", f"{where}.poison", 0, (1 << (8 * t.size)) - 1)
        if poison >= 1 << (8 * t.size):
            raise c.err(f"{where}.poison", f"{poison:#x} does not fit one {t.name} channel", d, "poison")
        return {"fill": fill or Fill("zeros"), "poison": poison, "poison_is_byte": False, "role": role}

    @property
    def writable(self) -> bool:
        return True

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        if not self.is_output:
            return
        arr = dev.arrays[self.name]
        src = self.poisoned(alt) if self.role == "output" else self.texels(dev.spec.seed)
        arr.copy_from(np.ascontiguousarray(src), stream)

    def poisoned(self, alt: bool = False) -> np.ndarray:
        t = self.element
        return np.full(ia.host_shape(self, self.channels), poison_value(self, alt),
                       dtype=f"<u{t.size}").view(t.storage)

    def read(self, dev, stream, module_name: str) -> Optional[np.ndarray]:
        if not self.is_output:
            return None
        host = np.empty(ia.host_shape(self, self.channels), dtype=self.element.storage)
        dev.arrays[self.name].copy_to(host, stream)
        return host

    def snapshot(self, dev, stream):
        a = dev.cp.empty(ia.host_shape(self, self.channels), dtype=self.element.storage)
        dev.arrays[self.name].copy_to(a, stream)
        return a

    def timed_restores(self, dev) -> list:
        """An inout surface: its texels, from a device copy."""
        if self.role != "inout":
            return []
        arr, src = dev.arrays[self.name], dev.cp.asarray(np.ascontiguousarray(self.texels(dev.spec.seed)))
        return [(self.name, None, lambda stream: arr.copy_from(src, stream))]

    def pixels(self, hit: np.ndarray) -> np.ndarray:
        return np.asarray(hit.all(axis=-1))

    def finite_part(self, e: np.ndarray) -> np.ndarray:
        return e[..., :3] if e.shape[-1] == 4 else e

    def alpha(self, e: np.ndarray) -> Optional[np.ndarray]:
        return e[..., 3] if e.shape[-1] == 4 else None

    def difference_map(self, heat: np.ndarray, first: tuple, a_shape: tuple) -> tuple:
        return ia.difference_map(self, heat.max(axis=-1), first)


def geometry(c: Ctx, d, where: str, kind: str, family: str) -> dict:
    """{geometry, width, height, depth, layers} of an image mapping ``d``.  A key the geometry
    has no use for is an error, not ignored: ``depth: 8`` on a 2-D image, or ``layers:`` on a
    3-D one, says the writer meant another geometry."""
    g = d.get("geometry", "2d")
    if not isinstance(g, str):      # a list or mapping: unhashable (a TypeError traceback), null: a TODO left
        what = "null (a TODO left?)" if g is None else repr(g)
        raise c.err(f"{where}.geometry", f"{what} is not one of {', '.join(ia.GEOMETRIES)}", d, "geometry")
    if g in ia.REFUSED:
        raise c.err(f"{where}.geometry", f"{g}: {ia.REFUSED[g]}, which the probe does not make (it binds "
                    f"{', '.join(ia.GEOMETRIES)} {kind}s)", d, "geometry")
    if g not in ia.EXTENTS:
        raise c.err(f"{where}.geometry", f"{g!r} is not one of {', '.join(ia.GEOMETRIES)}", d, "geometry")
    wanted = ia.EXTENTS[g]
    for key in ("height", "depth", "layers"):
        if key in d and key not in wanted:
            raise c.err(f"{where}.{key}", f"a {g} ({ia.WORDS[g]}) {kind} has no {key}: {_hint(key)}", d, key)
    prop, most = ia.LIMITS[(family, g)]
    out = {"geometry": g, "width": 0, "height": 1, "depth": 0, "layers": 0}
    for key, top in zip(wanted, most):
        if key not in d:
            raise c.err(f"{where}.{key}", f"missing (a {g} {kind} takes {', '.join(wanted)})", d)
        v = c.int(d, key, f"{where}.{key}", 1)
        if v > top:        # 10^11 texels were accepted, then built on the host: a MemoryError traceback
            words = "a 2-D" if g == "2d" else f"a {g} ({ia.WORDS[g]})"
            raise c.err(f"{where}.{key}", f"{v}: more than the {top} CUDA allows {words} {kind} "
                        f"({prop}: {' x '.join(map(str, most))})", d, key)
        out[key] = v
    return out


def _hint(key: str) -> str:
    return {"height": "height is for 2d, 3d and a2d",
            "depth": "depth is for geometry: 3d (layers: for a layered a1d/a2d image)",
            "layers": "layers is for geometry: a1d or a2d (depth: for a 3d image)"}[key]


def _image_bytes(c: Ctx, d, where: str, kind: str, ext: dict, fmt: str) -> None:
    """An image's texels together held to a buffer's bound: each extent within CUDA's limit is
    not enough (a 3d one of 16384^3 rgba32f texels is 64 TiB, an a2d one at its limits 32 PiB;
    the host builds the texels before the GPU sees them: an out-of-memory naming no spec)."""
    ename, ch = ia.FORMATS[fmt]
    dims = [ext[k] for k in ia.EXTENTS[ext["geometry"]]]
    n = dt.TYPES[ename].size * ch
    for v in dims:
        n *= v
    if n > MAX_BUFFER_BYTES:
        raise c.err(where, f"{' x '.join(map(str, dims))} {fmt} texels are {n} bytes: more than the "
                    f"{MAX_BUFFER_BYTES} a {kind} (as a buffer) may hold", d)


def skeleton_lines(kind: str, geometries: list) -> tuple:
    """(the skeleton's lines, why it cannot be probed or None) for an image used with
    ``geometries`` (PTX modifiers in the order seen: ``['.a2d']``).  One geometry the probe
    makes: ``geometry:`` and its extents as ``null`` TODOs.  Several, or one it does not make:
    ``geometry: null`` with a TODO saying which, so the spec refuses to load there until a
    person decides (the example: the first the probe makes; none: it cannot be probed)."""
    seen = [g.lstrip(".") for g in geometries]
    stuck = None
    words = {**ia.WORDS, **ia.REFUSED}
    named = ", ".join(f"{g} ({words[g]})" for g in seen)
    if len(seen) == 1 and seen[0] in ia.EXTENTS:
        g = seen[0]
        out = [f"geometry: {g}" + " " * max(1, 19 - len(g)) + f"# as the kernel's instructions use it ({ia.WORDS[g]})"]
    elif not seen:
        g = "2d"
        out = ["geometry: 2d                # check: no instruction here names a geometry (only queries, "
               "or a called function)"]
    else:
        g = "2d"
        why = (f"used with {len(seen)} geometries, {named}: one CUDA array has one geometry, so a probe "
               f"binds one of them (the kernel picks at run time? give the one the launch takes)"
               if len(seen) > 1 else
               f"used as {named}, which the probe does not make (it binds {', '.join(ia.GEOMETRIES)} {kind}s)")
        made = [x for x in seen if x in ia.EXTENTS]
        g = made[0] if made else "2d"
        out = [f"# TODO: {why}", f"geometry: null              # TODO (e.g. {g})"]
        if not made:
            stuck = f"a {kind} used as {named}, which the probe does not make"
    for key in ia.EXTENTS[g]:
        out.append(f"{key}: null" + " " * max(1, 22 - len(key)) + "# TODO (e.g. 16)")
    return out, stuck
