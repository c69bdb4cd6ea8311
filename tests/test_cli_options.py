"""The command line: what each option's default and spelling mean.  Found 2026-11-30 with hostile
inputs: `spec --abi` refused the range spellings `splice notes` writes (s11–s12, with an en dash)."""
from __future__ import annotations

import pytest

from .userfiles import run, work  # noqa: F401 - work: the fixture


@pytest.mark.parametrize("spelling", ["s11–s12", "s11..s12", "11-12"])
def test_abi_takes_the_range_spellings_of_the_notes(spelling, work, capsys):
    """``splice notes`` writes ranges with an en dash (``s11–s12``) and recipes and ``--range``
    take it; ``spec --abi`` refused the same text copied from the notes."""
    import json

    assert run(["spec", "tiny.ptx", "--abi", "s11-s12", "--json"]) == 0
    want = json.loads(capsys.readouterr().out)["entries"][0]["abi"]
    assert run(["spec", "tiny.ptx", "--abi", spelling, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["abi"] == want


def test_probe_run_options_defaults_match_the_parser():
    """``probe init`` tells a run option given from one left out by its default: the table must
    follow the parser, or init would refuse every call."""
    import argparse

    from splice.cli import build_parser
    from splice.commands.probe import RUN_OPTIONS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    defaults = {a.dest: a.default for a in sub.choices["probe"]._actions}
    assert {dest: unset for _flag, dest, unset in RUN_OPTIONS} == {dest: defaults[dest] for _f, dest, _u in RUN_OPTIONS}
