"""splice.probe: run kernels on the GPU from a probe spec (probes/*.yaml).

spec    -- load + validate a spec into frozen dataclasses (errors name the YAML key)
inputs  -- deterministic buffers, weight images, textures, the packed parameter block
runner  -- cupy RawModule + cuLaunchKernel, frame read-back, timing (cupy imported lazily)
modules -- `splice probe` targets (recipe or spec + module) and cached ptxas -O3 cubins
session -- run_probe: frames, debug stages, phase harness, timing, roofline (docs/probe.md)
stages / harness / compare / timing -- the pieces run_probe uses (no cupy at import)
"""
from .inputs import pack_params, param_bytes, param_dtype
from .spec import ProbeSpec, SpecError, load_spec, parse_spec

__all__ = ["ProbeSpec", "SpecError", "load_spec", "parse_spec", "pack_params", "param_bytes",
           "param_dtype"]
