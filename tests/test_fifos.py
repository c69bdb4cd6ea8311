"""FIFOs as inputs and outputs: one no process writes (or reads) is waited for FIFO_WAIT_S and
refused, naming it, never a hang; one with a writer is read like a file; an endless pipe is cut at
the input bound; a FIFO in a corpus directory is never opened by the module search.  Each case
failed before its fix (found 2026-11-30 with hostile inputs); a watchdog opens the FIFO's other
end if a command still blocks, so a regression fails the test instead of hanging it."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from splice.cli import main

from .userfiles import NATIVE, RECIPE, SPEC, TINY, run_cli, write_files

# every command and every input slot a user names: module, recipe, native file, probe spec, profile
SLOTS = {
    "stats": lambda x: ["stats", x],
    "index": lambda x: ["index", x],
    "canonical": lambda x: ["canonical", x, "-o", "o.ptx"],
    "spec": lambda x: ["spec", x],
    "spec-pressure": lambda x: ["spec", x, "--pressure", "--no-ptxas", "--png", "none"],
    "notes": lambda x: ["notes", x, "-o", "n.md"],
    "extract": lambda x: ["extract", x, "--phase", "1"],
    "roundtrip": lambda x: ["roundtrip", x],
    "sass-mix": lambda x: ["sass-mix", x],
    "apply": lambda x: ["apply", x, "--no-ptxas"],
    "verify": lambda x: ["verify", x],
    "probe-init": lambda x: ["probe", "init", x, "-o", "s.yaml"],
    "probe-spec": lambda x: ["probe", x, "tiny.ptx"],
    "probe-module": lambda x: ["probe", "spec.yaml", x],
    "spec-profile": lambda x: ["spec", "tiny.ptx", "--profile", x],
}


class Watchdog:
    """Opens ``fifo`` for writing (which ends a reader's blocking open) if the test is still
    running after ``after`` seconds: a regression fails the test instead of hanging it."""

    def __init__(self, fifo: Path, after: float = 30.0, flags: int = os.O_WRONLY | os.O_NONBLOCK):
        self.done, self.fired = threading.Event(), False
        self.fifo, self.after, self.flags = fifo, after, flags
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        if not self.done.wait(self.after):
            self.fired = True
            for _ in range(100):       # keep releasing: the command may open it more than once
                try:
                    os.close(os.open(self.fifo, self.flags))
                except OSError:
                    pass
                if self.done.wait(0.1):
                    break

    def stop(self) -> bool:
        self.done.set()
        self.thread.join()
        return self.fired


@pytest.mark.parametrize("slot", ["stats", "spec", "roundtrip", "apply", "verify", "probe-spec", "spec-profile",
                                  "probe-module"])
def test_a_fifo_nobody_writes_is_refused_not_a_hang(slot, tmp_path, monkeypatch, capsys):
    """regression: ``splice stats pipe`` (a FIFO no process writes) blocked in open() for ever;
    then (the same fix's first try) the error message re-opened the file to quote its line and
    blocked there.  Now the FIFO is waited for ``FIFO_WAIT_S`` and refused, naming it."""
    from splice import util

    monkeypatch.setattr(util, "FIFO_WAIT_S", 0.2)
    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "spec.yaml": SPEC})
    os.mkfifo(tmp_path / "pipe")
    monkeypatch.chdir(tmp_path)
    dog = Watchdog(tmp_path / "pipe")
    try:
        rc = main(SLOTS[slot]("pipe"))
    finally:
        fired = dog.stop()
    err = capsys.readouterr().err
    assert not fired, "the command blocked on the FIFO"
    if slot == "probe-module":      # without cupy the probe stops before it reads the module
        assert rc == 2 and "Traceback" not in err
        return
    assert rc == 2 and err.strip().startswith("pipe: a FIFO that no process writes"), (rc, err[-1500:])


def test_a_fifo_with_a_writer_is_read_like_a_file(tmp_path, capsys):
    """``splice stats <(gen)`` keeps working: a pipe with a writer is read to its end."""
    fifo = tmp_path / "pipe.ptx"
    os.mkfifo(fifo)
    (tmp_path / "tiny.ptx").write_text(TINY)
    writer = threading.Thread(target=lambda: fifo.write_text(TINY), daemon=True)
    writer.start()
    assert main(["stats", str(fifo), "--json"]) == 0
    via_fifo = capsys.readouterr().out
    writer.join(timeout=30)
    assert main(["stats", str(tmp_path / "tiny.ptx"), "--json"]) == 0
    assert capsys.readouterr().out.replace(str(tmp_path / "tiny.ptx"), str(fifo)) == via_fifo


def test_an_endless_pipe_is_cut_at_the_input_bound(tmp_path, monkeypatch, capsys):
    """regression: ``yes | splice stats /dev/stdin`` read until the memory ran out."""
    from splice import util

    monkeypatch.setattr(util, "MAX_INPUT_BYTES", 1 << 20)
    fifo = tmp_path / "endless.ptx"
    os.mkfifo(fifo)

    def endless():
        try:
            with open(fifo, "wb") as fh:
                while True:
                    fh.write(b"// " + b"y" * 65536 + b"\n")
        except (BrokenPipeError, OSError):
            pass          # the reader stopped at the bound: what a bounded read must do
    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    assert main(["stats", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{fifo}: more than the {1 << 20} bytes"), err
    writer.join(timeout=30)
    assert not writer.is_alive()


def test_a_fifo_in_the_corpus_directory_does_not_hang_the_module_search(tmp_path):
    """regression: a module named by entry was searched by reading every *.ptx of the corpus
    directory, a FIFO too: ``apply`` blocked for ever on a FIFO it was never asked to read."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    os.mkfifo(corpus / "a-fifo.ptx")
    (corpus / "z-layer.ptx").write_text(TINY)
    write_files(tmp_path, {"n.ptx": NATIVE, "r.yaml": RECIPE.replace("module: tiny.ptx", "module: layer.ptx")})
    proc = run_cli(["apply", "r.yaml", "--no-ptxas", "--json"], tmp_path, env={"SPLICE_CORPUS": str(corpus)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out.ptx").read_text().startswith("//")


# every command that writes an output file
WRITERS = {"canonical": ["canonical", "tiny.ptx", "-o"], "notes": ["notes", "tiny.ptx", "-o"],
           "extract": ["extract", "tiny.ptx", "--phase", "1", "-o"], "apply": ["apply", "r.yaml", "--no-ptxas", "-o"],
           "probe-init": ["probe", "init", "tiny.ptx", "-o"],
           "pressure-png": ["spec", "tiny.ptx", "--pressure", "--no-ptxas", "--png"]}


@pytest.mark.parametrize("writer", WRITERS, ids=list(WRITERS))
def test_an_output_fifo_nobody_reads_is_refused_not_a_hang(writer, tmp_path, monkeypatch, capsys):
    """regression: ``-o fifo`` with no reader blocked in open() for ever.  Now the reader is
    waited for ``FIFO_WAIT_S``, then the output is refused, naming the FIFO."""
    from splice import util

    monkeypatch.setattr(util, "FIFO_WAIT_S", 0.2)
    write_files(tmp_path, {"tiny.ptx": TINY, "n.ptx": NATIVE, "r.yaml": RECIPE})
    os.mkfifo(tmp_path / "out.fifo")
    monkeypatch.chdir(tmp_path)
    dog = Watchdog(tmp_path / "out.fifo", flags=os.O_RDONLY | os.O_NONBLOCK)
    try:
        rc = main([*WRITERS[writer], "out.fifo"])
    finally:
        fired = dog.stop()
    err = capsys.readouterr().err
    assert not fired, "the command blocked on the FIFO"
    assert rc == 2 and err.startswith("out.fifo: cannot write the output: a FIFO that no process reads"), err
