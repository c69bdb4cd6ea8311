"""kind: texref / surfref -- module-scope texture and surface references under globals:: their
checks against the module, probe init's lines for them, and their binding through the driver API
(cuda-bindings, faked here), refused with the driver's reason when the driver will not bind."""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import yaml

from splice.errors import SpliceError
from splice.probe.language.context import SpecError
from splice.probe.language.document import load_spec, parse_spec
from splice.probe.language.entry import check

ROOT = Path(__file__).resolve().parents[1]
PTX = ROOT / "tests/data/ptx/probe/texref.ptx"
SPEC = ROOT / "tests/data/probe/texref.yaml"


def _spec(**changes):
    d = yaml.safe_load(SPEC.read_text())
    for name, keys in changes.items():
        next(g for g in d["globals"] if g["name"] == name).update(keys)
    return parse_spec(d, str(SPEC))


def test_the_references_are_globals_of_their_own_kinds():
    spec = load_spec(SPEC)
    assert [(g.name, g.kind, g.role) for g in spec.globals] == [("tex_in", "texref", "input"),
                                                                ("surf_out", "surfref", "output")]
    assert spec.frames == ("surf_out",) and spec.field("tex_in").per_module
    check(spec, PTX.read_text(), str(PTX))


@pytest.mark.parametrize("changes, says", [
    ({"tex_in": {"name": "tex_other"}}, "declares no module .texref 'tex_other'"),
    ({"tex_in": {"kind": "surfref"}}, "declares no module .surfref 'tex_in'"),
    ({"tex_in": {"geometry": "3d", "depth": 2}}, "geometry 3d, but texref_copy uses it as 2d"),
    ({"tex_in": {"geometry": "a2d", "layers": 2}}, "bound here with 1d, 2d, 3d arrays only"),
])
def test_a_reference_that_does_not_fit_the_module_is_refused(changes, says):
    with pytest.raises(SpecError, match="globals") as e:
        check(_spec(**changes), PTX.read_text(), str(PTX))
    assert says in str(e.value), str(e.value)


def test_a_surface_reference_the_entry_writes_is_no_input():
    text = PTX.read_text().replace(".global .surfref surf_out;", ".global .surfref surf_out;\n.global .surfref surf_b;")
    text = text.replace("$L__done:", "\tsust.b.2d.b32.trap \t[surf_b, {%r6, %r2}], {%r5};\n$L__done:")
    d = yaml.safe_load(SPEC.read_text())
    d["globals"][1]["role"] = "input"
    d["globals"].append({"name": "surf_b", "kind": "surfref", "geometry": "2d", "width": 32, "height": 16,
                         "format": "r32f"})
    with pytest.raises(SpecError, match=r"surf_out: role input, but texref_copy writes it \(1 sust/sured\)"):
        check(parse_spec(d, str(SPEC)), text, "two.ptx")


def test_an_unknown_globals_kind_is_named():
    with pytest.raises(SpecError, match=r"globals\[0\]\.kind: 'sampler' is not one of global, texref, surfref"):
        _spec(tex_in={"kind": "sampler"})


def test_probe_init_lists_the_references_the_entry_names():
    from splice.probe.language.init import skeleton

    text, _rows = skeleton(PTX.read_text(), str(PTX))
    d = yaml.safe_load(text)
    assert [(g["name"], g["kind"], g["geometry"]) for g in d["globals"]] == [("tex_in", "texref", "2d"),
                                                                           ("surf_out", "surfref", "2d")]
    # the note names them as listed (no longer as what the probe cannot set)
    note = " ".join(ln.lstrip("# ") for ln in text.splitlines() if ln.startswith("#"))
    assert "module-scope texture/surface references (tex_in, surf_out): listed under globals:" in note
    assert "not set by the spec" not in note


# ---------------------------------------------------------------------------- binding, faked

class _Driver(ModuleType):
    def __init__(self, refuse=None, missing=None):
        super().__init__("cuda.bindings.driver")
        self.calls: list = []
        self.CUresult = SimpleNamespace(CUDA_SUCCESS="ok")
        self.CUfunction = self.CUarray = lambda x: ("h", x)
        self.CU_TRSA_OVERRIDE_FORMAT = 1
        self.CUfilter_mode = SimpleNamespace(CU_TR_FILTER_MODE_POINT="point")
        self.CUaddress_mode = SimpleNamespace(CU_TR_ADDRESS_MODE_CLAMP="clamp")
        for name in ("cuFuncGetModule", "cuModuleGetTexRef", "cuModuleGetSurfRef", "cuTexRefSetArray",
                     "cuSurfRefSetArray", "cuTexRefSetFilterMode", "cuTexRefSetAddressMode", "cuTexRefSetFlags"):
            if name != missing:
                setattr(self, name, self._recorder(name, refuse))

    def _recorder(self, name, refuse):
        def call(*args):
            self.calls.append((name, args))
            if name == refuse:
                return (SimpleNamespace(name="CUDA_ERROR_NOT_SUPPORTED"), None)
            return ("ok", f"{name}-handle") if name.startswith(("cuFunc", "cuModule")) else ("ok",)
        return call


def _with(monkeypatch, drv):
    pkg, top = ModuleType("cuda.bindings"), ModuleType("cuda")
    pkg.driver, top.bindings = drv, pkg
    for name, mod in (("cuda", top), ("cuda.bindings", pkg), ("cuda.bindings.driver", drv)):
        monkeypatch.setitem(sys.modules, name, mod)


def _dev():
    return SimpleNamespace(modules={"original": SimpleNamespace(function=0xF00)}, bound={},
                           arrays={"tex_in": SimpleNamespace(ptr=0xA1), "surf_out": SimpleNamespace(ptr=0xA2)})


def test_each_reference_is_bound_in_the_module_of_the_loaded_function(monkeypatch):
    drv = _Driver()
    _with(monkeypatch, drv)
    spec, dev = load_spec(SPEC), _dev()
    for g in spec.globals:
        g.bind(dev, None, "original", "o.cubin")
    names = [c[0] for c in drv.calls]
    assert names == ["cuFuncGetModule", "cuModuleGetTexRef", "cuTexRefSetArray", "cuTexRefSetFilterMode",
                     "cuTexRefSetAddressMode", "cuTexRefSetAddressMode", "cuTexRefSetAddressMode", "cuTexRefSetFlags",
                     "cuFuncGetModule", "cuModuleGetSurfRef", "cuSurfRefSetArray"]
    assert drv.calls[0][1] == (("h", 0xF00),) and drv.calls[1][1] == ("cuFuncGetModule-handle", b"tex_in")
    assert drv.calls[2][1] == ("cuModuleGetTexRef-handle", ("h", 0xA1), 1)
    assert drv.calls[10][1] == ("cuModuleGetSurfRef-handle", ("h", 0xA2), 0)
    assert set(dev.bound["original"]) == {"tex_in", "surf_out"}


@pytest.mark.parametrize("refuse, missing, says", [
    ("cuModuleGetTexRef", None, "refuses to bind module references (cuModuleGetTexRef: CUDA_ERROR_NOT_SUPPORTED)"),
    (None, "cuModuleGetTexRef", "cannot bind module references (cuModuleGetTexRef:"),
])
def test_a_driver_that_will_not_bind_is_named_with_its_reason(monkeypatch, refuse, missing, says):
    _with(monkeypatch, _Driver(refuse=refuse, missing=missing))
    with pytest.raises(SpliceError) as e:
        load_spec(SPEC).field("tex_in").bind(_dev(), None, "original", "o.cubin")
    msg = str(e.value)
    assert msg.startswith("o.cubin: texref tex_in: this driver") and says in msg, msg
    assert "give the kernel a texture/surface object parameter instead" in msg


def test_without_cuda_bindings_the_run_is_refused_before_the_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    assert "pip install cuda-bindings" in load_spec(SPEC).field("surf_out").needs()
