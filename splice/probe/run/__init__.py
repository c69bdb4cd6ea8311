"""The device run of a probe and its stages (check, build, inputs, outputs, stages, harness,
timing, roofline: ``session.run_probe``).  See splice/probe/__init__.py."""
