"""What every corpus build script does the same way: find nvcc, run it to PTX in a temporary
folder, and either write the committed files or compare a fresh build with them (``--check``).

The scripts import it from the folder above theirs (``corpus/``); it is not part of the splice
package: only rebuilding the corpus needs nvcc.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable


def find_nvcc() -> str:
    """nvcc's path; exit 2 saying so when it is not on PATH."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc not on PATH (the corpus is rebuilt from its CUDA sources with nvcc)", file=sys.stderr)
        raise SystemExit(2)
    return nvcc


def nvcc_ptx(nvcc: str, flags: list, source: Path, cwd: Path | None = None) -> str:
    """``nvcc FLAGS -ptx -o TMP SOURCE``: the PTX text, nothing edited."""
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / (source.stem + ".ptx")
        subprocess.run([nvcc, *flags, "-ptx", "-o", str(out), str(source)], check=True, cwd=cwd)
        return out.read_text()


#: nvcc's prefixes of internal-linkage and anonymous-namespace names: the hash is of the folder the build ran in (the same
#: source and flags built in /tmp/a and /tmp/bb give two hashes; twice in one folder, one)
INTERNAL = re.compile(r"(_INTERNAL_|_GLOBAL__N__)[0-9a-f]{8}_")


def without_build_folder(text: str) -> str:
    """``text`` with nvcc's folder hash of internal names blanked: what a rebuild elsewhere
    must reproduce."""
    return INTERNAL.sub(lambda m: m.group(1) + "xxxxxxxx_", text)


def write_or_check(outputs: dict, check: bool) -> int:
    """Write each {path: text}, or with ``check`` say for each whether the committed file is
    identical (nvcc's folder hash aside, :func:`without_build_folder`); 1 when one differs."""
    bad = 0
    for path, text in outputs.items():
        if check:
            old = path.read_text() if path.exists() else None
            same = old == text or (old is not None and without_build_folder(old) == without_build_folder(text))
            how = "identical" if old == text else "identical apart from nvcc's build-folder hash"
            print(f"{path.name}: {how if same else 'DIFFERS'}")
            bad |= not same
        else:
            path.write_text(text)
            print(f"wrote {path}")
    return int(bad)


def main(doc: str, build: Callable[[str], dict], argv=None) -> int:
    """The command line of a script that rebuilds committed files: ``build(nvcc)`` gives
    {path: text}; ``--check`` compares instead of writing."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare a fresh build with the committed files")
    args = ap.parse_args(argv)
    return write_or_check(build(find_nvcc()), args.check)
