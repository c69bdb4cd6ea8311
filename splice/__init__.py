"""splice: splice and patch NVIDIA PTX.

Layers (imports flow one way): cli -> report/probe -> cut -> analysis -> ptx.
"""
__version__ = "0.1.0"
