"""splice verify's statuses and apply's verify step: an internal error is exit 4 with its own
message (never 0, never 1 = proved different, never 3 = not proven); apply keeps exit 0 for its
own work and says on its verify line what failed; --no-verify; Ctrl-C while apply verifies
keeps the output it wrote.  Regressions of issue 26: a vector store whose elements differ (a
TypeError inside the explanation, exit 1) and a native that leaves before its store."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from splice.cli import main
from splice.verify.compare import DIFFERENT, INTERNAL

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """.version 8.0
.target sm_90
.address_size 64

.visible .entry vec(.param .u64 p0)
{
\t.reg .b32 %r<16>;
\t.reg .b64 %rd<4>;

\tld.param.u64 %rd1, [p0];
\tcvta.to.global.u64 %rd2, %rd1;
\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];
\tadd.s32 %r5, %r1, 1;
\tst.global.v4.u32 [%rd2+16], {%r5, %r2, %r3, %r4};
\tst.global.u32 [%rd2+32], %r1;
\tret;
}
"""


def _recipe(tmp_path, edit=None) -> Path:
    """A recipe applying the extracted s4-s6 of KERNEL, its body lines passed through ``edit``."""
    from splice.cut.extract import extract
    from splice.cut.kernel import load_kernel

    (tmp_path / "k.ptx").write_text(KERNEL)
    native = extract(load_kernel(str(tmp_path / "k.ptx")), statements=(4, 6))["text"]
    if edit is not None:
        native = edit(native)
    (tmp_path / "n.ptx").write_text(native)
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"module": "k.ptx", "cuts": [{"statements": "s4-s6", "native": "n.ptx"}]}))
    return recipe


def _verify_json(capsys, *argv):
    status = main(["verify", *map(str, argv), "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("elements", ["{%t0, %in3, %in2, %in4}", "{%t0, %in2, %in2, %in4}"])
def test_vector_store_with_other_elements_is_proved_different(tmp_path, capsys, elements):
    """It ended in ``TypeError: list indices must be integers or slices, not tuple`` (exit 1)."""
    recipe = _recipe(tmp_path, lambda t: t.replace("{%t0, %in2, %in3, %in4}", elements))
    status, data = _verify_json(capsys, recipe)
    assert status == 1 and data["cuts"][0]["verdict"] == DIFFERENT
    assert data["cuts"][0]["reason"].startswith("memory: a store writes a definitely different value: [in1+16]")


def test_leaving_before_the_store_is_proved_different(tmp_path, capsys):
    recipe = _recipe(tmp_path, lambda t: t.replace("st.global.v4.u32", "ret;\nst.global.v4.u32"))
    status, data = _verify_json(capsys, recipe)
    assert status == 1 and data["cuts"][0]["verdict"] == DIFFERENT
    assert "store to [in1+32] is missing here" in data["cuts"][0]["reason"]
    assert "leave the kernel" in data["cuts"][0]["reason"]


def test_a_guarded_ret_before_the_store_is_not_proven(tmp_path, capsys):
    """Leaving under a condition the original does not have: nothing definite (the condition may
    never hold), so not proven with the reason."""
    recipe = _recipe(tmp_path, lambda t: t.replace("st.global.v4.u32", "setp.eq.u32 %t1, %in0, 7;\n@%t1 ret;\n"
                                                   "st.global.v4.u32").replace("scratch: {t0: .b32}",
                                                                                "scratch: {t0: .b32, t1: .pred}"))
    status, data = _verify_json(capsys, recipe)
    assert status == 3 and "leave the kernel (ret/exit) under different conditions" in data["cuts"][0]["reason"]


@pytest.fixture
def broken_checker(monkeypatch):
    """A bug inside the checker (here: any instruction raises)."""
    from splice.verify import dataflow

    def boom(self, st, s):
        raise TypeError("boom")

    monkeypatch.setattr(dataflow.Evaluator, "instruction", boom)


def test_an_internal_error_is_exit_4_with_its_message(tmp_path, capsys, broken_checker):
    status, data = _verify_json(capsys, _recipe(tmp_path))
    cut = data["cuts"][0]
    assert status == 4 and data["status"] == 4 and cut["verdict"] == INTERNAL
    assert re.match(r"internal error in splice verify \(TypeError: boom at test_verify_status\.py:\d+\)", cut["reason"])
    assert main(["verify", str(_recipe(tmp_path))]) == 4
    assert "internal error" in capsys.readouterr().out


def test_apply_keeps_exit_0_and_says_what_failed(tmp_path, capsys, broken_checker):
    recipe, out = _recipe(tmp_path), tmp_path / "o.ptx"
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.exists() and re.search(r"verify: cut 1 .*internal error", text)
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--verify-strict"]) == 4
    capsys.readouterr()
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verify"][0]["verdict"] == INTERNAL and data["verify_status"] == "done"


def test_apply_no_verify(tmp_path, capsys, monkeypatch):
    from splice.verify import compare

    def never(*a, **k):
        raise AssertionError("verify ran under --no-verify")

    monkeypatch.setattr(compare, "verify_plan", never)
    recipe, out = _recipe(tmp_path), tmp_path / "o.ptx"
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--no-verify"]) == 0
    assert out.exists() and "verify: skipped (--no-verify)" in capsys.readouterr().out
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--no-verify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verify"] is None and data["verify_status"] == "skipped"


@pytest.mark.parametrize("extra", [["--verify-strict"], ["--timeout", "3"]])
def test_no_verify_refuses_options_about_verify(tmp_path, capsys, extra):
    recipe, out = _recipe(tmp_path), tmp_path / "o.ptx"
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out), "--no-verify", *extra]) == 2
    assert "--no-verify skips" in capsys.readouterr().err and not out.exists()


def test_ctrl_c_while_apply_verifies_keeps_the_output(tmp_path, capsys, monkeypatch):
    from splice.verify import compare

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "verify_plan", interrupted)
    recipe, out = _recipe(tmp_path), tmp_path / "o.ptx"
    assert main(["apply", str(recipe), "--no-ptxas", "-o", str(out)]) == 130
    assert out.exists() and out.read_text().count("splice: cut 1") == 1
    assert "verify: interrupted (the output is written" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_timeout_is_a_finite_number_of_seconds(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["verify", "r.yaml", "--timeout", value])
    assert exc.value.code == 2 and "--timeout" in capsys.readouterr().err


def test_timeout_default_in_the_help_is_the_budget_default(capsys):
    from splice.verify.budget import DEFAULT_SECONDS

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert f"(default {DEFAULT_SECONDS:g}," in " ".join(capsys.readouterr().out.split())
