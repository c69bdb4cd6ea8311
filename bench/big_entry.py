"""One large entry: enc5's body repeated N times inside one ``.entry`` (the scaling input of
bench/notes_scaling.py).

Every copy keeps enc5's statements in order; labels are renamed per copy (``$L__BB0_7`` →
``$L__BB0_7_r2``, so each scope's labels stay unique), the ``ret`` of every copy but the last is
dropped (the copies run one after another), and the declarations (``.reg``, ``.shared``) are
written once.  N = 2, 4, 8 give 73k, 147k and 293k lines.

    python bench/big_entry.py N OUT.ptx
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENC5 = ROOT / "corpus" / "enc5.ptx"
_LABEL = re.compile(r"(\$L__\w+)")


def big_entry(n: int) -> str:
    lines = ENC5.read_text().split("\n")
    head = next(i for i, ln in enumerate(lines) if ln.startswith(".visible .entry"))
    open_ = next(i for i in range(head, len(lines)) if lines[i] == "{")
    close = max(i for i, ln in enumerate(lines) if ln == "}")
    decls = [i for i in range(open_ + 1, close) if re.match(r"\s*\.(reg|shared)\b", lines[i])]
    body = [ln for i, ln in enumerate(lines[open_ + 1:close], open_ + 1) if i not in decls]
    out = lines[:open_ + 1] + [lines[i] for i in decls]
    for r in range(n):
        last = r == n - 1
        for ln in body:
            if not last and re.fullmatch(r"\s*ret;", ln):
                continue
            out.append(_LABEL.sub(lambda m: f"{m.group(1)}_r{r}", ln) if r else ln)
    return "\n".join(out + lines[close:])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        raise SystemExit("usage: python bench/big_entry.py N OUT.ptx")
    Path(argv[1]).write_text(big_entry(int(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
