"""The command layer: one module per ``splice`` subcommand family.

Imports flow one way: cli -> commands -> probe/cut -> analysis -> ptx; commands hand results to
``splice.report`` to render.  Nothing below this layer prints or reads the command line.
"""

import os
from ..errors import SpliceError
from ..ptx.sass import normalize_arch


def checked_arch(value, path, default=None):
    """``--arch`` normalised (``90`` -> ``sm_90``), or the error naming the file the command was
    given: ``normalize_arch``'s ValueError must not reach the user as a traceback."""
    if value is None:   # before the imports: a command without --arch need not load ptxas' module
        return default

    try:
        return normalize_arch(value)
    except ValueError:
        raise SpliceError(f"--arch {value!r}: not a GPU architecture (expected e.g. sm_90 or sm_90a)",
                          str(path)) from None


def max_jobs() -> int:
    """The most worker processes ``--jobs`` may ask for: four per CPU this process may run on.
    More cannot help CPU-bound parsing, and each one is a fork: ``--jobs 100000`` would be a
    fork bomb, not a request."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 4 * max(cpus, 1)
