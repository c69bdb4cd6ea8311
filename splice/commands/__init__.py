"""The command layer: one module per ``splice`` subcommand family.

Imports flow one way: cli -> commands -> probe/cut -> analysis -> ptx; commands hand results to
``splice.report`` to render.  Nothing below this layer prints or reads the command line.
"""
