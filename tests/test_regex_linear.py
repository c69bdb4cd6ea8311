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
                    if isinstance(pattern.pattern, bytes):   # a pattern over a file's bytes
                        text = text.encode("utf-8", "surrogateescape")  # type: ignore[assignment]
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


def _bounded(call, what: str) -> None:
    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        call()
    except _Slow:
        pytest.fail(f"{what} ran over 10 s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_scans_over_a_whole_text_are_linear_when_a_block_never_closes():
    """``match`` and ``fullmatch`` above start at one place; these patterns are searched
    through a whole module, where a lazy ``.*?`` to a closing that never comes is tried again
    from every opening: quadratic (``/*x`` 8000 times took a second, 100 000 times hours)."""
    from splice.ptx.comments import strip as _strip_comments
    from splice.verify.sides import _SECTION

    n = 200_000
    _bounded(lambda: _strip_comments("/*x" * n), "the comment strip")
    _bounded(lambda: list(_SECTION.finditer(".section .a {\n" * n)), "the checker's section scan")
    _bounded(lambda: list(parser._BRACES.finditer("/*x" * n)), "the parser's brace scan")
    _bounded(lambda: list(parser._NESTS.finditer("/*x" * n)), "the parser's nesting scan")
    assert _strip_comments("a /* b */ c /* d") == "a  c "
    assert [m.group() for m in _SECTION.finditer(".section .a {\n.b8 1\n}\n.section .b {\n.b8 2\n")] == \
        [".section .a {\n.b8 1\n}", ".section .b {\n.b8 2\n"]


def test_the_entry_line_search_is_linear_on_a_long_line():
    """``index``'s last resort for an entry's first line (a ``.func`` naming it) searched
    ``\\.func\\b.*?NAME`` from each ``.func`` of a line."""
    from splice.ptx.index import SourceLines, _entry_start

    long_line = ".func " * 200_000
    _bounded(lambda: pytest.raises(KeyError, _entry_start, SourceLines(long_line + "\n"), "k"),
             "the entry line search")
    assert _entry_start(SourceLines(".version 8.0\n.visible .func (.reg .b32 r) k (.reg .b32 a)\n{\n}\n"), "k") == 1
    assert pytest.raises(KeyError, _entry_start, SourceLines(".func kk\n.func %k\nk .func\n"), "k")


def test_the_readers_that_scan_a_whole_text_are_linear():
    """The same class in readers of a module, a native file or a cut: a pattern that fails at
    the end of a long run, searched for again from each character of the run (``^\\s*`` over
    blank lines, a lazy ``[^\\n]*?`` before ``[ \\t]*``, ``\\s*`` before a token in a blank
    tail, ``[^;]*`` to a `;` that never comes, ``{{`` to a ``}}`` that never comes, every split
    of a long name).  Each took seconds at 5000 and hours at a megabyte."""
    from splice.analysis.calls import _callees
    from splice.commands.roundtrip_check import ptxas_options
    from splice.cut.native import substitute
    from splice.errors import SpliceError
    from splice.cut.splice import _kept_locs
    from splice.probe.instrument.epilogue_harness import _single_exit
    from splice.analysis.global_uses import extern_shared

    def _shared_note(text):
        return extern_shared(parser.parse(".version 8.0\n.target sm_90\n.address_size 64\n" + text, "m.ptx",
                                          cache=False))

    n = 200_000
    _bounded(lambda: parser._number_list("1" + " " * n), "an initializer's blank tail")
    _bounded(lambda: pytest.raises(SpliceError, substitute, "{{" * n + "\n{{a}}", {"a": 3}, "n.ptx"),
             "a native's unexpanded templates")
    _bounded(lambda: substitute("// " + "{{ " * n + "\n// " + "}} " * n + "\n{{a}}", {"a": 3}, "n.ptx"),
             "a native's comments")
    loc = ".loc 1 2 3" + " " * n + "x\n"
    _bounded(lambda: _kept_locs(loc, 0, len(loc), {("1", "2", "3")}), "a cut's .loc lines")
    _bounded(lambda: _single_exit("\n" * n + "ret;\n"), "the epilogue harness's exits")
    _bounded(lambda: ptxas_options("\n" * n), "the module's target line")
    _bounded(lambda: _callees("call " * n, {}, set()), "the call table")
    _bounded(lambda: _shared_note(".extern .shared .b8 " + "a" * n + "[];"), "probe init's dynamic shared array")
    # and what they read is unchanged
    assert parser._number_list("{1, 2}, {3,  4 } ") == (("1", "2"), ("3", "4"))
    assert substitute("a {{x}} b {{ x+1 }} // {{ no close\n{{x}}", {"x": 3}, "n.ptx") == "a 3 b 4 // {{ no close\n3"
    text = ".loc 1 2 3 // c\n\t.loc 1 5 6 \t\nmov.u32 %r1, 1;\n"
    assert _kept_locs(text, 0, len(text), {("1", "2", "3"), ("1", "5", "6")}) == [".loc 1 2 3", ".loc 1 5 6"]
    assert _shared_note(".extern .shared .align 16 .b8 smem[];") == "smem"
    assert _shared_note(".extern .shared .b8 a[4];\n.extern .shared .align 8 .b8\n\tdyn [ ];") == "dyn"
    assert _single_exit("\n\n\t@%p1 ret;\nL: bra L;\n\tbra.uni OUT;\n") == (
        "\n\n\t@%p1 bra $__splice_harness_end;\nL: bra L;\n\tbra $__splice_harness_end;\n$__splice_harness_end:\n")


def test_a_module_of_many_sections_is_read_in_linear_time():
    """Each `.section` block counted its first line from the file's start: 50 000 small sections
    (2 MB) re-read 50 GB of text.  Lines inside stay the source's."""
    from splice.ptx import model as m

    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            + "".join(f".section .debug_a{k}\n{{\nL{k}:\n.b8 1\n}}\n" for k in range(50_000)))
    module = []
    _bounded(lambda: module.append(parser.parse(text, "sections.ptx", cache=False)), "50 000 sections")
    sections = [i for i in module[0].items if isinstance(i, m.Section)]
    assert len(sections) == 50_000
    assert [(lab.name, lab.line) for lab in sections[-1].items if isinstance(lab, m.Label)] == [("L49999", 5 * 49_999 + 6)]
