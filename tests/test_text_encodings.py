"""What splice calls a file's encoding: UTF-16 and UTF-32 are named (the user is told to convert
them), UTF-8 and binary never are (tests/hostile/input-files/encodings.yaml has the commands'
side of it)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("head", [b"", b"\x00" * 64, b"// plain ascii text here\n", "é ü 名前 text".encode(),
                                  b"\xff\xfdnot a bom"])
def test_utf8_and_binary_are_not_called_utf16(head):
    from splice.util import wide_encoding

    assert wide_encoding(head) == ""
