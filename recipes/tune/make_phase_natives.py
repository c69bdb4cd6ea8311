"""Write the phase natives a tune space starts from: each phase's own statements as
``splice extract`` writes them (same mma, same order, same operands), one template per distinct
body, and print the phases sharing each for the recipe.  No fence, no reorder: the search space
(recipes/tune/*.yaml) adds those.

    python recipes/tune/make_phase_natives.py corpus/enc5.ptx enc5
    python recipes/tune/make_phase_natives.py corpus/dec1.ptx dec1
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def native(body: str, scratch: str, shape: str, phases: list, layer: str) -> str:
    head = [f"// {layer} phases {phases} ({shape}): the phase's own mma as `splice extract` writes",
            "// them (same order, same operands), written by recipes/tune/make_phase_natives.py.",
            "// splice-native:", "//   params: {}", f"//   scratch: {{{scratch}}}"]
    return "\n".join(head) + "\n" + body + "\n"


def main(path: str, layer: str, out=None) -> dict:
    """Write the templates into ``out`` (default recipes/tune/native); {file name: phases}."""
    from splice.analysis import Kernel
    from splice.cut.extract import phase_templates

    templates = phase_templates(Kernel.load(path))
    out = Path(out) if out is not None else HERE / "native"
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for body, sc, phs in templates:
        shape = "x".join(map(str, phs[0].shape))
        name = f"{layer}_{shape}_{'zero' if phs[0].c_source == 'zero' else 'c'}.ptx"
        idx = [p.index for p in phs]
        (out / name).write_text(native(body, sc, shape, idx, layer))
        written[name] = idx
    return written


if __name__ == "__main__":
    a = sys.argv[1:]
    files = main(a[0] if a else "corpus/enc5.ptx", a[1] if len(a) > 1 else "enc5")
    for name, idx in files.items():
        print(f"{name}: phases {','.join(map(str, idx))}")
