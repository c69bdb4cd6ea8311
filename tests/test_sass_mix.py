"""SASS attribution: .loc marking is codegen-neutral, opcodes classify, mixes per cut/region."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice.cli import main
from splice.ptx import parse, parse_file
from splice.ptx.sass_lines import (MARK_FILE, compile_marked, mark_lines, marking_is_neutral,
                                   mix, sass_class)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "recipes" / "tiny.ptx"


def test_classes():
    assert sass_class("HMMA.16816.F16") == "HMMA"
    assert sass_class("F2FP.F16.E4M3.UNPACK_B") == "conversion"
    assert sass_class("LDL.64") == "LDL" and sass_class("STL") == "STL"
    assert sass_class("LDG.E.128.STRONG.SM") == "LDG" and sass_class("LDS.128") == "LDS"
    assert sass_class("SHFL.BFLY") == "SHFL" and sass_class("MUFU.RSQ") == "MUFU"
    assert sass_class("IMAD.MOV.U32") == "other"


def test_mark_lines_places_file_and_locs():
    mod = parse_file(str(TINY))
    text = mark_lines(mod)
    lines = text.split("\n")
    assert f'.file\t1 "{MARK_FILE}"' in lines
    src = mod.source.split("\n")
    # every .loc names the line of the instruction right after it, in the unmarked text
    for i, ln in enumerate(lines):
        if ln.strip().startswith(".loc"):
            n = int(ln.split()[2])
            assert lines[i + 1] == src[n - 1]
    parse(text)   # still PTX


def test_mix_counts_ranges():
    insns = [(3, "HMMA.16816.F16"), (3, "F2FP.F16.E4M3.UNPACK_B"), (5, "STL"), (9, "LDG.E")]
    a, b = mix(insns, [(1, 4), (5, 9)])
    assert a["HMMA"] == 1 and a["conversion"] == 1 and a["total"] == 2
    assert b["STL"] == 1 and b["LDG"] == 1 and b["total"] == 2


@pytest.mark.needs("ptxas", "nvdisasm")
def test_marking_is_neutral_and_attributes_every_hmma():
    mod = parse_file(str(TINY))
    assert marking_is_neutral(mod, "sm_90")
    _c, funcs = compile_marked(mod, "sm_90")
    body = funcs["tiny"]
    mma_lines = {it.line for it in mod.function("tiny").body.items
                 if getattr(it, "name", "").startswith("mma")}
    assert {ln for ln, op in body if op.startswith("HMMA")} <= mma_lines
    assert sum(op.startswith("HMMA") for _, op in body) == 2 * len(mma_lines)


@pytest.mark.needs("ptxas", "nvdisasm")
def test_cli_module_and_recipe(tmp_path, capsys):
    assert main(["sass-mix", str(TINY), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in d["regions"]]
    assert "phase 1" in names and d["registers"] > 0
    ph = d["regions"][names.index("phase 1")]
    assert ph["HMMA"] > 0
    from tests.test_cut_apply import MMA4

    (tmp_path / "n.ptx").write_text(MMA4)
    (tmp_path / "r.yaml").write_text(f"module: {TINY}\nentry: tiny\noutput: out.ptx\ncuts:\n"
                                     "  - phase: 1\n    native: n.ptx\n    abi: call\n")
    assert main(["sass-mix", str(tmp_path / "r.yaml"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    cut = d["cuts"][0]
    assert cut["before"]["HMMA"] == cut["after"]["HMMA"] > 0 and cut["func"]
    assert not (tmp_path / "out.ptx").exists()


@pytest.mark.slow
@pytest.mark.needs("ptxas", "nvdisasm")
@pytest.mark.parametrize("name", ["calls_params_globals.ptx", "control_misc.ptx", "mma_in_func.ptx"])
def test_one_entrys_mix_is_the_whole_modules(name):
    """sass-mix compiles the entry it shows alone (ptxas -e) when it calls no function, and
    with the whole module when it does (-e changed a caller's code: LDG.E became LDG.E.64): the
    mix and the registers are the whole module's either way."""
    from splice.commands.perf import module_target
    from splice.ptx.sass_lines import calls_nothing

    mod = parse_file(ROOT / "tests" / "data" / "ptx" / "modern" / name)
    arch, opt = module_target(mod.source, None)
    whole, funcs = compile_marked(mod, arch, opt)
    entries = [f.name for f in mod.functions() if f.kind == ".entry" and f.body is not None]
    assert any(calls_nothing(mod, e) for e in entries) or name == "mma_in_func.ptx"
    for e in entries:
        one, f1 = compile_marked(mod, arch, opt, entry=e)
        assert ("-e" in one.command) == calls_nothing(mod, e)
        assert f1[e] == funcs[e] and one.resources[e].registers == whole.resources[e].registers, e
