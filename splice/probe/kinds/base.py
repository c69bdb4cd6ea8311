"""What a probe parameter kind is: the one class every kind extends, and the registry of them.

A spec describes an entry's ``.param`` list (and the module variables it names) as *fields*,
each of a kind: a scalar, a buffer, a texture or surface, a pointer table, a tensor map ... .
Everything the probe does with a field depends on its kind, so the kind is a class and the field
its instance: the class owns the kind's spec keys and their checks, how it sits in a ``.param``
and is checked against the PTX declaration and the kernel's uses, its ``probe init`` skeleton,
its host bytes, its device allocation and what is restored before each launch, how an output of
it is read back and compared.  Nothing outside ``splice.probe.kinds`` asks which kind a field is.

The registry is the package: every module of ``splice.probe.kinds`` that defines a subclass of
:class:`Kind` with a ``kind`` name adds that kind (``registry()``); adding a kind is adding
one module.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Optional

import numpy as np

from ..language import dtypes as dt
from ..language.context import Ctx

#: keys every field takes, whatever its kind
COMMON_KEYS = frozenset({"name", "kind", "offset", "what", "ptx_name"})


@dataclass(frozen=True, kw_only=True)
class Kind:
    """A field of a probe spec.  Subclasses set the class attributes and override what their
    kind does differently; the defaults describe a field the kernel only reads, that holds no
    device memory of its own and is never compared."""
    name: str
    offset: int = 0
    line: int = 0
    column: int = 0
    role: str = "input"

    #: the spec's ``kind:`` value ("" for the abstract bases)
    kind: ClassVar[str] = ""
    #: position in the registry's listings (error messages name the kinds in this order)
    order: ClassVar[int] = 100
    #: "params": a ``.param`` or a field of a by-value struct; "globals": a module variable
    section: ClassVar[str] = "params"
    #: whether it may be a field of a ``kind: struct`` (else only a whole ``.param``)
    in_struct: ClassVar[bool] = True
    #: the keys its spec mapping may hold (beyond ``COMMON_KEYS``)
    keys: ClassVar[frozenset] = frozenset()
    #: ``probe init`` tries the kinds in this order; the first that claims a parameter writes it
    claim_order: ClassVar[int] = 100
    #: whether a ``launch.sequence`` step may set its value (one launch each)
    sequenced: ClassVar[bool] = False
    #: its name in a count (``probe init``'s summary: "3 buffers"); None: not counted
    noun: ClassVar[Optional[str]] = None
    #: counted even when there are none ("0 buffers")
    always_counted: ClassVar[bool] = False
    #: what the 8 bytes of a whole ``.param`` of it are (messages)
    handle: ClassVar[str] = "pointer"
    #: whether its mapping holds ``fields:`` of other kinds (a by-value struct: ``parse_param``)
    groups: ClassVar[bool] = False
    #: the alignment its offset in a struct must have (checked before ``parse``; 1: ``parse``
    #: checks it against what it reads)
    offset_align: ClassVar[int] = 8

    # ------------------------------------------------------------------ the spec language

    @classmethod
    def parse(cls, c: Ctx, d, where: str, name: str, offset: int, legacy: bool) -> "Kind":
        """The field a spec mapping ``d`` describes (its keys already checked against
        ``keys``), at ``offset`` of its parameter; every error a ``SpecError`` at its key."""
        raise NotImplementedError(cls.__name__)

    @classmethod
    def parse_param(cls, c: Ctx, d, i: int, parse_field) -> Any:
        """A whole ``.param`` of a grouping kind (``groups``): a ``records.Param`` of the fields
        ``parse_field(mapping, where, legacy)`` reads."""
        raise NotImplementedError(cls.__name__)

    @classmethod
    def declaration_of(cls, p, pp) -> Optional[str]:
        """Why the spec's parameter ``p`` (a ``records.Param`` of this kind) does not fit the
        declared ``pp``, or None."""
        return p.fields[0].declaration_mismatch(pp)

    @property
    def size(self) -> int:
        """Bytes the field occupies in its ``.param``: a pointer or object handle by default."""
        return 8

    @property
    def align(self) -> int:
        """The alignment the field needs in its parameter (and a whole ``.param`` of it)."""
        return 8

    @property
    def is_output(self) -> bool:
        return self.role in ("output", "inout")

    @property
    def element(self) -> dt.DType:
        """The element type of what it holds (an output's comparison is by this type)."""
        return dt.TYPES["u8"]

    @property
    def writable(self) -> bool:
        """Whether the kernel can write its memory (the bound harness snapshots it)."""
        return False

    def children(self) -> tuple:
        """Fields allocated before it and listed just before it (a table's entries)."""
        return ()

    def frame_extent(self) -> tuple:
        """(width, height, format) when it is the report's frame."""
        return 0, 0, getattr(self, "dtype", "")

    # ------------------------------------------------------------------ the PTX declaration

    def declaration_mismatch(self, pp) -> Optional[str]:
        """Why a whole ``.param`` of this kind does not fit the declared ``pp`` (an
        ``entry.PtxParam``), or None: an 8-byte handle, not a float."""
        if pp.size != 8:
            return f"a {self.kind} (an 8-byte {self.handle}), but the PTX parameter is {pp.size} bytes ({pp.type})"
        t = dt.lookup(pp.type)
        if not pp.is_array and t is not None and t.is_float:
            return f"a {self.kind}, but the PTX declares a float {pp.type}"
        return None

    def kernel_checks(self, spec, facts, key: str) -> list:
        """[(order, check)] against the kernel (``entry.KernelFacts``): each ``check()`` raises
        a ``SpecError`` at ``key``; all run by ``order`` (module variables, images, written
        inputs), so the first error reported does not depend on the field order."""
        return []

    # ------------------------------------------------------------------ host bytes

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        """The field's bytes in its ``.param``: its device handle, little-endian."""
        if self.name not in handles:
            raise KeyError(f"no device handle for parameter field {self.name!r}")
        return int(handles[self.name]).to_bytes(8, "little")

    def numpy_format(self):
        """Its place in a structured dtype (the first specs' one by-value block): a handle."""
        return "<u8"

    # ------------------------------------------------------------------ the device

    def needs(self) -> Optional[str]:
        """What a run of this field needs that is missing (an optional dependency), said before
        the GPU is touched; None when nothing is."""
        return None

    def allocate(self, dev) -> Optional[int]:
        """Its device object (the address or handle its ``blob`` passes), or None."""
        return None

    #: whether it lives in each loaded module (``bind``) rather than in the device's memory
    per_module: ClassVar[bool] = False

    def bind(self, dev, module, module_name: str, where: str) -> None:
        """What it needs in each loaded module (module variables and references); ``where``
        names the module file in errors."""

    @property
    def harness_blind(self) -> bool:
        """Whether the bound harness (a module of its own) would neither set nor compare it: a
        cut that reaches it is not harnessed (the frame run sets and compares it)."""
        return False

    def prepare(self, dev, stream, alt: bool, module_name: str) -> None:
        """Before each render of ``module_name``: poison an output (``alt``: the complement
        pattern), restore what the kernel may have changed."""

    def read(self, dev, stream, module_name: str) -> Optional[np.ndarray]:
        """An output's contents after a render (host array), None when it is no output."""
        return None

    def snapshot(self, dev, stream) -> Any:
        """A device copy of what the kernel may write (the bound harness compares them)."""
        raise NotImplementedError(self.kind)

    def restore(self, dev, state, stream) -> None:
        """Put back ``state`` (a ``snapshot``) when it is an input a cut may have written."""

    def moved_bytes(self) -> int:
        """The bytes a frame moves through it, for the roofline: an input read once, an output
        written once, an inout both (0: it holds no frame data)."""
        return 0

    def timed_restores(self, dev) -> list:
        """What a timed sample puts back first because a launch may change it
        (``timing_cupy.Restorer``): ``[(label, module name or None for every module,
        callable(stream))]``, each callable enqueueing device-to-device copies (or zero fills)
        from pristine copies made here, so that nothing crosses the host between samples."""
        return []
    # ------------------------------------------------------------------ comparison

    def elements(self, raw: np.ndarray) -> np.ndarray:
        """A read-back output as its element array."""
        t = self.element
        n = raw.size // t.size
        return np.ascontiguousarray(raw[:n * t.size]).view(t.storage)

    def place(self, idx: tuple) -> list:
        """An element index as a report shows it."""
        return [int(i) for i in idx]

    def place_flat(self, e: int) -> list:
        """Element ``e`` of the flat contents as a report shows it."""
        return [e]

    def pixels(self, hit: np.ndarray) -> np.ndarray:
        """Per-element flags reduced to what coverage counts (a surface: whole texels)."""
        return hit

    def alpha(self, e: np.ndarray) -> Optional[np.ndarray]:
        """An RGBA image's alpha channel (a frame's must stay 0), None for anything else."""
        return None

    @property
    def is_weight_image(self) -> bool:
        """Whether it holds a stand-in layer's weight image (``fill: weight_image``)."""
        return False

    def finite_part(self, e: np.ndarray) -> np.ndarray:
        """The values whose finiteness is reported (a surface's alpha channel is not)."""
        return e

    def difference_map(self, heat: np.ndarray, first: tuple, a_shape: tuple) -> tuple:
        """(report entries, 2-D map) of a per-element difference ``heat``."""
        if len(a_shape) > 2:
            heat = heat.reshape(a_shape[0], -1)
        return {}, heat

    # ------------------------------------------------------------------ probe init

    @classmethod
    def claims_use(cls, u) -> bool:
        """Whether what a pointer-sized value reaches (a ``param_trace.Use``) is one of these."""
        return False

    @classmethod
    def claims(cls, slot) -> bool:
        """Whether this kind describes the whole ``.param`` of ``slot`` (a
        ``skeleton.Slot``): by default, a pointer-sized value whose use it claims."""
        u = slot.use
        return not (slot.pp.is_array and slot.pp.size != 8) and u is not None and u.role is not None \
            and cls.claims_use(u)

    @classmethod
    def skeleton(cls, y, slot) -> dict:
        """The skeleton's lines for the whole ``.param`` (``y``: ``skeleton.Lines``); its row,
        with ``probeable: false`` and the reason when no filled TODO can make it probeable."""
        why = cls.object_lines(y, slot.short, slot.use, 0, None)
        return stuck(slot.row(cls.kind, **cls.object_row(slot.use)), why)

    @classmethod
    def object_lines(cls, y, name: str, u, indent: int, offset) -> Optional[str]:
        """The lines of a pointer-sized value ``u`` (a whole parameter, or a struct's field at
        ``offset``) as one of these; why the entry cannot be probed as it is, or None."""
        raise NotImplementedError(cls.__name__)

    @classmethod
    def object_row(cls, u) -> dict:
        return {"role": u.role, "dtype": u.element()[0], "pointer_table": False}


@lru_cache(maxsize=None)
def registry() -> tuple:
    """Every kind, in ``order``: the subclasses of :class:`Kind` with a ``kind`` name that the
    modules of this package define (each module imported once)."""
    package = importlib.import_module(__package__)
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{__package__}.{info.name}")
    found: dict = {}
    todo = list(Kind.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.kind:
            found.setdefault(cls.kind, cls)
    return tuple(sorted(found.values(), key=lambda k: (k.order, k.kind)))


def kinds_of(section: str, in_struct: bool = False) -> tuple:
    """The kinds a spec may name in ``section`` (in a struct's ``fields:`` when ``in_struct``)."""
    return tuple(k for k in registry() if k.section == section and (k.in_struct or not in_struct))


def lookup(name, section: str = "params") -> Optional[type[Kind]]:
    """The kind named ``name`` in ``section``, or None."""
    return next((k for k in kinds_of(section) if k.kind == name), None)


def by_claim() -> tuple:
    return tuple(sorted(registry(), key=lambda k: (k.claim_order, k.order)))


def param_kind(slot) -> type[Kind]:
    """The kind ``probe init`` writes a ``.param`` as: the first, in claim order, to claim it."""
    return next(k for k in by_claim() if k.claims(slot))


def field_kind(u) -> type[Kind]:
    """The kind of what a pointer-sized value reaches (``u``, a ``param_trace.Use``)."""
    return next(k for k in by_claim() if k.claims_use(u))


def counted(rows: list) -> str:
    """``probe init``'s summary of its rows (each with a ``kind``): "3 buffers, 1 pointer table"
    in registry order, the kinds with a noun."""
    out = []
    for k in registry():
        n = sum(1 for r in rows if r.get("kind") == k.kind)
        if k.noun and (n or k.always_counted):
            out.append(f"{n} {k.noun}{'s' if n != 1 else ''}")
    return ", ".join(out)


def stuck(row: dict, why: Optional[str]) -> dict:
    """``row`` marked as a parameter no filled TODO makes probeable (``why``), when there is one."""
    if why:
        row.update(probeable=False, why=why)
    return row


def device_restore(dev, view, host: Optional[np.ndarray]):
    """callable(stream): ``view`` (a cupy array) set again to ``host``'s bytes from a device copy
    made now (None: zeros), on the stream, device to device."""
    rt = dev.cp.cuda.runtime
    ptr, n = int(view.data.ptr), int(view.nbytes)
    if host is None:
        return lambda stream: rt.memsetAsync(ptr, 0, n, stream.ptr)
    src = dev.cp.asarray(host)

    def restore(stream) -> None:
        rt.memcpyAsync(ptr, int(src.data.ptr), int(src.nbytes), rt.memcpyDeviceToDevice, stream.ptr)
    return restore
