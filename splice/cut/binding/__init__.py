"""Binding a native phase to a cut: the ``inline``, ``call`` and ``call-shared`` ABIs."""
from .abi import ABIS, Binding, Namer, bind

__all__ = ["ABIS", "Binding", "Namer", "bind"]
