"""Every user error is a message, never a traceback (issue 9): a table of bad inputs across
every command.  Each row runs ``splice.cli.main`` in a fresh directory holding its inputs and
asserts: exit status 2, no ``Traceback``, the user's file named (with ``line:col`` and a caret
where the error has a line), every input's sha256 unchanged, and nothing left behind (no temp
file, no partial output).
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from splice.cli import main

from .conftest import TINY_SWAPPED, tree_digest

DATA = Path(__file__).parent / "data"
TINY = (DATA / "recipes" / "tiny.ptx").read_text()

NATIVE = "// tiny phase 1, n-tiles swapped\n" + TINY_SWAPPED
BODY = NATIVE.split("\n", 1)[1]      # the statements alone, for files that start with a header
RECIPE = "module: tiny.ptx\nentry: tiny\noutput: out.ptx\ncuts:\n  - phase: 1\n    native: n.ptx\n"
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


@dataclass
class Case:
    id: str
    argv: list
    files: dict = field(default_factory=dict)     # name -> str | bytes, written in the work dir
    named: str = ""                               # the file the message must name
    loc: tuple = ()                               # (line,) or (line, col) of the error
    setup: Optional[Callable] = None              # setup(workdir, monkeypatch) for links, env …
    skip: str = ""                                # a reason this row cannot run here
    says: tuple = ()                              # phrases the message holds, each exactly once
    not_says: tuple = ()                          # phrases it must not hold


def recipe(extra="", base=RECIPE, **files):
    """The valid tiny recipe plus ``extra`` lines, with tiny.ptx and the native phase."""
    out = {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": base + extra}
    out.update(files)
    return out


def native_with(line: str):
    """A native phase whose first statement is ``line`` (an ABI register, so only the template
    is wrong)."""
    return NATIVE.replace("// tiny phase 1, n-tiles swapped\n", "// t\n" + line + "\n")


def apply(id, extra="", named="r.yaml", loc=(), base=RECIPE, argv=("--no-ptxas",), says=(), **files):
    return Case(id, ["apply", "r.yaml", *argv], recipe(extra, base, **files), named, loc, says=says)


def module_case(cmd, id, text, loc=(), extra=()):
    return Case(f"{cmd}-{id}", [cmd, "m.ptx", *extra], {"m.ptx": text}, "m.ptx", loc)


# ---- PTX modules ------------------------------------------------------------------------------

BAD_SEMI = TINY.replace("mov.u32 \t%r10, 0;", "mov.u32 \t%r10, 0")
VT = TINY.replace("\tret;", "\tret;\x0b")
UNI_REG = TINY.replace("%rd7, %rd4, %rd5;", "%rd7, %rd4, %rd5\u00e9;")
UNCLOSED = TINY.rstrip().rstrip("}")
DEEP = HEAD + ".visible .entry k()\n{\n" + "{\n" * 300 + "\tret;\n" + "}\n" * 300 + "}\n"
DEEP_ONE_LINE = HEAD + ".visible .entry k()\n{\n" + "{" * 300 + " ret; " + "}" * 300 + "\n}\n"
NONAME = HEAD + ".visible .entry k(\n\t.param .u64\n)\n{\n\tret;\n}\n"
ONLY_FUNC = HEAD + ".visible .func f()\n{\n\tret;\n}\n"
HASH = TINY.replace("mov.u32 \t%r1, %laneid;", "mov.u32 \t%r1, #laneid;")

MODULE_CASES = (
    [module_case(c, "missing-semicolon", BAD_SEMI, (27, 2)) for c in
     ("stats", "index", "canonical", "spec", "notes")]
    + [module_case("extract", "missing-semicolon", BAD_SEMI, (27, 2), ("--phase", "1"))]
    + [module_case(c, "vertical-tab", VT, (42, 6)) for c in ("stats", "canonical", "spec")]
    + [module_case(c, "unicode-in-register", UNI_REG, (40,)) for c in ("stats", "index")]
    + [module_case(c, "unclosed-brace", UNCLOSED, ()) for c in ("stats", "canonical", "spec")]
    + [module_case(c, "braces-300-deep", DEEP, (69, 1)) for c in ("stats", "index", "canonical", "spec", "notes")]
    + [module_case(c, "braces-300-deep-one-line", DEEP_ONE_LINE, (6, 64)) for c in ("stats", "spec")]
    + [module_case(c, "param-without-name", NONAME, (5, 2)) for c in ("spec", "notes")]
    + [module_case("extract", "param-without-name", NONAME, (5, 2), ("--statements", "s1-s1"))]
    + [module_case(c, "no-entry-with-body", ONLY_FUNC) for c in ("spec", "notes")]
    + [module_case("extract", "no-entry-with-body", ONLY_FUNC, (), ("--phase", "1"))]
    + [module_case(c, "empty-file", "") for c in ("spec", "notes")]
    + [module_case(c, "hash-character", HASH, (20,)) for c in ("stats", "canonical")]
    + [module_case(c, "no-such-entry", TINY, (), ("--entry", "nope")) for c in ("index", "spec", "notes")]
    + [module_case("extract", "no-such-entry", TINY, (), ("--entry", "nope", "--phase", "1"))]
    + [module_case("extract", "no-such-phase", TINY, (), ("--phase", "9"))]
    + [module_case("extract", "phase-and-statements", TINY, (), ("--phase", "1", "--statements", "s1-s2"))]
    + [module_case("extract", "neither-phase-nor-statements", TINY, ())]
    + [module_case("extract", "statements-sX", TINY, (), ("--statements", "sX"))]
    + [module_case("extract", "statements-not-in-entry", TINY, (), ("--statements", "s900-s901"))]
)

ARG_CASES = [
    module_case("index", "range-sX", TINY, (), ("--range", "sX")),
    module_case("index", "range-s-", TINY, (), ("--range", "s-")),
    module_case("index", "range-reversed", TINY, (), ("--range", "s12-s11")),
    module_case("index", "range-words", TINY, (), ("--range", "all")),
    module_case("spec", "abi-empty", TINY, (), ("--abi", "")),
    module_case("spec", "abi-open-range", TINY, (), ("--abi", "s5-")),
    module_case("spec", "abi-reversed", TINY, (), ("--abi", "s3-s1")),
    module_case("spec", "abi-phase-x", TINY, (), ("--abi", "phase:x")),
    module_case("spec", "abi-phase-99", TINY, (), ("--abi", "phase:99")),
    module_case("spec", "abi-past-the-end", TINY, (), ("--abi", "s1-s999")),
    Case("roundtrip-arch-sm90x", ["roundtrip", "m.ptx", "--sass", "--arch", "sm90x"], {"m.ptx": TINY}, "m.ptx"),
    Case("roundtrip-arch-list", ["roundtrip", "m.ptx", "--sass", "--arch", "[sm_90]"], {"m.ptx": TINY}, "m.ptx"),
    Case("roundtrip-no-such-path", ["roundtrip", "m.ptx", "gone.ptx"], {"m.ptx": TINY}, "gone.ptx"),
    Case("roundtrip-empty-dir", ["roundtrip", "d"], {"d/readme.txt": "no ptx here"}, "d"),
]


# ---- files that are not there, loops, long names, outputs that cannot be written ----------------

def _loop(work: Path, mp):
    os.symlink("loop2", work / "loop1")
    os.symlink("loop1", work / "loop2")


LONG = "x" * 300 + ".ptx"

FS_CASES = (
    [Case(f"{c}-missing-input", [c, "gone.ptx"], {}, "gone.ptx") for c in ("stats", "index", "canonical", "spec",
                                                                       "notes", "apply")]
    + [Case("extract-missing-input", ["extract", "gone.ptx", "--phase", "1"], {}, "gone.ptx")]
    + [Case(f"{c}-input-is-a-directory", [c, "d"], {"d/x.ptx": TINY}, "d") for c in ("stats", "spec", "apply")]
    + [Case(f"{c}-symlink-loop", [c, "loop1"], {}, "loop1", setup=_loop) for c in ("stats", "canonical", "spec",
                                                                                  "notes", "apply")]
    + [Case(f"{c}-name-too-long", [c, LONG], {}, LONG) for c in ("stats", "spec", "apply")]
    + [Case("canonical-output-under-a-file", ["canonical", "m.ptx", "-o", "m.ptx/out.ptx"], {"m.ptx": TINY},
            "m.ptx/out.ptx"),
       Case("notes-output-under-a-file", ["notes", "m.ptx", "-o", "m.ptx/n.md"], {"m.ptx": TINY}, "m.ptx/n.md"),
       Case("extract-output-under-a-file", ["extract", "m.ptx", "--phase", "1", "-o", "m.ptx/x.ptx"],
            {"m.ptx": TINY}, "m.ptx/x.ptx"),
       Case("apply-output-under-a-file", ["apply", "r.yaml", "--no-ptxas", "-o", "tiny.ptx/x.ptx"], recipe(),
            "tiny.ptx/x.ptx"),
       Case("canonical-output-name-too-long", ["canonical", "m.ptx", "-o", LONG], {"m.ptx": TINY}, LONG),
       Case("notes-output-name-too-long", ["notes", "m.ptx", "-o", LONG], {"m.ptx": TINY}, LONG),
       Case("apply-output-name-too-long", ["apply", "r.yaml", "--no-ptxas", "-o", LONG], recipe(), LONG)]
)


def _readonly_dir(work: Path, mp):
    (work / "ro").mkdir()
    os.chmod(work / "ro", 0o555)


def _os_error(err: int):
    """Make creating any file under the work dir's ``out`` directory fail with ``err``, the
    way a read-only or full file system would."""
    def setup(work: Path, mp):
        (work / "out").mkdir()
        real = os.open

        def fake_open(path, flags, *a, **kw):
            if os.path.dirname(os.path.abspath(path)) == str(work / "out") and flags & os.O_CREAT:
                raise OSError(err, os.strerror(err), path)
            return real(path, flags, *a, **kw)
        mp.setattr(os, "open", fake_open)
    return setup


UNWRITABLE_CASES = [
    Case("canonical-unwritable-dir", ["canonical", "m.ptx", "-o", "ro/x.ptx"], {"m.ptx": TINY}, "ro/x.ptx",
         setup=_readonly_dir, skip="root writes anywhere" if os.geteuid() == 0 else ""),
    Case("notes-unwritable-dir", ["notes", "m.ptx", "-o", "ro/n.md"], {"m.ptx": TINY}, "ro/n.md",
         setup=_readonly_dir, skip="root writes anywhere" if os.geteuid() == 0 else ""),
    Case("canonical-read-only-fs", ["canonical", "m.ptx", "-o", "out/x.ptx"], {"m.ptx": TINY}, "out/x.ptx",
         setup=_os_error(errno.EROFS)),
    Case("notes-read-only-fs", ["notes", "m.ptx", "-o", "out/n.md"], {"m.ptx": TINY}, "out/n.md",
         setup=_os_error(errno.EROFS)),
    Case("apply-permission-denied", ["apply", "r.yaml", "--no-ptxas", "-o", "out/x.ptx"], recipe(), "out/x.ptx",
         setup=_os_error(errno.EACCES)),
    Case("extract-disk-full", ["extract", "m.ptx", "--phase", "1", "-o", "out/x.ptx"], {"m.ptx": TINY},
         "out/x.ptx", setup=_os_error(errno.ENOSPC)),
]


# ---- recipes: YAML ------------------------------------------------------------------------------

def _bomb(levels=9):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "description:\n  " + "\n  ".join(lines) + "\n"


YAML_CASES = [
    apply("yaml-unclosed-bracket", "    expect: {mma: [2\n", loc=(8,)),
    apply("yaml-tab-indent", "\tname: x\n", loc=(7,)),
    Case("apply-yaml-not-a-mapping", ["apply", "r.yaml"], {"r.yaml": "- a\n- b\n"}, "r.yaml", (1,)),
    Case("apply-yaml-empty-file", ["apply", "r.yaml"], {"r.yaml": ""}, "r.yaml"),
    Case("apply-yaml-comment-only", ["apply", "r.yaml"], {"r.yaml": "# nothing\n"}, "r.yaml"),
    apply("yaml-python-tag", "name: !!python/object/apply:os.system [echo hi]\n", loc=(7, 7)),
    apply("yaml-unknown-tag", "name: !foo x\n", loc=(7, 7)),
    apply("yaml-omap-tag", "description: !!omap [{a: 1}]\n", loc=(7, 14)),
    apply("yaml-complex-key", "? [a, b]\n: 1\n", loc=(7, 3)),
    apply("yaml-complex-key-in-params", "    params: {? [a]: 1}\n", loc=(7, 16)),
    apply("yaml-3000-deep-lists", "description: " + "[" * 3000 + "]" * 3000 + "\n", loc=(7,),
          says=("nested deeper than 64",)),
    apply("yaml-3000-deep-maps", "description: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", loc=(7,)),
    apply("yaml-alias-bomb", _bomb(), says=("alias",)),
    apply("yaml-too-many-aliases", "description: &d x\nname: [" + ", ".join(["*d"] * 150) + "]\n", loc=(8,)),
    apply("yaml-larger-than-1MiB", "description: '" + "x" * (1 << 20) + "'\n"),
    apply("yaml-duplicate-key", "entry: tiny\n", loc=(7, 1)),
    Case("apply-yaml-not-utf8", ["apply", "r.yaml"], recipe(**{"r.yaml": RECIPE.encode() + b"name: caf\xe9\n"}),
         "r.yaml", (7, 10)),
    Case("apply-yaml-control-character", ["apply", "r.yaml"], recipe(**{"r.yaml": RECIPE + "name: a\x07b\n"}),
         "r.yaml", (7, 8)),
]

# ---- recipes: schema --------------------------------------------------------------------------

SCHEMA_CASES = [
    apply("unknown-top-key", "outptu: x\n", loc=(7, 1)),
    apply("missing-module", base=RECIPE.replace("module: tiny.ptx\n", "")),
    apply("missing-cuts", base="module: tiny.ptx\n"),
    apply("cuts-empty", base="module: tiny.ptx\ncuts: []\n", loc=(2,)),
    apply("cuts-not-a-list", base="module: tiny.ptx\ncuts: 5\n", loc=(2,)),
    apply("cut-not-a-mapping", base="module: tiny.ptx\ncuts:\n  - 5\n", loc=(3,)),
    apply("unknown-cut-key", "    abii: call\n", loc=(7, 5)),
    apply("two-selectors", "    statements: s1-s4\n", loc=(7, 5)),
    apply("no-selector", base=RECIPE.replace("  - phase: 1\n    native", "  - native"), loc=(5,)),
    apply("phase-zero", base=RECIPE.replace("phase: 1", "phase: 0"), loc=(5,)),
    apply("phase-word", base=RECIPE.replace("phase: 1", "phase: one"), loc=(5,)),
    apply("phases-empty-list", base=RECIPE.replace("phase: 1", "phases: []"), loc=(5,)),
    apply("phases-empty-string", base=RECIPE.replace("phase: 1", "phases: ''"), loc=(5,)),
    apply("phases-zero", base=RECIPE.replace("phase: 1", "phases: [0, 1]"), loc=(5,)),
    apply("phases-bool", base=RECIPE.replace("phase: 1", "phases: [true]"), loc=(5,)),
    apply("statements-garbage", base=RECIPE.replace("phase: 1", "statements: x7-y9"), loc=(5,)),
    apply("statements-reversed", base=RECIPE.replace("phase: 1", "statements: s9-s1"), loc=(5,)),
    apply("lines-garbage", base=RECIPE.replace("phase: 1", "lines: abc"), loc=(5,)),
    apply("missing-native", base=RECIPE.replace("    native: n.ptx\n", ""), loc=(5,)),
    apply("abi-unknown", "    abi: jump\n", loc=(7,)),
    apply("threads-zero", "    threads: 0\n", loc=(7,)),
    apply("threads-2000", "    threads: 2000\n", loc=(7,)),
    apply("threads-word", "    threads: many\n", loc=(7,)),
    apply("threads-bool", "    threads: true\n", loc=(7,)),
    apply("sync-unknown", "    sync: maybe\n", loc=(7,)),
    apply("values-not-a-register", "    values: {W: rd3}\n", loc=(7,)),
    apply("params-not-a-mapping", "    params: 5\n", loc=(7,)),
    apply("params-list-value", "    params: {woff: [1]}\n", loc=(7,)),
    apply("params-bool-key", "    params: {on: 1}\n", loc=(7,)),
    apply("expect-not-a-mapping", "    expect: 24\n", loc=(7,)),
    apply("expect-unknown-fact", "    expect:\n      flops: 9\n", loc=(8,)),
    apply("expect-phases-word", "    expect: {phases: all}\n", loc=(7,)),
    apply("arch-sm90x", "arch: sm90x\n", loc=(7, 7)),
    apply("arch-list", "arch: [sm_90]\n", loc=(7, 7)),
    apply("arch-bool", "arch: true\n", loc=(7, 7)),
    apply("arch-mapping", "arch: {sm: 90}\n", loc=(7, 7)),
    apply("opt-level-9", "opt_level: 9\n", loc=(7,)),
    apply("opt-level-bool", "opt_level: true\n", loc=(7,)),
    apply("module-list", base=RECIPE.replace("module: tiny.ptx", "module: [tiny.ptx]"), loc=(1,)),
    apply("module-not-found", base=RECIPE.replace("module: tiny.ptx", "module: nope.ptx").replace("tiny\n", "nope\n"),
          loc=(1,)),
    apply("entry-list", base=RECIPE.replace("entry: tiny", "entry: [tiny]"), loc=(2,)),
    apply("call-shared-without-threads", "    abi: call-shared\n", loc=(7,), says=("threads",)),
]

# ---- recipes against the module, native phases, templates ----------------------------------------

PLAN_CASES = [
    apply("phase-does-not-exist", base=RECIPE.replace("phase: 1", "phase: 5"), loc=(5,)),
    apply("phases-past-the-end", base=RECIPE.replace("phase: 1", "phases: 1-3"), loc=(5,)),
    apply("statements-not-in-entry", base=RECIPE.replace("phase: 1", "statements: s900-s901"), loc=(5,)),
    apply("lines-without-statements", base=RECIPE.replace("phase: 1", "lines: 1-3"), loc=(5,)),
    apply("entry-not-in-module", base=RECIPE.replace("entry: tiny", "entry: nope"), loc=(2,)),
    apply("expect-mma-mismatch", "    expect: {mma: 24}\n", loc=(7,)),
    apply("expect-phases-mismatch", "    expect: {phases: 5}\n", loc=(7,), says=("1 mismatch",)),
    apply("expect-phases-range-mismatch", "    expect: {phases: 2}\n",
          base=RECIPE.replace("phase: 1", "statements: s1-s15"), loc=(7,)),
    apply("params-unknown-key", "    params: {nosuch: 5}\n", loc=(7, 14)),
    apply("overlapping-cuts", "  - phase: 1\n    native: n.ptx\n", loc=(7,)),
    apply("native-missing", base=RECIPE.replace("native: n.ptx", "native: gone.ptx"), named="gone.ptx"),
    apply("native-is-a-directory", base=RECIPE.replace("native: n.ptx", "native: d"), named="d",
          **{"d/x": "x"}),
    apply("native-nul-byte", named="n.ptx", loc=(2, 19), **{"n.ptx": native_with("add.s32 %d0, %a0, \x00;")}),
    apply("native-syntax-error", named="n.ptx", loc=(4, 2),
          **{"n.ptx": NATIVE.replace("\t{%d2, %d3},", "\t{%d2, %d3}")}),
    apply("native-unknown-register", named="n.ptx", loc=(2,), **{"n.ptx": native_with("mov.u32 %r1, 1;")}),
    apply("native-directive", named="n.ptx", loc=(2,), **{"n.ptx": native_with(".global .b32 g;")}),
    apply("native-unbalanced-brace", named="n.ptx", **{"n.ptx": NATIVE + "{\n"}),
    apply("native-braces-300-deep", named="n.ptx",
          **{"n.ptx": NATIVE + "{\n" * 300 + "}\n" * 300}),
    apply("template-unknown-name", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{nope}};")}),
    apply("template-division-by-zero", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 1 // 0 }};")}),
    apply("template-modulo-zero", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ first % (mma - 2) }};")}),
    apply("template-power-tower", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 9**9**9 }};")}),
    apply("template-huge-shift", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 1 << 100000000 }};")}),
    apply("template-big-product", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 4294967296 * 4294967296 * 4294967296 }};")}),
    apply("template-string", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 'a' * 3 }};")}),
    apply("template-float", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 1.5 }};")}),
    apply("template-inexact-division", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ 1 / 3 }};")}),
    apply("template-call", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ __import__('os') }};")}),
    apply("template-string-arithmetic", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ entry + 1 }};")}),
    apply("template-too-long", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ " + "1+" * 200 + "1 }};")}),
    apply("template-empty", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ }};")}),
    apply("template-unbalanced-parens", named="n.ptx", loc=(2, 19),
          **{"n.ptx": native_with("add.s32 %d0, %a0, {{ " + "(" * 120 + "1 }};")}),
    apply("header-bad-yaml", named="n.ptx", loc=(2,),
          **{"n.ptx": "// splice-native:\n//   params: {a: [1\n" + BODY}),
    apply("header-unknown-key", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {parms: {}}\n" + BODY}),
    apply("header-alias-bomb", named="n.ptx",
          **{"n.ptx": "// splice-native:\n" + "".join("//   " + ln + "\n" for ln in _bomb().splitlines()) + BODY}),
    apply("header-param-division-by-zero", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {params: {w: '1 // 0'}}\n" + BODY}),
    apply("header-param-cycle", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {params: {a: 'b + 1', b: 'a + 1'}}\n" + BODY}),
    apply("header-param-unknown-name", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {params: {a: 'nope + 1'}}\n" + BODY}),
    apply("header-scratch-bad-type", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {scratch: {t: .b7}}\n" + BODY}),
    apply("recipe-param-bad-expression", "    params: {w: '1 // 0'}\n", named="n.ptx", loc=(1,),
          **{"n.ptx": "// splice-native: {params: {w: 1}}\n" + BODY}),
]


# ---- ptxas ------------------------------------------------------------------------------------

def _env(**env):
    def setup(work, mp):
        for k, v in env.items():
            mp.setenv(k, v)
    return setup


def _no_ptxas(work, mp):
    from splice.ptx import sass

    mp.delenv("SPLICE_PTXAS", raising=False)
    mp.setattr(sass, "find_tool", lambda name, **kw: None)


PTXAS_CASES = [
    Case("apply-ptxas-is-bin-false", ["apply", "r.yaml"], recipe(), "r.yaml", setup=_env(SPLICE_PTXAS="/bin/false"),
         says=("no diagnostic",), not_says=("rejects the original",)),
    Case("apply-ptxas-is-bin-true", ["apply", "r.yaml"], recipe(), "r.yaml", setup=_env(SPLICE_PTXAS="/bin/true")),
    Case("apply-ptxas-setting-missing", ["apply", "r.yaml"], recipe(), "r.yaml",
         setup=_env(SPLICE_PTXAS="/nonexistent/ptxas")),
    Case("apply-ptxas-not-found", ["apply", "r.yaml"], recipe(), "r.yaml", setup=_no_ptxas,
         says=("ptxas not found", "--no-ptxas")),
]

# ---- probe, as far as it goes without a GPU -------------------------------------------------------

PROBE_CASES = [
    Case("probe-missing-recipe", ["probe", "gone.yaml"], {}, "gone.yaml"),
    Case("probe-recipe-bad-arch", ["probe", "r.yaml"], recipe("arch: sm90x\n"), "r.yaml", (7, 7)),
    Case("probe-recipe-phases-empty", ["probe", "r.yaml"], recipe(base=RECIPE.replace("phase: 1", "phases: []")),
         "r.yaml", (5,)),
    Case("probe-recipe-without-spec", ["probe", "r.yaml"], recipe(), "r.yaml"),
    Case("probe-spec-without-module", ["probe", "p.yaml"], {"p.yaml": "name: x\n"}, "p.yaml"),
    Case("probe-spec-bad-yaml", ["probe", "p.yaml", "m.ptx"], {"p.yaml": "a: [1\n", "m.ptx": TINY}, "p.yaml", (2,)),
    Case("probe-spec-not-a-mapping", ["probe", "p.yaml", "m.ptx"], {"p.yaml": "- 1\n", "m.ptx": TINY}, "p.yaml",
         (1, 1)),
    Case("probe-spec-empty", ["probe", "p.yaml", "m.ptx"], {"p.yaml": "", "m.ptx": TINY}, "p.yaml"),
    Case("probe-spec-3000-deep", ["probe", "p.yaml", "m.ptx"],
         {"p.yaml": "name: " + "[" * 3000 + "]" * 3000 + "\n", "m.ptx": TINY}, "p.yaml", (1,)),
    Case("probe-spec-alias-bomb", ["probe", "p.yaml", "m.ptx"], {"p.yaml": _bomb(), "m.ptx": TINY}, "p.yaml",
         says=("alias",)),
    Case("probe-spec-python-tag", ["probe", "p.yaml", "m.ptx"],
         {"p.yaml": "name: !!python/object:os.system a\n", "m.ptx": TINY}, "p.yaml", (1, 7)),
    Case("probe-spec-unknown-key", ["probe", "p.yaml", "m.ptx"], {"p.yaml": "name: x\nbogus: 1\n", "m.ptx": TINY},
         "p.yaml", (2, 1)),
    Case("probe-spec-missing-entry", ["probe", "p.yaml", "m.ptx"], {"p.yaml": "name: x\n", "m.ptx": TINY},
         "p.yaml", (1, 1)),
    Case("probe-runs-negative", ["probe", "p.yaml", "m.ptx", "--runs", "-1"], {"p.yaml": "name: x\n", "m.ptx": TINY},
         "p.yaml", says=("--runs -1",)),
]

CASES = (MODULE_CASES + ARG_CASES + FS_CASES + UNWRITABLE_CASES + YAML_CASES + SCHEMA_CASES + PLAN_CASES
         + PTXAS_CASES + PROBE_CASES)


def test_the_table_is_large_and_unique():
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    assert len([c for c in CASES if not c.skip]) >= 100


# ---- the check --------------------------------------------------------------------------------

def _write(work: Path, files: dict) -> None:
    for name, content in files.items():
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)




@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, monkeypatch, capsys):
    if case.skip:
        pytest.skip(case.skip)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("SPLICE_CORPUS", str(work))
    monkeypatch.setenv("SPLICE_PROBE_CACHE", str(tmp_path / "probe-cache"))
    _write(work, case.files)
    if case.setup:
        case.setup(work, monkeypatch)
    before = tree_digest(work)
    rc = main(case.argv)
    out, err = capsys.readouterr()
    monkeypatch.undo()
    assert rc == 2, (rc, out[-2000:], err[-2000:])
    assert "Traceback" not in out + err
    assert case.named in err, err[:2000]
    if case.loc:
        at = f"{case.named}:" + ":".join(str(x) for x in case.loc)
        assert at in err, err[:2000]
        if len(case.loc) == 2:
            assert f"{at}:" in err and "\n  " in err and "^" in err, err[:2000]
        else:
            assert "^" in err, err[:2000]
    for phrase in case.says:
        assert err.count(phrase) == 1, (phrase, err[:2000])
    for phrase in case.not_says:
        assert phrase not in err, (phrase, err[:2000])
    assert tree_digest(work) == before        # inputs byte-identical, nothing created, nothing left
