"""The bundled kernels the family tests read (tests/data/ptx: modern/ from nvcc, Triton, CUTLASS,
LLVM and numba, with manifest.yaml, regen.sh and the generators that made them; handwritten/;
refused/; probe/) and the steps those tests share: an identity cut's recipe and plan, a cut of a
statement range, a probe skeleton, a SASS comparison.  None of them needs Triton, CUTLASS, LLVM,
numba or a GPU; the tests that need ptxas or a disassembler say so with ``needs``."""
from __future__ import annotations

from pathlib import Path

from splice.analysis import Kernel

ROOT = Path(__file__).resolve().parents[2]
PTX = ROOT / "tests" / "data" / "ptx"
MODERN = PTX / "modern"
HANDWRITTEN = PTX / "handwritten"
REFUSED = PTX / "refused"
PROBE = PTX / "probe"


def identity_recipe(tmp_path, module, entry, select, native_text, arch="sm_90"):
    """A recipe splicing ``native_text`` over ``select`` (``phase: 1``, ``statements: s5-s9``)."""
    (tmp_path / "n.ptx").write_text(native_text)
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {module}\nentry: '{entry}'\narch: {arch}\noutput: out.ptx\n"
                 f"cuts:\n  - {select}\n    native: n.ptx\n")
    return r


def plan_of(recipe):
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    return plan(load_recipe(str(recipe), [recipe.parent]))


def cut_of(tmp_path, path, entry, first, last):
    """The plan of an identity cut of statements ``first``-``last`` (its native is extract's own,
    written to tmp_path/n.ptx; the recipe is tmp_path/r.yaml)."""
    from splice.cut.extract import extract
    from splice.cut.recipe import load_recipe
    from splice.cut.splice import plan

    k = Kernel.load(path, entry)
    (tmp_path / "n.ptx").write_text(extract(k, statements=(first, last))["text"])
    r = tmp_path / "r.yaml"
    r.write_text(f"module: {path}\nentry: {entry}\noutput: out.ptx\n"
                 f"cuts:\n  - statements: s{first}-s{last}\n    native: n.ptx\n")
    return plan(load_recipe(str(r), [tmp_path]))


def skeleton(path, entry=None):
    """``probe init``'s skeleton of ``path``: (YAML text, one row per parameter)."""
    from splice.probe.init import skeleton as make

    return make(Path(path).read_text(), str(path), entry)


def skeleton_text(path, entry=None) -> str:
    return skeleton(path, entry)[0]


def sass_same(module_text_or_path, original, arch) -> bool:
    """ptxas makes the same SASS of both (normalised: addresses and names aside)."""
    from splice.ptx.sass import compile_ptx, normalized_sass

    return normalized_sass(compile_ptx(module_text_or_path, arch).cubin) == \
        normalized_sass(compile_ptx(original, arch).cubin)


def struct_fields(text: str) -> dict:
    """{offset: the field's YAML block} of the skeleton's first struct."""
    out = {}
    for block in text.split("    - name: field_")[1:]:
        off, rest = block.split("\n", 1)
        out[int(off)] = rest.split("\n- ")[0]
    return out


#: a kernel of one vector register (``.reg .v4 .f32 %v``) read and written element by element
VEC = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .v4 .f32 %v;
  .reg .f32 %f<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.f32 %v, [%rd2];
  add.f32 %f1, %v.x, %v.w;
  mov.f32 %v.y, %f1;
  st.global.v4.f32 [%rd2], %v;
  ret;
}
"""


def write_module(tmp_path, text, name="vec.ptx"):
    p = tmp_path / name
    p.write_text(text)
    return p
