"""Texture and surface images of every geometry the probe binds: 1-D, 2-D, 3-D and layered 1-D /
2-D (PTX ``.1d``, ``.2d``, ``.3d``, ``.a1d``, ``.a2d``: the ``tex``/``tld4``/``suld``/``sust``/
``sured`` geometries of PTX ISA 9.7.10-9.7.11).

One place knows, per geometry, which extents a spec gives (``width``, ``height``, ``depth``,
``layers``), CUDA's limits on them, the host layout of the texels (cupy's ``CUDAarray``: 1-D
``(C*W,)``, 2-D ``(H, C*W)``, 3-D ``(D, H, C*W)``; layered: the layer is the outer axis), how an
element index reads in a report (``[x, y, z|layer, channel]``) and how the CUDA array and its
texture/surface object are made on the device.  Cube maps (``.cube``, ``.acube``) and
multisample images (``.2dms``, ``.a2dms``) are refused with a message: the probe makes none.

cupy's ``CUDAarray`` makes 1-D, 2-D, 3-D and 2-D layered arrays, but refuses a zero height with
a non-zero depth, which is exactly the extent of a 1-D layered array (``cudaMalloc3DArray``:
``{width, 0, layers}`` with ``cudaArrayLayered``), so :class:`Layered1D` makes that one through
the runtime entry points cupy exposes (``malloc3DArray``, ``memcpy3DAsync``,
``createTextureObject``/``createSurfaceObject``) with the C structs laid out here.  The image
kinds (``images.py``: texture and surface objects; ``texref.py``: module references) use them.
"""
from __future__ import annotations

import ctypes
from typing import Optional

import numpy as np

from ...errors import SpliceError

#: the image formats a spec names: (element type, channels)
FORMATS = {"rgba16f": ("f16", 4), "rg16f": ("f16", 2), "r32f": ("f32", 1),
           "rgba32f": ("f32", 4), "rgba8": ("u8", 4)}

#: geometries the probe binds, and the extents each one takes (in the spec's key names)
EXTENTS = {"1d": ("width",), "2d": ("width", "height"), "3d": ("width", "height", "depth"),
           "a1d": ("width", "layers"), "a2d": ("width", "height", "layers")}
GEOMETRIES = tuple(EXTENTS)
WORDS = {"1d": "1-D", "2d": "2-D", "3d": "3-D", "a1d": "layered 1-D", "a2d": "layered 2-D"}


#: geometries PTX has and the probe does not make, with why
REFUSED = {"cube": "a cube map", "acube": "a layered cube map", "2dms": "a multisample 2-D image",
           "a2dms": "a layered multisample 2-D image"}


#: CUDA's limits per (kind, geometry): the cudaDeviceProp field and its extents, in the order of
#: EXTENTS (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", the same
#: for compute capability 5.0 to 12.x).  The guide's table prints the 2-D layered surface's layers
#: as 1048, its earlier editions (and the texture row) 2048, and an H200's cudaDeviceProp says
#: 2048 (as every other value here): the spec allows 2048, and the device's own cudaDeviceProp is
#: checked again before an array is made (:func:`check_device`).
LIMITS = {
    ("texture", "1d"): ("maxTexture1D", (131072,)),
    ("texture", "2d"): ("maxTexture2D", (131072, 65536)),
    ("texture", "3d"): ("maxTexture3D", (16384, 16384, 16384)),
    ("texture", "a1d"): ("maxTexture1DLayered", (32768, 2048)),
    ("texture", "a2d"): ("maxTexture2DLayered", (32768, 32768, 2048)),
    ("surface", "1d"): ("maxSurface1D", (32768,)),
    ("surface", "2d"): ("maxSurface2D", (131072, 65536)),
    ("surface", "3d"): ("maxSurface3D", (16384, 16384, 16384)),
    ("surface", "a1d"): ("maxSurface1DLayered", (32768, 2048)),
    ("surface", "a2d"): ("maxSurface2DLayered", (32768, 32768, 2048)),
}


def geometry_of(modifier: str) -> Optional[str]:
    """``.a2d`` -> ``a2d``; None when ``modifier`` is no image geometry."""
    g = modifier.lstrip(".")
    return g if g in EXTENTS or g in REFUSED else None


def extents(f) -> tuple:
    """The field's extents in EXTENTS order (``(width, height, layers)`` for ``a2d``)."""
    return tuple(getattr(f, k) for k in EXTENTS[f.geometry])


def texels(f) -> int:
    n = 1
    for v in extents(f):
        n *= v
    return n


def host_shape(f, channels: int) -> tuple:
    """The texel array as cupy's CUDAarray copies it: the innermost axis holds ``channels``
    values per texel; layers (or 3-D slices) are the outer axis."""
    outer = {"1d": (), "2d": ("height",), "3d": ("depth", "height"), "a1d": ("layers",),
             "a2d": ("layers", "height")}[f.geometry]
    return tuple(getattr(f, k) for k in outer) + (channels * f.width,)


def element_shape(f, channels: int) -> tuple:
    """``host_shape`` with the channels split out: ``(..., W, C)``."""
    return host_shape(f, channels)[:-1] + (f.width, channels)


def axes(f) -> tuple:
    """Names of the spatial axes of ``element_shape`` (outer first): ``('layer', 'y', 'x')``."""
    return {"1d": ("x",), "2d": ("y", "x"), "3d": ("z", "y", "x"), "a1d": ("layer", "x"),
            "a2d": ("layer", "y", "x")}[f.geometry]


def place(f, idx) -> list:
    """A spatial index (outer axis first, the channel dropped if given) as reports show it:
    ``[x]``, ``[x, y]``, ``[x, y, z]``, ``[x, layer]``, ``[x, y, layer]``."""
    n = len(axes(f))
    return [int(i) for i in reversed(tuple(idx)[:n])]


def index(f, e: int, channels: int) -> list:
    """Element ``e`` of the flat texel array as ``place`` + ``[channel]``."""
    spatial = np.unravel_index(e // channels, element_shape(f, channels)[:-1])
    return place(f, spatial) + [e % channels]


def difference_map(f, heat: np.ndarray, first) -> tuple:
    """(report entries, 2-D map) of a surface's per-texel difference ``heat`` (its spatial
    shape).  A 2-D surface keeps its picture; a 3-D or layered one stacks its slices/layers top
    to bottom (each ``height`` rows), a 1-D one is one row (a layered 1-D: a row per layer), and
    the report counts the differing texels per slice/layer."""
    names = axes(f)
    nz = np.nonzero(heat)
    res = {"pixels": int(heat.size), "pixels_differ": int(nz[0].size), "first_xy": place(f, first)}
    if f.geometry == "2d":
        ys, xs = nz
        res["bbox"] = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())]
        return res, heat
    res["geometry"] = f.geometry
    res["map"] = {"1d": "one row", "a1d": "one row per layer",
                  "3d": f"slices z=0..{f.depth - 1} stacked top to bottom, {f.height} rows each",
                  "a2d": f"layers 0..{f.layers - 1} stacked top to bottom, {f.height} rows each"}[f.geometry]
    if names[0] in ("z", "layer"):
        per = np.count_nonzero(heat.reshape(heat.shape[0], -1), axis=1)
        res[f"{'slices' if names[0] == 'z' else 'layers'}_differ"] = {int(i): int(n) for i, n in enumerate(per) if n}
    return res, heat.reshape(-1, f.width)


#: ``cudaArrayLayered`` (driver_types.h): cupy's runtime module does not export it (only
#: cudaArrayDefault and cudaArraySurfaceLoadStore; cupy 14.2 on the H200 checked)
CUDA_ARRAY_LAYERED = 0x01


#: cudaChannelFormatDesc bits per channel and kind of each format
CHANNELS = {"rgba16f": (16, 16, 16, 16, "float"), "rg16f": (16, 16, 0, 0, "float"),
            "r32f": (32, 0, 0, 0, "float"), "rgba32f": (32, 32, 32, 32, "float"),
            "rgba8": (8, 8, 8, 8, "unsigned")}


def check_device(cp, f) -> None:
    """The device's own limit for the field's geometry (cudaDeviceProp), before an array is made:
    the spec checks the documented limits; a device with smaller ones would fail in
    cudaMalloc3DArray with a bare ``cudaErrorInvalidValue``."""
    prop, _most = LIMITS[(f.family, f.geometry)]
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    top = props.get(prop)
    if top is None:
        return
    top = tuple(top) if isinstance(top, (tuple, list)) else (top,)
    for key, v, t in zip(EXTENTS[f.geometry], extents(f), top):
        if v > int(t):
            raise SpliceError(f"{f.kind} {f.name}: {key} {v} is more than this device's {prop} "
                              f"({' x '.join(map(str, top))})", line=f.line or None)


def create(cp, f, host: Optional[np.ndarray], sampled: bool) -> tuple:
    """(object handle, array, things to keep alive) for image field ``f``: a texture object
    (``sampled``: point filtering, element reads, unnormalised coordinates, clamp in every
    dimension) or a surface object over a load/store array; ``host`` (``host_shape``) is copied
    in first when given."""
    rt, tex = cp.cuda.runtime, cp.cuda.texture
    x, y, z, w, kind = CHANNELS[f.format]
    fk = rt.cudaChannelFormatKindFloat if kind == "float" else rt.cudaChannelFormatKindUnsigned
    desc = tex.ChannelFormatDescriptor(x, y, z, w, fk)
    flags = 0 if sampled else rt.cudaArraySurfaceLoadStore
    if f.geometry in ("a1d", "a2d"):
        flags |= CUDA_ARRAY_LAYERED
    td = None
    if sampled:
        td = tex.TextureDescriptor(addressModes=(rt.cudaAddressModeClamp,) * 3, filterMode=rt.cudaFilterModePoint,
                                   readMode=rt.cudaReadModeElementType, normalizedCoords=0)
    if f.geometry == "a1d":
        arr = Layered1D(cp, desc, f.width, f.layers, flags)
        if host is not None:
            arr.copy_from(host)
        obj = _RawObject(rt, arr, td)
        return obj.ptr, arr, [desc, arr, td, obj]
    d1, d2 = {"1d": (0, 0), "2d": (f.height, 0), "3d": (f.height, f.depth), "a2d": (f.height, f.layers)}[f.geometry]
    arr = tex.CUDAarray(desc, f.width, d1, d2, flags)
    if host is not None:
        arr.copy_from(np.ascontiguousarray(host))
    res = tex.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=arr)
    obj = tex.TextureObject(res, td) if td is not None else tex.SurfaceObject(res)
    return int(obj.ptr), arr, [desc, arr, res, td, obj]


class _Pitched(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("pitch", ctypes.c_size_t), ("xsize", ctypes.c_size_t),
                ("ysize", ctypes.c_size_t)]


class _Memcpy3DParms(ctypes.Structure):
    """``struct cudaMemcpy3DParms`` (driver_types.h; unchanged since CUDA 3.0)."""
    _fields_ = [("srcArray", ctypes.c_void_p), ("srcPos", ctypes.c_size_t * 3), ("srcPtr", _Pitched),
                ("dstArray", ctypes.c_void_p), ("dstPos", ctypes.c_size_t * 3), ("dstPtr", _Pitched),
                ("extent", ctypes.c_size_t * 3), ("kind", ctypes.c_int)]


class Layered1D:
    """A 1-D layered CUDA array (``cudaMalloc3DArray`` with extent ``{width, 0, layers}`` and
    ``cudaArrayLayered``), copied like cupy's CUDAarray: ``copy_from``/``copy_to`` a host (numpy)
    or device (cupy) array of shape ``(layers, C*width)``; a copy's extent is ``{width, 1,
    layers}`` (one row per layer)."""
    def __init__(self, cp, desc, width: int, layers: int, flags: int):
        self.rt, self.width, self.layers = cp.cuda.runtime, width, layers
        self.ptr = 0
        self.ptr = self.rt.malloc3DArray(desc.ptr, width, 0, layers, flags)

    def _copy(self, other, stream, into: bool) -> None:
        rt = self.rt
        on_host = isinstance(other, np.ndarray)
        if into and on_host:
            other = np.ascontiguousarray(other)
        addr = other.ctypes.data if on_host else int(other.data.ptr)
        row = other.shape[-1]
        pitched = _Pitched(addr, row * other.dtype.itemsize, row, 1)
        p = _Memcpy3DParms()
        p.extent[0], p.extent[1], p.extent[2] = self.width, 1, self.layers
        if into:
            p.srcPtr, p.dstArray = pitched, self.ptr
            p.kind = rt.memcpyHostToDevice if on_host else rt.memcpyDeviceToDevice
        else:
            p.srcArray, p.dstPtr = self.ptr, pitched
            p.kind = rt.memcpyDeviceToHost if on_host else rt.memcpyDeviceToDevice
        rt.memcpy3DAsync(ctypes.addressof(p), stream.ptr if stream is not None else 0)
        if stream is None:
            rt.deviceSynchronize()

    def copy_from(self, src, stream=None) -> None:
        self._copy(src, stream, True)

    def copy_to(self, dst, stream=None) -> None:
        self._copy(dst, stream, False)

    def __del__(self):
        if self.ptr:
            self.rt.freeArray(self.ptr)
            self.ptr = 0


class _RawObject:
    """A texture object (``td`` given) or surface object over a :class:`Layered1D`, made from a
    ``cudaResourceDesc`` laid out here (``resType`` at 0, the array at 8, the rest zero)."""
    def __init__(self, rt, arr: Layered1D, td):
        self.rt, self.texture = rt, td is not None
        self.res = (ctypes.c_uint8 * 256)()
        ctypes.c_int.from_buffer(self.res, 0).value = rt.cudaResourceTypeArray
        ctypes.c_void_p.from_buffer(self.res, 8).value = arr.ptr
        self.ptr = 0
        at = ctypes.addressof(self.res)
        self.ptr = int(rt.createTextureObject(at, td.ptr) if self.texture else rt.createSurfaceObject(at))

    def __del__(self):
        if self.ptr:
            (self.rt.destroyTextureObject if self.texture else self.rt.destroySurfaceObject)(self.ptr)
            self.ptr = 0
