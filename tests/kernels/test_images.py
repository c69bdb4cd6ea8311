"""Textures and surfaces: module-scope texture references said not bound, layered and cube images
named by geometry, and the -G builds' handles followed into the called fetch functions.  Kernels
handwritten_texref_inits, tex_layered_cube, tex_layered_cube_G, tex_surf_objects, read 2026-11-30
and 2026-12-01."""
from __future__ import annotations

from splice.analysis import Kernel

from .bundled import MODERN

TEXREF = MODERN / "handwritten_texref_inits.ptx"


def test_probe_init_says_module_texture_references_are_not_bound():
    from splice.probe.init import module_image_refs, skeleton

    text, rows = skeleton(TEXREF.read_text(), str(TEXREF))
    assert "# NOTE: this entry reads module-scope texture/surface references (tex_a, surf_a)" in text
    assert [r["name"] for r in rows if r["kind"] == "buffer"] == ["out_param"]
    objects = MODERN / "tex_surf_objects.ptx"           # texture objects are parameters: no note
    k = Kernel.load(objects)
    assert module_image_refs(k) == []
    assert "module-scope texture" not in skeleton(objects.read_text(), str(objects))[0]


def test_layered_and_cube_images_are_named_not_bound_as_2d():
    """``tex.a2d`` / ``tex.cube`` / ``tex.acube`` / ``suld.b.a2d`` / ``sust.b.a1d`` on object
    parameters: the skeleton offered plain 2-D textures and surfaces (width, height), which the
    probe would bind, giving the kernel an image of the wrong kind.  It now says so per image."""
    from splice.probe.init import skeleton

    path = MODERN / "tex_layered_cube.ptx"
    text, rows = skeleton(path.read_text(), str(path))
    assert [r["kind"] for r in rows[:5]] == ["texture"] * 3 + ["surface"] * 2
    # (since the image geometries: a1d/a2d are bound, cube maps refused, two geometries named)
    for word in ("used with 2 geometries, a2d (layered 2-D), 2d (2-D)", "used as cube (a cube map), which the probe",
                 "used as acube (a layered cube map)", "geometry: a2d", "geometry: a1d"):
        assert word in text
    plain = MODERN / "tex_surf_objects.ptx"
    assert "TODO: used" not in skeleton(plain.read_text(), str(plain))[0]   # its first entry: 2-D only


def test_g_build_follows_handles_into_the_fetch_functions():
    """nvcc -G does not inline ``tex2DLayered``…: the entry passes each texture/surface handle to a
    called ``.func`` (``st.param.b64 [param0+0], %rd7; call.uni (retval0), _ZN…tex2DLayered…``)
    and the fetch is there.  The skeleton said "read as a value, never dereferenced here" for all
    handles; values passed to a called function are now followed into it."""
    from splice.probe.init import skeleton

    path = MODERN / "tex_layered_cube_G.ptx"      # a reduced tex_layered_cube.cu: a2d, cube, a1d surface
    text, rows = skeleton(path.read_text(), str(path))
    assert [r["kind"] for r in rows] == ["texture", "texture", "surface", "buffer", "scalar"]
    assert text.count("TODO: used as") == 1 and "never dereferenced" not in text     # the cube map
    for geometry in ("geometry: a2d", "cube (a cube map)", "geometry: a1d"):
        assert geometry in text
