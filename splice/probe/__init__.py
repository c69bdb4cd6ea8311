"""splice.probe: run kernels on the GPU from a probe spec (probes/*.yaml).

spec    -- load + validate a spec into frozen dataclasses (errors name the YAML key)
inputs  -- deterministic buffers, weight images, textures, the packed parameter block
runner  -- cupy RawModule + cuLaunchKernel, frame read-back, timing (cupy imported lazily)
"""
from .inputs import pack_params, param_bytes, param_dtype
from .spec import ProbeSpec, SpecError, load_spec, parse_spec

__all__ = ["ProbeSpec", "SpecError", "load_spec", "parse_spec", "pack_params", "param_bytes",
           "param_dtype"]
