"""``splice tune``: search provably equal variants of a kernel.

The user writes a search space over a recipe's cuts (``space.py``); each point is a variant:
natives generated from the recipe's own as model nodes (``schedule.py``, ``natives.py``),
written as an ordinary recipe (``variants.py``).  Each variant goes through apply, verify and
ptxas on a CPU pool, then through the GPU harness and the probe's timing method against the
original and its A/A control (``steps.py`` and ``timer.py``: the only modules that call the
cut pipeline, verify and the probe), with
successive halving (``halving.py``) deciding who gets more rounds.  Every result lands in a
SQLite store (``store.py``) at once, so a killed run resumes.  Executors (``embedded.py``,
``rayexec.py``) run the same tasks on one host or a Ray cluster.
"""
