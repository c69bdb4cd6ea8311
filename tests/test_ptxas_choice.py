"""Which ptxas compiles a module: ``SPLICE_PTXAS`` when set, else the newest installed one that
accepts the module's ``.version`` and ``.target``; none -> exit 2 naming the module's header and
every ptxas found with its release.  ``splice --version`` says what splice runs.

The ptxas here are small fakes (a release, the newest PTX ISA and the targets each accepts), put
on PATH with the nvidia wheels out of sight, so every case runs without the CUDA toolkit; the
last test compiles Triton's ``.version 9.4`` output with the real tools.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from splice.cli import main
from splice.ptx import sass

from .conftest import DATA

FAKE = '''#!{python}
"""ptxas of release {release}: takes PTX ISA up to {isa}, refuses the targets {refuses}."""
import sys
args = sys.argv[1:]
if args == ["--version"]:
    print("ptxas: NVIDIA (R) Ptx optimizing assembler\\nCuda compilation tools, release {release}, V{release}.1")
    sys.exit(0)
with open({log!r}, "a") as f:
    f.write(" ".join(args) + "\\n")
src, out = args[args.index("-o") - 1], args[args.index("-o") + 1]
text = open(src).read()
version = text.split(".version", 1)[1].split()[0]
if tuple(map(int, version.split("."))) > tuple(map(int, "{isa}".split("."))):
    sys.stderr.write(f"ptxas {{src}}, line 1; fatal   : Unsupported .version {{version}}; current version is '{isa}'\\n")
    sys.exit(255)
target = text.split(".target", 1)[1].split()[0].rstrip(",")
if target in {refuses!r}:
    sys.stderr.write(f"ptxas fatal   : Value '{{target}}' is not defined for option 'gpu-name'\\n")
    sys.exit(255)
open(out, "wb").write(b"\\x7fELF cubin of release {release}")
'''

HEADER = ".version {v}\n.target {t}\n.address_size 64\n\n.visible .entry k()\n{{\n\tret;\n}}\n"


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """make(name, release, isa, refuses=()) puts a fake ptxas in its own folder at the end of PATH
    (the first made is first on PATH); the nvidia wheels and SPLICE_PTXAS are out of the way."""
    monkeypatch.delenv("SPLICE_PTXAS", raising=False)
    monkeypatch.setattr(sass, "_wheel_bin_dirs", lambda: [])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    log = tmp_path / "ptxas.log"

    def make(name: str, release: str, isa: str, refuses=()) -> Path:
        d = tmp_path / name
        d.mkdir()
        exe = d / "ptxas"
        exe.write_text(FAKE.format(python=sys.executable, release=release, isa=isa, refuses=list(refuses),
                                   log=str(log)))
        exe.chmod(0o755)
        monkeypatch.setenv("PATH", os.environ["PATH"].replace("/usr/bin:/bin", f"{d}:/usr/bin:/bin"))
        return exe

    make.log = lambda: log.read_text().splitlines() if log.exists() else []
    return make


def module(tmp_path: Path, version: str, target: str = "sm_90") -> Path:
    p = tmp_path / f"m{version.replace('.', '')}_{target}.ptx"
    p.write_text(HEADER.format(v=version, t=target))
    return p


def test_the_newest_that_accepts_the_version_wins_over_the_first_on_path(tools, tmp_path):
    """ptxas 13.0 first on PATH, the extra's 13.5 after it: Triton's .version 9.4 goes to 13.5
    (13.0 refused it, and roundtrip --sass, apply and probe failed on it)."""
    old = tools("old", "13.0", "9.0")
    new = tools("new", "13.5", "9.4")
    assert [t.path for t in sass.tool_candidates("ptxas")] == [str(new), str(old)]
    c = sass.compile_ptx(module(tmp_path, "9.4"), "sm_90")
    assert c.command[0] == str(new) and c.cubin == b"\x7fELF cubin of release 13.5"


def test_an_older_ptxas_compiles_what_the_newest_refuses(tools, tmp_path):
    """Newest first, but not blindly: a target the newest release dropped goes to one that
    still takes it."""
    old = tools("old", "12.9", "8.8")
    tools("new", "13.5", "9.4", refuses=["sm_52"])
    c = sass.compile_ptx(module(tmp_path, "8.0", "sm_52"), "sm_52")
    assert c.command[0] == str(old)


def test_splice_ptxas_is_taken_as_given(tools, tmp_path, monkeypatch):
    """An explicit choice is not second-guessed: the older ptxas named in SPLICE_PTXAS compiles,
    and its refusal is a refusal of the module (no other ptxas is tried)."""
    old = tools("old", "13.0", "9.0")
    tools("new", "13.5", "9.4")
    monkeypatch.setenv("SPLICE_PTXAS", str(old))
    assert sass.compile_ptx(module(tmp_path, "9.0"), "sm_90").command[0] == str(old)
    with pytest.raises(sass.PtxasError, match="Unsupported .version 9.4"):
        sass.compile_ptx(module(tmp_path, "9.4"), "sm_90")


@pytest.mark.parametrize("argv", [["roundtrip", "M", "--sass"], ["spec", "M", "--pressure", "--png", "none"],
                                  ["sass-mix", "M"]], ids=lambda a: a[0])
def test_no_ptxas_accepting_the_module_is_exit_2_naming_each(argv, tools, tmp_path, capsys):
    old = tools("old", "13.0", "9.0")
    older = tools("older", "12.4", "8.4")
    m = module(tmp_path, "9.4")
    assert main([str(m) if a == "M" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{m}: no ptxas found accepts this module (.version 9.4, .target sm_90" in err
    assert f"{old} (release 13.0, V13.0.1; PATH): Unsupported .version 9.4; current version is '9.0'" in err
    assert f"{older} (release 12.4, V12.4.1; PATH): Unsupported .version 9.4; current version is '8.4'" in err


def test_apply_names_the_module_no_ptxas_accepts(tools, tmp_path, monkeypatch, capsys):
    tools("old", "13.0", "9.0")
    from .test_outputs import NATIVE

    tiny = (DATA / "recipes" / "tiny.ptx").read_text().replace(".version 8.7", ".version 9.4")
    (tmp_path / "tiny.ptx").write_text(tiny)
    (tmp_path / "n.ptx").write_text(NATIVE)
    (tmp_path / "r.yaml").write_text("module: tiny.ptx\nentry: tiny\ncuts:\n  - phase: 1\n    native: n.ptx\n")
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "r.yaml", "-o", "o.ptx"]) == 2
    err = capsys.readouterr().err
    assert "no ptxas found accepts this module (.version 9.4" in err and "release 13.0" in err
    assert "rejects" not in err and not (tmp_path / "o.ptx").exists()


def test_each_ptxas_is_asked_once_per_header(tools, tmp_path):
    """The choice compiles the module's header alone, once per ptxas, header and arch: a second
    module of the same header costs no second probe."""
    tools("old", "13.0", "9.0")
    tools("new", "13.5", "9.4")
    sass.compile_ptx(module(tmp_path, "9.4"), "sm_90")
    probes = [ln for ln in tools.log() if "header.ptx" in ln]
    p = tmp_path / "other.ptx"
    p.write_text(HEADER.format(v="9.4", t="sm_90").replace("entry k", "entry k2"))
    sass.compile_ptx(p, "sm_90")
    assert [ln for ln in tools.log() if "header.ptx" in ln] == probes and len(probes) == 1


def test_the_cache_keeps_each_ptxas_apart(tools, tmp_path, monkeypatch):
    """The compile cache's key holds the ptxas binary: the same module compiled by another ptxas
    is no hit."""
    from splice.ptx.cache import CompileCache

    old = tools("old", "13.0", "9.0")
    new = tools("new", "13.5", "9.4")
    cache = CompileCache(tmp_path / "cache")
    m = module(tmp_path, "9.0")
    assert sass.compile_ptx(m, "sm_90", cache=cache).command[0] == str(new)
    monkeypatch.setenv("SPLICE_PTXAS", str(old))
    c = sass.compile_ptx(m, "sm_90", cache=cache)
    assert not c.cached and c.cubin == b"\x7fELF cubin of release 13.0"
    assert sass.compile_ptx(m, "sm_90", cache=cache).cached


def test_version_says_splice_and_each_tool(tools, capsys):
    old = tools("old", "13.0", "9.0")
    new = tools("new", "13.5", "9.4")
    with pytest.raises(SystemExit) as ei:
        main(["--version"])
    out = capsys.readouterr().out
    assert ei.value.code == 0
    lines = out.splitlines()
    assert lines[0].startswith("splice 0.1.0 (") and lines[0].endswith(f"{os.sep}splice)")
    assert lines[1] == f"ptxas     {new} (release 13.5, V13.5.1; PATH)"
    assert lines[2] == f"          also {old} (release 13.0, V13.0.1; PATH)"
    assert "accepts its .version and .target" in lines[3]
    assert any(ln.startswith("nvdisasm ") for ln in lines) and any(ln.startswith("cuobjdump") for ln in lines)


def test_version_names_a_splice_ptxas_that_is_no_tool(tools, monkeypatch, capsys):
    monkeypatch.setenv("SPLICE_PTXAS", "/nonexistent/ptxas")
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "ptxas     SPLICE_PTXAS='/nonexistent/ptxas' does not name an executable" in capsys.readouterr().out


TRITON_PTX94 = DATA / "ptx" / "ptxas_choice" / "triton_matmul_sm90a_ptx94.ptx"


@pytest.mark.needs("ptxas", "cuobjdump|nvdisasm")
def test_triton_ptx94_round_trips_through_a_ptxas_that_takes_it(capsys):
    """The real tools: Triton 3.9's sm_90 matmul (``.version 9.4``) compiles, and its canonical
    print gives the same SASS, with whichever installed ptxas accepts 9.4 -- or, where none
    does, exit 2 naming each ptxas found (never ptxas 13.0's refusal as a row's note)."""
    rc = main(["roundtrip", str(TRITON_PTX94), "--sass", "--json", "--no-cache"])
    out, err = capsys.readouterr()
    found = sass.tool_candidates("ptxas")
    if rc == 2:
        assert "no ptxas found accepts this module (.version 9.4, .target sm_90a" in err
        assert all(str(t) in err for t in found) and not any(t.release >= (13, 5) for t in found if t.release)
        return
    assert rc == 0, err
    row = json.loads(out)
    assert row["sass_identical"] is True and row["note"] is None
