"""``kind: texref`` and ``kind: surfref`` under ``globals:``: a module-scope texture or surface
reference (``.global .texref t;``, ``.global .surfref s;``) bound to a CUDA array of the spec's
geometry, format and extents in every module the probe loads (``cuModuleGetTexRef`` /
``cuModuleGetSurfRef``, ``cuTexRefSetArray`` / ``cuSurfRefSetArray``, through ``cuda-bindings``;
the module of the loaded function from ``cuFuncGetModule``).

References are the pre-CUDA-5 binding: CUDA 12 removed them from the runtime API and the driver
API marks them deprecated; a driver that no longer binds them answers the call with an error,
which the probe reports as the reason it cannot run the entry (exit 2), naming the call and its
CUresult -- rewriting the reference as a texture/surface object parameter is the way on.  A
texture reference reads with point filtering, clamped, unnormalised coordinates, as the
probe's texture objects do; a surface reference is an output by default (poisoned, compared).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from ...analysis.global_uses import image_ref_uses
from ...errors import SpliceError
from ..language.context import SpecError
from .base import stuck
from .images import Surface, Texture, skeleton_lines

#: the geometries a reference is bound with here (a layered array needs cuTexRefSetFlags' layered
#: binding, which the probe does not make)
REF_GEOMETRIES = ("1d", "2d", "3d")


class _Reference:
    """What a texture and a surface reference share: a module variable bound per module."""
    # the Texture / Surface record's fields this mixin reads (declared for the type check only:
    # a plain class's annotations are no dataclass fields)
    name: str
    line: int
    column: int
    geometry: str
    role: str
    stored: ClassVar[bool]
    make_array: Callable      # Image.make_array: (handle, CUDA array)
    section: ClassVar[str] = "globals"
    per_module: ClassVar[bool] = True
    in_struct: ClassVar[bool] = False
    ptx_type: ClassVar[str] = ""

    def blob(self, handles: dict, overrides: Optional[dict] = None) -> bytes:
        raise TypeError(f"{self.name}: a module reference is no .param")

    @property
    def harness_blind(self) -> bool:
        return True

    def needs(self) -> Optional[str]:
        try:
            import cuda.bindings.driver  # noqa: F401  (heavy optional dependency: cuda-bindings, references only)
        except ImportError:
            return (f"{self.name}: a module {self.ptx_type} is bound through the CUDA driver API (cuda-bindings), "
                    "which is not installed (pip install cuda-bindings, or splice's texref extra)")
        return None

    def kernel_checks(self, spec, facts, key: str) -> list:
        return [(0, lambda: self._declared(spec, facts))]

    def _declared(self, spec, facts) -> None:
        """Declared as a module reference of this type, with the geometry its instructions use;
        a surface the entry writes is not an input."""
        decl = next((it for it in facts.module.items if getattr(it, "type", None) == self.ptx_type
                     and any(x.name == self.name for x in it.declarators)), None)
        bad = lambda msg, detail="": SpecError(f"{self.name}: {msg}", spec.source, self.line or None,  # noqa: E731
                                               self.column or None, key="globals", detail=detail)
        if decl is None:
            raise bad(f"{facts.path} declares no module {self.ptx_type} {self.name!r}")
        if self.geometry not in REF_GEOMETRIES:
            raise bad(f"geometry {self.geometry}: a module reference is bound here with "
                      f"{', '.join(REF_GEOMETRIES)} arrays only")
        geometries, writes = image_ref_uses(facts.kernel, self.name)
        seen = list(dict.fromkeys(g.lstrip(".") for g in geometries))
        if seen and self.geometry not in seen:
            raise bad(f"geometry {self.geometry}, but {spec.entry} uses it as {', '.join(seen)}: a "
                      f"{self.geometry} CUDA array read as {', '.join(seen)} gives undefined texels")
        if self.stored and self.role == "input" and writes:
            raise bad(f"role input, but {spec.entry} writes it ({writes} sust/sured): what it writes would not "
                      "be compared", "give role output (poisoned, then compared) or inout")

    def allocate(self, dev) -> Optional[int]:
        """Its CUDA array, which :meth:`bind` sets on the module's reference; no handle is
        passed (the texture or surface object made with it goes nowhere)."""
        _handle, arr = self.make_array(dev)
        dev.arrays[self.name] = arr
        return None

    @classmethod
    def global_lines(cls, y, kernel, named: set) -> list:
        return _reference_lines(cls, y, kernel, named)

    def bind(self, dev, module, module_name: str, where: str) -> None:
        """The reference of the module ``module_name`` was loaded as, bound to the field's array."""
        from cuda.bindings import driver as cu  # heavy optional dependency: cuda-bindings (checked by needs())

        fn = dev.modules[module_name].function
        hmod = _call(cu, "cuFuncGetModule", self, where, cu.CUfunction(fn))
        arr = cu.CUarray(int(dev.arrays[self.name].ptr))
        if self.stored:
            ref = _call(cu, "cuModuleGetSurfRef", self, where, hmod, self.name.encode())
            _call(cu, "cuSurfRefSetArray", self, where, ref, arr, 0)
        else:
            ref = _call(cu, "cuModuleGetTexRef", self, where, hmod, self.name.encode())
            _call(cu, "cuTexRefSetArray", self, where, ref, arr, cu.CU_TRSA_OVERRIDE_FORMAT)
            _call(cu, "cuTexRefSetFilterMode", self, where, ref, cu.CUfilter_mode.CU_TR_FILTER_MODE_POINT)
            for dim in range(3):
                _call(cu, "cuTexRefSetAddressMode", self, where, ref, dim,
                      cu.CUaddress_mode.CU_TR_ADDRESS_MODE_CLAMP)
            _call(cu, "cuTexRefSetFlags", self, where, ref, 0)
        dev.bound.setdefault(module_name, {})[self.name] = ref


def _call(cu, name: str, f, where: str, *args):
    """``cu.<name>(*args)``'s value, or the SpliceError that says the driver will not bind the
    reference (the call, its CUresult, or that the driver has no such entry point)."""
    why = "texture and surface references were removed from CUDA 12's runtime API and are deprecated in the " \
          "driver: give the kernel a texture/surface object parameter instead"
    try:
        out = getattr(cu, name)(*args)
    except (RuntimeError, AttributeError) as e:      # cuda-bindings: the driver does not export it
        raise SpliceError(f"{f.kind} {f.name}: this driver cannot bind module references ({name}: {e}); {why}",
                          where) from None
    err, *rest = out if isinstance(out, tuple) else (out,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise SpliceError(f"{f.kind} {f.name}: this driver refuses to bind module references ({name}: "
                          f"{getattr(err, 'name', err)}); {why}", where)
    return rest[0] if rest else None


@dataclass(frozen=True, kw_only=True)
class TexRef(_Reference, Texture):
    kind: ClassVar[str] = "texref"
    order: ClassVar[int] = 90
    ptx_type: ClassVar[str] = ".texref"


@dataclass(frozen=True, kw_only=True)
class SurfRef(_Reference, Surface):
    kind: ClassVar[str] = "surfref"
    order: ClassVar[int] = 91
    ptx_type: ClassVar[str] = ".surfref"


def _reference_lines(cls, y, kernel, named: set) -> list:
    """The ``globals:`` entries of the module references of ``cls``'s type the entry names:
    geometry from its instructions, extents and format to fill in."""
    rows = []
    decls = [x.name for it in kernel.module.items if getattr(it, "type", None) == cls.ptx_type
             for x in it.declarators if x.name in named]
    for name in decls:
        geometries, writes = image_ref_uses(kernel, name)
        y.line(f"- name: {name}")
        y.line(f"  kind: {cls.kind}                # a module {cls.ptx_type[1:]}, bound in each module (cuda-bindings)")
        lines, why = skeleton_lines(cls.kind, geometries)
        for ln in lines:
            y.line(f"  {ln}")
        y.line("  format: rgba16f            # check: r32f, rg16f, rgba8, rgba32f")
        if not cls.stored:
            y.line("  fill: {rule: uniform, seed: 1, range: [0.0, 1.0]}")
        rows.append(stuck({"name": name, "kind": cls.kind, "writes": writes}, why))
    return rows
