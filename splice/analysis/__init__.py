"""splice.analysis: kernel analysis — operand roles, def-use, liveness, phases, provenance,
epilogues and the cut ABI.  The contract others code against is docs/analysis-api.md.

    from splice.analysis import Kernel
    k = Kernel.load("corpus/enc5.ptx")
    k.phases[7].shape, k.phase_abi(8).live_in
"""
from .abi import AbiReg, CutABI
from .kernel import Kernel
from .phases import Phase

__all__ = ["Kernel", "Phase", "CutABI", "AbiReg"]
