"""A stand-in for ptxas in the compile-cache tests: records every compile, writes a cubin that
depends on the input and the options, prints ``-v`` style resource lines.

Environment: FAKE_PTXAS_LOG (one line appended per compile), FAKE_PTXAS_VERSION (the
``--version`` text), FAKE_PTXAS_RENDEZVOUS (a folder: each compile drops a marker there and waits
up to 20 s for a second one, then reports in the log whether it saw it -- two compiles that run
one after the other never see each other).  An input containing ``BROKEN`` fails like ptxas."""
import hashlib
import os
import sys
import time

args = sys.argv[1:]
if "--version" in args:
    print(os.environ.get("FAKE_PTXAS_VERSION", "fake ptxas, release 13.0"))
    sys.exit(0)
out = args[args.index("-o") + 1]
src = args[args.index("-o") - 1]
text = open(src, encoding="utf-8").read()
seen = ""
rv = os.environ.get("FAKE_PTXAS_RENDEZVOUS")
if rv:
    mine = os.path.join(rv, f"{os.getpid()}")
    open(mine, "w").close()
    deadline = time.time() + 20
    while time.time() < deadline and len(os.listdir(rv)) < 2:
        time.sleep(0.02)
    seen = " together" if len(os.listdir(rv)) >= 2 else " alone"
with open(os.environ["FAKE_PTXAS_LOG"], "a") as log:
    log.write(" ".join(a for a in args if a.startswith("-")) + seen + "\n")
if "BROKEN" in text:
    line = text[:text.index("BROKEN")].count("\n") + 1
    sys.stderr.write(f"ptxas {src}, line {line}; error   : Unknown symbol 'BROKEN'\n"
                     "ptxas fatal   : Ptx assembly aborted due to errors\n")
    sys.exit(255)
digest = hashlib.sha256((" ".join(args[:-3]) + "\n" + text).encode()).digest()
with open(out, "wb") as f:
    f.write(b"\x7fELF-fake" + digest)
regs = 8 + digest[0] % 32
sys.stderr.write("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                 "ptxas info    : Function properties for k\n"
                 "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                 f"ptxas info    : Used {regs} registers, used 0 barriers, 380 bytes cmem[0]\n")
