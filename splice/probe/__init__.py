"""splice.probe: run kernels on the GPU from a probe spec (probes/*.yaml) and compare them.

By concern, each a package (imports go down this list, never up):

language   -- the spec language: records, the key context and fills (``context``, ``fills``,
              ``fill_data``, ``records``, ``skeleton``), then, above the kinds, reading a spec
              (``document.load_spec``), checking it against its entry (``entry.check``) and
              writing one (``init.skeleton``: ``splice probe init``)
kinds      -- one class per parameter kind (scalar, buffer, struct, texture, surface, table,
              global, ...): its spec keys, checks, skeleton lines, host bytes, device memory and
              comparison (``kinds.base``: the class and its registry)
run        -- the device run: argument packs, the ``Device``, modules and cubins, comparison,
              the harness' memory states, ``session.run_probe`` and its stages
instrument -- code generation and tools around a run: debug stages, the phase harnesses, the
              per-phase profile, Nsight Compute
timing     -- the timing method (``timing``: ``time_device``/``time_launchers`` and the roofline;
              ``timing_engine``: rounds, the A/A control and the verdict over an injectable
              device; ``timing_stats``; ``timing_cupy``: the cupy device, its restorer asking
              each field's kind what a sample puts back; ``device_state``: NVML)
"""
