"""Every regex splice compiles at module level runs in time linear in its input, whatever the input.

A nested quantifier whose alternatives can match the same text (``(?:[ \\t]+|//…)*``) splits a
run of n blanks in 2^n ways once what follows fails: a module with a stray byte after a line of
26 blanks took 4 s to refuse, 40 blanks would have taken hours, and a module header followed by a
page of comments hung the parser.  Each pattern is tried with ``match`` and ``fullmatch`` on long
runs of every character class PTX text is made of, after the prefixes splice's readers see,
under a time limit a linear pattern misses by four orders of magnitude."""
from __future__ import annotations

import importlib
import pkgutil
import re
import signal
import time

import pytest

import splice
from splice.ptx import PtxSyntaxError, parser, printer

_ATOMS = [" ", "\t", "\n", " \n", "/", "//", "//x\n", "*", "/*", "*/", "%r", "a", "0", "1.", ".", ",", "{", "}",
          "-", "$", "e", "x", ":", "a.", "%r1,", "[", "(", '"', "\\", "0f", "+", ";", "<", "a ", ". ", ".a", "a,"]
_PREFIXES = ["", ".version 8.0\n.target sm_90\n", "ld.global.f32 ", ".reg .b32 ", "= {", "@%p "]
_TAILS = ["\x01", "", "\n\x01"]
N = 2000
LIMIT_S = 2.0


def _patterns() -> dict:
    out = {}
    for info in pkgutil.walk_packages(splice.__path__, "splice."):
        mod = importlib.import_module(info.name)
        for name, value in vars(mod).items():
            if isinstance(value, re.Pattern) and value.__class__.__module__ == "re":
                out[f"{info.name}.{name}"] = value
    return out


PATTERNS = _patterns()


class _Slow(Exception):
    pass


def _raise(*_args):
    raise _Slow


def test_the_patterns_are_found():
    assert len(PATTERNS) > 60 and "splice.ptx.top._TRAILING" in PATTERNS


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_a_pattern_is_linear_on_hostile_text(name):
    pattern = PATTERNS[name]
    old = signal.signal(signal.SIGALRM, _raise)
    try:
        for pre in _PREFIXES:
            for atom in _ATOMS:
                for tail in _TAILS:
                    text = pre + atom * N + tail
                    for fn in (pattern.match, pattern.fullmatch):
                        signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
                        try:
                            fn(text)
                        except _Slow:
                            pytest.fail(f"{name}.{fn.__name__} ran over {LIMIT_S} s on "
                                        f"{pre!r} + {atom!r} * {N} + {tail!r}")
                        finally:
                            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("text", [
    ".version 8.0\n.target sm_90\n.address_size 64\n" + " " * 60 + "\x01\n",
    ".version 8.0\n.target sm_90\n" + "\n\t//--------\n" * 60 + "\x01",
    ".version 8.0\n.target sm_90\n" + "\n" * 5000 + ".visible .entry k()\n{\n\tret;\n}\n",
])
def test_a_module_with_long_blank_runs_is_read_at_once(text):
    """The reproducers: each parses (or is refused at its stray byte) in well under a second."""
    t = time.process_time()
    try:
        parser.parse(text, "t.ptx", cache=False)
    except PtxSyntaxError as exc:
        assert exc.line is not None
    assert time.process_time() - t < LIMIT_S


def test_a_gap_is_trivia_only_when_every_comment_closes_where_it_should():
    assert printer._TRIVIA.fullmatch("  // a\n/* b */\n\t")
    assert printer._TRIVIA.fullmatch("/* a */ b */") is None and printer._TRIVIA.fullmatch("/* a") is None
