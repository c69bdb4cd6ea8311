#!/usr/bin/env python3
"""Write probes/cutlass_tma_gemm_sm90a.yaml: ``splice probe init``'s skeleton of the bundled
CUTLASS GEMM with every TODO filled from the kernel's Params as CUTLASS builds them
(cutlass_tma_gemm_params.json, written by build.py).

    python corpus/cutlass/fill_probe_spec.py            # rewrite the spec
    python corpus/cutlass/fill_probe_spec.py --check    # exit 1 if a fresh fill differs

What fills what -- each value is CUTLASS's own, found by the offset probe init names:
* a tensor_map field: the cuTensorMapEncodeTiled arguments recorded at that offset (dims,
  strides, box, element strides, interleave, swizzle, L2 promotion, OOB fill, the map's element
  type), over a tensor of the GEMM operand the recorded address is (A or B), dims reversed;
* a pointer field (buffer, table): the named Params member at that offset -- ptr_C and ptr_D
  become the M x N buffers C (input) and D (output); a pointer CUTLASS leaves null (alpha_ptr,
  beta_ptr and their arrays: the kernel then reads alpha and beta themselves) becomes a u64
  scalar 0, which is what the kernel is given;
* a scalar field: the bytes of the named member holding that offset (problem shape, the TMA
  transaction bytes, alpha, beta, the strides of C and D);
* launch: the grid CUTLASS computes, its block and its shared storage.
"""
from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PTX = HERE / "cutlass_tma_gemm_sm90a.ptx"
META = HERE / "cutlass_tma_gemm_params.json"
SPEC = ROOT / "probes" / "cutlass_tma_gemm_sm90a.yaml"
sys.path.insert(0, str(HERE.parent))
from regenerate import write_or_check  # noqa: E402 -- corpus/regenerate.py, beside this folder

#: CUtensorMap enums as cuda.h numbers them -> the probe spec's names
DATA_TYPE = {0: "u8", 1: "u16", 2: "u32", 3: "s32", 4: "u64", 5: "s64", 6: "f16", 7: "f32", 8: "f64", 9: "bf16"}
INTERLEAVE = {0: "none", 1: "16B", 2: "32B"}
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
L2 = {0: "none", 1: "64B", 2: "128B", 3: "256B"}
OOB = {0: "none", 1: "nan"}
#: the fake device address each operand was given by the metadata program
OPERAND = {0xA0000000: "A", 0xB0000000: "B", 0xC0000000: "C", 0xD0000000: "D"}
SCALAR = {"u32": "<I", "s32": "<i", "u64": "<Q", "s64": "<q", "f32": "<f", "u16": "<H", "f16": "<e"}
HEADER = ("# The bundled CUTLASS 3.x TMA + wgmma GEMM (corpus/cutlass/) as CUTLASS launches it: D = A B\n"
          "# (alpha 1, beta 0), M = N = K = 512.  Written by corpus/cutlass/fill_probe_spec.py: the skeleton of\n"
          "# `splice probe init` with each TODO filled from the Params CUTLASS builds (cutlass_tma_gemm_params.json).\n")


def skeleton() -> dict:
    out = subprocess.run([sys.executable, "-m", "splice.cli", "probe", "init", str(PTX.relative_to(ROOT))],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return yaml.safe_load(out)


def member_at(meta: dict, offset: int) -> tuple:
    """(member name, ``offset`` within it, its bytes from ``offset`` on) for the named Params
    member holding ``offset``."""
    for f in meta["fields"]:
        raw = bytes.fromhex(f["bytes"])
        if f["offset"] <= offset < f["offset"] + len(raw):
            return f["name"], offset - f["offset"], raw[offset - f["offset"]:]
    raise SystemExit(f"no Params member of {META.name} holds offset {offset}")


def fill_map(field: dict, meta: dict) -> None:
    rec = next(t for t in meta["tma"] if t["offset"] == field["offset"])
    operand = OPERAND[int(rec["address"], 16)]
    field.update(dims=rec["dims"], strides=rec["strides"], box=rec["box"], element_strides=rec["element_strides"],
                 interleave=INTERLEAVE[rec["interleave"]], swizzle=SWIZZLE[rec["swizzle"]],
                 l2_promotion=L2[rec["l2_promotion"]], oob_fill=OOB[rec["oob_fill"]], dtype=DATA_TYPE[rec["dtype"]])
    field["name"] = f"tma_{operand}"
    field["tensor"].update(name=operand, dtype=meta["elements"][operand], shape=list(reversed(rec["dims"])))


def fill_pointer(field: dict, meta: dict) -> dict:
    name, _at, raw = member_at(meta, field["offset"])
    address = struct.unpack("<Q", raw[:8])[0]
    if address == 0:
        return {"name": name, "offset": field["offset"], "kind": "scalar", "dtype": "u64", "value": 0}
    operand = OPERAND[address]
    m, n, _k = meta["problem"]
    out = {"name": operand, "offset": field["offset"], "kind": "buffer", "dtype": meta["elements"][operand],
           "shape": [m, n], "role": "output" if operand == "D" else "input"}
    if operand != "D":
        out["fill"] = field.get("fill") or {"rule": "uniform", "range": [-1.0, 1.0], "seed": field["offset"] + 1}
    return out


def fill_scalar(field: dict, meta: dict) -> None:
    name, at, raw = member_at(meta, field["offset"])
    fmt = SCALAR[field["dtype"]]
    size = struct.calcsize(fmt)
    field["value"] = struct.unpack(fmt, raw[:size])[0]
    wide = len(bytes.fromhex(next(f["bytes"] for f in meta["fields"] if f["name"] == name))) > size
    field["name"] = f"{name}_{at // size}" if wide else name      # problem_shape_0..3 (M, N, K, L)


def fill(spec: dict, meta: dict) -> dict:
    spec["ptx"] = str(PTX.relative_to(ROOT))
    spec["launch"] = {"grid": meta["grid"], "block": meta["block"], "shared": {"dynamic": meta["shared_bytes"]}}
    [param] = spec["params"]
    fields = []
    for f in param["fields"]:
        if f["kind"] == "tensor_map":
            fill_map(f, meta)
        elif f["kind"] in ("buffer", "table"):
            f = fill_pointer(f, meta)
        else:
            fill_scalar(f, meta)
        fields.append(f)
    param["name"] = "params"
    param["fields"] = fields
    return spec


def render(spec: dict) -> str:
    return HEADER + yaml.safe_dump(spec, sort_keys=False, default_flow_style=None, width=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    return write_or_check({SPEC: render(fill(skeleton(), json.loads(META.read_text())))}, args.check)


if __name__ == "__main__":
    sys.exit(main())
