"""The Triton sm_90 matmul of corpus/triton/ at the PTX ISA Triton writes by default.

corpus/triton/gen.py pins ``ptx_version=87`` so that ptxas 13.0 takes its output; left to itself,
Triton 3.9 writes ``.version 9.4``, which ptxas 13.0 refuses ("Unsupported .version 9.4; current
version is '9.0'") and the ``ptxas`` extra's ptxas 13.5 compiles.  This file is what splice must
compile with the newer ptxas when the older one is first on PATH (tests/test_ptxas_choice.py).
No GPU is needed.

    pip install triton==3.9.0
    python tests/data/ptx/ptxas_choice/gen_triton_ptx94.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "corpus", "triton"))

import triton  # noqa: E402
from gen import CONSTEXPRS, DIV16, SIGNATURE, matmul_kernel  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


def main() -> int:
    names = list(SIGNATURE)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in DIV16}
    src = ASTSource(fn=matmul_kernel, signature=SIGNATURE, constexprs=CONSTEXPRS, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 2})
    out = os.path.join(HERE, "triton_matmul_sm90a_ptx94.ptx")
    with open(out, "w") as f:
        f.write(k.asm["ptx"])
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
