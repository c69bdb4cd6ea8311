"""A native's labels spliced into a module: renamed apart from the module's and from each other,
whatever legal PTX spelling they have ($L1 and L1, %x).  Found 2026-11-30 with hostile inputs."""
from __future__ import annotations

from .userfiles import NATIVE, run, work  # noqa: F401 - work: the fixture


def test_native_labels_with_and_without_dollar_stay_apart(work, capsys):
    """regression: labels were renamed ``$Lsplice<cut>_`` + the name with its ``$`` stripped,
    so ``L1`` and ``$L1`` of one native were one label twice: ptxas "Duplicate definition of
    label", and with --no-ptxas a broken module written with exit 0."""
    (work / "n.ptx").write_text(NATIVE + "bra L1;\nL1:\nbra $L1;\n$L1:\n")
    assert run(["apply", "r.yaml", "--no-ptxas", "--json"]) == 0
    text = (work / "out.ptx").read_text()
    defined = [ln.strip()[:-1] for ln in text.splitlines()
               if ln.strip().startswith("$Lsplice") and ln.strip().endswith(":")]
    assert len(defined) == 2 and len(set(defined)) == 2, defined
    for name in defined:
        assert f"bra {name};" in text


def test_a_native_label_named_with_percent_is_a_valid_name(work, capsys):
    """regression: ``%x:`` (a legal PTX label) became ``$Lsplice1_%x``, a syntax error reported
    in ``<site>``, a file the user does not have."""
    from splice.cut.binding.abi import spliced_label

    (work / "n.ptx").write_text(NATIVE + "%x:\n")      # a branch to it would name a register
    rc = run(["apply", "r.yaml", "--no-ptxas"])
    out, err = capsys.readouterr()
    assert "<site>" not in err and "Traceback" not in err
    assert rc == 0 and f"{spliced_label(1, '%x')}:" in (work / "out.ptx").read_text()
    names = [spliced_label(1, x) for x in ("L1", "$L1", "%L1", "$pL1", "_L1", "$$L1")]
    assert len(set(names)) == len(names)
    import re

    assert all(re.fullmatch(r"\$[A-Za-z0-9_$]+", n) for n in names), names
