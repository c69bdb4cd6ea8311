"""YAML as splice reads it (splice.yamlsafe): a number YAML 1.1 reads otherwise than a person
(0512 is 330 to PyYAML, 1:30 is 90) is refused at its place; numbers with one reading load.
Found 2026-12-01 with hostile inputs: recipes, native headers and probe specs took the 1.1
value in silence."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, value", [("0100", 64), ("0512", 330), ("-017", -15), ("1:30", 90), ("1:04", 64),
                                         ("0_10", 8)])
def test_a_yaml_number_read_two_ways_is_refused_at_its_place(text, value):
    """regression: PyYAML reads YAML 1.1, where ``0512`` is octal (330) and ``1:30`` base 60 (90);
    YAML 1.2 and a person read 512 and the text 1:30.  Recipes, native headers and probe specs
    took the 1.1 value in silence."""
    from splice.errors import SpliceError
    from splice.yamlsafe import load_yaml_marked

    with pytest.raises(SpliceError) as exc:
        load_yaml_marked(f"a: 1\nb: {text}\n", "r.yaml")
    assert str(exc.value).startswith(f"r.yaml:2:4: YAML: {text!r} is {value} to this YAML reader")


@pytest.mark.parametrize("text, value", [("0", 0), ("00", 0), ("10", 10), ("0x1F", 31), ("'0512'", "0512"),
                                         ("1_000", 1000), ("+5", 5), ("0.5", 0.5)])
def test_yaml_numbers_with_one_reading_still_load(text, value):
    from splice.yamlsafe import load_yaml_marked

    assert load_yaml_marked(f"a: {text}\n", "r.yaml")["a"] == value
