"""Check every claim of ``splice notes`` against an independent reading of the PTX.

For every bundled kernel (corpus/, tests/data/ptx/** but refused/) and every entry with a
body, ``notes_document`` (splice) writes the draft and its claims; this script then reads the
PTX its own simple way — the physical lines each claim's evidence names, split at ``;``, an
opcode and its operands by regular expressions, registers chased back through the textually
previous definition — and checks each claim by its template (splice.analysis.notes_claims
.TEMPLATES).  Nothing here imports splice.analysis' facts: only the claims come from splice.

It also counts the stand-ins' words (W, weight image, plane arena, slot …) in every draft whose
entry no profile matches: there must be none.

    python bench/notes_claims_check.py [--json OUT] [--max-statements N] [PATH …]

Prints one row per file group and a total: claims checked, false, not decidable by this reader
(a register the textual chase cannot follow), drafts with stand-in words.  Exit 1 on any false
claim or stand-in word.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the stand-ins' words: none may appear in a draft no profile matches
STAND_IN_WORDS = [r"\bW\b", r"weight image", r"weight-image", r"weight loads?\b", r"weight bytes",
                  r"bias bytes", r"plane", r"arena", r"\bslot", r"tid\.z stride", r"local spill",
                  r"4-line", r"next-B", r"C-seed", r"softmax", r"RMS norm", r"clamped-cubic",
                  r"requantise", r"per-column table", r"staging", r"texture gather"]

_REG = re.compile(r"%[\w$.]+")
_BRACES = re.compile(r"\{([^{}]*)\}")


# ---- the independent reader --------------------------------------------------------------------

class Entry:
    """One entry's instructions as text: (line, opcode, operand text, defined registers)."""

    def __init__(self, lines: list, name: str):
        self.lines = lines
        self.name = name
        self.instrs = []             # (first line, last line, opcode, text)
        self.by_line = {}
        self._read(name)
        self.defs = defaultdict(list)     # register -> [index into instrs]
        for i, (_a, _b, op, text) in enumerate(self.instrs):
            for r in _dests(op, text):
                self.defs[r].append(i)

    def _read(self, name: str) -> None:
        start = None
        for i, ln in enumerate(self.lines):
            if re.search(r"\.entry\s+" + re.escape(name) + r"\s*(\(|$)", ln):
                start = i
                break
        if start is None:
            raise KeyError(name)
        depth, began = 0, False
        buf: list = []           # (character, its 1-based line)
        for i in range(start, len(self.lines)):
            ln = re.sub(r"//.*", "", self.lines[i])
            if re.match(r"\s*\.(loc|file)\b", ln):    # line directives end without ';'
                continue
            for ch in ln:
                if ch == "{":
                    depth += 1
                    if not began:
                        began, buf = True, []
                        continue
                elif ch == "}":
                    depth -= 1
                    if began and depth == 0:
                        return
                if not began:
                    continue
                if ch == ";":
                    self._add(buf, i + 1)
                    buf = []
                    continue
                buf.append((ch, i + 1))
            buf.append((" ", i + 1))

    def _add(self, buf: list, last: int) -> None:
        raw = "".join(c for c, _l in buf)
        # scope braces, labels and the guard before the opcode: no instruction starts with them
        m = re.match(r"^(?:\s|[{}]|[$\w]+:|@!?%?[\w$]+\s)*", raw)
        j = m.end() if m else 0
        if j >= len(raw):
            return
        first = buf[j][1]
        text = " ".join(raw[j:].replace("{", " { ").replace("}", " } ").split())
        if not text or text.startswith("."):
            return
        op = text.split()[0]
        if op.startswith("wmma.load"):        # the matrix loads and stores of the WMMA API
            op = "ld." + op
        elif op.startswith("wmma.store"):
            op = "st." + op
        self.by_line.setdefault(first, len(self.instrs))
        self.instrs.append((first, last, op, text))

    def at(self, first: int, last: int) -> list:
        return [x for x in self.instrs if x[0] >= first and x[1] <= last]

    def def_before(self, reg: str, line: int):
        best = None
        for i in self.defs.get(reg, ()):
            if self.instrs[i][1] < line:
                best = i
        return self.instrs[best] if best is not None else None


def _dests(op: str, text: str) -> list:
    if op.startswith(("st.", "st ", "red", "bar", "bra", "ret", "exit", "cp.", "wgmma.fence",
                      "wgmma.commit", "wgmma.wait", "fence", "membar", "sust", "sured", "prefetch")) or op == "st":
        return []
    rest = text[len(op):].strip()
    if rest.startswith("{"):
        return _REG.findall(rest[:rest.index("}")])
    m = re.match(r"%?[A-Za-z_$][\w$.]*", rest)     # zluda's registers go without '%'
    return [m.group(0).split("|")[0]] if m else []


def _space(op: str) -> str:
    """The first state-space modifier (a copy's destination comes first)."""
    for part in op.split(".")[1:]:
        sp = part.split("::")[0]
        if sp in ("global", "shared", "local", "param", "const"):
            return sp
    return "generic"


def _addr(text: str):
    m = re.search(r"\[\s*([^\]]+)\]", text)
    return m.group(1).strip() if m else None


def param_sources(E: Entry, reg_or_name: str, line: int, depth: int = 0) -> set:
    """Parameter fields ``(param name, offset, bits)`` that reach a value additively (the
    pointer an address hangs off), chasing textual definitions back.  ``bits`` 0: the address
    of a symbol (``mov.b64 %rd1, k_param_0``), whose offset a constant ``add`` moves; a value
    an ``ld.param`` read has its field's offset and the load's width, whatever is added."""
    if depth > 40:
        return {("?", 0, 0)}
    if not reg_or_name.startswith("%") and reg_or_name not in E.defs:
        return {(reg_or_name, 0, 0)}      # a symbol's address
    d = E.def_before(reg_or_name, line)
    if d is None:
        return {("?", 0, 0)}
    a, _b, op, text = d
    ops = [o.strip() for o in text[len(op):].split(",")]
    base = op.split(".")[0]
    if base == "ld" and ".param" in op:
        ad = _addr(text) or ""
        m = re.match(r"([\w$.%]+)\s*(?:\+\s*(-?\d+))?$", ad)
        if not m:
            return {("?", 0, 0)}
        bits = int(re.findall(r"\d+", op.split(".")[-1])[0]) if re.findall(r"\d+", op.split(".")[-1]) else 0
        if m.group(1).startswith("%") or m.group(1) in E.defs:
            inner = param_sources(E, m.group(1), a, depth + 1)
            return {(p, o + int(m.group(2) or 0), bits) for p, o, b in inner if b == 0}
        return {(m.group(1), int(m.group(2) or 0), bits)}
    if base in ("mov", "cvta", "cvt") and len(ops) == 2:
        src = ops[1]
        if src.startswith("%") or re.match(r"[A-Za-z_$]", src):
            return param_sources(E, src, a, depth + 1)
        return set()
    if base in ("add", "sub") and len(ops) == 3:
        imm = sum(int(o, 0) for o in ops[1:] if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", o))
        imm = -imm if base == "sub" else imm
        out = set()
        for o in ops[1:2] if base == "sub" else ops[1:]:
            if o.startswith("%") or o in E.defs:
                out |= {(p, off + (imm if b == 0 else 0), b) for p, off, b in param_sources(E, o, a, depth + 1)}
        return out
    if base == "mad" and len(ops) == 4 and ops[3].startswith("%"):
        return param_sources(E, ops[3], a, depth + 1)
    return set()


def addr_fields(E: Entry, text: str, line: int, param: bool = False) -> set:
    """The parameter fields an address hangs off; ``param``: an ``ld.param`` address, whose
    constant offset is the field's (a global address's offset is into the buffer)."""
    ad = _addr(text)
    if ad is None:
        return set()
    m = re.match(r"([\w$.%]+)\s*(?:\+\s*(-?\d+))?", ad)
    if not m:
        return set()
    off = int(m.group(2) or 0) if param else 0
    return {(p, o + off, b) for p, o, b in param_sources(E, m.group(1), line)}


def _reads_field(E: Entry, x, f: dict) -> bool:
    srcs = addr_fields(E, x[3], x[0], param=True)
    n = max(1, len(_REG.findall(x[3].split("[")[0])))
    per = f["bytes"] if n == 1 else _bits(x[2]) // 8
    return any(_short(p) == f["param"] and f["offset"] in {o + i * per for i in range(n)}
               for p, o, _b in srcs)


def _bits(op: str) -> int:
    b = re.findall(r"\d+", op.split(".")[-1])
    return int(b[0]) if b else 8


def _short(name: str) -> str:
    m = re.search(r"(param_\d+)$", name)
    return m.group(1) if m else name


# ---- opcode classes ----------------------------------------------------------------------------

_TYPE = re.compile(r"^(?:[suf]|bf|b|e4m3|e5m2|e2m3|e3m2|e2m1|ue8m0|tf)(\d+)?(x\d)?$")


def cvt_dir(op: str) -> str:
    types = [t for t in op.split(".")[1:] if _TYPE.match(t)]
    if len(types) < 2:
        return "convert"
    d, s = _TYPE.match(types[-2]), _TYPE.match(types[-1])
    dn, sn = int((d.group(2) or "x1")[1:]), int((s.group(2) or "x1")[1:])
    db, sb = int(d.group(1) or 8), int(s.group(1) or 8)
    if dn > sn or (dn == sn > 1 and db < sb):
        return "pack"
    if dn < sn or (dn == sn > 1 and db > sb):
        return "unpack"
    return "convert"


_FLOAT = re.compile(r"\.(f16|f16x2|bf16|bf16x2|f32|f64)(\.|$)")
_ARITH = ("add", "sub", "mul", "fma", "mad", "max", "min", "neg", "abs", "copysign", "set",
          "rcp", "rsqrt", "sqrt", "ex2", "lg2", "div", "sin", "cos", "tanh")


def is_class(E: Entry, cls: str, instr) -> bool:
    """Does the instruction show class ``cls`` (a section class or an epilogue kind)?"""
    _a, _b, op, text = instr
    base = op.split(".")[0]
    sp = _space(op)
    m = re.match(r"(global|generic|local|local-array|shared|const|param) (loads|stores)(?: (?:from|into) (.+))?$", cls)
    if m:
        want = {"local-array": "local"}.get(m.group(1), m.group(1))
        loads, stores = ("ld", "ldu", "ldmatrix"), ("st", "red", "atom", "stmatrix")
        ok = (base in loads if m.group(2) == "loads" else base in stores) and sp == want
        if ok and m.group(3):
            fld = m.group(3)
            srcs = addr_fields(E, text, instr[0])
            ok = any(_short(p) + f"+{o}" == fld and b == 64 for p, o, b in srcs)
        return ok
    table = {
        "packs": lambda: base == "cvt" and cvt_dir(op) == "pack",
        "requantise": lambda: base == "cvt" and "satfinite" in op and "e4m3x2" in op,
        "unpacks": lambda: base == "cvt" and cvt_dir(op) == "unpack",
        "unpack": lambda: base == "cvt" and "e4m3x2" in op,
        "conversions": lambda: base == "cvt",
        "shared memory": lambda: (sp == "shared" and base in ("ld", "st", "ldmatrix", "stmatrix", "atom", "red", "cp"))
        or base in ("bar", "barrier"),
        "shared staging": lambda: (sp == "shared" and base in ("ld", "st", "ldmatrix", "stmatrix", "atom", "red", "cp"))
        or base in ("bar", "barrier"),
        "barriers": lambda: base in ("bar", "barrier"),
        "transpose (movmatrix)": lambda: base == "movmatrix",
        "matrix transposes (movmatrix)": lambda: base == "movmatrix",
        "warp shuffles": lambda: base == "shfl",
        "warp reductions": lambda: base == "redux",
        "atomics and reductions": lambda: base in ("atom", "red"),
        "float arithmetic": lambda: base in _ARITH and base not in ("set", "setp") and bool(_FLOAT.search(op)),
        "global loads": lambda: base in ("ld", "ldu") and sp == "global",
        "generic loads": lambda: base in ("ld", "ldu") and sp == "generic",
        "shared loads": lambda: (base == "ld" and sp == "shared") or base == "ldmatrix",
        "local-array loads": lambda: base == "ld" and sp == "local",
        "constant loads": lambda: base in ("ld", "ldu") and sp == "const",
        "async copies": lambda: base == "cp",
        "texture reads": lambda: base in ("tex", "tld4"),
        "texture gather": lambda: base in ("tex", "tld4"),
        "surface reads": lambda: base == "suld",
        "surface writes": lambda: base in ("sust", "sured"),
        "surface write": lambda: base in ("sust", "sured"),
        "shared stores": lambda: (base == "st" and sp == "shared") or base == "stmatrix",
        "global stores": lambda: base == "st" and sp == "global",
        "generic stores": lambda: base == "st" and sp == "generic",
        "local-array stores": lambda: base == "st" and sp == "local",
        "parameter stores (call arguments)": lambda: base == "st" and sp == "param",
        "weight loads": lambda: base == "ld" and sp in ("global", "generic"),
        "table loads": lambda: base == "ld" and sp in ("global", "generic"),
        "next B/C loads": lambda: base == "ld" and sp in ("global", "generic"),
        "loads of the next phase's operands": lambda: base == "ld",
    }
    if cls in table:
        return table[cls]()
    m = re.match(r"(\w+) \(special function\)$", cls)
    if m:
        return base == m.group(1)
    m = re.match(r"special functions \((.+)\)$", cls)
    if m:
        return base in [x.strip() for x in m.group(1).split(",")]
    return False


DLDN_KINDS = {"next-B loads": "ld", "C-seed loads": "ld", "W loads": "ld", "table loads": "ld",
              "packs": "requantise", "unpacks": "unpack", "movmatrix transpose": "transpose (movmatrix)",
              "warp shuffles": "warp shuffles", "shared staging": "shared staging",
              "plane-arena scatter": "global stores", "global store": "global stores",
              "local-array store": "local-array stores", "texture gather": "texture gather",
              "surface write": "surface write", "RMS norm": "rsqrt (special function)"}


def check_kind(E: Entry, kind: str, fact: dict, instr) -> bool:
    if fact.get("dldn"):
        if kind in ("cubic-exponent softmax", "textbook softmax", "clamped-cubic activation"):
            base = instr[2].split(".")[0]
            return base in ("and", "rcp", "ex2", "div", "max", "min", "neg", "abs")
        cls = DLDN_KINDS.get(kind)
        if cls == "ld":
            return instr[2].startswith("ld.")
        return cls is not None and is_class(E, cls, instr)
    if kind.startswith("loads feeding"):
        return instr[2].split(".")[0] == "ld"
    if kind == "special functions":
        return is_class(E, f"special functions ({', '.join(fact['special'])})", instr)
    return is_class(E, kind, instr)


# ---- the templates -------------------------------------------------------------------------------

def _instrs(E: Entry, ev: list) -> list:
    out = []
    for _a, _b, la, lb in ev:
        out += E.at(la, lb)
    return out


def check(E: Entry, c: dict, ctx: dict) -> str:
    """'ok', 'false: why' or 'undecided: why'."""
    t, f, ev = c["template"], c["fact"], c["evidence"]
    if t == "param-read":          # each cited statement holds an ld.param of the field
        for _a, _b, la, lb in ev:
            ins = [x for x in E.at(la, lb) if x[2].startswith("ld.param")]
            if not any(_reads_field(E, x, f) for x in ins):
                return f"false: no ld.param of {f['param']}+{f['offset']} in L{la}–L{lb}"
        return "ok"
    if t == "param-unread":
        for x in E.instrs:
            if x[2].startswith("ld.param"):
                for p, o, _b in addr_fields(E, x[3], x[0], param=True):
                    if _short(p) == f["param"]:
                        bits = re.findall(r"\d+", x[2].split(".")[-1])
                        size = (int(bits[0]) // 8 if bits else 1) * (len(_REG.findall(x[3].split("[")[0])) or 1)
                        if any(o < hi and o + size > lo for lo, hi in f["gaps"]):
                            return f"false: L{x[0]} reads {f['param']}+{o}"
            elif re.search(r"\b" + re.escape(f["param"]) + r"\b", x[3]) and not x[2].startswith("ld.param"):
                return f"false: L{x[0]} uses the parameter's address"
        return "ok"
    if t == "shared-array":        # the declaration of that name local to this entry, or global
        stem = E.name[2:] if E.name.startswith("_Z") else E.name
        for ln in E.lines:
            if "_ZZ" in ln and stem not in ln:
                continue
            m = re.search(r"\.shared\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+((?:[\w$]*E\d+)?" + re.escape(f["array"]) +
                          r")\s*(\[(\d*)\])?", ln)
            if m:
                el = int(re.findall(r"\d+", m.group(1))[0]) // 8 if re.findall(r"\d+", m.group(1)) else 1
                n = m.group(4)
                got = (int(n) * el if n else 0) if m.group(3) else el
                return "ok" if got == f["bytes"] else f"false: declared {got} bytes"
        return "undecided: declaration not found by this reader"
    if t == "phase":
        ins = _instrs(E, ev)
        mm = [x for x in ins if x[2].startswith(("mma", "wgmma.mma_async", "wmma.mma"))]
        if len(mm) != f["mma"]:
            return f"false: {len(mm)} mma in the range, claimed {f['mma']}"
        ctx.setdefault("phases", {})[f["phase"]] = (ev[0][2], ev[0][3], mm)
        if f["regular"] and f["form"] == "mma" and f["tiles"]:
            return _check_tiles(mm, f["tiles"])
        return "ok"
    if t == "operand":
        return _check_operand(E, f, ev, ctx)
    if t == "epilogue-kind":       # each cited statement holds an instruction of the kind
        for _a, _b, la, lb in ev:
            ins = E.at(la, lb)
            if not any(check_kind(E, f["kind"], f, x) for x in ins):
                what = f"`{ins[0][3][:60]}`" if ins else "nothing"
                return f"false: L{la}–L{lb} holds {what}, not {f['kind']}"
        return "ok"
    if t == "section":
        return _check_section(E, c, ctx)
    if t == "weight-image":
        return _check_weight(E, f)
    return f"undecided: unknown template {t}"


def _check_tiles(mm: list, tiles: list) -> str:
    acc = Counter()
    for x in mm:
        g = _BRACES.findall(x[3])
        if len(g) < 4:
            return "undecided: mma operands not in braces"
        d, cc = tuple(_REG.findall(g[0])), tuple(_REG.findall(g[3]))
        acc[d] += 1
        if cc != d and cc in acc:          # a chain D -> C: the accumulator carries on
            acc[d] += acc.pop(cc) - 0
    m_t, n_t, k_s = tiles
    if m_t * n_t * k_s != len(mm):
        return f"false: {m_t}x{n_t}x{k_s} != {len(mm)} mma"
    return "ok" if len(acc) == m_t * n_t or len(acc) >= m_t * n_t else \
        f"false: {len(acc)} accumulators, claimed {m_t * n_t}"


def _check_operand(E: Entry, f: dict, ev: list, ctx: dict) -> str:
    ph = ctx.get("phases", {}).get(f["phase"])
    if ph is None:
        return "undecided: phase not read"
    for (_a, _b, la, lb), (_n, lab) in zip(ev, sorted(f["sources"].items(), key=lambda kv: int(kv[0]))):
        ins = E.at(la, lb)
        if not ins:
            return f"false: no statement at L{la}"
        if not any(_operand_ok(E, lab, x) for x in ins):
            return f"false: L{ins[-1][0]} `{ins[-1][3][:60]}` is not {lab}"
    return "ok"


def _operand_ok(E: Entry, lab: str, x) -> bool:
    if True:
        base = x[2].split(".")[0]
        if lab == "shared write":
            ok = _space(x[2]) == "shared" or base in ("cp", "stmatrix")
        elif lab.startswith("shared memory"):
            ok = base == "ldmatrix" or (base == "ld" and _space(x[2]) == "shared")
        elif re.match(r"P\d+'s D", lab):
            ok = base in ("mma", "wgmma", "wmma")
        elif lab in ("zero", "constants"):
            ok = base == "mov"
        elif lab.startswith("registers computed by "):
            ok = x[2] == lab[len("registers computed by "):]
        elif re.match(r"(global|generic|local|const) loads", lab):
            sp = lab.split()[0]
            ok = base in ("ld", "ldu") and _space(x[2]) == sp
            fm = re.search(r"from `(.+)`", lab)
            if ok and fm:
                ok = any(_short(p) + f"+{o}" == fm.group(1) for p, o, _b in addr_fields(E, x[3], x[0]))
        else:
            ok = True
        return ok


def _check_section(E: Entry, c: dict, ctx: dict) -> str:
    f = c["fact"]
    name = f["name"]
    if name == "plumbing":
        return "ok"
    head, _, feeding = name.partition(", feeding ")
    if head.startswith("arithmetic feeding "):
        feeding, head = head[len("arithmetic feeding "):], ""
    la, lb = c["evidence"][0][2], c["evidence"][0][3]
    for cls in [x for x in head.split(" + ") if x]:
        ins = [x for x in E.at(la, lb) if is_class(E, cls, x)]
        if not ins:
            return f"false: no {cls} in L{la}–L{lb}"
    if feeding:                    # a value the section defines flows (through any later
        end = ctx.get("epi_end", {}).get(f["epilogue"])     # statement) into one of the class
        later = [x for x in E.instrs if x[0] >= la and (end is None or x[0] <= end)]
        for cls in feeding.split(" and "):
            if not _flows_into(E, E.at(la, lb), later, cls):
                return f"undecided: no value L{la}–L{lb} defines reaches a {cls} (by this reader)"
    return "ok"


def _flows_into(E: Entry, section: list, later: list, cls: str) -> bool:
    """Forward taint, textually: registers the section defines, then every register a later
    instruction defines from a tainted one; true when an instruction of ``cls`` reads one."""
    tainted = {r for x in section for r in _dests(x[2], x[3])}
    for x in later:
        dests = _dests(x[2], x[3])
        srcs = set(re.findall(r"%?[A-Za-z_$][\w$.]*", x[3][len(x[2]):])) - set(dests)
        if tainted & srcs:
            if is_class(E, cls, x):
                return True
            tainted |= set(dests)
    return False


def _check_weight(E: Entry, f: dict) -> str:
    field = f["field"]
    lane = False
    for x in E.instrs:
        base = x[2].split(".")[0]
        if base in ("st", "red", "atom", "ld") and _space(x[2]) in ("global", "generic"):
            srcs = addr_fields(E, x[3], x[0])
            if any(_short(p) + f"+{o}" == field for p, o, _b in srcs):
                if base != "ld":
                    return f"false: L{x[0]} writes {field}"
                lane = True
    return "ok" if lane else "undecided: no load off the field found by this reader"


# ---- every kernel ---------------------------------------------------------------------------------

def bundled() -> list:
    files = sorted((ROOT / "corpus").rglob("*.ptx")) + sorted((ROOT / "tests/data/ptx").rglob("*.ptx"))
    return [p for p in files if "refused" not in p.parts]


def entries_of(text: str) -> list:
    return re.findall(r"\.entry\s+([\w$]+)", text)


def check_file(path: Path, max_statements: int, out: dict) -> None:
    from splice.analysis import Kernel
    from splice.analysis.notes import notes_document
    from splice.analysis.vocab import find_profile
    from splice.errors import SpliceError
    from splice.ptx import parse_file
    from splice.ptx.errors import PtxSyntaxError

    text = path.read_text(errors="surrogateescape")
    try:
        mod = parse_file(str(path))
    except (SpliceError, PtxSyntaxError):       # splice refuses the module: it makes no claim
        out["refused"] += 1
        return
    lines = text.split("\n")
    for fn in mod.entries():
        if fn.body is None:
            continue
        try:
            k = Kernel(mod, fn.name)
            if k.last_number > max_statements:
                out["too_big"] += 1
                continue
            prof = find_profile(k.name)
            md, claims = notes_document(k, prof or False)
        except (SpliceError, PtxSyntaxError):
            out["refused"] += 1
            continue
        out["entries"] += 1
        if not prof:
            for pat in STAND_IN_WORDS:
                for mm in re.finditer(pat, _without_ptx(md)):
                    out["words"].append(f"{_rel(path)}:{fn.name[:40]}: {mm.group(0)!r}")
        try:
            E = Entry(lines, fn.name)
        except KeyError:
            out["undecided"]["entry not found by this reader"] += len(claims)
            continue
        ctx = {"epi_end": {c["fact"]["epilogue"]: c["evidence"][-1][3] for c in claims
                           if c["template"] == "epilogue-kind" and c["evidence"]}}
        for c in sorted(claims, key=lambda c: c["template"] != "phase"):
            r = check(E, c, ctx)
            out["checked"][c["template"]] += 1
            if r.startswith("false"):
                out["false"].append(f"{_rel(path)}:{fn.name[:40]}: [{c['template']}] {c['text'][:70]} — {r}")
            elif r.startswith("undecided"):
                out["undecided"][f"{c['template']}: {r[11:]}"] += 1


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _without_ptx(md: str) -> str:
    """The draft without the PTX it quotes (evidence blocks, cited statements): the words are
    splice's, not the kernel's own symbols."""
    md = re.sub(r"```.*?```", "", md, flags=re.S)
    md = re.sub(r"s\d+ L\d+: [^|\n]*", "", md)
    return re.sub(r"`[^`]*`", "", md)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--max-statements", type=int, default=30000)
    a = ap.parse_args(argv)
    paths = [Path(p).resolve() for p in a.paths] or bundled()
    out = {"entries": 0, "refused": 0, "too_big": 0, "checked": Counter(), "false": [],
           "undecided": Counter(), "words": []}
    t0 = time.time()
    for p in paths:
        check_file(p, a.max_statements, out)
    n = sum(out["checked"].values())
    print(f"files {len(paths)}, entries {out['entries']} (splice refused {out['refused']}, "
          f"over {a.max_statements} statements {out['too_big']}), {time.time() - t0:.0f} s")
    print("| template | claims checked |")
    print("|---|---|")
    for t, c in sorted(out["checked"].items()):
        print(f"| {t} | {c} |")
    print(f"| **total** | {n} |")
    und = sum(out["undecided"].values())
    print(f"false claims: {len(out['false'])}; not decidable by this reader: {und}; "
          f"stand-in words outside a profile: {len(out['words'])}")
    for x in out["false"][:40] + out["words"][:20]:
        print("  " + x)
    for why, c in out["undecided"].most_common(8):
        print(f"  undecided ×{c}: {why}")
    if a.json:
        Path(a.json).write_text(json.dumps({**out, "checked": dict(out["checked"]),
                                            "undecided": dict(out["undecided"])}, indent=1))
    return 1 if out["false"] or out["words"] else 0


if __name__ == "__main__":
    sys.exit(main())
