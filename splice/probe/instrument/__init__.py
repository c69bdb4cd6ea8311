"""Generated code and tools around a probe run: debug stages, the phase harnesses, the
per-phase profile, Nsight Compute.  See splice/probe/__init__.py."""
