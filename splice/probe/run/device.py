"""The one device path of the probe: the spec's inputs on the GPU, modules loaded from cubins,
launches with a real ``kernelParams`` array, outputs poisoned before and read back after.

    dev = Device(spec)                      # buffers, textures, surfaces, packed arguments
    dev.load("original", cubin_path)        # RawModule + CUfunction (+ dynamic shared opt-in)
    outs = dev.render("original")           # poison outputs, launch (the sequence), read back
    dev.launcher("original")(stream)        # the bare launches, for timing / graph capture

Arguments: one host buffer per ``.param`` (``inputs.ArgPack``), so a 14-parameter Triton kernel
gets 14 pointers, and a by-value struct one pointer to its bytes.  Dynamic shared memory above
48 KiB is opted into with ``RawKernel.max_dynamic_shared_size_bytes`` (the
``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`` attribute).  A cluster launch goes through
``cuLaunchKernelEx`` (ctypes on the driver cupy already loaded) with the cluster-dimension
attribute; a driver without it is refused with a clear message.  cupy is passed in (or
imported lazily), so tests drive this class with a fake.
"""
from __future__ import annotations

import ctypes
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...errors import SpliceError
from ..language.records import ProbeSpec
from .args import ArgPack

BIG_SHARED = 48 * 1024


def import_cupy(where=None):
    """cupy and a device, or a SpliceError saying which is missing (before any cubin is built),
    naming ``where`` (the recipe or spec the user asked to run)."""
    w = str(where) if where is not None else None
    try:
        import cupy  # noqa: PLC0415  (heavy optional dependency: cupy, only on a GPU run)
    except ImportError:
        raise SpliceError("splice probe needs cupy and a CUDA GPU: cupy is not installed "
                          "(pip install -e '.[gpu]', or cupy-cuda13x)", w) from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - cupy raises its own CUDARuntimeError
        raise SpliceError(f"splice probe needs a CUDA GPU: {type(e).__name__}: {e}", w) from None
    if n < 1:
        raise SpliceError("splice probe needs a CUDA GPU: no device found", w)
    return cupy


def device_arch(cp) -> str:
    cc = cp.cuda.Device().compute_capability          # '90'
    return f"sm_{cc}"


@dataclass(frozen=True)
class Loaded:
    name: str
    function: int          # CUfunction
    kernel: object         # cupy RawKernel (keeps the module alive)


class Device:
    """The spec's fields on the device, each allocated, prepared and read back by its kind
    (``splice.probe.kinds``); the modules loaded from cubins; the argument packs."""
    def __init__(self, spec: ProbeSpec, cp=None, cluster: Optional[tuple] = None):
        self.cp = cp = cp or import_cupy(spec.source)
        self.spec = spec
        self.cluster = cluster
        self.keep: list = []
        self.buffers: dict = {}            # name -> cupy uint8 array (the whole allocation)
        self.views: dict = {}              # name -> cupy uint8 array at the aligned address
        self.host: dict = {}               # what is restored before each render: initial bytes
        self.arrays: dict = {}             # surfaces: name -> CUDAarray
        self.bound: dict = {}              # module name -> {field: its state in that module}
        self.handles: dict = {}
        for f in spec.fields:              # a table's entries before the table (spec.fields)
            h = f.allocate(self)
            if h is not None:
                self.handles[f.name] = h
        steps = spec.launch.sequence or ((),)
        self.args = tuple(ArgPack(spec, self.handles, {k: v for k, v in step}) for step in steps)
        if spec.launch.stream == "default":
            self.stream = cp.cuda.Stream.null
        else:
            self.stream = cp.cuda.Stream(non_blocking=True)
        self.modules: dict = {}
        self.per_module = [f for f in spec.fields if f.per_module]
        cp.cuda.Device().synchronize()

    def place(self, f, host, keep: bool) -> int:
        """Device memory for field ``f`` (``f.bytes`` at ``f.align``), ``host`` bytes copied in
        (None: zeros), kept to restore before each render when ``keep``: its address."""
        cp = self.cp
        extra = f.align - 1                 # room to place the view at any alignment
        dev = cp.zeros(f.bytes + extra, dtype=cp.uint8)
        shift = (-int(dev.data.ptr)) % f.align
        view = dev[shift:shift + f.bytes]
        if host is not None:
            view.set(host)
            if keep:
                self.host[f.name] = host
        self.buffers[f.name] = dev
        self.views[f.name] = view
        return int(dev.data.ptr) + shift

    # ---- modules -----------------------------------------------------------------------------

    def load(self, name: str, cubin, entry: Optional[str] = None) -> object:
        entry = entry or self.spec.entry
        mod = self.cp.RawModule(path=str(cubin))
        try:
            k = mod.get_function(entry)          # cuModuleLoad runs here (lazily)
        except Exception as e:  # noqa: BLE001 - cupy's CUDADriverError, by name
            if type(e).__name__ != "CUDADriverError":
                raise
            raise SpliceError(f"the driver refuses to load the {name} module ({e}), which ptxas compiled "
                              "(one known cause: an instruction this driver does not run; an H200 with "
                              "driver 580 refuses suq.array_size, suq.channel_order and suq.memory_layout "
                              "with CUDA_ERROR_NOT_SUPPORTED)", self.spec.source) from None
        dyn = self.spec.shared_dynamic
        if dyn > BIG_SHARED:
            k.max_dynamic_shared_size_bytes = dyn
        fn = function_ptr(k)
        self.modules[name] = Loaded(name, fn, k)
        if self.per_module and entry == self.spec.entry:   # not the harness' own entry
            for f in self.per_module:
                f.bind(self, mod, name, str(cubin))
            self.bound.setdefault(name, {})
        return mod

    def launcher(self, name: str):
        """callable(stream): every launch of the spec's sequence, in order, on ``stream``."""
        s = self.spec
        fn = self.modules[name].function
        packs = [a.kernel_params for a in self.args]
        drv = self.cp.cuda.driver
        cluster = self.cluster
        grid, block, smem = s.grid, s.block, s.shared_dynamic

        def launch(stream):
            for kp in packs:
                if cluster:
                    launch_ex(fn, grid, block, smem, stream.ptr, kp, cluster)
                else:
                    drv.launchKernel(fn, *grid, *block, smem, stream.ptr, kp, 0)
        return launch

    def launch_bound(self, name: str, blocks: int, extra: tuple, shared_bytes: int, stream,
                     launch: int = 0) -> None:
        """Launch module ``name`` -- a kernel declared with the entry's ``.param`` list followed
        by one ``.u64`` per ``extra`` value (the bound harness) -- on ``blocks`` blocks of the
        spec's block, with the arguments of launch ``launch`` of the spec's sequence: the cut
        reads the same parameter fields, buffers, textures and surfaces as that launch of the
        frame run."""
        vals = np.array(extra, dtype=np.uint64)
        at = np.uint64(vals.ctypes.data) + np.arange(len(vals), dtype=np.uint64) * np.uint64(8)
        ptrs = np.concatenate([self.args[launch].pointers, at])
        with gpu_errors(f"the {name} module", self.spec.source):
            self.cp.cuda.driver.launchKernel(self.modules[name].function, int(blocks), 1, 1, *self.spec.block,
                                             int(shared_bytes), stream.ptr, int(ptrs.ctypes.data), 0)
            stream.synchronize()

    # ---- one render ------------------------------------------------------------------------

    def prepare(self, stream, alt: bool = False, module: Optional[str] = None) -> None:
        """Each field made ready for a launch of ``module`` by its kind: outputs poisoned
        (``alt``: with the complement pattern), inouts and pointer tables restored (a kernel
        that wrote into a table would send the next render elsewhere), module variables set in
        that module (none when ``module`` is not one the spec's entry was loaded from)."""
        for f in self.spec.fields:
            if f.per_module and module not in self.bound:
                continue
            f.prepare(self, stream, alt, module)

    def read(self, stream, module: Optional[str] = None) -> dict:
        """{output name: host numpy array} (buffers as uint8, surfaces as ``host_shape``
        elements: (H, C*W) for a 2-D one; module variables of ``module``)."""
        out = {}
        for f in self.spec.outputs:
            if f.per_module and module not in self.bound:
                continue
            out[f.name] = f.read(self, stream, module)
        stream.synchronize()
        return out

    def render(self, name: str, alt: bool = False) -> dict:
        st = self.stream
        if self.per_module and name not in self.bound:
            raise SpliceError(f"the {name} module was loaded without the spec's globals", self.spec.source)
        with gpu_errors(f"the {name} module", self.spec.source):
            self.prepare(st, alt, name)
            self.launcher(name)(st)
            return self.read(st, name)


@contextmanager
def gpu_errors(what: str, where):
    """A CUDA error while ``what`` runs (an illegal address from a cut that reads or writes out
    of bounds, a trap, a launch the device refuses) is the user's kernel failing: exit 2 with
    the module named, not a traceback.  The context is lost after it, so nothing else runs."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - cupy's CUDADriverError/CUDARuntimeError, by name
        if type(e).__name__ not in ("CUDADriverError", "CUDARuntimeError"):
            raise
        raise SpliceError(f"{what} failed on the GPU: {e}. The CUDA context is lost, so the probe "
                          "stops here; a cut that reads or writes out of bounds? (run the same "
                          "command under compute-sanitizer to find the access)", str(where)) from None


def set_pointer(cp, module, symbol: str, address: int) -> None:
    """Write ``address`` into the module's ``.global .u64 symbol`` (the instrumented modules'
    host-set buffer pointer: the stages' dump, the profile's stamps)."""
    host = np.array([int(address)], dtype=np.uint64)
    g = module.get_global(symbol)
    cp.cuda.runtime.memcpy(int(g.ptr), int(host.ctypes.data), 8, cp.cuda.runtime.memcpyHostToDevice)


def function_ptr(k) -> int:
    """CUfunction of a cupy RawKernel (``.kernel`` is the loaded cupy Function)."""
    for obj in (getattr(k, "kernel", None), k):
        ptr = getattr(obj, "ptr", None) if obj is not None else None
        if ptr:
            return int(ptr)
    raise SpliceError("cannot find the CUfunction of the loaded kernel (cupy API changed?)")


def digest(arrays: dict) -> str:
    """sha256 of one output's bytes (the frame hashes of docs/results/corpus-frames.md), or of
    several outputs' names and bytes."""
    h = hashlib.sha256()
    for k in sorted(arrays):
        if len(arrays) > 1:
            h.update(k.encode())
        h.update(np.ascontiguousarray(arrays[k]).data)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# cuLaunchKernelEx with a cluster dimension (ctypes; cupy has no binding for it)
# --------------------------------------------------------------------------------------------

CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class _AttrValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", ctypes.c_uint * 3)]


class _Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _AttrValue)]


class _Config(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_Attr)), ("numAttrs", ctypes.c_uint)]


def launch_config(grid, block, smem: int, stream: int, cluster) -> tuple:
    """(CUlaunchConfig, the attribute array it points to) for a cluster launch."""
    attr = (_Attr * 1)()
    attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    for i in range(3):
        attr[0].value.clusterDim[i] = int(cluster[i])
    cfg = _Config(*[int(v) for v in grid], *[int(v) for v in block], int(smem),
                  ctypes.c_void_p(int(stream) or None), attr, 1)
    return cfg, attr


def _driver():
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise SpliceError("cluster launch: cannot load the CUDA driver library (libcuda.so.1)")


def launch_ex(fn: int, grid, block, smem: int, stream: int, kernel_params: int, cluster) -> None:
    lib = _driver()
    f = getattr(lib, "cuLaunchKernelEx", None)
    if f is None:
        raise SpliceError("cluster launch needs cuLaunchKernelEx (CUDA driver 12.0 or newer); "
                          "this driver does not export it")
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.POINTER(_Config), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    cfg, _attr = launch_config(grid, block, smem, stream, cluster)
    rc = f(ctypes.byref(cfg), ctypes.c_void_p(fn), ctypes.c_void_p(kernel_params), None)
    if rc != 0:
        raise SpliceError(f"cuLaunchKernelEx failed with CUresult {rc} (grid {list(grid)}, block "
                          f"{list(block)}, cluster {list(cluster)}, {smem} bytes dynamic shared)")
